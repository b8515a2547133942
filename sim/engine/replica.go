package engine

import (
	"container/heap"
	"math"

	"github.com/inferscale/inferscale/sim/scaler"
)

// request is one request in flight.
type request struct {
	id      int
	arrival float64
	in, out int

	prefillLeft int // prompt tokens (plus generated ones after a preemption) still to prefill
	prefillKV   int // KV tokens allocated at admission
	preloaded   int // prompt tokens whose KV arrives with the request (Request.Prefilled), allocated at admission without compute
	generated   int // output tokens produced so far (valid when not decoding)
	firstToken  float64

	// While decoding: generated = genAtStart + (replica.step - stepAtStart).
	decoding    bool
	stepAtStart int64
	genAtStart  int
	kvAtStart   int
	doneStep    int64
	heapIdx     int
}

// decodeHeap orders decoding requests by the replica step they finish at.
type decodeHeap []*request

func (h decodeHeap) Len() int { return len(h) }
func (h decodeHeap) Less(i, j int) bool {
	return h[i].doneStep < h[j].doneStep || (h[i].doneStep == h[j].doneStep && h[i].id < h[j].id)
}
func (h decodeHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx = i
	h[j].heapIdx = j
}
func (h *decodeHeap) Push(x any) {
	r := x.(*request)
	r.heapIdx = len(*h)
	*h = append(*h, r)
}
func (h *decodeHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	r.heapIdx = -1
	return r
}

type chunk struct {
	r      *request
	tokens int
}

// replica is one pod and, once Ready, its serving engine.
type replica struct {
	idx   int
	name  string
	uid   string // metadata.uid, scaler.PodUID(idx)
	phase scaler.Phase

	created, started, readyAt float64 // started: Pending → Starting
	readyPlanned              float64
	drainStart, drainDeadline float64
	preStopEnd                float64 // the deleted pod's preStop ends (SIGTERM); +Inf until deleted
	deletionCost              int32   // controller.kubernetes.io/pod-deletion-cost
	terminated                bool
	endedAt                   float64
	lifeGen                   uint32 // invalidates lifecycle events of deleted pods

	waiting    []*request // FIFO; index 0 is the head
	running    []*request // admission order (newest last: the preemption victim)
	prefilling []*request // running requests still prefilling, FIFO
	decode     decodeHeap
	step       int64
	kvUsed     int

	// The iteration in flight: steps decode steps over decodeN sequences
	// starting with kv0 KV tokens, plus chunks (only when steps == 1).
	busy      bool
	iterStart float64
	iterEnd   float64
	iterGen   uint32
	steps     int
	decodeN   int
	kv0       int
	chunks    []chunk

	// Cumulative counters, as vLLM exports them.
	busySeconds   float64
	requestsTotal float64
	promptTotal   float64
	genTotal      float64
	preemptions   float64
	ttft          histogram
	e2e           histogram
	queue         histogram
	itl           histogram
	promptLen     histogram
	genLen        histogram

	snaps     []snapshot // ring of recent scrapes, oldest first
	lastBusy  float64
	lastScrap float64
}

func (r *replica) outstanding() int { return len(r.waiting) + len(r.running) }

func (r *replica) generatedOf(q *request) int {
	if q.decoding {
		return q.genAtStart + int(r.step-q.stepAtStart)
	}
	return q.generated
}

func (r *replica) kvOf(q *request) int {
	if q.decoding {
		return q.kvAtStart + int(r.step-q.stepAtStart)
	}
	return q.prefillKV
}

// stepDuration is T(j): the time j decode-only steps of the current
// iteration take.
func (r *replica) stepsDuration(m *Model, j int) float64 {
	jf := float64(j)
	d := float64(r.decodeN)
	return jf*(m.IterBase+m.PerDecodeSeq*d+m.PerKVToken*float64(r.kv0)) + m.PerKVToken*d*jf*(jf-1)/2
}

// stepsDone is how many whole steps of a multi-step decode iteration have
// finished by time t.
func (r *replica) stepsDone(m *Model, t float64) int {
	if !r.busy || r.steps <= 1 {
		return 0
	}
	x := t - r.iterStart
	if x <= 0 {
		return 0
	}
	d := float64(r.decodeN)
	A := m.IterBase + m.PerDecodeSeq*d + m.PerKVToken*float64(r.kv0)
	B := m.PerKVToken * d / 2
	var j int
	if B == 0 {
		j = int(x / A)
	} else {
		// B j² + (A-B) j - x = 0
		j = int((-(A - B) + math.Sqrt((A-B)*(A-B)+4*B*x)) / (2 * B))
	}
	if j < 0 {
		j = 0
	}
	if j > r.steps {
		j = r.steps
	}
	for j > 0 && r.stepsDuration(m, j) > x {
		j--
	}
	for j < r.steps && r.stepsDuration(m, j+1) <= x {
		j++
	}
	return j
}

