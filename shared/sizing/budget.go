package sizing

import (
	"math"

	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/model"
	"github.com/inferscale/inferscale/shared/state"
)

// The miss budget is what the objective allows: 1 − sloAttainment of
// the requests over a window, not zero misses a tick. Its memory counts
// the recent requests and their misses with a half-life of
// BudgetHalfLife seconds; below BudgetRequests requests it does not judge.
const (
	BudgetHalfLife = 600.0
	BudgetRequests = 300.0
)

// budgetMiss is what a tick spends of the budget: its load miss, except
// in a breach read against what more pods did not move, where it is the
// miss before that less the unmoved share, whatever the sign. unmoved
// takes out at most a tick's own excess, so a tick below the average
// counts nothing and one above it counts its excess: over a window that
// spends the noise of the excess as if it were load (on long prompts off
// the prior, 2-3 % of requests while the fleet grew 40 -> 60 pods).
func budgetMiss(raw, load *float64, unmoved float64, breach bool) *float64 {
	if raw == nil || !breach || unmoved <= 0 {
		return load
	}
	signed := *raw - unmoved
	return &signed
}

// spend folds the tick into the budget's memory and returns the share of
// the recent requests that load pushed past the objective (nil: too few
// requests to say). A tick counts its load miss (waiting, and in a breach
// the misses beyond the prompts no idle pod prefills in time and beyond
// what more pods did not move: what the latency rule judges); one without
// a reading counts its TTFT misses beyond the infeasible prompts, and one
// with neither adds nothing while the memory fades, as does one while the
// fleet is below the plan.
func spend(next *state.Service, svc fleet.Service, params model.Params, o Options, load *float64, below bool) *float64 {
	s := &next.Spent
	decay := math.Exp2(-o.Interval / BudgetHalfLife)
	s.Missed, s.Requests = s.Missed*decay, s.Requests*decay
	ttft := lengths(svc.TTFT)
	switch {
	case below:
		// The plan's delay (fewer pods ready than it asked for: a cold
		// start, a scale-up on its way) is not what standing pods fix: it neither spends the budget nor, afterwards,
		// keeps pods to pay it back.
	case load != nil && loadCount(svc) > 0:
		s.Missed += *load * loadCount(svc)
		s.Requests += loadCount(svc)
	case ttft.Count > 0:
		if missed := 1 - ttft.CDF(o.TTFTSLO); finite(missed) {
			s.Missed += math.Max(0, missed-infeasibleShare(next, svc, params, o)) * ttft.Count
			s.Requests += ttft.Count
		}
	}
	s.Missed = math.Min(math.Max(s.Missed, 0), s.Requests)
	if s.Requests < BudgetRequests {
		return nil
	}
	share := s.Missed / s.Requests
	return &share
}
