package sizing

import (
	"math"

	"github.com/inferscale/inferscale/shared/model"
)

// leastHeadroom is the least β the plan keeps at r pods of demand: the
// knob, and the smaller of two margins for the arrivals' noise, both
// sufficient on their own assumptions.
//
// The window margin (poissonMargin) asks that the work arriving over the
// time in which a pod must absorb it fit the pods' capacity over that
// time, with no credit for the queue: right where a request's own prefill
// leaves the objective no room to wait, and what on long-prompt traffic
// covers prefills sharing their step budget too.
//
// The queue margin (queueMargin) credits the queue: a fleet may let a
// backlog build as long as the wait it causes stays within the slack the
// objective leaves the prompts (queueSlack). Where prompts are short it is
// far smaller than the window margin, which held ServeGen's one- and
// two-pod fleets a pod above what they needed; where the long prompts
// leave little slack it is the larger, and the window margin stands.
//
// A margin of Δ pods is β = Δ/√r. β above the least is the misses' to
// teach: they already carry the traffic's burstiness.
func (o Options) leastHeadroom(p model.Params, m model.Mix, z float64, fitted bool, r, slack float64) float64 {
	least, _ := o.leastMargin(p, m, z, fitted, r, slack)
	return least
}

// leastMargin is leastHeadroom and the margin that sets it: "window",
// "queue", or "minHeadroom" (the knob; also where MaxHeadroom caps it).
func (o Options) leastMargin(p model.Params, m model.Mix, z float64, fitted bool, r, slack float64) (float64, string) {
	least, by := o.poissonMargin(p, m, z, fitted), "window"
	if q := o.queueMargin(p, m, z, fitted, slack) / math.Sqrt(max(r, minDemandPods)); q < least {
		least, by = q, "queue"
	}
	if least <= o.MinHeadroom {
		least, by = o.MinHeadroom, "minHeadroom"
	}
	return math.Min(least, MaxHeadroom), by
}

// poissonMargin is the window margin as β: over the time τ in which a
// pod's batch must absorb them (the TTFT objective for a prefill; a
// generation for the decode work, once a fitted model tells the two
// apart: workRate), n requests of work w arrive with a standard deviation
// of √n if they are Poisson, √(z·n) for arrivals of peakedness z (Whitt's
// peakedness-adjusted staffing; z learned from their counts,
// peakedness.go); in pods at the ceiling c that is √(z·R·w/(c·τ)), i.e.
// β = PoissonZ·√(z·w/(c·τ)) per √R. Heavier requests (long prompts) and
// burstier arrivals get more headroom, from the first ticks and at once
// when a flash crowd raises z, before any request has missed.
func (o Options) poissonMargin(p model.Params, m model.Mix, z float64, fitted bool) float64 {
	c := p.Ceiling(m, o.Limits).Utilisation
	if w := p.Work(m); !(w > 0 && c > 0 && o.TTFTSLO > 0) {
		return 0
	}
	return PoissonZ * math.Sqrt(max(z, 1)*o.workRate(p, m, c, fitted)/c)
}

// Staff is square-root staffing: ⌈r + β√r⌉ pods for r pods of offered
// load (at least ⌈r⌉, at most maxPods).
func Staff(r, beta float64, maxPods int) int {
	if !(r > 0) {
		return 0
	}
	n := math.Ceil(r + beta*math.Sqrt(r) - 1e-9)
	n = math.Max(n, math.Ceil(r-1e-9))
	return int(math.Min(n, float64(max(maxPods, 1))))
}

// learnHeadroom moves β toward the headroom at which waiting costs the
// target share of requests: up when this tick's waiting cost more, down
// when less, in proportion, weighted by how many requests the tick had. A
// tick counts for at most MaxMissFactor times the target: one overload
// (a first burst, pods still starting) must not buy headroom for hours.
// A tick without excess misses lowers β only if the fleet was near what β
// asks for or what the hold keeps (near): a fleet far above its plan (a
// reactive scale-up) missing nothing says nothing about whether β is
// enough. Misses while the fleet is below the plan (below: pods asked for
// not ready yet) do not raise it: headroom could not have prevented them.
func learnHeadroom(beta, miss, target, requests float64, near, below bool, least float64) float64 {
	w := requests / (requests + HalfWeightRequests)
	step := Gain * w * (math.Min(miss, MaxMissFactor*target) - target)
	if step < 0 && !near || step > 0 && below {
		return beta
	}
	beta += step
	return math.Min(math.Max(beta, least), MaxHeadroom)
}