func (r *replica) removeRunning(q *request) {
	for i, x := range r.running {
		if x == q {
			copy(r.running[i:], r.running[i+1:])
			r.running[len(r.running)-1] = nil
			r.running = r.running[:len(r.running)-1]
			return
		}
	}
}

func (r *replica) removePrefilling(q *request) {
	for i, x := range r.prefilling {
		if x == q {
			copy(r.prefilling[i:], r.prefilling[i+1:])
			r.prefilling[len(r.prefilling)-1] = nil
			r.prefilling = r.prefilling[:len(r.prefilling)-1]
			return
		}
	}
}

// preemptNewest evicts the most recently admitted running request
// (vLLM's recompute preemption): its KV is freed and it goes back to the
// head of the queue, to prefill its prompt and output so far again.
func (r *replica) preemptNewest() {
	q := r.running[len(r.running)-1]
	r.running = r.running[:len(r.running)-1]
	kv := r.kvOf(q)
	if q.decoding {
		q.generated = r.generatedOf(q)
		heap.Remove(&r.decode, q.heapIdx)
		q.decoding = false
	} else {
		r.removePrefilling(q)
	}
	r.kvUsed -= kv
	q.prefillKV = 0
	q.prefillLeft = q.in + q.generated
	r.waiting = append(r.waiting, nil)
	copy(r.waiting[1:], r.waiting)
	r.waiting[0] = q
	r.preemptions++
}

// plan schedules the next iteration at time now. It returns false when the
// replica has nothing to do.
func (r *replica) plan(m *Model, now float64) bool {
	// 1. Running sequences first: make room for one decode token each.
	preempted := false
	for len(r.decode) > 0 && r.kvUsed+len(r.decode) > m.KVCapacity && len(r.running) > 0 {
		r.preemptNewest()
		preempted = true
	}
	d := len(r.decode)
	budget := m.MaxBatchTokens - d
	r.chunks = r.chunks[:0]
	for _, q := range r.prefilling {
		if budget <= 0 {
			break
		}
		c := min(q.prefillLeft, budget)
		r.chunks = append(r.chunks, chunk{q, c})
		budget -= c
	}
	// 2. Admit queued requests while the budget, the sequence limit and the
	// KV cache allow (head-of-line: the queue is FIFO).
	if !preempted {
		for len(r.waiting) > 0 && budget > 0 && len(r.running) < m.MaxNumSeqs {
			q := r.waiting[0]
			if r.kvUsed+q.preloaded+q.prefillLeft+d > m.KVCapacity {
				break
			}
			r.waiting[0] = nil
			r.waiting = r.waiting[1:]
			q.prefillKV = q.preloaded + q.prefillLeft
			r.kvUsed += q.prefillKV
			r.promptTotal += float64(q.preloaded) // vLLM counts a transferred prompt's tokens in full
			q.preloaded = 0
			r.running = append(r.running, q)
			r.prefilling = append(r.prefilling, q)
			if q.generated == 0 {
				r.queue.observe(now - q.arrival)
			}
			c := min(q.prefillLeft, budget)
			r.chunks = append(r.chunks, chunk{q, c})
			budget -= c
		}
	}
	if d == 0 && len(r.chunks) == 0 {
		r.busy = false
		return false
	}
	r.busy = true
	r.iterStart = now
	r.decodeN = d
	r.kv0 = r.kvUsed
	r.iterGen++
	if len(r.chunks) == 0 {
		// Decode only: nothing changes until the first sequence finishes
		// or the KV cache fills, so take those steps in one event.
		n := int(r.decode[0].doneStep - r.step)
		if room := (m.KVCapacity - r.kvUsed) / d; room < n {
			n = room
		}
		r.steps = max(n, 1)
		r.iterEnd = now + r.stepsDuration(m, r.steps)
		return true
	}
	p, pairs := 0, 0.0
	for _, c := range r.chunks {
		p += c.tokens
		pairs += AttnPairs(c.tokens, c.r.prefillKV-c.r.prefillLeft)
	}
	r.steps = 1
	r.iterEnd = now + m.Iteration(p, pairs, d, r.kvUsed)
	return true
}

// shorten cuts a multi-step decode iteration at the first step boundary
// after now (a new request arrived and can be admitted there). It returns
// true when the iteration's end moved.
func (r *replica) shorten(m *Model, now float64) bool {
	if !r.busy || r.steps <= 1 || len(r.chunks) > 0 {
		return false
	}
	j := r.stepsDone(m, now)
	if j+1 >= r.steps {
		return false
	}
	r.steps = j + 1
	r.iterEnd = r.iterStart + r.stepsDuration(m, r.steps)
	r.iterGen++
	return true
}
