package decide

import (
	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/state"
)

// Summary is what the state keeps of d for the exporter (state.Last):
// the replicas, the step that decided (policy.Decision.DecidedBy), policy
// v2's forecast, ceiling and headroom, the alerts' reasons. Record counts
// the ticks.
func Summary(d policy.Decision, mode string, cfg policy.Config) *state.Last {
	l := &state.Last{Mode: mode, Current: d.Current, Target: d.Target, MinReplicas: cfg.MinReplicas,
		MaxReplicas: cfg.MaxReplicas, DecidedBy: string(d.DecidedBy), SLOSeconds: cfg.TTFTSLO.Seconds()}
	for _, w := range d.Warnings {
		l.Alerts = append(l.Alerts, w.Reason)
	}
	if p := d.Plan; p != nil && p.Valid {
		l.Plan = &state.LastPlan{ForecastLevel: finite(p.Forecast.Level), ForecastUpper: finite(p.Forecast.Upper),
			CeilingRPS: finite(p.Ceiling.RequestsPerSecond), CeilingSource: p.ParamsSource, Beta: finite(p.Beta),
			SurgeReserve: new(finite(p.Reserve)), ReserveLearned: p.ReserveLearned, Need: new(p.Need), Hold: new(p.Hold), Floor: p.Floor}
	}
	return l
}
