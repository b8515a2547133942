package model

import "math"

// Limits are what one pod's running batch must stay within.
type Limits struct {
	// ChunkTokens is the prefill budget per step (vLLM
	// --max-num-batched-tokens).
	ChunkTokens float64
	// MaxNumSeqs × BatchTarget bounds the running batch (0: no bound).
	MaxNumSeqs, BatchTarget float64
	// KVTarget bounds the KV-cache usage (0: no bound).
	KVTarget float64
	// MaxUtilisation caps the work per second planned on one pod.
	MaxUtilisation float64
	// StepObjective bounds the modelled step time, which is the
	// inter-token latency every decoding request sees (seconds; 0: no
	// bound): the inter-token-latency objective.
	StepObjective float64
}

// Ceiling is the most one pod carries at a mix.
type Ceiling struct {
	// Utilisation is the work (GPU-seconds per second) one pod carries
	// within every limit.
	Utilisation float64 `json:"utilisation"`
	// RequestsPerSecond is Utilisation over the work of one request.
	RequestsPerSecond float64 `json:"requestsPerSecond"`
	// Bound names the limit that binds: batch, kv, itl or utilisation.
	Bound string `json:"bound"`
	// StepUnmet is true when the fixed step cost α alone exceeds the step
	// objective: no load, and so no pod count, meets it (the objective is
	// then no bound, and the caller says so).
	StepUnmet bool `json:"stepUnmet,omitempty"`
}

// Ceiling is how much work one pod carries at mix m before its running
// batch or its KV cache reaches its limit. A pod at utilisation ρ runs
// n = λ·o·T = (ρ/w)·o·α/(1−ρ) sequences, so n ≤ N ⇔ ρ ≤ N/(N + g·α) with
// g = o/w the output tokens per unit of work; and before its step time
// (the inter-token latency) reaches the step objective.
func (p Params) Ceiling(m Mix, l Limits) Ceiling {
	w := p.Work(m)
	c := Ceiling{Utilisation: l.MaxUtilisation, Bound: "utilisation"}
	bind := func(rho float64, name string) {
		if rho < c.Utilisation {
			c.Utilisation, c.Bound = math.Max(rho, 0), name
		}
	}
	g := math.Max(m.OutputTokens, 1) / w
	seqLimit := func(n float64) float64 { return n / (n + g*p.Alpha) }
	if l.MaxNumSeqs > 0 && l.BatchTarget > 0 {
		bind(seqLimit(l.MaxNumSeqs*l.BatchTarget), "batch")
	}
	if l.KVTarget > 0 && m.KVPerSeq > 0 {
		bind(seqLimit(l.KVTarget/m.KVPerSeq), "kv")
	}
	// A pod carrying work ρ steps in α/(1−ρ): the step stays within the
	// objective L while ρ ≤ 1 − α/L. When α alone exceeds L more pods do
	// not help: the bound would ask for every pod there is.
	if l.StepObjective > 0 {
		if rho := 1 - p.Alpha/l.StepObjective; rho > 0 {
			bind(rho, "itl")
		} else {
			c.StepUnmet = true
		}
	}
	if w > 0 {
		c.RequestsPerSecond = c.Utilisation / w
	}
	return c
}
