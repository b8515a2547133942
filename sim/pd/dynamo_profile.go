package pd

import (
	"fmt"
	"math"
	"sort"

	"github.com/inferscale/inferscale/sim/engine"
)

// DynamoProfile is what Dynamo's pre-deployment profiler (profile_sla)
// hands its SLA planner for one worker of one GPU: a prefill sweep over
// prompt lengths (TTFT and prompt tokens per second per GPU of a lone
// prompt) and a decode sweep over context lengths × decode batch (the
// inter-token latency of each point; throughput is batch / ITL). The
// planner only reads these tables, by clamped linear interpolation, as
// Dynamo's interpolators do: never the engine model itself.
type DynamoProfile struct {
	// ISL is the prefill sweep's prompt lengths, increasing; TTFT and
	// PrefillThpt (tokens/s per GPU) are measured at each.
	ISL, TTFT, PrefillThpt []float64
	// Context is the decode sweep's context lengths, increasing; ITL[i][b-1]
	// is the inter-token latency of a decode batch of b sequences of
	// Context[i] tokens each, +Inf where their KV does not fit the cache.
	Context []float64
	ITL     [][]float64
}

// ProfileDynamo measures the profile of one pod of model m offline, on the
// engine's own step-time model and nothing of any trace: each swept prompt
// prefilled alone on an idle pod (Model.IsolatedTTFT, the chunked prefill
// the engine runs), and each decode batch stepping over its KV
// (Model.DecodeStep). The sweeps are geometric with ratio √2: prompts from
// 16 tokens to the model length, contexts to the model length or the KV
// cache, batches 1 to MaxNumSeqs.
func ProfileDynamo(m engine.Model) (*DynamoProfile, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("dynamo profile: %w", err)
	}
	p := &DynamoProfile{}
	for _, n := range sweep(16, m.MaxModelLen) {
		ttft := m.IsolatedTTFT(n)
		p.ISL = append(p.ISL, float64(n))
		p.TTFT = append(p.TTFT, ttft)
		p.PrefillThpt = append(p.PrefillThpt, float64(n)/ttft)
	}
	for _, c := range sweep(16, min(m.MaxModelLen, m.KVCapacity)) {
		row := make([]float64, m.MaxNumSeqs)
		for b := 1; b <= m.MaxNumSeqs; b++ {
			row[b-1] = math.Inf(1)
			if b*c <= m.KVCapacity {
				row[b-1] = m.DecodeStep(b, b*c)
			}
		}
		p.Context = append(p.Context, float64(c))
		p.ITL = append(p.ITL, row)
	}
	return p, nil
}

// sweep is lo, lo·√2, lo·2, … (rounded, distinct), then hi.
func sweep(lo, hi int) []int {
	var out []int
	for x := float64(lo); int(math.Round(x)) < hi; x *= math.Sqrt2 {
		if n := int(math.Round(x)); len(out) == 0 || n > out[len(out)-1] {
			out = append(out, n)
		}
	}
	return append(out, hi)
}

// bracket finds x in the increasing grid xs: the index i of the point
// below and the weight w of xs[i+1] (0 outside, clamped to the ends as
// Dynamo's interpolators clamp rather than extrapolate).
func bracket(xs []float64, x float64) (i int, w float64) {
	n := len(xs)
	switch {
	case n == 1 || !(x > xs[0]):
		return 0, 0
	case x >= xs[n-1]:
		return n - 1, 0
	}
	i = sort.SearchFloat64s(xs, x) - 1
	return i, (x - xs[i]) / (xs[i+1] - xs[i])
}

func lerp(ys []float64, i int, w float64) float64 {
	if w == 0 {
		return ys[i]
	}
	return ys[i] + w*(ys[i+1]-ys[i])
}

// PrefillTTFT is the profiled TTFT of a lone prompt of isl tokens.
func (p *DynamoProfile) PrefillTTFT(isl float64) float64 {
	i, w := bracket(p.ISL, isl)
	return lerp(p.TTFT, i, w)
}

// PrefillThroughput is the profiled prompt tokens per second per GPU at
// prompts of isl tokens (Dynamo's interpolate_thpt_per_gpu).
func (p *DynamoProfile) PrefillThroughput(isl float64) float64 {
	i, w := bracket(p.ISL, isl)
	return lerp(p.PrefillThpt, i, w)
}

// decodeITL is the ITL of a whole batch b (1-based) at context ctx.
func (p *DynamoProfile) decodeITL(b int, ctx float64) float64 {
	i, w := bracket(p.Context, ctx)
	lo := p.ITL[i][b-1]
	if w == 0 {
		return lo
	}
	hi := p.ITL[i+1][b-1]
	if math.IsInf(hi, 1) {
		return hi // the batch does not fit past the lower context
	}
	return lo + w*(hi-lo)
}

// DecodeITL is the profiled ITL at a mean concurrency (sequences decoding
// on the pod, fractional: interpolated between batches, clamped to 1 and
// the sweep's largest batch) at context ctx (Dynamo's interpolate_itl).
func (p *DynamoProfile) DecodeITL(concurrency, ctx float64) float64 {
	nb := len(p.ITL[0])
	c := math.Min(math.Max(concurrency, 1), float64(nb))
	b := int(c)
	if b == nb {
		return p.decodeITL(b, ctx)
	}
	lo, hi := p.decodeITL(b, ctx), p.decodeITL(b+1, ctx)
	if math.IsInf(hi, 1) {
		return lo
	}
	return lo + (c-float64(b))*(hi-lo)
}

// BestDecodeThroughput is the most output tokens per second per GPU a pod
// decodes at context ctx with its ITL within itl: the largest batch whose
// profiled ITL holds it, over that ITL (Dynamo's
// find_best_throughput_per_gpu). Where even one sequence misses itl, it
// is one sequence's throughput, the least the pod decodes.
func (p *DynamoProfile) BestDecodeThroughput(itl, ctx float64) float64 {
	best := 1 / p.decodeITL(1, ctx)
	for b := 2; b <= len(p.ITL[0]); b++ {
		t := p.decodeITL(b, ctx)
		if t > itl {
			break // the ITL grows with the batch
		}
		best = math.Max(best, float64(b)/t)
	}
	return best
}
