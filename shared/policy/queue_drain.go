package policy

import "fmt"

// drainedInTime is policy v2's judgement of a queue over its target: a
// backlog that the ready pods' spare capacity (the fitted model's ceiling
// less the arrivals) drains within half the TTFT objective, while the
// plan's need is no more than the pods that are ready, is a burst the
// fleet's queues absorb within the objective, not pressure: a pod more
// for it was held by its floor for the hold and more (ServeGen's morning
// at one pod: 9 waiting for a second, the TTFT p95 at 50 ms, three pods
// for 15 minutes). On the prior, or with no plan, the queue stands; so it
// does when it counts the running requests too (queueIncludesRunning: a
// concurrency target, not a backlog).
func drainedInTime(r Rule, in Input, c Config) Rule {
	p := in.Plan
	if !r.Over || p == nil || !p.Valid || p.ParamsSource == "prior" || c.TTFTSLO <= 0 || p.Need > in.Ready || c.QueueIncludesRunning {
		return r
	}
	spare := float64(in.Ready)*p.Ceiling.RequestsPerSecond - p.ArrivalRate
	if !(spare > 0) {
		return r
	}
	drain := in.Waiting / spare
	if drain > c.TTFTSLO.Seconds()/2 {
		return r
	}
	r.Over, r.Proposal = false, 0
	r.Note += fmt.Sprintf(", but the %d ready pods drain it in %.2gs (%.3g req/s spare at the plan's ceiling): absorbed within the objective", in.Ready, drain, spare)
	return r
}
