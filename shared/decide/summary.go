package decide

import (
	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/state"
)

// Steps that can set the target besides a rule (state.Last.DecidedBy).
const (
	DecidedByHold            = "hold"
	DecidedByScaleDown       = "scaleDown"
	DecidedByScaleFromZero   = "scaleFromZero"
	DecidedByStabilisation   = "stabilisation"
	DecidedByScheduleFloor   = "scheduleFloor"
	DecidedByPredictiveFloor = "predictiveFloor"
	DecidedByMinReplicas     = "minReplicas"
	DecidedByMaxReplicas     = "maxReplicas"
)

// Summary is what the state keeps of d for the exporter (state.Last):
// the replicas, the step that decided, policy v2's forecast, ceiling and
// headroom, the alerts' reasons. Record counts the ticks.
func Summary(d policy.Decision, mode string, cfg policy.Config) *state.Last {
	l := &state.Last{Mode: mode, Current: d.Current, Target: d.Target, MinReplicas: cfg.MinReplicas,
		MaxReplicas: cfg.MaxReplicas, DecidedBy: DecidedBy(d, cfg), SLOSeconds: cfg.TTFTSLO.Seconds()}
	for _, w := range d.Warnings {
		l.Alerts = append(l.Alerts, w.Reason)
	}
	if p := d.Plan; p != nil && p.Valid {
		l.Plan = &state.LastPlan{ForecastLevel: finite(p.Forecast.Level), ForecastUpper: finite(p.Forecast.Upper),
			CeilingRPS: finite(p.Ceiling.RequestsPerSecond), CeilingSource: p.ParamsSource, Beta: finite(p.Beta)}
	}
	return l
}

// DecidedBy names the step that set d.Target, read from the decision's
// numbers from the last step to the first (policy.Decide: rules and
// combine give the recommendation, then stabilise, floors, bounds):
//
//   - maxReplicas: the target is maxReplicas and the recommendation or a
//     floor asked for more;
//   - minReplicas: the target is minReplicas and the recommendation and
//     the floors were below it;
//   - predictiveFloor, scheduleFloor: the target is that floor, above the
//     recommendation;
//   - stabilisation: the target is not the recommendation (a window or a
//     cooldown held or shaped it);
//   - otherwise the recommendation stands: a scale-up is named by the
//     rule over threshold with the largest proposal (sizing, queue, kv,
//     batch, latency, demand; scaleFromZero when none is), a scale-down
//     is scaleDown, and no change is hold.
//
// Where two steps bind at once (a cooldown holding at maxReplicas) the
// later one is named: it would hold the target without the earlier.
func DecidedBy(d policy.Decision, cfg policy.Config) string {
	floor := max(d.ScheduleFloor, d.PredictiveFloor)
	switch {
	case d.Target == cfg.MaxReplicas && max(d.Recommendation, floor) > cfg.MaxReplicas:
		return DecidedByMaxReplicas
	case d.Target == cfg.MinReplicas && max(d.Recommendation, floor) < cfg.MinReplicas:
		return DecidedByMinReplicas
	case d.PredictiveFloor > d.Recommendation && d.Target == d.PredictiveFloor:
		return DecidedByPredictiveFloor
	case d.ScheduleFloor > d.Recommendation && d.Target == d.ScheduleFloor:
		return DecidedByScheduleFloor
	case d.Target != d.Recommendation:
		return DecidedByStabilisation
	case d.Target < d.Current:
		return DecidedByScaleDown
	case d.Target == d.Current:
		return DecidedByHold
	}
	best, name := 0, DecidedByScaleFromZero
	for _, r := range d.Rules {
		if r.Over && r.Name != policy.RuleGPU && r.Proposal > best {
			best, name = r.Proposal, r.Name
		}
	}
	return name
}
