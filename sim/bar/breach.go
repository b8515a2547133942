package bar

import (
	"sort"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/workload"
)

// Breach is how DownsInBreach judges the objective at a scale-down: over
// the requests whose first token came within Window before what the
// policy could see (the metric lag before the scale-down), plus those
// still without one that had already waited past the objective, more than
// Share missed it (a p95 above the objective when Share is 5 %), with at
// least MinRequests requests.
type Breach struct {
	Window, Lag float64 // seconds
	SLO         float64 // seconds
	Share       float64
	MinRequests int
}

// DefaultBreach judges the TTFT p95 over the last minute the policy saw.
func DefaultBreach(cfg engine.Config) Breach {
	return Breach{Window: 60, Lag: cfg.MetricLagSeconds, SLO: cfg.TTFTSLOSeconds, Share: 0.05, MinRequests: 20}
}

// DownsInBreach counts the scale-downs of res that happened while the TTFT
// objective was breached (reqs in arrival order, as res.TTFT is).
func (b Breach) DownsInBreach(res *engine.Result, reqs []workload.Request) int {
	n := 0
	for _, ev := range res.ScaleEvents {
		if ev.To < ev.From && b.breached(res, reqs, ev.T) {
			n++
		}
	}
	return n
}

// lookBack bounds how long before the window a request may have arrived
// and still count (a request waiting longer is rare and a miss anyway).
const lookBack = 900

// breached judges the objective at time t.
func (b Breach) breached(res *engine.Result, reqs []workload.Request, t float64) bool {
	seen := t - b.Lag
	from := sort.Search(len(reqs), func(i int) bool { return reqs[i].Arrival.Seconds() >= seen-b.Window-lookBack })
	count, miss := 0, 0
	for i := from; i < len(reqs) && i < len(res.TTFT); i++ {
		at := reqs[i].Arrival.Seconds()
		if at > seen {
			break
		}
		ttft := float64(res.TTFT[i])
		first := at + ttft
		switch {
		case first > seen-b.Window && first <= seen:
			count++
			if ttft > b.SLO {
				miss++
			}
		case first > seen && seen-at > b.SLO:
			// Still waiting (or never served: +Inf) past the objective.
			count++
			miss++
		}
	}
	return count >= b.MinRequests && float64(miss) > b.Share*float64(count)
}
