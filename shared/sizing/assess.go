package sizing

import (
	"math"
	"time"

	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/forecast"
	"github.com/inferscale/inferscale/shared/model"
	"github.com/inferscale/inferscale/shared/state"
)

// Assess folds the tick into prev and sizes the fleet, in four steps:
// the model and the least headroom (fold), the tick's work (demand), what
// its requests missed and what β learns of it (misses), and the needs and
// the hold (needs, hold).
func Assess(v fleet.View, prev state.Service, o Options, now time.Time) (Assessment, state.Service) {
	next := prev.Clone()
	t := tick{v: v, o: o, now: now, planned: prev.Planned, next: &next}
	a := t.fold()
	if v.ArrivalRate == nil || v.Ready == 0 && v.Starting == 0 {
		return a, next
	}
	t.demand(&a)
	t.misses(&a)
	t.needs(&a)
	t.hold(&a)
	return a, next
}

// tick is one Assess: what it reads, the memory it folds the tick into,
// and what each step hands the next.
type tick struct {
	v   fleet.View
	o   Options
	now time.Time
	// planned is what the last tick's plan asked for.
	planned int
	next    *state.Service
	// Set by fold: the mix the pool computes (the model and the least β
	// are the assessment's Params and LeastBeta).
	served model.Mix
	// Set by demand: one pod's ceiling (its utilisation, never 0) and the
	// forecast's options over the horizon.
	ceiling float64
	fo      forecast.Options
}

// fold folds the pods' readings into the model, the mix and the arrivals'
// peakedness, and keeps β at least what the margins ask.
func (t *tick) fold() Assessment {
	o, next := t.o, t.next
	learn(next, t.v.Service, o)
	params := next.Fit.Params(o.Prior)
	if t.v.ArrivalRate != nil {
		observeDispersion(&next.Dispersion, *t.v.ArrivalRate, o.Interval)
	}
	z := Peakedness(next.Dispersion, o.TTFTSLO, o.Interval)
	source, _ := next.Fit.Source()
	t.served = o.served(next.Mix)
	slack := o.queueSlack(params, next.Prompts, t.served)
	least, margin := o.leastMargin(params, t.served, z, source == "fitted", o.demandPods(t.v, params, t.served), slack)
	next.Beta = math.Min(math.Max(next.Beta, least), MaxHeadroom)
	a := Assessment{Params: params, Samples: next.Fit.StepSamples(), Mix: next.Mix,
		Target: o.target(), Beta: next.Beta, Peakedness: z, LeastBeta: least, LeastBy: margin, QueueSlack: slack}
	a.ParamsSource, a.ParamsSeries = next.Fit.Source()
	return a
}

// demand is the tick's work in GPU-seconds per second (the arrivals and
// the waiting backlog at the current model), one pod's ceiling, and the
// horizon H the forecast looks over.
func (t *tick) demand(a *Assessment) {
	o, v, next := t.o, t.v, t.next
	h := o.Horizon(v.StartupSeconds)
	a.Valid, a.ArrivalRate = true, *v.ArrivalRate
	// The forecast counts requests per second, what the server counts,
	// and the current model turns it into work: a refit or a new mix moves
	// the plan at once and never leaves the forecast in stale units.
	a.ForecastReset = continueForecast(&next.Forecast)
	t.fo = forecast.DefaultOptions(seconds(h))
	t.fo.Miss = o.Miss
	a.Reserve, a.ReserveLearned = o.surgeReserve(next.Forecast, t.fo, a.QueueSlack, h)
	a.WorkPerRequest = a.Params.Work(t.served)
	// The waiting backlog, drained within the horizon, is demand now but
	// not part of the arrival series the forecast learns.
	a.Backlog = v.Waiting / math.Max(h, 30)
	a.Demand = (a.ArrivalRate + a.Backlog) * a.WorkPerRequest
	a.Ceiling = a.Params.Ceiling(t.served, o.Limits)
	t.ceiling = math.Max(a.Ceiling.Utilisation, 1e-9)
	a.Headroom = math.Min(model.Headroom(float64(v.Ready), a.Demand/t.ceiling), maxFiniteHeadroom)
	a.HoldSeconds = math.Max(h, o.HoldMin)
}

