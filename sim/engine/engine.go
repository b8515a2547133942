package engine

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/inferscale/inferscale/internal/vllmexpo"
	"github.com/inferscale/inferscale/sim/scaler"
	"github.com/inferscale/inferscale/sim/workload"
)

type eventKind uint8

const (
	evIter eventKind = iota
	evStarting
	evReady
	evDrainEnd
	evPreStopEnd
	evScrape
	evTick
)

type event struct {
	t    float64
	seq  uint64
	kind eventKind
	rep  *replica
	gen  uint32
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	return h[i].t < h[j].t || (h[i].t == h[j].t && h[i].seq < h[j].seq)
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// Engine is one replay of one trace through one policy. Build it with New
// and call Run once.
type Engine struct {
	cfg    Config
	policy scaler.Autoscaler
	src    workload.Source

	now    float64
	events eventHeap
	seq    uint64

	pods       []*replica // every pod ever created, creation order
	live       []*replica // pods not yet terminated, creation order (= name order)
	spec       int
	startupRNG *rand.Rand
	gpuRNG     *rand.Rand

	held []*request // arrivals while no replica is Ready

	res        *Result
	inFlight   int
	lastArrive float64
	srcDone    bool
}

// New prepares a replay. The source is read lazily by Run and not closed.
func New(cfg Config, src workload.Source, policy scaler.Autoscaler) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("simulation config: %w", err)
	}
	if policy == nil || src == nil {
		return nil, errors.New("simulation needs a policy and a workload source")
	}
	if policy.Period() <= 0 {
		return nil, fmt.Errorf("policy %s: control period %s must be positive", policy.Name(), policy.Period())
	}
	e := &Engine{
		cfg:        cfg,
		policy:     policy,
		src:        src,
		startupRNG: rand.New(rand.NewPCG(cfg.Seed, 0x5eed0001)),
		gpuRNG:     rand.New(rand.NewPCG(cfg.Seed, 0x5eed0002)),
		res:        &Result{Policy: policy.Name(), Config: cfg},
	}
	return e, nil
}

// Run replays the whole trace and returns the outcome.
func Run(ctx context.Context, cfg Config, src workload.Source, policy scaler.Autoscaler) (*Result, error) {
	e, err := New(cfg, src, policy)
	if err != nil {
		return nil, err
	}
	return e.Run(ctx)
}

func (e *Engine) push(t float64, kind eventKind, rep *replica, gen uint32) {
	e.seq++
	heap.Push(&e.events, event{t: t, seq: e.seq, kind: kind, rep: rep, gen: gen})
}

// Run executes the replay.
func (e *Engine) Run(ctx context.Context) (*Result, error) {
	for i := 0; i < e.cfg.InitialReplicas; i++ {
		e.newPod(0, true)
	}
	e.spec = e.cfg.InitialReplicas
	e.res.SpecStart = e.spec
	e.push(0, evScrape, nil, 0)
	e.push(e.policy.Period().Seconds(), evTick, nil, 0)

	next, ok, err := e.src.Next()
	if err != nil {
		return nil, fmt.Errorf("reading workload: %w", err)
	}
	e.srcDone = !ok
	lastProgress := 0.0
	for n := 0; ; n++ {
		if n&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("simulation stopped at t=%.0fs: %w", e.now, err)
			}
			if e.cfg.Progress != nil && e.now-lastProgress >= 60 {
				e.cfg.Progress(e.now)
				lastProgress = e.now
			}
		}
		if e.srcDone && e.inFlight == 0 {
			break
		}
		arr := math.Inf(1)
		if !e.srcDone {
			arr = next.Arrival.Seconds()
		}
		if e.srcDone && e.events.Len() > 0 && e.events[0].t > e.lastArrive+e.cfg.MaxTailSeconds {
			e.now = e.lastArrive + e.cfg.MaxTailSeconds
			e.stopReplay()
			break
		}
		if e.events.Len() > 0 && e.events[0].t <= arr {
			ev := heap.Pop(&e.events).(event)
			e.advance(ev.t)
			if err := e.handle(ev); err != nil {
				return nil, err
			}
			continue
		}
		if arr < e.now {
			return nil, fmt.Errorf("workload arrivals go back in time at %.3fs (after %.3fs)", arr, e.now)
		}
		e.advance(arr)
		e.arrive(next)
		next, ok, err = e.src.Next()
		if err != nil {
			return nil, fmt.Errorf("reading workload after %d requests: %w", e.res.Requests, err)
		}
		e.srcDone = !ok
	}
	e.finish()
	return e.res, nil
}

