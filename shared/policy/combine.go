package policy

// combine turns the rules into the recommendation: with no signal over
// threshold a scale-down if one is warranted; with one, a moderate step;
// with two or more agreeing (corroboration), a decisive one. It also sets
// the need the predictive floor remembers and whether the breach is urgent.
func combine(d *Decision, in Input, c Config, s sizer, rs []rule) int {
	maxProp := countSignals(d, c, rs)
	if in.Stuck > 0 {
		d.warn(WarnStuckPods, "%d pod(s) not ready after %s: not counted as capacity", in.Stuck, c.StuckAfter)
	}
	p := project(in, c)
	rec := s.recommend(d, in, c, maxProp, &p)
	if in.Current == 0 && rec == 0 && (in.Waiting > 0 || (in.ArrivalRate != nil && *in.ArrivalRate > 0)) {
		rec = 1
		d.DecidedBy = StepScaleFromZero
		d.because("requests are waiting with no replica: scale from zero")
	}
	d.recommended(rec)
	// P99 above 2x baseline with nothing else wrong: alert, not scale (seed 000 rule C).
	enough := in.LatencyRequests >= c.LatencyMinRequests
	if d.Signals == 0 && c.P99Baseline > 0 && in.TTFTP99 != nil && enough && *in.TTFTP99 > 2*c.P99Baseline.Seconds() {
		d.warn(WarnLatencyOutlier, "TTFT p99 %.3gs exceeds 2x baseline %s with no other signal: investigate, not scaling for it", *in.TTFTP99, c.P99Baseline)
	}
	d.Recommendation = rec
	d.Need = rec
	if d.Signals == 0 && p.needed >= 0 && p.needed < rec {
		// Holding more than the demand needs (windows, cooldowns) is not a
		// need the predictive floor should remember.
		d.Need = p.needed
	}
	// Pods still starting are the previous step's effect on its way:
	// waiting for them is what the cooldown is for.
	d.Urgent = c.UrgentBypassesCooldown && d.Signals >= 2 && (d.rule(RuleQueue).Over || d.rule(RuleLatency).Over) && in.Starting == 0
	return rec
}

// countSignals sets how many signals agree (the primary rules over
// threshold, plus a corroborating rule over its own when one of them is)
// and returns the largest primary proposal.
func countSignals(d *Decision, c Config, rs []rule) (maxProp int) {
	primaries := 0
	for i, r := range d.Rules {
		if rs[i].corroborate != nil || !r.Over {
			continue
		}
		primaries++
		maxProp = max(maxProp, r.Proposal)
		d.because("%s over threshold: %s -> proposes %d", r.Name, r.Note, r.Proposal)
	}
	d.Signals = primaries
	for i, r := range d.Rules {
		if rs[i].corroborate == nil || !r.Over {
			continue
		}
		if primaries > 0 {
			d.Signals++
		}
		d.Reasons = append(d.Reasons, rs[i].corroborate(r, c, primaries))
	}
	return maxProp
}

// covered says (and why) when the largest proposal is covered by the
// replicas already asked for: the pods starting are the step on its way.
func covered(d *Decision, in Input, maxProp int) bool {
	if avail := in.avail(); maxProp <= avail {
		d.because("proposals (max %d) are covered by the %d replicas already asked for (%d starting)", maxProp, avail, in.Starting)
		return true
	}
	return false
}
