// Package decide is inferscale's evaluate stage: it parses the CPA
// evaluate input, loads the state, runs the pure middle (fleet.Aggregate,
// then policy.Decide), records the tick (state.Record), saves the state
// and prints the decision. The evaluate binary calls Run; the simulator's
// fast mode calls Step, the same code path without a process, so a
// decision made in-process and one made by the binary over a state file
// are the same.
package decide

import (
	"fmt"
	"strings"
	"time"

	"github.com/inferscale/inferscale/shared/decisionlog"
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

// Step decides one tick and records it into st (the caller persists st
// unless dry-run). A target whose autoscaling is disabled is held and st
// is left untouched (see Disabled).
func Step(cfg policy.Config, st *state.State, currentReplicas int, entries []Entry, now time.Time) policy.Decision {
	d, tick, ok := decideTick(cfg, st, currentReplicas, entries, now)
	if ok {
		st.Record(tick)
	}
	return d
}

// decideTick is Step without the recording: the decision and the tick to
// record (ok false: nothing to record, autoscaling is disabled).
func decideTick(cfg policy.Config, st *state.State, currentReplicas int, entries []Entry, now time.Time) (policy.Decision, state.Tick, bool) {
	// Times are kept without monotonic readings and in UTC so that a state
	// that went through JSON gives the same results.
	now = now.Round(0).UTC()
	in := fleet.Input{Replicas: currentReplicas}
	for _, e := range entries {
		if e.Report == nil {
			in.Missing = append(in.Missing, e.Resource)
			continue
		}
		in.Reports = append(in.Reports, e.Report)
	}
	view, seen := fleet.Aggregate(in, st, cfg.Options, now)
	if Disabled(cfg, currentReplicas) {
		return policy.Decision{Fleet: view, Reasons: []string{fmt.Sprintf(
			"autoscaling disabled: spec.replicas is 0 and minReplicas is %d (CPA does not scale such a target); holding, state untouched", cfg.MinReplicas)}}, state.Tick{}, false
	}
	basis, gap := afterGap(cfg, st, now)
	d := policy.Decide(view, basis, cfg, currentReplicas, now)
	if gap != "" {
		d.Reasons = append(d.Reasons, gap)
	}
	d.Reasons = append(d.Reasons, noPodList(view)...)
	mem := d.Memory(cfg)
	if err := encodable(d); err != nil {
		d, mem = held(d, cfg, err)
	}
	mem.Last = Summary(d, decisionlog.Active, cfg)
	return d, state.Tick{At: now, Observed: seen, Decided: mem}, true
}

// noPodList says, on every tick it lasts, that the fleet report came
// without the pod list (Prometheus mode, the list refused or failed): the
// ready count is Prometheus's or unknown, and no scale-down is allowed
// (issue 15, N10); a scale-up still follows the fleet-wide readings.
func noPodList(v fleet.View) []string {
	var out []string
	for _, n := range v.MissingNames {
		if strings.HasPrefix(n, "fleet(no pod list") {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(n, "fleet("), ")")+
				"; scale-ups follow the fleet-wide queue and latency from Prometheus, no scale-down until the pod list is back")
		}
	}
	return out
}

// Disabled reports whether CPA has autoscaling of the target switched off:
// spec.replicas 0 with a minReplicas above 0 (CPA then patches nothing).
// Deciding on it would record a scale-down to 0 and, on re-enable, a
// "scale-up" whose cooldown holds the next real one.
func Disabled(cfg policy.Config, currentReplicas int) bool {
	return currentReplicas == 0 && cfg.MinReplicas > 0
}