// advance moves the clock, closing time-series bins on the way.
func (e *Engine) advance(t float64) {
	bin := e.cfg.BinSeconds
	for float64(len(e.res.Bins)+1)*bin <= t {
		e.closeBin()
	}
	e.now = t
}

func (e *Engine) closeBin() {
	ready, pods := 0, 0
	for _, r := range e.live {
		pods++
		if r.phase == scaler.Ready {
			ready++
		}
	}
	i := len(e.res.Bins)
	if i >= len(e.res.binArrivals) {
		e.res.binArrivals = append(e.res.binArrivals, 0)
	}
	e.res.Bins = append(e.res.Bins, Bin{Pods: pods, Ready: ready, Spec: e.spec, Arrivals: e.res.binArrivals[i]})
}

func (e *Engine) handle(ev event) error {
	switch ev.kind {
	case evIter:
		if ev.rep.terminated || ev.gen != ev.rep.iterGen || !ev.rep.busy {
			return nil
		}
		e.finishIteration(ev.rep)
	case evStarting:
		if ev.rep.terminated || ev.gen != ev.rep.lifeGen {
			return nil
		}
		ev.rep.phase = scaler.Starting
	case evReady:
		if ev.rep.terminated || ev.gen != ev.rep.lifeGen || ev.rep.phase == scaler.Draining {
			return nil
		}
		ev.rep.phase = scaler.Ready
		ev.rep.readyAt = e.now
		ev.rep.lastScrap = e.now
		ev.rep.lastBusy = 0
		e.dispatchHeld()
	case evDrainEnd:
		if ev.rep.terminated || ev.gen != ev.rep.lifeGen {
			return nil
		}
		e.killDrained(ev.rep)
	case evPreStopEnd:
		if ev.rep.terminated || ev.gen != ev.rep.lifeGen {
			return nil
		}
		if ev.rep.outstanding() == 0 && !ev.rep.busy {
			e.terminate(ev.rep)
		}
	case evScrape:
		e.scrape()
		e.expireHeld()
		e.push(e.now+e.cfg.ScrapeIntervalSeconds, evScrape, nil, 0)
	case evTick:
		if err := e.tick(); err != nil {
			return err
		}
		e.push(e.now+e.policy.Period().Seconds(), evTick, nil, 0)
	}
	return nil
}

// ---- requests ----

func (e *Engine) arrive(w workload.Request) {
	id := e.res.Requests
	e.res.Requests++
	e.res.TTFT = append(e.res.TTFT, float32(math.NaN()))
	bin := int(e.now / e.cfg.BinSeconds)
	for len(e.res.binArrivals) <= bin {
		e.res.binArrivals = append(e.res.binArrivals, 0)
	}
	e.res.binArrivals[bin]++
	e.lastArrive = e.now
	q := &request{id: id, arrival: e.now, in: max(w.InputTokens, 1), out: max(w.OutputTokens, 1), firstToken: -1, heapIdx: -1}
	q.prefillLeft = q.in
	if w.Prefilled {
		// The prompt's KV arrives with the request: only its last token
		// is computed (it yields the logits of the first output token).
		q.preloaded, q.prefillLeft = q.in-1, 1
	}
	if e.cfg.Model.IsolatedTTFT(q.prefillLeft) > e.cfg.TTFTSLOSeconds {
		e.res.Infeasible++
	}
	if q.in+q.out > e.cfg.Model.MaxModelLen || q.in+q.out > e.cfg.Model.KVCapacity {
		e.res.RejectedTooLong++
		e.reject(q)
		return
	}
	e.inFlight++
	e.route(q)
}