// misses reads what the tick's requests missed and what load caused of
// it, spends that from the miss budget, and moves β by what headroom
// could have prevented.
func (t *tick) misses(a *Assessment) {
	o, v, next, params := t.o, t.v, t.next, a.Params
	// The fleet is below the plan while pods it asked for are not ready
	// (starting, a cold start, the backlog of a scale-up still draining):
	// misses then are the plan's delay, which headroom cannot fix.
	a.Below = v.Starting > 0 || v.Ready < t.planned
	a.QueueingMiss = queueingMiss(next, v.Service, params, o)
	if a.QueueingMiss != nil {
		a.TTFTMissEstimate = new(*a.QueueingMiss + infeasibleShare(next, v.Service, params, o))
	}
	a.LoadMiss, a.LoadNote = loadMiss(next, v, params, o, a.QueueingMiss)
	raw := a.LoadMiss
	a.LoadMiss, a.LoadNote = unmoved(next, v, o.TTFTSLO, t.planned, a.QueueingMiss, a.LoadMiss, a.LoadNote)
	a.Spent, a.SpentFleet, a.SpentRequests = spend(next, v.Service, params, o, budgetMiss(raw, a.LoadMiss, next.Unmoved, breachRead(v, o.TTFTSLO)), v.Ready < t.planned, v.Ready)
	if a.LoadMiss == nil {
		return
	}
	// A fleet near what β asks for at this demand (one pod of slack for
	// rounding), or at what the hold keeps, says whether β is enough; one
	// far above it (a reactive scale-up) says nothing.
	held := recentHold(next.Needs, 0, t.now, a.HoldSeconds)
	near := v.Ready <= max(o.staffOver(a.Demand/t.ceiling, a.Demand/t.ceiling, next.Beta, a.Reserve), held)+1
	next.Beta = learnHeadroom(next.Beta, *a.LoadMiss, a.Target, loadCount(v.Service), near, a.Below, a.LeastBeta)
	a.Beta = next.Beta
}

// needs forecasts the arrivals over H and staffs them: the need now and
// the need a step down keeps.
func (t *tick) needs(a *Assessment) {
	a.Forecast = forecast.Observe(&t.next.Forecast, a.ArrivalRate, t.now, t.fo)
	a.Offered = (a.Forecast.Upper + a.Backlog) * a.WorkPerRequest / t.ceiling
	// The surge reserve is the cover for what the forecast cannot see.
	// Until its errors rank the bound, the bound is a stand-in
	// (WarmupFactor × the point), itself a cover for the unforeseen: the
	// reserve is then kept over the point, not stacked on the stand-in
	// (2.6 × the point, which held small fleets a pod or two above their
	// need for the warm-up and then the hold).
	a.StandIn = !t.fo.Calibrated(a.Forecast.Scores)
	pointLoad := (a.Forecast.Point + a.Backlog) * a.WorkPerRequest / t.ceiling
	a.Need = t.plan(a, a.Offered, pointLoad, 1)
	// A step down holds the need the rising trend brings within the flap
	// window too: a pod given up as the load ramps is asked back minutes
	// later (the demo's ramp, from one step to the next).
	rise := a.Forecast.Beyond(a.FlapWindow()) * a.WorkPerRequest / t.ceiling
	a.NeedDown = t.plan(a, a.Offered+rise, pointLoad+rise, 1+DownTolerance)
	if a.Demand > 0 || t.v.Waiting > 0 {
		a.Need, a.NeedDown = max(a.Need, 1), max(a.NeedDown, 1)
	}
}

// plan staffs upper pods of load (point at the forecast's point, which
// the surge reserve is kept over while the bound is the stand-in) with the
// demand scaled by scale.
func (t *tick) plan(a *Assessment, upper, point, scale float64) int {
	if !a.StandIn {
		point = upper
	}
	return t.o.staffOver(upper*scale, point*scale, a.Beta, a.Reserve)
}

// hold is the lowest a scale-down may go: the largest need of the last
// HoldSeconds, the floor of a reactive scale-up, and the needs now; and
// whether the plan has seen one hold of demand (Warm).
func (t *tick) hold(a *Assessment) {
	next := t.next
	next.Ticks++
	a.Warm = float64(next.Ticks)*t.o.Interval >= a.HoldSeconds
	// What the hold remembers is the need of the arrivals alone: a
	// backlog draining is demand now, not a need to keep for minutes. It
	// keeps the step down's tolerance too (β ≥ 0, so staffing grows with
	// the load: the larger of the two scales).
	base := a.Forecast.Upper * a.WorkPerRequest / t.ceiling
	basePoint := a.Forecast.Point * a.WorkPerRequest / t.ceiling
	a.HoldNeed = t.plan(a, base, basePoint, 1+DownTolerance)
	if a.Demand > 0 {
		a.HoldNeed = max(a.HoldNeed, 1)
	}
	a.Floor = lowerFloor(next, spentUpper(a.Spent, a.SpentRequests), a.Target, breachRead(t.v, t.o.TTFTSLO), a.HoldNeed, t.now, a.HoldSeconds)
	a.Hold = max(hold(next, a.HoldNeed, t.now, a.HoldSeconds), a.Need, a.NeedDown, a.Floor)
	next.Planned = a.Need
	if a.Need > 0 {
		a.PerPodRPS = a.Forecast.Point / float64(a.Need)
	}
}
