package policy

import (
	"fmt"
	"math"

	"github.com/inferscale/inferscale/shared/sizing"
)

// absorbedInTime is policy v2's judgement of a queue over its target: a
// backlog whose last request the ready pods start in time for its first
// token (waitAllowed; the waiting over what they serve at the fitted model's
// ceiling), while they have capacity to spare over the arrivals (so the
// backlog shrinks) and the plan's need is no more than the pods that are
// ready, is a burst the fleet's queues absorb within the objective, not
// pressure: a pod more for it was held by its floor for the hold and more
// (ServeGen's morning at one pod: 9 waiting for a second, the TTFT p95 at
// 50 ms, three pods for 15 minutes). What a request waits is the work
// ahead of it over the rate the pods serve, not the time the backlog
// takes to empty, which the arrivals stretch (judged so until stop 36, 8
// waiting at 13.5 req/s on a pod that serves 15.6 read 3.8 s, and added
// two pods at a TTFT p95 of 40 ms). On the prior, or with no plan, the
// queue stands; so it does when it counts the running requests too
// (queueIncludesRunning: a concurrency target, not a backlog).
func absorbedInTime(r Rule, in Input, c Config) Rule {
	p := in.Plan
	if !r.Over || p == nil || !p.Valid || p.ParamsSource == "prior" || c.TTFTSLO <= 0 || p.Need > in.Ready || c.QueueIncludesRunning {
		return r
	}
	served := float64(in.Ready) * p.Ceiling.RequestsPerSecond
	spare := served - p.ArrivalRate
	if !(spare > 0) {
		return r
	}
	wait := in.Waiting / served
	if wait > waitAllowed(p, c) {
		return r
	}
	r.Over, r.Proposal = false, 0
	r.Note += fmt.Sprintf(", but the %d ready pods start its last request within %.2gs (%.3g req/s at the plan's ceiling, %.3g spare): absorbed within the objective", in.Ready, wait, served, spare)
	return r
}

// waitAllowed is how long the last waiting request may wait and still get
// its first token within the objective: what the objective leaves beyond
// the isolated prefill of the mix's mean prompt, and at least half of it
// (half when no prompt length is known: Triton counts no prompt tokens,
// and an unknown prefill is not a short one).
// Half whatever the prompt (until stop 43) read 12 requests waiting on
// three pods for 1.1 s as pressure where their prompts prefill in 0.1 s
// (Mooncake on a fast GPU, TTFT p95 0.55 s): each time one pod more, given
// back after the hold, two flaps an hour on BLIS's engine.
func waitAllowed(p *sizing.Assessment, c Config) float64 {
	slo := c.TTFTSLO.Seconds()
	prompt := p.Mix.PromptTokens
	if !(prompt > 0) {
		return slo / 2
	}
	return math.Max(slo/2, slo-p.Params.Isolated(prompt, float64(c.MaxNumBatchedTokens)))
}