// route sends q to the Ready replica with the fewest outstanding requests
// (lowest name on ties), or holds it when none is Ready.
func (e *Engine) route(q *request) {
	var best *replica
	for _, r := range e.live {
		if r.phase != scaler.Ready {
			continue
		}
		if best == nil || r.outstanding() < best.outstanding() {
			best = r
		}
	}
	if best == nil {
		e.held = append(e.held, q)
		return
	}
	best.waiting = append(best.waiting, q)
	if !best.busy {
		e.startIteration(best)
	} else if len(best.waiting) == 1 && best.shorten(&e.cfg.Model, e.now) {
		e.push(best.iterEnd, evIter, best, best.iterGen)
	}
}

func (e *Engine) dispatchHeld() {
	held := e.held
	e.held = nil
	for _, q := range held {
		e.route(q)
	}
}

func (e *Engine) expireHeld() {
	if len(e.held) == 0 {
		return
	}
	kept := e.held[:0]
	for _, q := range e.held {
		if e.now-q.arrival > e.cfg.HoldTimeoutSeconds {
			e.inFlight--
			e.res.RejectedNoReplica++
			e.reject(q)
			continue
		}
		kept = append(kept, q)
	}
	e.held = kept
}

func (e *Engine) reject(q *request) {
	e.res.Rejected++
	e.res.TTFT[q.id] = float32(math.Inf(1))
}

func (e *Engine) startIteration(r *replica) {
	if r.plan(&e.cfg.Model, e.now) {
		e.push(r.iterEnd, evIter, r, r.iterGen)
	} else if r.phase == scaler.Draining && r.outstanding() == 0 && e.now >= r.preStopEnd {
		e.terminate(r)
	}
}

func (e *Engine) finishIteration(r *replica) {
	m := &e.cfg.Model
	r.busySeconds += e.now - r.iterStart
	r.busy = false
	if r.decodeN > 0 {
		// Every decoding sequence got one token per step: as many
		// inter-token gaps, each one step long.
		gap, gaps := (e.now-r.iterStart)/float64(r.steps), float64(r.steps*r.decodeN)
		r.itl.observeN(gap, gaps)
		e.res.Gaps += gaps
		if gap <= e.cfg.TPOTSLOSeconds {
			e.res.GapsMet += gaps
		}
		r.step += int64(r.steps)
		added := r.steps * r.decodeN
		r.kvUsed += added
		r.genTotal += float64(added)
		for len(r.decode) > 0 && r.decode[0].doneStep <= r.step {
			q := heap.Pop(&r.decode).(*request)
			q.generated = q.genAtStart + int(r.step-q.stepAtStart)
			kv := q.kvAtStart + int(r.step-q.stepAtStart)
			q.decoding = false
			r.kvUsed -= kv
			r.removeRunning(q)
			e.complete(r, q)
		}
	}
	for _, c := range r.chunks {
		q := c.r
		q.prefillLeft -= c.tokens
		r.promptTotal += float64(c.tokens)
		if q.prefillLeft > 0 {
			continue
		}
		r.removePrefilling(q)
		q.generated++
		r.genTotal++
		r.kvUsed++
		if q.firstToken < 0 {
			q.firstToken = e.now
			r.ttft.observe(e.now - q.arrival)
		}
		if q.generated >= q.out {
			r.kvUsed -= q.prefillKV + 1
			r.removeRunning(q)
			e.complete(r, q)
			continue
		}
		q.decoding = true
		q.stepAtStart = r.step
		q.genAtStart = q.generated
		q.kvAtStart = q.prefillKV + 1
		q.doneStep = r.step + int64(q.out-q.generated)
		heap.Push(&r.decode, q)
	}
	r.chunks = r.chunks[:0]
	_ = m
	e.startIteration(r)
}

