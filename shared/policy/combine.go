package policy

// combine turns the rules into the recommendation: with no signal over
// threshold a scale-down if one is warranted; with one, a moderate step;
// with two or more agreeing (corroboration), a decisive one. It also sets
// the need the predictive floor remembers and whether the breach is urgent.
func combine(d *Decision, in Input, c Config) int {
	maxProp := countSignals(d, c)
	if in.Stuck > 0 {
		d.warn(WarnStuckPods, "%d pod(s) not ready after %s: not counted as capacity", in.Stuck, c.StuckAfter)
	}
	p := project(in, c)
	rec := recommend(d, in, c, maxProp, &p)
	if c.ServiceModel {
		rec = sizeUp(d, in, rec)
	}
	if in.Current == 0 && rec == 0 && (in.Waiting > 0 || (in.ArrivalRate != nil && *in.ArrivalRate > 0)) {
		rec = 1
		d.because("requests are waiting with no replica: scale from zero")
	}
	// P99 above 2x baseline with nothing else wrong: alert, not scale (seed 000 rule C).
	enough := in.LatencyRequests >= c.LatencyMinRequests
	if d.Signals == 0 && c.P99Baseline > 0 && in.TTFTP99 != nil && enough && *in.TTFTP99 > 2*c.P99Baseline.Seconds() {
		d.warn(WarnLatencyOutlier, "TTFT p99 %.3gs exceeds 2x baseline %s with no other signal: investigate, not scaling for it", *in.TTFTP99, c.P99Baseline)
	}
	d.Recommendation = rec
	d.Need = rec
	if in.Plan != nil && in.Plan.Valid {
		// The predictive floor remembers what the plan needed.
		d.Need = in.Plan.Need
	} else if d.Signals == 0 && p.needed >= 0 && p.needed < rec {
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
func countSignals(d *Decision, c Config) (maxProp int) {
	rs := rules(c)
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

// recommend is the step the agreeing signals allow, or the scale-down
// when none is over threshold (p.needed then also covers the recent peak).
func recommend(d *Decision, in Input, c Config, maxProp int, p *projection) int {
	current, avail := in.Current, in.avail()
	switch {
	case d.Signals == 0 && c.ServiceModel:
		return scaleDownToPlan(d, in, c)
	case d.Signals == 0:
		// Removals must also fit the peak rate of the recent past (bursts).
		if p.needed >= 0 && in.RatePeak != nil {
			if peakNeed := ceilInt(*in.RatePeak / p.perPod); peakNeed > p.needed {
				p.needed = peakNeed
				d.because("peak arrival rate %.3g req/s within %s needs %d pods", *in.RatePeak, c.PeakWindow, peakNeed)
			}
		}
		return scaleDown(d, in, c, p.needed)
	case maxProp <= avail:
		d.because("proposals (max %d) are covered by the %d replicas already asked for (%d starting)", maxProp, avail, in.Starting)
		return current
	case c.ServiceModel:
		return reactiveStep(d, in, c, maxProp)
	case d.Signals == 1:
		step := max(1, ceilInt(float64(avail)*c.ModerateFactor)-avail)
		rec := min(maxProp, avail+step) + (current - avail)
		d.because("one signal: moderate step to %d (at most +%d)", rec, step)
		return rec
	default:
		limit := max(c.DecisiveMaxPods, ceilInt(float64(avail)*c.DecisiveMaxFraction))
		rec := min(maxProp, avail+limit) + (current - avail)
		d.because("%d signals agree: decisive step to %d (largest proposal %d, cap +%d)", d.Signals, rec, maxProp, limit)
		return rec
	}
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
