package model

import "math"

// Lengths is a cumulative histogram of per-request prompt lengths in
// tokens (vLLM request_prompt_tokens), bucket bounds LE with counts C.
type Lengths struct {
	LE    []float64 `json:"le"`
	C     []float64 `json:"c"`
	Count float64   `json:"count"`
}

// Quantile is the q-quantile, interpolated inside the bucket (NaN when
// empty); past the last bound it is that bound.
func (l Lengths) Quantile(q float64) float64 {
	if l.Count <= 0 || len(l.LE) != len(l.C) || len(l.LE) == 0 {
		return math.NaN()
	}
	rank := q * l.Count
	lo, loC := 0.0, 0.0
	for i, le := range l.LE {
		if l.C[i] >= rank {
			if l.C[i] == loC {
				return le
			}
			return lo + (le-lo)*(rank-loC)/(l.C[i]-loC)
		}
		lo, loC = le, l.C[i]
	}
	return l.LE[len(l.LE)-1]
}

// CDF is the share of requests with at most tokens prompt tokens.
func (l Lengths) CDF(tokens float64) float64 {
	if l.Count <= 0 || len(l.LE) != len(l.C) {
		return math.NaN()
	}
	lo, loC := 0.0, 0.0
	for i, le := range l.LE {
		if tokens <= le {
			if le == lo {
				return l.C[i] / l.Count
			}
			return (loC + (l.C[i]-loC)*(tokens-lo)/(le-lo)) / l.Count
		}
		lo, loC = le, l.C[i]
	}
	return loC / l.Count // beyond the last finite bound: what is known to be below it
}

// MeanChunks is the mean number of prefill steps per prompt of the
// lengths, at chunk tokens per step (1 when unknown).
func (l Lengths) MeanChunks(chunk float64) float64 {
	if l.Count <= 0 || chunk <= 0 || len(l.LE) != len(l.C) {
		return 1
	}
	sum, lo, loC := 0.0, 0.0, 0.0
	for i, le := range l.LE {
		n := l.C[i] - loC
		if n > 0 {
			sum += n * math.Ceil(((lo+le)/2)/chunk)
		}
		lo, loC = le, l.C[i]
	}
	if rest := l.Count - loC; rest > 0 {
		sum += rest * math.Ceil(lo*1.5/chunk)
	}
	return math.Max(1, sum/l.Count)
}

// Clone is a deep copy.
func (l Lengths) Clone() Lengths {
	return Lengths{LE: append([]float64(nil), l.LE...), C: append([]float64(nil), l.C...), Count: l.Count}
}

// Decayed is l times decay plus the counts of d (cumulative counts at
// d.LE); when the bounds differ, l is replaced by d.
func (l Lengths) Decayed(decay float64, d Lengths) Lengths {
	same := len(l.LE) == len(d.LE) && len(l.C) == len(l.LE)
	for i := 0; same && i < len(d.LE); i++ {
		same = l.LE[i] == d.LE[i]
	}
	if !same {
		return d.Clone()
	}
	out := Lengths{LE: append([]float64(nil), l.LE...), C: make([]float64, len(l.C)), Count: l.Count*decay + d.Count}
	for i := range l.C {
		out.C[i] = l.C[i]*decay + d.C[i]
	}
	return out
}
