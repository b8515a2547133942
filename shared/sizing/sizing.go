// Package sizing is policy v2's plan. Each tick it
//
//  1. folds the pods' readings into the service model (package model):
//     the iteration-time fit, the request mix and the prompt lengths;
//  2. forecasts the arrival rate (requests per second, what the server
//     counts) over the horizon a new pod needs to become ready, H = the
//     pods' observed startup p90 + the CPA interval + the metric lag, with
//     an upper bound calibrated on the workload's own forecast errors
//     (package forecast);
//  3. turns it into work with the current model — requests per second
//     times the GPU-seconds one request of the current mix costs — so a
//     refit, a change of prompt or output lengths, or a faster or slower
//     GPU, changes the plan at once without a setting;
//  4. staffs it: with R the upper-bound demand in pods at one pod's
//     ceiling (model.Ceiling: its batch and KV limits), the fleet is
//     n = ⌈R + β·√R⌉, square-root staffing (Halfin–Whitt), where the
//     headroom β is learned from the workload's own TTFT misses: every
//     tick, β moves by Gain × (the share of requests that waiting pushed
//     past the objective − the target), adaptive-conformal style, so in
//     the long run waiting costs the target share of requests and no
//     more. Bursty traffic ends with a larger β, smooth traffic with a
//     smaller one, small fleets with proportionally more headroom than
//     large ones.
//
// Assess is pure: it reads the stored memory and returns the next one,
// which state.Record stores.
package sizing

