package policy

import (
	"fmt"
	"math"
)

// latency is the latency SLO: the worst of the TTFT and e2e p95 against
// their objectives, proposing the ready pods times that ratio, capped at
// latencyMaxFactor.
func latency(in Input, c Config) Rule {
	r := Rule{Name: RuleLatency, Threshold: 1, Low: true}
	// Fewer finished requests than latencyMinRequests give no quantile.
	enough := in.LatencyRequests >= c.LatencyMinRequests
	var ratio float64
	var have bool
	if c.TTFTSLO > 0 && in.TTFTP95 != nil && enough {
		ratio, have = *in.TTFTP95/c.TTFTSLO.Seconds(), true
		r.Note = fmt.Sprintf("TTFT p95 %.3gs vs SLO %s", *in.TTFTP95, c.TTFTSLO)
	}
	if c.E2ESLO > 0 && in.E2EP95 != nil && enough {
		if e := *in.E2EP95 / c.E2ESLO.Seconds(); !have || e > ratio {
			ratio = e
			r.Note = fmt.Sprintf("e2e p95 %.3gs vs SLO %s", *in.E2EP95, c.E2ESLO)
		}
		have = true
	}
	// A pod whose latency could not be read this tick may be the slow
	// one: unknown is never low, so it holds a scale-down.
	unread := (c.TTFTSLO > 0 || c.E2ESLO > 0) && len(in.LatencyUnread) > 0
	if !have {
		switch {
		case unread:
			r.Low = false
			r.Note = fmt.Sprintf("latency of %d pod(s) unread this tick %v", len(in.LatencyUnread), in.LatencyUnread)
		case ttftUnexported(in, c):
			// Requests were scheduled but no TTFT was seen: the server
			// exports none (TGI), so the objective is never judged low.
			r.Low = false
			r.Note = fmt.Sprintf("%.0f requests scheduled but no TTFT exported: the objective cannot be judged", in.Service.Queue.Count)
		}
		return r
	}
	r.Value = new(ratio)
	r.Over = ratio > 1
	r.Low = ratio < c.LatencyLowFraction && !unread
	if r.Over {
		r.Proposal = ceilInt(float64(in.base()) * math.Min(ratio, c.LatencyMaxFactor))
	}
	// TTFT is mostly queueing: a breach with nothing waiting and batch and
	// KV within target is not load-driven (long prompts, a slow model) and
	// more replicas would not fix it. Nor does it block a scale-down:
	// removals are judged on the queue, batch, KV and demand headroom.
	if waited := queueingMiss(in.Plan); waited != nil {
		// A breach now is waiting that cost more than the whole miss
		// budget (twice what the plan aims for).
		// On the unconfirmed prior the attribution is a guess: it excuses
		// no latency from holding a scale-down.
		r = byWaiting(r, *waited, 2*in.Plan.Target, unread || in.Plan.ParamsSource == "prior", in.base())
		return withinBudget(r, in.Plan.Spent, in.Plan.SpentFleet, 1-c.SLOAttainment)
	}
	if c.LatencyNeedsLoad && r.Over && queue(in, c).Low && !batch(in, c).Over && !kv(in, c).Over {
		r.Over, r.Proposal, r.Low = false, 0, true
		r.Note += " with nothing waiting: not load-driven"
		r.alerts = append(r.alerts, Warning{WarnNotLoadDriven, fmt.Sprintf("latency above the SLO (%s) while nothing queues and batch/KV have headroom: more replicas would not help", r.Note)})
	}
	return r
}

// byWaiting is policy v2's judgement of a latency reading: what more pods
// fix is the time requests waited to be scheduled, which the plan reads
// from the queue-time histogram. A breach that waiting did not cause
// (long prompts, a slow model) is an alert, not a scale, and a latency
// near the objective that waiting does not explain does not hold a
// scale-down either. A breach that waiting did cause asks for one pod
// more than are ready: the TTFT p95 mixes prefill with waiting, so the
// HPA-style ready × ratio says nothing about how many pods the waiting
// needs (on long-prompt traffic it asked for 2× and the plan removed them
// again 10 minutes later); the plan's headroom learns that from the same
// misses, and the breach only makes sure the fleet grows meanwhile.
// strict (a pod's latency unread, or the model on its unconfirmed prior):
// only a latency under the low-water mark reads as low.
func byWaiting(r Rule, waited, target float64, strict bool, base int) Rule {
	caused := waited > target
	switch {
	case r.Over && !caused:
		r.Over, r.Proposal = false, 0
		r.Note += fmt.Sprintf(" but load (waiting, prefills stretched by other requests) pushed only %.2g%% of requests past it: not load-driven", 100*waited)
		r.alerts = append(r.alerts, Warning{WarnNotLoadDriven, fmt.Sprintf("latency above the SLO (%s) although load (waiting, stretched prefills) explains it for only %.2g%% of requests: more replicas would not help", r.Note, 100*waited)})
		r.Low = !strict
	case !r.Over && !caused:
		r.Low = r.Low || !strict
	case r.Over && caused:
		r.Proposal = min(r.Proposal, base+1)
		r.Note += fmt.Sprintf(", load (waiting, stretched prefills) pushed %.2g%% of requests past it: one pod more", 100*waited)
	}
	return r
}

// ttftUnexported reports a TTFT objective the pods give no reading for
// while the queue-time histogram shows requests being scheduled.
func ttftUnexported(in Input, c Config) bool {
	return c.TTFTSLO > 0 && in.Service.TTFT.Count == 0 && in.Service.Queue.Count >= float64(max(c.LatencyMinRequests, 1))
}

// withinBudget pays a load-driven breach from the miss budget: the
// objective is a share of the requests over a window, so while the recent
// requests (sizing.BudgetHalfLife) missed it no more often than it allows
// (budget, 1 − sloAttainment), a tick over it adds no pod. The whole
// budget, not the share the plan's headroom aims at (sizing.WaitShare of
// it): at that share, on long prompts, whose stretched prefills miss
// less by only a fraction of a point per pod, each breach past it bought
// a pod the cheapest static fleet of the same attainment does without
// (docs/performance.md, "Stop 35"). Each such pod was held for
// the whole hold and the next breach added one more on top: on long
// prompts colliding on a pod, the fleet climbed to 30 pods where 12 meet
// the objective. The breach still holds every scale-down, and it is not
// low; once the misses use more than the budget's share, the pod comes.
// The share is that of the requests since the ready fleet last grew (to
// fleet, once enough were seen since): misses a smaller fleet made do not
// buy pods for a larger one.
func withinBudget(r Rule, spent *float64, fleet int, budget float64) Rule {
	if !r.Over || spent == nil || *spent > budget {
		return r
	}
	r.Over, r.Proposal, r.Low = false, 0, false
	who := "the recent requests"
	if fleet > 0 {
		who = fmt.Sprintf("the recent requests at %d ready pods", fleet)
	}
	r.Note += fmt.Sprintf(", but %s missed it only %.2g%% of the time (the objective allows %.2g%%): paid from the miss budget, no pod more", who, 100**spent, 100*budget)
	return r
}
