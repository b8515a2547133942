package engine

import (
	"fmt"
	"strings"
)

// LinearPrefill is Llama31_8B_H100 with no attention term: a prompt's
// prefill is linear in its length, as in fleet models that regress step
// times on token counts alone. Long prompts (Mooncake) then prefill in
// 0.8 s at 53k tokens rather than 1.9 s, and no prompt the policy's linear
// model calls feasible is infeasible.
func LinearPrefill() Model {
	m := Llama31_8B_H100()
	m.Name = "llama-3.1-8b-h100-linear"
	m.PerAttnPair = 0
	return m
}

// BLISLlama31_8B_H100 is the step-time model the BLIS simulator
// (github.com/inference-sim/inference-sim, defaults.yaml at commit
// 1a6eb353) publishes for meta-llama/llama-3.1-8b-instruct on one H100,
// TP1, vLLM v0.8.4: 5752.7 µs per step + 17.251 µs per prefill token +
// 5.999 µs per decoding sequence (beta_coeffs), 29,205 KV blocks of 16
// tokens (total_kv_blocks). A fleet model another project fitted, not
// this one: decode is almost free (a full batch of 256 steps in 7.3 ms,
// against 80 ms in Llama31_8B_H100), so a pod carries several times the
// decode work the policy's prior expects. BLIS's alpha coefficients (the
// request's queueing and output-processing overheads outside the step)
// are not modelled; the batch and token budgets are this project's.
func BLISLlama31_8B_H100() Model {
	return Model{
		Name:            "llama-3.1-8b-h100-blis",
		IterBase:        0.0057527,
		PerPrefillToken: 0.000017251,
		PerDecodeSeq:    0.000005999,
		MaxNumSeqs:      256,
		MaxBatchTokens:  8192,
		KVCapacity:      29205 * 16,
		MaxModelLen:     131072,
	}
}

// DefaultEngine is the name of Llama31_8B_H100 in Named.
const DefaultEngine = "vllm"

// EngineNames are the names Named knows.
func EngineNames() []string { return []string{"vllm", "linear", "blis"} }

// Named is the fleet model called name: vllm (Llama31_8B_H100, the
// default), linear (LinearPrefill) or blis (BLISLlama31_8B_H100).
func Named(name string) (Model, error) {
	switch name {
	case "vllm":
		return Llama31_8B_H100(), nil
	case "linear":
		return LinearPrefill(), nil
	case "blis":
		return BLISLlama31_8B_H100(), nil
	}
	return Model{}, fmt.Errorf("engine %q: want one of %s", name, strings.Join(EngineNames(), ", "))
}