func (e *Engine) complete(r *replica, q *request) {
	e.inFlight--
	e2e := e.now - q.arrival
	ttft := q.firstToken - q.arrival
	r.e2e.observe(e2e)
	r.promptLen.observe(float64(q.in))
	r.genLen.observe(float64(q.out))
	r.requestsTotal++
	e.res.Completed++
	e.res.TTFT[q.id] = float32(ttft)
	if ttft <= e.cfg.TTFTSLOSeconds {
		e.res.TTFTMet++
	}
	if e2e <= e.cfg.TTFTSLOSeconds+float64(q.out)*e.cfg.TPOTSLOSeconds {
		e.res.E2EMet++
	}
}

// killDrained ends a deleted pod whose grace period ran out: whatever it
// still holds is killed by the scale-down.
func (e *Engine) killDrained(r *replica) {
	e.kill(r, &e.res.Killed)
}

// kill ends a pod, losing whatever it holds; lost counts the requests.
func (e *Engine) kill(r *replica, lost *int) {
	for _, q := range r.waiting {
		e.lose(q, lost)
	}
	for _, q := range r.running {
		e.lose(q, lost)
	}
	r.waiting, r.running, r.prefilling, r.decode = nil, nil, nil, nil
	r.kvUsed = 0
	if r.busy {
		r.busySeconds += e.now - r.iterStart
		r.busy = false
	}
	e.terminate(r)
}

func (e *Engine) lose(q *request, lost *int) {
	e.inFlight--
	*lost++
	e.res.TTFT[q.id] = float32(math.Inf(1))
}

// stopReplay ends the replay at MaxTail: what is still in flight or held
// is unfinished.
func (e *Engine) stopReplay() {
	for _, q := range e.held {
		e.lose(q, &e.res.Unfinished)
	}
	e.held = nil
	for _, r := range slices.Clone(e.live) {
		e.kill(r, &e.res.Unfinished)
	}
}

// ---- pods ----

// newPod creates a pod; warm pods (those present at t=0) are Ready at once.
func (e *Engine) newPod(now float64, warm bool) *replica {
	r := &replica{
		idx:        len(e.pods),
		name:       fmt.Sprintf("llm-%05d", len(e.pods)),
		uid:        scaler.PodUID(len(e.pods)),
		phase:      scaler.Pending,
		created:    now,
		drainStart: math.Inf(1),
		preStopEnd: math.Inf(1),
		ttft:       newHistogram(vllmexpo.TTFTBounds()),
		e2e:        newHistogram(vllmexpo.LatencyBounds()),
		queue:      newHistogram(vllmexpo.LatencyBounds()),
		itl:        newHistogram(vllmexpo.InterTokenBounds()),
		promptLen:  newHistogram(vllmexpo.TokenBounds(e.cfg.Model.MaxModelLen)),
		genLen:     newHistogram(vllmexpo.TokenBounds(e.cfg.Model.MaxModelLen)),
	}
	// Every pod draws its startup from the same stream in creation order,
	// so the k-th pod of any policy starts equally fast.
	st := e.cfg.Startup
	start := st.MedianSeconds * math.Exp(st.Sigma*e.startupRNG.NormFloat64())
	r.started = now + st.PendingSeconds
	r.readyPlanned = r.started + start
	r.readyAt = math.Inf(1)
	e.pods = append(e.pods, r)
	e.live = append(e.live, r)
	if warm {
		r.phase = scaler.Ready
		r.started, r.readyAt, r.readyPlanned = now, now, now
		return r
	}
	e.push(r.started, evStarting, r, r.lifeGen)
	e.push(r.readyPlanned, evReady, r, r.lifeGen)
	return r
}

