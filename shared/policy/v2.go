package policy

import (
	"time"

	"github.com/inferscale/inferscale/shared/sizing"
	"github.com/inferscale/inferscale/shared/state"
)

// v2 is policy v2 (serviceModel, the default): the plan (package sizing)
// sizes the fleet from the learned service model and a calibrated
// forecast over the startup horizon; a scale-up to the plan is one step,
// a scale-down goes to the largest need of the hold in one step, and the
// pods to remove are marked.
type v2 struct{}

// newV2 plans the fleet: the plan joins the input the rules judge and the
// decision, and its next memory waits in the decision for settle.
func newV2(d *Decision, in *Input, st *state.State, c Config, now time.Time) v2 {
	var prev state.Service
	if st.Service != nil {
		prev = *st.Service
	}
	plan, next := sizing.Assess(in.View, prev, c.Sizing(), now)
	in.Plan, d.Plan, d.service = &plan, &plan, &next
	if plan.ForecastReset {
		d.because("forecast restarted: the stored one counted pods of work (a unit a refit of the model redefines); it now counts %s", sizing.ForecastUnit)
	}
	return v2{}
}

func (v2) planRule() rule { return rule{eval: sizingRule} }

func (v2) recommend(d *Decision, in Input, c Config, maxProp int, _ *projection) int {
	var rec int
	switch {
	case d.Signals == 0:
		rec = scaleDownToPlan(d, in, c)
	case covered(d, in, maxProp):
		rec = in.Current
	default:
		rec = reactiveStep(d, in, c, maxProp)
	}
	return sizeUp(d, rec)
}

// stabilise: the plan's hold replaces the down-window and the
// down-cooldown (a scale-down already goes no lower than the largest need
// of the hold), but no scale-down comes within the flap window of a
// scale-up (holdAfterUp); and a scale-up the plan asks for is not held by
// the up-cooldown (the plan counts the pods already starting, so it
// cannot cascade). A scale-up from reactive signals alone keeps the
// cooldown.
func (v2) stabilise(d *Decision, st *state.State, c Config, rec int, now time.Time) int {
	lastUp, _ := st.ScaleTimes(d.Current)
	switch {
	case rec < d.Current:
		return holdAfterUp(d, rec, lastUp, now, flapWindow(d.Plan))
	case rec == d.Current || d.rule(RuleSizing).Over:
		return rec
	}
	return stabiliseUp(d, st, c, d.Current, rec, lastUp, now)
}

// holdAfterUp keeps the replicas for window seconds after a scale-up.
// The hold remembers the plan's needs, not a reactive step beyond them: a
// queue that asked for 5 pods over the plan while pods were starting gave
// one back 105 s later (the demo ×4 at GPU speed 2, with an 8-minute
// hold), a reversal within the window that counts as a flap, for a pod
// that had barely become ready.
func holdAfterUp(d *Decision, rec int, lastUp *time.Time, now time.Time, window float64) int {
	if lastUp == nil {
		return rec
	}
	if age := now.Sub(*lastUp).Seconds(); age >= 0 && age <= window {
		d.because("no scale-down to %d: the last scale-up was %.0fs ago, within the %.0fs a reversal counts as a flap", rec, age, window)
		return d.Current
	}
	return rec
}

// flapWindow is the window holdAfterUp keeps: the plan's (no longer than
// its hold), or the flap window without a plan.
func flapWindow(plan *sizing.Assessment) float64 {
	if plan != nil {
		return plan.FlapWindow()
	}
	return sizing.FlapWindowSeconds
}

// settle remembers the need the hold keeps, gives the predictive floor
// the plan's need, and marks the pods a scale-down removes.
func (v2) settle(d *Decision, in Input, c Config, rec int, now time.Time) {
	if d.Plan.Valid {
		d.Need = d.Plan.Need
		// The hold keeps the arrivals' need, and the floor a scale-up a
		// reactive signal asked for while the fleet was at the plan (the
		// plan was short); one asked for while pods were still on their
		// way (a cold start, its backlog) is not kept once they have
		// arrived.
		sizing.Remember(d.service, now, d.Plan.HoldNeed)
		if rec > d.Current && !d.Plan.Below {
			sizing.RaiseFloor(d.service, now, rec, d.Plan.HoldSeconds)
		}
	}
	if c.DeletionCost && d.Target < d.Current {
		d.Victims = victims(in.Pods, d.Current-d.Target)
	}
}

// sizeUp lets the plan's proposal stand as it is: the moderate and
// decisive steps are for reactive signals, whose proposals are guesses;
// the plan's is the model's answer, and it already counts the pods
// starting.
func sizeUp(d *Decision, rec int) int {
	r := d.rule(RuleSizing)
	if !r.Over || r.Proposal <= rec {
		return rec
	}
	d.because("plan: %d pods (the model's need, not a step)", r.Proposal)
	d.DecidedBy = StepSizing
	return r.Proposal
}

// reactiveStep is policy v2's step for signals over threshold: it is
// taken from the ready pods, so the pods still starting count as the
// previous step on its way. Over a startup longer than the up-cooldown a
// step taken from the replicas asked for compounds while nothing has
// arrived (26 → 39 → 59 → 64 pods in one 3-minute startup, held for the
// whole hold afterwards); the plan sizes for the demand itself, and this
// step only answers what the ready pods are showing.
func reactiveStep(d *Decision, in Input, c Config, maxProp int) int {
	ready := max(in.Ready, 1)
	var step int
	if d.Signals == 1 {
		step = max(1, ceilInt(float64(ready)*c.ModerateFactor)-ready)
	} else {
		step = max(c.DecisiveMaxPods, ceilInt(float64(ready)*c.DecisiveMaxFraction))
	}
	rec := min(maxProp, ready+step+in.Stuck)
	if rec <= in.Current {
		d.because("%d signal(s) over threshold: a step from the %d ready pods (at most +%d) is covered by the %d asked for (%d starting)", d.Signals, ready, step, in.Current, in.Starting)
		return in.Current
	}
	d.because("%d signal(s) over threshold: step to %d (largest proposal %d, at most +%d on the %d ready pods)", d.Signals, rec, maxProp, step, ready)
	return rec
}
