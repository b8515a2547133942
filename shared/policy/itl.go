package policy

import "fmt"

// itl is the inter-token-latency objective (itlSLO; off by default): the
// inter-token gaps' p95 against it. What shortens the gaps is a smaller
// running batch on each pod, so a breach asks for one pod more than are
// ready, tick after tick while it lasts; the plan's ceiling (which keeps
// the modelled step within the objective) sizes the fleet, and the rule
// only makes sure it grows meanwhile. Where the fitted step's fixed cost
// alone exceeds the objective, no pod count meets it: an alert, not a
// scale. A pod whose gaps could not be read this tick holds a scale-down
// (unknown is never low).
func itl(in Input, c Config) Rule {
	r := Rule{Name: RuleITL, Threshold: 1, Low: true}
	if c.ITLSLO <= 0 {
		return r
	}
	slo := c.ITLSLO.Seconds()
	if in.ITLP95 == nil || in.LatencyRequests < c.LatencyMinRequests {
		if len(in.LatencyUnread) > 0 {
			r.Low = false
			r.Note = fmt.Sprintf("inter-token latency of %d pod(s) unread this tick %v", len(in.LatencyUnread), in.LatencyUnread)
		}
		return r
	}
	ratio := *in.ITLP95 / slo
	r.Value = new(ratio)
	r.Note = fmt.Sprintf("inter-token p95 %.3gs vs SLO %s", *in.ITLP95, c.ITLSLO)
	r.Over = ratio > 1
	r.Low = ratio < c.LatencyLowFraction && len(in.LatencyUnread) == 0
	if !r.Over {
		return r
	}
	if in.Plan != nil && in.Plan.Ceiling.StepUnmet {
		r.Over = false
		r.Note += fmt.Sprintf(": the fitted step's fixed cost %.3gs alone exceeds it, more replicas would not help", in.Plan.Params.Alpha)
		r.alerts = append(r.alerts, Warning{WarnITLUnmet, fmt.Sprintf("inter-token p95 %.3gs above the objective %s, which the fitted step's fixed cost (%.3gs a token at any load) already exceeds: more replicas would not help", *in.ITLP95, c.ITLSLO, in.Plan.Params.Alpha)})
		return r
	}
	r.Proposal = in.base() + 1
	r.Note += ": one pod more"
	return r
}