func (e *Engine) terminate(r *replica) {
	if r.terminated {
		return
	}
	r.terminated = true
	r.endedAt = e.now
	r.lifeGen++
	e.res.GPUSeconds += e.now - r.created
	for i, x := range e.live {
		if x == r {
			e.live = append(e.live[:i], e.live[i+1:]...)
			break
		}
	}
}

// active returns the pods counted against spec.replicas (not terminating).
func (e *Engine) activeCount() int {
	n := 0
	for _, r := range e.live {
		if r.phase != scaler.Draining {
			n++
		}
	}
	return n
}

// scale applies a new spec.replicas the way a ReplicaSet does.
func (e *Engine) scale(desired int) {
	if desired != e.spec {
		e.res.ScaleEvents = append(e.res.ScaleEvents, ScaleEvent{T: e.now, From: e.spec, To: desired})
		e.spec = desired
	}
	cur := e.activeCount()
	for ; cur < desired; cur++ {
		e.newPod(e.now, false)
	}
	if cur <= desired {
		return
	}
	// The ReplicaSet picks the victims in its own order (deleteFirst).
	cands := make([]*replica, 0, len(e.live))
	for _, r := range e.live {
		if r.phase != scaler.Draining {
			cands = append(cands, r)
		}
	}
	for _, r := range victims(cands, cur-desired, e.now) {
		e.deletePod(r)
	}
}

// deletePod deletes a pod (Config.DrainGraceSeconds describes the
// termination): a Pending pod has no container and goes at once; any other
// leaves the load balancer now (route takes Ready pods only), lives at
// least through its preStop, ends when it is also empty, and is killed at
// the end of its grace period.
func (e *Engine) deletePod(r *replica) {
	if r.phase == scaler.Pending {
		e.terminate(r)
		return
	}
	r.phase = scaler.Draining
	r.lifeGen++ // a Starting pod never becomes Ready now
	r.drainStart = e.now
	r.drainDeadline = e.now + e.cfg.DrainGraceSeconds
	r.preStopEnd = e.now + min(e.cfg.PreStopSeconds, e.cfg.DrainGraceSeconds)
	if r.outstanding() == 0 && !r.busy && r.preStopEnd <= e.now {
		e.terminate(r)
		return
	}
	if r.preStopEnd > e.now {
		e.push(r.preStopEnd, evPreStopEnd, r, r.lifeGen)
	}
	e.push(r.drainDeadline, evDrainEnd, r, r.lifeGen)
}

// ---- metrics and control ----

func (e *Engine) scrape() {
	m := &e.cfg.Model
	keep := int(math.Ceil(e.cfg.MetricLagSeconds/e.cfg.ScrapeIntervalSeconds)) + 2
	for _, r := range e.live {
		if r.readyAt > e.now {
			continue
		}
		j := r.stepsDone(m, e.now)
		busy := r.busySeconds
		if r.busy {
			busy += e.now - r.iterStart
		}
		u := 0.0
		if dt := e.now - r.lastScrap; dt > 0 {
			u = math.Min(1, math.Max(0, (busy-r.lastBusy)/dt))
		}
		r.lastScrap, r.lastBusy = e.now, busy
		// A duty-cycle reading is a handful of "was a kernel running?"
		// samples: it jitters between 0 and 1 around the true busy share.
		hits := 0
		for k := 0; k < e.cfg.GPUDutySamples; k++ {
			if e.gpuRNG.Float64() < u {
				hits++
			}
		}
		extra := j * r.decodeN
		s := snapshot{
			t:           e.now,
			waiting:     len(r.waiting),
			running:     len(r.running),
			kvUsage:     math.Min(1, float64(r.kvUsed+extra)/float64(m.KVCapacity)),
			gpuUtil:     float64(hits) / float64(e.cfg.GPUDutySamples),
			requests:    r.requestsTotal,
			prompt:      r.promptTotal,
			generation:  r.genTotal + float64(extra),
			preemptions: r.preemptions,
			ttft:        r.ttft.cumulative(),
			e2e:         r.e2e.cumulative(),
			queue:       r.queue.cumulative(),
			itl:         r.itl.cumulative(),
			promptLen:   r.promptLen.cumulative(),
			genLen:      r.genLen.cumulative(),
		}
		if len(r.snaps) >= keep {
			copy(r.snaps, r.snaps[1:])
			r.snaps = r.snaps[:len(r.snaps)-1]
		}
		r.snaps = append(r.snaps, s)
	}
}