import (
	"math"

	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/forecast"
	"github.com/inferscale/inferscale/shared/model"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

// Options set the plan; policy.Config fills them from its settings.
type Options struct {
	// Prior is the iteration-time model the fit starts from.
	Prior model.Params
	// Limits bound one pod's batch and KV use.
	Limits model.Limits
	// TTFTSLO (seconds) and Attainment are the objective: Attainment of
	// the feasible requests within TTFTSLO.
	TTFTSLO, Attainment float64
	// Interval and MetricLag (seconds) make up the horizon with the
	// startup; DefaultStartup stands in until a pod's startup is seen.
	Interval, MetricLag, DefaultStartup float64
	// HoldMin (seconds): a scale-down goes no lower than the largest need
	// of the last max(H, HoldMin), so a burst that just ended does not flap.
	HoldMin float64
	// Miss is the share of horizons whose demand may exceed the forecast's
	// upper bound (the level adaptive conformal inference holds).
	Miss float64
	// MaxPods bounds the staffing.
	MaxPods int
	// MinHeadroom is the least β the plan keeps (DefaultMinHeadroom when 0
	// is not meant: the policy passes its knob).
	MinHeadroom float64
	// Decode is true for a decode pool (role decode): its requests arrive
	// prefilled and the work of each lands over its generation, so its
	// margin is that of the sequences in the batch, with DecodeReserve
	// for a surge (margin.go).
	Decode bool
}

// Fixed parts of the plan: documented, not knobs (they are what the
// model and its evidence are for).
const (
	// KVCeiling and MaxUtilisation bound one pod's planned KV use and work.
	KVCeiling      = 0.95
	MaxUtilisation = 0.95
	// FlapWindowSeconds is the flap window: a reversal within it is a flap
	// (docs/performance.md). A step down holds what the rising trend
	// brings within it, and the floor's last step waits it out.
	FlapWindowSeconds = 300.0
	// DownTolerance is the extra demand a removal must still fit (HPA's
	// tolerance band): a fleet at the edge of a pod does not go down and
	// up again with the noise.
	DownTolerance = 0.1
	// WaitShare is the share of the miss budget the headroom aims waiting
	// at; the rest is for what waiting does not explain (prefills slowed
	// by sharing their budget, a first burst, a cold start).
	WaitShare = 0.7
	// DefaultMinHeadroom is the least β the plan keeps whatever the
	// margins say (the minHeadroom knob). β starts at the least the
	// margins ask (leastHeadroom) and the workload's own misses raise it:
	// a burst the forecast has not seen (a first flash crowd) is what the
	// surge reserve is for. It started at 1 (a pod per √R, the
	// Halfin–Whitt operating point) until stop 34; that prior, on top of
	// the reserve, held small fleets a pod above their need until misses
	// that never came taught it down (docs/performance.md, "Stop 34").
	DefaultMinHeadroom = 0.0
	// PoissonZ is the one-sided margin of the Poisson headroom
	// (leastHeadroom): three standard deviations.
	PoissonZ = 3.0
	// MaxHeadroom bounds β (long-prompt traffic, where prefills collide
	// long before the GPU is busy, learns large values).
	MaxHeadroom = 12.0
	// Gain is β's step per unit of miss-rate error at full weight; a tick
	// counts with weight n/(n + HalfWeightRequests) for its n requests.
	Gain               = 4.0
	HalfWeightRequests = 50.0
	MaxMissFactor      = 10.0
	// SurgeReserve is the share of its load a pool keeps spare for a
	// surge before new pods are ready, DecodeReserve a decode pool's,
	// whose overload slows streams rather than queueing whole requests:
	// the priors, until an hour of the workload's own horizons says how
	// far its surges go (surgeReserve, margin.go).
	SurgeReserve  = 0.3
	DecodeReserve = 0.2
	// ReserveTolerance (pods) is how far short of its share the reserve
	// may fall before it buys a pod: the share is a measured cover, not a
	// bound, and a one-pod fleet 0.2 % short of it (R·1.3 = 1.002 pods at
	// R = 0.771) bought a whole pod more and held it (margin.go).
	ReserveTolerance = 0.1
	// mixHalfLife (seconds) is how fast the request mix and the prompt
	// lengths fade.
	mixHalfLife = 1800
	// maxFiniteHeadroom stands for the infinite headroom of no load (JSON
	// has no infinity).
	maxFiniteHeadroom = 1e6
)

// defaultMix stands in until requests have finished: a chat-like request.
var defaultMix = model.Mix{PromptTokens: 1000, OutputTokens: 200, KVPerSeq: 0.003}

// Assessment is the plan of one tick and everything that explains it.
type Assessment struct {
	// Valid is false when the tick had no demand reading: then nothing is
	// sized (and nothing may be removed for it). Warm is true once the
	// plan has seen one hold of demand: before that it may size up, never
	// down.
	Valid bool `json:"valid"`
	Warm  bool `json:"warm"`
	// Demand is the work arriving per second, in pods at full utilisation
	// (arrival rate × work per request, plus the waiting backlog drained
	// within the horizon).
	Demand      float64 `json:"demand"`
	ArrivalRate float64 `json:"arrivalRate"`
	// Backlog is the waiting requests drained within the horizon, in
	// requests per second on top of the arrivals.
	Backlog float64 `json:"backlog"`
	// WorkPerRequest is the GPU-seconds one request of the mix costs.
	WorkPerRequest float64   `json:"workPerRequest"`
	Mix            model.Mix `json:"mix"`
	// Forecast is the arrival rate's forecast, in requests per second
	// (ForecastUnit); ForecastReset says this tick dropped a stored one in
	// another unit.
	Forecast      forecast.Forecast `json:"forecast"`
	ForecastReset bool              `json:"forecastReset,omitempty"`
	// Params is the iteration-time model used; ParamsSource says whether
	// it is still the prior, partly fitted or fitted, from Samples samples
	// of the ParamsSeries (model.Fit.Source).
	Params       model.Params  `json:"params"`
	ParamsSource string        `json:"paramsSource"`
	ParamsSeries []string      `json:"paramsSeries,omitempty"`
	Samples      int           `json:"samples"`
	Ceiling      model.Ceiling `json:"ceiling"`
	// Offered is the forecast's upper bound (with the backlog) in pods at
	// the ceiling (R);
	// Beta the learned headroom; Need = ⌈R + β√R⌉, and at least the
	// surge reserve over R (over the point's load while StandIn: the
	// upper bound is the warm-up's stand-in, not yet ranked by errors).
	Offered float64 `json:"offered"`
	Beta    float64 `json:"beta"`
	Need    int     `json:"need"`
	StandIn bool    `json:"standIn,omitempty"`
	// Reserve is the surge reserve the plan keeps, a share of the load
	// (surgeReserve): the prior until ReserveLearned, then what the last
	// window of the forecast's horizons brought beyond their bound.
	Reserve        float64 `json:"reserve"`
	ReserveLearned bool    `json:"reserveLearned,omitempty"`
	// Peakedness is z, the arrivals' learned variance-to-mean ratio of
	// their counts at the time scale of the objective (1: Poisson, see
	// peakedness.go), which widens both margins of the least β.
	Peakedness float64 `json:"peakedness,omitempty"`
	// LeastBeta is the least β this tick (leastHeadroom), LeastBy the
	// margin that sets it ("window", "queue" or "minHeadroom"), and
	// QueueSlack the seconds the objective leaves a request to wait
	// (queueSlack).
	LeastBeta  float64 `json:"leastBeta"`
	LeastBy    string  `json:"leastBy"`
	QueueSlack float64 `json:"queueSlack"`
	// NeedDown is the need with DownTolerance more demand: what a
	// scale-down keeps. Hold is the largest of the needs (and of the
	// scale-ups asked for) of the last HoldSeconds: the lowest a scale-down
	// may go.
	NeedDown    int     `json:"needDown"`
	Hold        int     `json:"hold"`
	HoldSeconds float64 `json:"holdSeconds"`
	// HoldNeed is what this tick adds to the hold: the need of the
	// arrivals' forecast alone, without the backlog.
	HoldNeed int `json:"holdNeed"`
	// Floor is what the hold keeps of a reactive scale-up asked for at the
	// plan (floor.go; 0: none).
	Floor int `json:"floor,omitempty"`
	// Below is true when the fleet is below what the last tick's plan
	// asked for (pods starting, fewer ready than planned): misses then do
	// not raise β, and a reactive scale-up is not held.
	Below bool `json:"below,omitempty"`
	// Headroom is the β the ready pods have now against the demand.
	Headroom float64 `json:"headroom"`
	// QueueingMiss is the share of this tick's requests that waiting to be
	// scheduled pushed past the objective (nil: no reading), against the
	// Target share the headroom aims it at.
	QueueingMiss *float64 `json:"queueingMiss,omitempty"`
	// TTFTMissEstimate is the share of this tick's requests whose time in
	// the queue and isolated prefill together pass the TTFT objective
	// (QueueingMiss and the prompts no idle pod prefills in time): what
	// the model reads of the TTFT misses, which a server that exports no
	// TTFT (TGI) does not say (nil without a queue-time reading).
	TTFTMissEstimate *float64 `json:"ttftMissEstimate,omitempty"`
	Target           float64  `json:"target"`
	// LoadMiss is the share of this tick's requests that load pushed past
	// the objective (nil: no reading): the waiting, and in a breach every
	// miss beyond the prompts no idle pod prefills in time — prefills
	// stretched by other requests' chunks are load too. LoadNote says how
	// it was read. The headroom learns from it and a latency breach is
	// load-driven when it exceeds the miss budget.
	LoadMiss *float64 `json:"loadMiss,omitempty"`
	LoadNote string   `json:"loadNote,omitempty"`
	// Spent is the share of the recent requests (half-life
	// BudgetHalfLife; those at this ready fleet once there are enough)
	// that missed the objective beyond the prompts no pod prefills in
	// time, nil while too few requests were seen (budget.go): a breach
	// that leaves it within the objective's budget (1 − Attainment) is
	// paid from it (policy.withinBudget), not with a pod more.
	Spent *float64 `json:"spent,omitempty"`
	// SpentFleet is the ready fleet Spent was read at, over the ticks
	// since the fleet last grew (0: over the whole window, too few
	// requests seen since).
	SpentFleet int `json:"spentFleet,omitempty"`
	// SpentRequests is how many requests (faded) Spent is a share of.
	SpentRequests float64 `json:"spentRequests,omitempty"`
	// PerPodRPS is the requests per second one pod of Need carries at the
	// forecast point.
	PerPodRPS float64 `json:"perPodRps"`
}

// ForecastUnit is what the forecast counts: arrivals, in requests per
// second. Before it had a unit the forecast counted pods of work, which a
// refit of the model redefines.
const ForecastUnit = "requests/s"

// continueForecast readies st for this tick's arrival rate: a stored
// forecast in another unit (or none named: the pods of work of earlier
// releases) is dropped, reported true, and starts again from this tick.
func continueForecast(st *forecast.State) (reset bool) {
	if st.Unit == ForecastUnit {
		return false
	}
	reset = !st.At.IsZero()
	*st = forecast.State{Unit: ForecastUnit}
	return reset
}

// served is the mix as the pool computes it. A decode pool's requests
// arrive prefilled: the pool computes one prompt token of each (the one
// that yields the first output token), though the server counts the
// whole prompt. Their KV share (KVPerSeq) stays: every step reads it.
func (o Options) served(m model.Mix) model.Mix {
	if o.Decode {
		m.PromptTokens = 1
	}
	return m
}

// servedPrompts are the prompt lengths the pool prefills: the tick's
// (the recent ones when the tick has none). A decode pool prefills none
// (served), so it has no lengths to read: its misses are its waiting. The
// prompts the server counts, priced as prefills, told it that its long
// prompts could not meet its 0.5 s leg, and that waiting had pushed 8 %
// of them past it while its TTFT p95 read 20 ms.
func (o Options) servedPrompts(next *state.Service, svc fleet.Service) model.Lengths {
	switch {
	case o.Decode:
		return model.Lengths{}
	case svc.Prompts.Count > 0:
		return lengths(svc.Prompts)
	}
	return next.Prompts
}

// servedPromptRate is the prompt tokens per second a pod's steps
// prefilled. A decode pool prefills none (served): the prompt tokens its
// pods count were transferred with their KV, and read as prefill they are
// a regressor its steps do not carry. On BLIS's engine, whose decode steps
// hardly vary with the batch, the fit then split a flat 2.9 ms step
// between α, β and γs until γs stood at 200 times the engine's, and the
// decode pool of the demo with outputs ×4 held 30 pods where 2 serve it.
func (o Options) servedPromptRate(ps fleet.PodService) float64 {
	if o.Decode {
		return 0
	}
	return ps.PromptRate
}

// target is the share of requests the headroom aims waiting to push past
// the objective: WaitShare of the miss budget.
func (o Options) target() float64 { return WaitShare * (1 - o.Attainment) }

// Horizon is H in seconds for a startup p90 of startup seconds (below a
// second no startup was seen: pods present from the start report none).
func (o Options) Horizon(startup float64) float64 {
	if startup < 1 {
		startup = o.DefaultStartup
	}
	return startup + o.Interval + o.MetricLag
}

// FlapWindow is the flap window a step down looks ahead over, and after a
// scale-up waits out (policy v2's stabilise): FlapWindowSeconds, or the
// hold where that is shorter. Both are part of the hold: a hold set
// shorter (scaleDownHold, down to the horizon) asks for scale-downs
// sooner, and neither may outlast it. With the end-to-end test's
// 20-second hold, five minutes kept an idle fleet from ever scaling down
// within the test, and the straight line over them at a ramp of
// 0.005 req/s² held a pod the hold never waits for.
func (a Assessment) FlapWindow() float64 {
	if a.HoldSeconds > 0 {
		return math.Min(FlapWindowSeconds, a.HoldSeconds)
	}
	return FlapWindowSeconds
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// lengths is a histogram delta as model.Lengths.
func lengths(h signal.Histogram) model.Lengths {
	le, c := bounds(h)
	return model.Lengths{LE: le, C: c, Count: h.Count}
}

// bounds are a histogram's bucket bounds and cumulative counts.
func bounds(h signal.Histogram) (le, c []float64) {
	le, c = make([]float64, len(h.Buckets)), make([]float64, len(h.Buckets))
	for i, b := range h.Buckets {
		le[i], c[i] = b.UpperBound, b.Count
	}
	return le, c
}
