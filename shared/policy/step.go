package policy

// Step names the step that set a decision's target (Decision.DecidedBy):
// the last step that changed the count, in the order Decide runs them.
// The values are fixed; the exporter serves them as decided_by.
type Step string

// The steps. A scale-up the recommendation carries is named by its rule.
const (
	// StepSizing .. StepDemand: the rule whose proposal the scale-up
	// follows (v2's plan when it raises the count to its need, else the
	// rule over threshold with the largest proposal).
	StepSizing  Step = RuleSizing
	StepQueue   Step = RuleQueue
	StepBatch   Step = RuleBatch
	StepKV      Step = RuleKV
	StepLatency Step = RuleLatency
	StepDemand  Step = RuleDemand
	// StepScaleFromZero: requests wait with no replica and no rule asked.
	StepScaleFromZero Step = "scaleFromZero"
	// StepScaleDown: the recommendation removes pods.
	StepScaleDown Step = "scaleDown"
	// StepHold: the recommendation is the current count.
	StepHold Step = "hold"
	// StepStabilisation: a stabilisation window or a cooldown (v1), or the
	// up-cooldown (v2), changed the recommendation.
	StepStabilisation Step = "stabilisation"
	// StepScheduleFloor, StepPredictiveFloor, StepRatioFloor: the floor
	// raised the count.
	StepScheduleFloor   Step = "scheduleFloor"
	StepPredictiveFloor Step = "predictiveFloor"
	StepRatioFloor      Step = "ratioFloor"
	// StepMaxReplicas, StepMinReplicas: the bound clamped the count.
	StepMaxReplicas Step = "maxReplicas"
	StepMinReplicas Step = "minReplicas"
	// StepBreachHold: an objective is breached, so no scale-down.
	StepBreachHold Step = "breachHold"
)

// recommended names the step the recommendation rec is: a scale-down, a
// hold, or a scale-up by the rule the sizer named (sizeUp) or else by the
// primary rule over threshold with the largest proposal.
func (d *Decision) recommended(rec int) {
	switch {
	case rec < d.Current:
		d.DecidedBy = StepScaleDown
		return
	case rec == d.Current:
		d.DecidedBy = StepHold
		return
	case d.DecidedBy != "":
		return
	}
	best, by := 0, StepScaleFromZero
	for _, r := range d.Rules {
		if r.Over && r.Name != RuleGPU && r.Proposal > best {
			best, by = r.Proposal, Step(r.Name)
		}
	}
	d.DecidedBy = by
}

// changed records step as the one that set the target when it moved the
// count from before to after, and returns after.
func (d *Decision) changed(step Step, before, after int) int {
	if after != before {
		d.DecidedBy = step
	}
	return after
}
