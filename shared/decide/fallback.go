package decide

import (
	"encoding/json"
	"fmt"

	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/state"
)

// held stands in for a decision that cannot be encoded: a number inside
// it is NaN or infinite (a value out of range reached the arithmetic).
// No count follows from such a decision, so the tick holds the current
// one, the service memory starts fresh (the likeliest source), and a
// Warning says so; the next tick decides afresh.
func held(d policy.Decision, cfg policy.Config, cause error) (policy.Decision, state.Decided) {
	v := d.Fleet
	h := policy.Decision{Current: d.Current, Target: d.Current, Recommendation: d.Current, DecidedBy: policy.StepHold,
		Fleet: fleet.View{Ready: v.Ready, Starting: v.Starting, Stuck: v.Stuck, Terminating: v.Terminating,
			Missing: v.Missing, MissingNames: v.MissingNames, Unreported: v.Unreported}}
	h.Reasons = []string{fmt.Sprintf("hold at %d: the decision held a number that is not finite (%v); the service memory starts fresh", d.Current, cause)}
	h.Warn(policy.WarnStateReset, "decision not finite; held the current count and reset the service memory")
	mem := h.Memory(cfg)
	mem.ResetService = true
	return h, mem
}

// encodable reports why d cannot be encoded as JSON (nil: it can).
func encodable(d policy.Decision) error {
	_, err := json.Marshal(d)
	return err
}
