package policy

import (
	"time"

	"github.com/inferscale/inferscale/shared/state"
)

// A sizer is one policy's own steps. Decide runs the steps both share
// around them: the rule evaluators and the signal count (combine), the
// floors, the bounds and the breach hold. Policy v1 (v1.go) sizes with the
// demand rule and keeps the windows and cooldowns; policy v2 (v2.go) sizes
// with the plan and keeps its hold.
type sizer interface {
	// planRule is the rule that sizes the fleet for the demand.
	planRule() rule
	// recommend is the count the rules allow before windows, cooldowns,
	// floors and bounds; maxProp is the largest primary proposal, p the
	// demand projection.
	recommend(d *Decision, in Input, c Config, maxProp int, p *projection) int
	// stabilise applies the policy's windows, cooldowns or hold to rec.
	stabilise(d *Decision, st *state.State, c Config, rec int, now time.Time) int
	// settle records what the decision leaves for the next tick and for
	// the scale-down, once d.Target is final.
	settle(d *Decision, in Input, c Config, rec int, now time.Time)
}

// pick is the one place that chooses the policy (serviceModel): v2 plans
// the fleet first (the plan is part of the input the rules judge).
func pick(d *Decision, in *Input, st *state.State, c Config, now time.Time) sizer {
	if !c.ServiceModel {
		return v1{}
	}
	return newV2(d, in, st, c, now)
}
