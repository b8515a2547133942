// Package evaluator runs one evaluate tick in-process: aggregation of the
// parsed metric results into a fleet view, then the policy, then the state
// bookkeeping. The evaluate binary and the simulator both call Step, so a
// decision made in-process and one made by the binary over a state file
// are the same.
package evaluator

import (
	"time"

	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

// Entry is one CPA metrics[] element after parsing: Report is nil when the
// value was empty or unusable (that pod is "missing"; evaluate must never
// scale down because of it).
type Entry struct {
	Resource string
	Report   *signal.Report
}

// Step runs aggregation + policy for one tick. It mutates st (the caller
// persists it unless dry-run).
func Step(cfg policy.Config, st *state.State, currentReplicas int, entries []Entry, now time.Time) policy.Decision {
	if st.Version == 0 {
		st.Version = state.Version
	}
	// Times are kept without monotonic readings and in UTC so that a state
	// that went through JSON gives the same results.
	now = now.Round(0).UTC()
	in := fleet.Input{}
	for _, e := range entries {
		if e.Report == nil {
			in.Missing = append(in.Missing, e.Resource)
			continue
		}
		in.Reports = append(in.Reports, e.Report)
	}
	view := fleet.Aggregate(in, st, cfg.FleetOptions(), now)
	d := policy.Decide(view, st, cfg, currentReplicas, now)
	Record(st, cfg, d, now)
	return d
}

// Record stores what the decision changes in the state: the
// recommendation (for the stabilisation windows), the scale times and the
// hourly peak of the reactive need. Scale times come from the observed
// replica count (state.ObserveReplicas): CPA may clamp or stabilise the
// target, and an unapplied recommendation must not start a cooldown.
func Record(st *state.State, cfg policy.Config, d policy.Decision, now time.Time) {
	keep := max(cfg.DownStabilization, cfg.UpStabilization) + time.Minute
	st.AddRecommendation(state.Recommendation{At: now, Replicas: d.Recommendation}, keep)
	st.ObserveReplicas(d.Current)
	if d.Target > d.Current {
		st.LastScaleUpSignals = d.Signals
	}
	st.LastTick = &now
	st.NotePeak(now, d.Need)
}
