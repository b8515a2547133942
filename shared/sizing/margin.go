package sizing

import (
	"math"

	"github.com/inferscale/inferscale/shared/model"
)

// workRate is w/τ of leastHeadroom: a request's work over the time in
// which a pod must absorb it, at the ceiling c.
//
// A prefill is due within the TTFT objective. The decode work is not: it
// lands a step at a time over the generation, the output tokens at the
// step time α/(1−c) of a pod at the ceiling, and its margin is that of
// the sequences in the batch (M/G/∞: √ of their number), not that of a
// queue of prefills. So a decode pool, whose requests arrive prefilled,
// takes its whole work over the generation; a unified or prefill pool
// takes the prefill over the objective and the rest over the generation —
// once the model is fitted from both series, which is what tells the two
// apart. On the prior or a partly fitted model (a server that exports
// fewer series: TGI's set, no TTFT) the whole work stays within the
// objective, the larger margin, as before. Taking a decode pool's answers
// as due within its 0.5 s leg priced them 10× and more (1.3 × the decode
// pods the static pair needs), and a unified pool's answers held ServeGen's
// one-pod fleets at two.
func (o Options) workRate(p model.Params, m model.Mix, c float64, fitted bool) float64 {
	w := p.Work(m)
	if !(c < 1) || !o.Decode && !fitted {
		return w / o.TTFTSLO
	}
	generation := math.Max(o.TTFTSLO, math.Max(m.OutputTokens, 1)*p.Alpha/(1-c))
	if o.Decode {
		return w / generation
	}
	prefill := math.Min(p.Beta*m.PromptTokens, w)
	return prefill/o.TTFTSLO + (w-prefill)/generation
}

// staff is the plan's fleet for r pods of offered load at headroom β:
// square-root staffing (Staff), and at least SurgeReserve of the load
// more (DecodeReserve in a decode pool). The reserve is what meets a
// surge before new pods are ready — a flash crowd that doubles the load
// within seconds finds only the pods already there, and the pods asked
// for then arrive a startup later. The margin over the objective had
// played that part while it took a request's whole work as due within it
// (20–40 % of the load at 10–30 pods, more on fewer); with the decode
// work over its generation, the reserve is stated. A decode pool's
// overload slows its streams, where a prefill queue's misses whole
// requests, so it keeps less. Measured on the bar at 0.2–0.4 (0.1–0.35
// for the decode pools): docs/performance.md.
func (o Options) staff(r, beta float64) int {
	n := Staff(r, beta, o.MaxPods)
	if !(r > 0) {
		return n
	}
	reserve := SurgeReserve
	if o.Decode {
		reserve = DecodeReserve
	}
	return max(n, min(int(math.Ceil(r*(1+reserve)-1e-9)), max(o.MaxPods, 1)))
}
