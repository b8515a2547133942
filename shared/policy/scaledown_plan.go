package policy

import (
	"fmt"

	"github.com/inferscale/inferscale/shared/sizing"
)

// scaleDownToPlan is v2's scale-down: to the largest need of the hold, in
// one step, when the plan is warm, no data is missing, nothing is
// starting, nothing waits and the latency is well under the objective.
func scaleDownToPlan(d *Decision, in Input, c Config) int {
	current := in.Current
	floor := max(c.MinReplicas, 1)
	if why := downBlocked(in, c, floor); why != "" {
		d.because("%s", why)
		return current
	}
	var high []string
	for _, name := range []string{RuleQueue, RuleLatency, RuleSizing} {
		if !d.rule(name).Low {
			high = append(high, name)
		}
	}
	if len(high) > 0 {
		d.because("hold: no signal over threshold, but %v not low%s", high, holdNote(in.Plan, d.rule(RuleSizing).Low))
		return current
	}
	to := downTo(in, floor)
	d.because("plan: the largest need of the last %.0fs is %d: scale down to %d in one step", in.Plan.HoldSeconds, in.Plan.Hold, to)
	return to
}

// holdNote says what keeps the plan's hold where it is when the sizing
// rule holds the fleet (not low): the floor of a reactive scale-up the
// plan was short for, the largest need of the hold's window, or the need
// now. Without it an operator read "[sizing] not low" beside a sizing rule
// whose value (the need now) was a third of the fleet held.
func holdNote(p *sizing.Assessment, low bool) string {
	if low || p == nil || !p.Valid {
		return ""
	}
	now := max(p.Need, p.NeedDown)
	switch {
	case p.Floor > 0 && p.Floor >= p.Hold && p.Floor > now:
		return fmt.Sprintf(": the plan keeps %d, the floor of a reactive scale-up it was short for (its need now is %d; the floor comes down a pod a minute once no objective is breached and the recent requests miss within its aim)", p.Hold, p.Need)
	case p.Hold > now:
		return fmt.Sprintf(": the plan keeps %d, the largest need of the last %.0fs (its need now is %d)", p.Hold, p.HoldSeconds, p.Need)
	case p.NeedDown > p.Need:
		return fmt.Sprintf(": the plan needs %d, %d with %.0f%% more demand (what a scale-down keeps)", p.Need, p.NeedDown, 100*sizing.DownTolerance)
	}
	return fmt.Sprintf(": the plan needs %d", p.Need)
}

// downTo is the count a scale-down goes to: the hold's need and the stuck
// pods, at least floor.
func downTo(in Input, floor int) int { return max(in.Plan.Hold+in.Stuck, floor) }

// downBlocked says why no scale-down may happen now ("" when one may).
func downBlocked(in Input, c Config, floor int) string {
	switch {
	case in.Current <= floor:
		return fmt.Sprintf("no signal over threshold; at the minimum (%d)", floor)
	case in.Missing > 0:
		// A missing or stale signal never causes a scale-down.
		return fmt.Sprintf("no scale-down: %d pod(s) with missing, failed or stale data %v", in.Missing, in.MissingNames)
	case in.Starting > 0:
		return fmt.Sprintf("no scale-down: %d pod(s) still starting", in.Starting)
	case in.Ready == 0:
		return "no scale-down: no ready pod reports"
	case in.Plan == nil || !in.Plan.Valid:
		return "no scale-down: no demand reading"
	case !in.Plan.Warm:
		return fmt.Sprintf("no scale-down: the plan has seen less than one hold (%.0fs) of demand", in.Plan.HoldSeconds)
	case in.Plan.ParamsSource == "prior" && !ttftConfirms(in, c) && !oneEach(in, downTo(in, floor)):
		// Nothing the server reported has fitted the model, and no latency
		// reading says the fleet copes: the prior alone never removes pods
		// that would have to batch what is in flight.
		return "no scale-down: the model is the unconfirmed prior and no TTFT reading confirms the fleet copes"
	}
	return ""
}

// ttftConfirms says a TTFT reading confirms the fleet copes: a quantile
// over enough requests, or, at traffic too low for that, requests that did
// finish with a p95 under latencyLowFraction of the objective.
func ttftConfirms(in Input, c Config) bool {
	switch {
	case in.TTFTP95 == nil:
		return false
	case in.LatencyRequests >= c.LatencyMinRequests:
		return true
	}
	return in.LatencyRequests > 0 && c.TTFTSLO > 0 && *in.TTFTP95 < c.LatencyLowFraction*c.TTFTSLO.Seconds()
}

// oneEach says the fleet is so lightly used that to pods hold what is in
// flight one request each, with nothing waiting: the smaller fleet does not
// batch, so the removal does not rest on the model's batch capacity (a low
// traffic fleet finishes too few requests a tick for a TTFT reading, and
// the prior alone must not keep it at its peak size for good).
func oneEach(in Input, to int) bool {
	return in.Waiting == 0 && in.Running <= float64(to)
}