// lagged returns the newest scrape of r old enough to have reached a
// controller, or nil.
func (e *Engine) lagged(r *replica) *snapshot {
	limit := e.now - e.cfg.MetricLagSeconds
	for i := len(r.snaps) - 1; i >= 0; i-- {
		if r.snaps[i].t <= limit+1e-9 {
			return &r.snaps[i]
		}
	}
	return nil
}

// Observe builds what a controller sees now.
func (e *Engine) Observe() scaler.Observation {
	obs := scaler.Observation{
		Now:          e.wall(e.now),
		SpecReplicas: e.spec,
		Pods:         make([]scaler.PodView, 0, len(e.live)),
		MinReplicas:  e.cfg.MinReplicas,
		MaxReplicas:  e.cfg.MaxReplicas,
	}
	for _, r := range e.live {
		pv := scaler.PodView{Name: r.name, Phase: r.phase, CreatedAt: e.wall(r.created), Serial: r.idx, DeletionCost: r.deletionCost}
		if r.phase == scaler.Draining {
			pv.DeletedAt = e.wall(r.drainStart)
			pv.DeletionGraceSeconds = e.cfg.DrainGraceSeconds
		}
		if (r.phase == scaler.Ready || r.phase == scaler.Draining) && !math.IsInf(r.readyAt, 1) {
			pv.ReadyAt = e.wall(r.readyAt)
			if s := e.lagged(r); s != nil {
				pv.Metrics = e.podSignal(r, s)
			}
		}
		obs.Pods = append(obs.Pods, pv)
	}
	return obs
}

func (e *Engine) tick() error {
	e.expireHeld()
	obs := e.Observe()
	desired, err := e.policy.Recommend(obs)
	if err != nil {
		e.res.PolicyErrors++
		if e.res.FirstPolicyError == "" {
			e.res.FirstPolicyError = err.Error()
		}
		if errors.Is(err, ErrFatal) {
			return fmt.Errorf("policy %s at t=%.0fs: %w", e.policy.Name(), e.now, err)
		}
		return nil
	}
	desired = min(max(desired, e.cfg.MinReplicas), e.cfg.MaxReplicas)
	e.res.Decisions = append(e.res.Decisions, Decision{T: e.now, Replicas: desired})
	if dc, ok := e.policy.(scaler.DeletionCoster); ok {
		e.annotate(dc.DeletionCosts())
	}
	e.scale(desired)
	return nil
}

// annotate writes pod-deletion-cost annotations on the named live pods.
func (e *Engine) annotate(costs map[string]int32) {
	if len(costs) == 0 {
		return
	}
	for _, r := range e.live {
		if c, ok := costs[r.name]; ok {
			r.deletionCost = c
		}
	}
}

// ErrFatal, wrapped by a policy's error, stops the replay instead of
// being counted as a failed tick (a broken binary, not a bad tick).
var ErrFatal = errors.New("fatal policy error")

func (e *Engine) finish() {
	for _, r := range slices.Clone(e.live) {
		if r.busy {
			r.busySeconds += e.now - r.iterStart
		}
		e.terminate(r)
	}
	e.closeBin()
	e.res.EndSeconds = e.now
	e.res.Pods = len(e.pods)
	busy := 0.0
	for _, r := range e.pods {
		busy += r.busySeconds
		e.res.Preemptions += int(r.preemptions)
	}
	e.res.BusySeconds = busy
	e.res.Wall = time.Duration(0)
}
