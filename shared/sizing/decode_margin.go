package sizing

import (
	"math"

	"github.com/inferscale/inferscale/shared/model"
)

// workWindow is the time τ over which the arrivals' work must be absorbed
// (leastHeadroom). In a unified or prefill pool a request's prefill is due
// within the TTFT objective, so τ is the objective. A decode pool's
// requests arrive prefilled: each one's work lands a step at a time over
// its generation, its output tokens at the step time α/(1−c) of a pod at
// the ceiling c, and the margin the arrivals need is that of the sequences
// in the batch (M/G/∞: √ of their number), not that of a queue of
// prefills. Taking the decode work as due within the objective (0.5 s on
// a decode leg) priced it 10× and more: a decode pool at 1.3 × the
// pods the static pair needs.
func (o Options) workWindow(p model.Params, m model.Mix, c float64) float64 {
	if !o.Decode || !(c < 1) {
		return o.TTFTSLO
	}
	return math.Max(o.TTFTSLO, math.Max(m.OutputTokens, 1)*p.Alpha/(1-c))
}

// staff is the plan's fleet for r pods of offered load at headroom β:
// square-root staffing (Staff), and in a decode pool at least
// DecodeReserve of the load more. That reserve is what meets a surge
// before new pods are ready — what the Poisson margin over the TTFT
// objective does in a unified pool, 20–40 % of the load at 10–30 pods —
// now that a decode pool's margin is its sequences' alone: a flash crowd
// that doubles the load slows every stream at once, and the pods asked
// for then arrive a startup later.
func (o Options) staff(r, beta float64) int {
	n := Staff(r, beta, o.MaxPods)
	if o.Decode && r > 0 {
		reserved := int(math.Ceil(r*(1+DecodeReserve) - 1e-9))
		n = max(n, min(reserved, max(o.MaxPods, 1)))
	}
	return n
}
