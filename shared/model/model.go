// Package model is inferscale's learned service model of one inference
// pod. It has two parts, both fitted online and persisted in the state:
//
//   - the iteration-time model of a continuous-batching server (llm-d's
//     workload-variant-autoscaler queueing model in linear form): one
//     scheduler step takes T = α + β·p + γs·n + γkv·k seconds, with p the
//     prompt tokens prefilled in the step, n the running sequences and k
//     the KV-cache usage (0-1). A Kalman filter fits it from each pod's
//     inter-token latency (one step per token) and prefill times (one step
//     per chunk), so it works at any load, before the first saturation,
//     and follows the server when the GPU or the model differs from the
//     prior. It turns traffic into work in units that transfer across
//     request mixes: a request with i prompt and o output tokens costs
//     w = β·i + (γs + γkv·φ)·o GPU-seconds beyond the fixed step cost (φ is
//     the KV share one sequence holds), and a pod carrying work ρ per
//     second steps in α/(1−ρ), which bounds its batch and KV use (Ceiling).
//   - the staffing curve: the TTFT misses that waiting caused (QueueingMiss:
//     the queue-time histogram against the prompts' isolated prefill times)
//     against the square-root-staffing headroom β = (n − R)/√R the fleet had,
//     R being the demand in pods at the ceiling. Learned per workload, it
//     says how much headroom this traffic needs: bursty traffic more,
//     smooth traffic less, small fleets proportionally more than large ones.
//
// SizeStaffed combines both with a demand forecast: the smallest fleet
// whose expected miss rate over the forecast's scenarios stays within the
// objective. The package is pure: no I/O, no clock, no settings parsing.
package model

import (
	"fmt"
	"math"
)

// Params are the iteration-time coefficients, in seconds.
type Params struct {
	Alpha    float64 `json:"alpha"`    // per step, fixed (kernel launches, scheduling)
	Beta     float64 `json:"beta"`     // per prompt token prefilled
	GammaSeq float64 `json:"gammaSeq"` // per running sequence per step
	GammaKV  float64 `json:"gammaKv"`  // per step per unit of KV-cache usage (a full cache read)
}

// DefaultPrior is Llama-3.1-8B (BF16) served by vLLM on one H100-80GB:
// the simulator's calibrated engine (sim/engine.Llama31_8B_H100: decode
// fitted to the InferenceBench sweep, prefill to the BLIS step model plus
// FlashAttention-3's attention cost, β here for a 1,155-token prompt), as
// `bin/simulate profile` prints it. It is only where the fit starts: a pod
// of another speed moves it within a few minutes of traffic.
func DefaultPrior() Params {
	return Params{Alpha: 0.006, Beta: 0.0000154089, GammaSeq: 0.00029, GammaKV: 0.0156}
}

func (p Params) vec() []float64 { return []float64{p.Alpha, p.Beta, p.GammaSeq, p.GammaKV} }

func paramsOf(v []float64) Params {
	return Params{Alpha: v[0], Beta: v[1], GammaSeq: v[2], GammaKV: v[3]}
}

// Validate rejects a prior the model cannot use.
func (p Params) Validate() error {
	for i, v := range p.vec() {
		if !finite(v) || v <= 0 {
			return fmt.Errorf("service model %s=%g: want a positive number", [...]string{"alpha", "beta", "gammaSeq", "gammaKv"}[i], v)
		}
	}
	return nil
}

// Step is the iteration time at p prompt tokens per step, n running
// sequences and KV usage k.
func (p Params) Step(prompt, running, kv float64) float64 {
	return p.Alpha + p.Beta*prompt + p.GammaSeq*running + p.GammaKV*kv
}

// Mix describes the traffic of one pod: per request means and the KV
// share one running sequence holds.
type Mix struct {
	PromptTokens float64 `json:"promptTokens"`
	OutputTokens float64 `json:"outputTokens"`
	// KVPerSeq is the KV-cache usage (0-1) one running sequence holds.
	KVPerSeq float64 `json:"kvPerSeq"`
}

// Work is the GPU-seconds one request of the mix costs beyond the fixed
// step cost: its prefill plus, for each output token, its share of a step.
func (p Params) Work(m Mix) float64 {
	return p.Beta*m.PromptTokens + (p.GammaSeq+p.GammaKV*m.KVPerSeq)*math.Max(m.OutputTokens, 1)
}

// Utilisation is the work per second of token traffic: prompt tokens/s
// and output tokens/s (the form the counters give), at KV share φ per
// sequence. A pod at utilisation ρ steps in α/(1−ρ).
func (p Params) Utilisation(promptRate, outputRate, kvPerSeq float64) float64 {
	return p.Beta*promptRate + (p.GammaSeq+p.GammaKV*kvPerSeq)*outputRate
}

// StepAt is the step time of a pod at utilisation rho (+Inf at or past 1).
func (p Params) StepAt(rho float64) float64 {
	if rho >= 1 {
		return math.Inf(1)
	}
	return p.Alpha / (1 - math.Max(rho, 0))
}
