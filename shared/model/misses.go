package model

import "math"

// Isolated is the time to first token of an i-token prompt on an idle
// pod: its chunks of at most chunk tokens, one step each.
func (p Params) Isolated(prompt, chunk float64) float64 {
	prompt = math.Max(prompt, 1)
	steps := 1.0
	if chunk > 0 {
		steps = math.Ceil(prompt / chunk)
	}
	return p.Beta*prompt + steps*p.Alpha
}

// LongestFeasible is the longest prompt an idle pod can prefill within
// slo seconds.
func (p Params) LongestFeasible(slo, chunk float64) float64 {
	per := p.Beta
	if chunk > 0 {
		per += p.Alpha / chunk
	}
	return math.Max(0, (slo-p.Alpha)/per)
}

// QueueingMiss is the share of requests that waiting pushed past slo:
// P(Q + X > slo) − P(X > slo), with Q the time waiting to be scheduled
// (the queue-time histogram: bounds le, cumulative counts c, count) and X
// the isolated TTFT of the prompt lengths. It is what more pods remove,
// read where the queue-time buckets are fine and the TTFT ones are coarse,
// and without the prompts that no pod can prefill in time. Without prompt
// lengths (a server that does not export them) it is the share that
// waited past slo.
func (p Params) QueueingMiss(prompts Lengths, chunk, slo float64, le, c []float64, count float64) float64 {
	if count <= 0 || len(le) != len(c) {
		return 0
	}
	late := func(t float64) float64 { // P(X > t)
		if t <= 0 {
			return 1
		}
		if prompts.Count <= 0 {
			return 0 // no prompt lengths: count the waiting alone
		}
		f := prompts.CDF(p.LongestFeasible(t, chunk))
		if !finite(f) {
			return 0
		}
		return 1 - f
	}
	miss, lo, loC := 0.0, 0.0, 0.0
	for i := 0; i <= len(le); i++ {
		hi, ci := lo*2+1, count
		if i < len(le) {
			hi, ci = le[i], c[i]
		}
		if n := ci - loC; n > 0 {
			// Q spread evenly over the bucket: average P(X > slo − q).
			const k = 8
			s := 0.0
			for j := 0; j < k; j++ {
				s += late(slo - (lo + (hi-lo)*(float64(j)+0.5)/k))
			}
			miss += n * s / k
		}
		lo, loC = hi, ci
	}
	return math.Max(0, miss/count-late(slo))
}
