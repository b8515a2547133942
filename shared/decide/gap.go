package decide

import (
	"fmt"
	"time"

	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/state"
)

// afterGap is the state the policy decides on when no tick was recorded
// for at least a scale-down hold (the CPA pod was down, the state kept):
// what the windows and the hold saw is that old, so the tick counts as
// unknown, as a fresh state does — no recommendation history, a service
// memory that has seen no tick of the hold — and no scale-down follows
// until the hold is seen again. st is not changed; the reason says so.
func afterGap(cfg policy.Config, st *state.State, now time.Time) (*state.State, string) {
	hold := max(cfg.ScaleDownHold, cfg.DownStabilization)
	if st.LastTick == nil || hold <= 0 {
		return st, ""
	}
	gap := now.Sub(*st.LastTick)
	if gap < hold {
		return st, ""
	}
	c := *st
	c.Recommendations = nil
	if st.Service != nil {
		svc := st.Service.Clone()
		svc.Ticks, svc.Needs = 0, nil
		c.Service = &svc
	}
	return &c, fmt.Sprintf("no tick for %s (at least the %s hold): the windows start afresh, no scale-down until the hold is seen again", gap.Round(time.Second), hold)
}
