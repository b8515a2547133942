package engine

import (
	"math"
	"slices"
	"time"
)

// Result is the outcome of one replay.
type Result struct {
	Policy string
	Config Config

	Requests          int // arrivals
	Completed         int
	Rejected          int // RejectedTooLong + RejectedNoReplica
	RejectedTooLong   int // prompt+output above the model length or KV capacity
	RejectedNoReplica int // held longer than HoldTimeoutSeconds with no Ready replica
	// Killed counts requests lost to scale-down: still held by a deleted
	// pod when its grace period ran out.
	Killed int
	// Unfinished counts requests still in flight (or held for want of a
	// Ready pod) when the replay stopped, MaxTailSeconds after the last
	// arrival: the end of the replay, not a policy's doing.
	Unfinished int
	TTFTMet    int // completed within the TTFT objective
	E2EMet     int // completed within the end-to-end objective
	// Gaps counts the inter-token gaps every decoding sequence saw (one a
	// step), GapsMet those within TPOTSLOSeconds: the inter-token-latency
	// objective, on the gaps as servers export them
	// (vllm:inter_token_latency_seconds), so that a p95 objective is met
	// while GapsMet/Gaps ≥ 0.95.
	Gaps, GapsMet float64
	Preemptions   int
	// Infeasible counts requests whose prompt alone takes longer than the
	// TTFT objective to prefill on an idle replica (Model.IsolatedTTFT):
	// no policy can serve them in time.
	Infeasible int

	// TTFT is each request's time to first token in seconds, by arrival
	// order; +Inf for rejected, killed and unfinished requests.
	TTFT []float32

	GPUSeconds  float64 // every pod from creation to termination
	BusySeconds float64 // time replicas spent running iterations
	EndSeconds  float64 // simulated time when the replay ended
	Pods        int     // pods ever created
	SpecStart   int

	ScaleEvents      []ScaleEvent
	Decisions        []Decision // every successful control tick, after clamping
	PolicyErrors     int
	FirstPolicyError string

	Bins        []Bin
	binArrivals []int
	Wall        time.Duration
}

// ScaleEvent is a change of spec.replicas.
type ScaleEvent struct {
	T        float64
	From, To int
}

// Decision is one control tick's replica count.
type Decision struct {
	T        float64
	Replicas int
}

// Bin is one BinSeconds slice of the replay: arrivals in it and the fleet
// at its end.
type Bin struct {
	Arrivals    int
	Pods, Ready int
	Spec        int
}

// GPUHours is GPUSeconds / 3600.
func (r *Result) GPUHours() float64 { return r.GPUSeconds / 3600 }

// TTFTAttainment is the share of all requests (rejected and killed ones
// included, as misses) that met the TTFT objective.
func (r *Result) TTFTAttainment() float64 {
	if r.Requests == 0 {
		return 1
	}
	return float64(r.TTFTMet) / float64(r.Requests)
}

// FeasibleTTFTAttainment is the share of the requests that could meet
// the TTFT objective (all but Infeasible) that did. Targets (the oracle's,
// tuning's, the pass mark) are measured on it.
func (r *Result) FeasibleTTFTAttainment() float64 {
	n := r.Requests - r.Infeasible
	if n <= 0 {
		return 1
	}
	return float64(r.TTFTMet) / float64(n)
}

// E2EAttainment is the same for the end-to-end objective.
func (r *Result) E2EAttainment() float64 {
	if r.Requests == 0 {
		return 1
	}
	return float64(r.E2EMet) / float64(r.Requests)
}

// ITLAttainment is the share of inter-token gaps within the objective
// (1 when nothing decoded).
func (r *Result) ITLAttainment() float64 {
	if r.Gaps == 0 {
		return 1
	}
	return r.GapsMet / r.Gaps
}

// TTFTQuantile returns the q-quantile of TTFT over all requests (+Inf when
// the quantile falls on a rejected or killed request).
func (r *Result) TTFTQuantile(q float64) float64 {
	return quantile(r.TTFT, q)
}

func quantile(v []float32, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	i = min(max(i, 0), len(s)-1)
	return float64(s[i])
}

// BinTTFT returns the TTFT values of the requests that arrived in bin i.
func (r *Result) BinTTFT(i int) []float32 {
	lo := 0
	for k := 0; k < i && k < len(r.Bins); k++ {
		lo += r.Bins[k].Arrivals
	}
	hi := lo
	if i < len(r.Bins) {
		hi += r.Bins[i].Arrivals
	}
	return r.TTFT[min(lo, len(r.TTFT)):min(hi, len(r.TTFT))]
}
