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
// the recent requests that load pushed past the objective, and the ready
// fleet it was read at (0: the whole window; nil: too few requests to
// say). A tick counts its load miss (waiting, and in a breach the misses
// beyond the prompts no idle pod prefills in time and beyond what more
// pods did not move: what the latency rule judges); one without a reading
// counts its TTFT misses beyond the infeasible prompts, and one with
// neither adds nothing while the memory fades, as does one while the
// fleet is below the plan.
//
// The share is read over the ticks since the ready fleet last grew once
// they saw BudgetRequests requests (or missed more than that many may):
// what the budget judges is whether the fleet that is there misses too
// often. Before that the whole window's share is read, capped at the
// aim: the misses in it were a smaller fleet's, history that more pods
// cannot undo, so they may pay for a breach but never buy a pod. Counted
// against the larger fleet, they kept Mooncake's breaches adding a pod
// for 20 minutes after the fleet had grown past what the objective needs
// (19 ready pods missing about 0.5 % while the window still read 1.5 %
// from the first minutes at 6-15); uncapped while the grown fleet was
// young, one pod a cooldown at 4 requests/s (never 300 requests at one
// fleet) took Mooncake on a half-speed GPU to 49 pods where 31 meet the
// objective. The requests the share is over are returned too, for
// spentUpper. A step down goes on with the record: the smaller fleet's
// misses add to it, and a pod comes
// back once they overspend it (restarting it there sent the first breach
// after each step back to the whole window, and Mooncake's flaps up).
func spend(next *state.Service, svc fleet.Service, params model.Params, o Options, load *float64, below bool, ready int) (*float64, int, float64) {
	s, target := &next.Spent, o.target()
	switch {
	case ready > s.Fleet:
		s.Fleet, s.FleetMissed, s.FleetRequests = ready, 0, 0
	case ready < s.Fleet:
		s.Fleet = ready
	}
	decay := math.Exp2(-o.Interval / BudgetHalfLife)
	var missed, requests float64
	if !below {
		// Below the plan (fewer pods ready than it asked for: a cold
		// start, a scale-up on its way) the misses are its delay, which
		// standing pods do not fix: they neither spend the budget nor,
		// afterwards, keep pods to pay it back.
		missed, requests = tickSpend(next, svc, params, o, load)
	}
	tally(&s.Missed, &s.Requests, decay, missed, requests)
	tally(&s.FleetMissed, &s.FleetRequests, decay, missed, requests)
	switch {
	case s.FleetRequests >= BudgetRequests:
		return new(s.FleetMissed / s.FleetRequests), ready, s.FleetRequests
	case s.Requests >= BudgetRequests && s.FleetMissed > BudgetRequests*target:
		// Too few requests since the fleet grew to judge it, but already
		// more misses than a whole window of them may have: evidence.
		return new(s.FleetMissed / math.Max(s.FleetRequests, 1)), ready, s.FleetRequests
	case s.Requests >= BudgetRequests:
		// The window's misses were made by a smaller fleet: they may pay
		// for a breach, never buy a pod for this one.
		return new(math.Min(s.Missed/s.Requests, target)), 0, s.Requests
	}
	return nil, 0, 0
}

// spentUpper is the share's upper bound by one Poisson standard deviation
// of the misses behind it (at least of one miss): what a step down must
// keep within the aim. The share of a window of a few thousand requests
// wanders by a quarter of itself from tick to tick; a step taken the tick
// it dipped under the aim was undone by the next breach, a flap.
func spentUpper(share *float64, requests float64) *float64 {
	if share == nil || !(requests > 0) {
		return share
	}
	return new(*share + math.Sqrt(math.Max(*share, 1/requests)/requests))
}

// tally fades a count of misses among requests by decay and adds a
// tick's (the misses kept within 0 and the requests).
func tally(missed, requests *float64, decay, m, r float64) {
	*missed, *requests = *missed*decay+m, *requests*decay+r
	*missed = math.Min(math.Max(*missed, 0), *requests)
}

// tickSpend is what one tick adds to the budget's memory: its misses and
// the requests they are a share of.
func tickSpend(next *state.Service, svc fleet.Service, params model.Params, o Options, load *float64) (missed, requests float64) {
	if load != nil && loadCount(svc) > 0 {
		return *load * loadCount(svc), loadCount(svc)
	}
	ttft := lengths(svc.TTFT)
	if ttft.Count > 0 {
		if m := 1 - ttft.CDF(o.TTFTSLO); finite(m) {
			return math.Max(0, m-infeasibleShare(next, svc, params, o)) * ttft.Count, ttft.Count
		}
	}
	return 0, 0
}
