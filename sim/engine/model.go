// Package engine is the deterministic discrete-event model of an
// LLM-serving fleet that the simulator replays traces through: replicas with
// continuous batching (max running sequences, a token budget per iteration,
// KV-cache admission and recompute preemption), a least-outstanding-requests
// load balancer, the pod lifecycle (Pending → Starting → Ready → Draining),
// a lagged metric pipeline exposing vLLM-named signals, and the policy
// control loop. Everything is driven by one seed.
package engine

import (
	"errors"
	"fmt"
	"math"
)

// Model is one replica's serving engine: a per-iteration time model and the
// scheduler's capacities.
//
// One scheduler iteration (a batch step of vLLM's continuous batching:
// prefill chunks plus one decode token for every decoding sequence) takes
//
//	IterBase + PerPrefillToken·prefill_tokens + PerDecodeSeq·decode_batch + PerKVToken·kv_tokens_in_batch
//
// seconds.
type Model struct {
	Name            string
	IterBase        float64 // seconds per iteration, fixed part
	PerPrefillToken float64 // seconds per prompt token prefilled
	PerDecodeSeq    float64 // seconds per sequence in the decode batch
	PerKVToken      float64 // seconds per KV-cache token read by the batch's attention
	MaxNumSeqs      int     // vLLM --max-num-seqs
	MaxBatchTokens  int     // vLLM --max-num-batched-tokens (chunked-prefill budget)
	KVCapacity      int     // KV-cache capacity in tokens
	MaxModelLen     int     // longest prompt+output accepted; longer requests are rejected
}

// Llama31_8B_H100 is Llama-3.1-8B-Instruct (BF16) served by vLLM on one
// H100-80GB.
//
// Calibration. Decode cost is fitted to the concurrency sweep published by
// InferenceBench ("Recipe: concurrency sweep", yobitelcomm.github.io/bench,
// captured 2026-05-16 on one H100-80GB-HBM3, vLLM 0.21.0, fp16,
// Llama-3.1-8B-Instruct, chatbot-short prompts): median TPOT 6.48 ms at
// concurrency 1, 6.59 ms at 4 and 10.94 ms at 16, output throughput
// 1,384 tok/s at 16. TestCalibrationReproducesPublishedSweep checks the
// model against those figures within 15%.
//
// Prefill cost and KV terms are derived, not fitted: 2·8.0e9 FLOP per prompt
// token at ~50% of the H100's 989 TFLOP/s dense BF16 gives ≈32 µs per token;
// each KV token is 128 KiB (32 layers × 8 KV heads × 128 dims × 2 (K,V) × 2
// bytes) read once per decode step at ~3.35 TB/s, ≈0.039 µs. The KV capacity
// (400k tokens) is what 0.9 × 80 GB leaves after 16 GB of weights and
// activations at 128 KiB per token. MaxNumSeqs is vLLM's long-standing
// default of 256 (recent V1 releases raise it to 1024 on ≥70 GB GPUs, which
// only makes the waiting queue rarer still) and MaxBatchTokens the V1
// online-serving chunked-prefill budget on H100 (8192).
func Llama31_8B_H100() Model {
	return Model{
		Name:            "llama-3.1-8b-h100",
		IterBase:        0.00600,
		PerPrefillToken: 0.000032,
		PerDecodeSeq:    0.000290,
		PerKVToken:      0.000000039,
		MaxNumSeqs:      256,
		MaxBatchTokens:  8192,
		KVCapacity:      400000,
		MaxModelLen:     131072,
	}
}

// Scaled is the same engine on a GPU speed times as fast: every time cost
// (IterBase, PerPrefillToken, PerDecodeSeq, PerKVToken) divided by speed,
// the capacities (sequences, token budget, KV cache, model length)
// unchanged. speed 2 is a GPU twice as fast, 0.5 one twice as slow; it
// must be a finite number > 0 (Validate catches the rest).
func (m Model) Scaled(speed float64) Model {
	if speed == 1 {
		return m
	}
	m.IterBase /= speed
	m.PerPrefillToken /= speed
	m.PerDecodeSeq /= speed
	m.PerKVToken /= speed
	return m
}

// Validate rejects models that cannot run.
func (m Model) Validate() error {
	var errs []error
	for _, c := range []struct {
		n string
		v float64
	}{{"IterBase", m.IterBase}, {"PerPrefillToken", m.PerPrefillToken}, {"PerDecodeSeq", m.PerDecodeSeq}, {"PerKVToken", m.PerKVToken}} {
		if math.IsNaN(c.v) || math.IsInf(c.v, 0) || c.v < 0 {
			errs = append(errs, fmt.Errorf("model %s=%g: want a finite number ≥ 0", c.n, c.v))
		}
	}
	if m.IterBase+m.PerDecodeSeq <= 0 || m.PerPrefillToken <= 0 {
		errs = append(errs, errors.New("model: iterations must take time (IterBase+PerDecodeSeq > 0 and PerPrefillToken > 0)"))
	}
	if m.MaxNumSeqs < 1 || m.MaxBatchTokens < 1 || m.KVCapacity < 1 || m.MaxModelLen < 1 {
		errs = append(errs, fmt.Errorf("model: MaxNumSeqs (%d), MaxBatchTokens (%d), KVCapacity (%d) and MaxModelLen (%d) must be ≥ 1",
			m.MaxNumSeqs, m.MaxBatchTokens, m.KVCapacity, m.MaxModelLen))
	}
	return errors.Join(errs...)
}

// DecodeStep is the duration of one decode-only iteration over batch
// sequences holding kvTokens KV tokens between them.
func (m Model) DecodeStep(batch int, kvTokens int) float64 {
	return m.IterBase + m.PerDecodeSeq*float64(batch) + m.PerKVToken*float64(kvTokens)
}

// Iteration is the duration of one mixed iteration.
func (m Model) Iteration(prefillTokens, decodeBatch, kvTokens int) float64 {
	return m.IterBase + m.PerPrefillToken*float64(prefillTokens) + m.PerDecodeSeq*float64(decodeBatch) + m.PerKVToken*float64(kvTokens)
}

// IsolatedTTFT is the time to first token of a prompt of in tokens on an
// otherwise idle replica: its chunked prefill iterations back to back (the
// whole prompt's KV is allocated at admission). No load can make it
// faster, so a request whose IsolatedTTFT exceeds the objective cannot
// meet it under any policy.
func (m Model) IsolatedTTFT(in int) float64 {
	t := 0.0
	for left := max(in, 1); left > 0; left -= m.MaxBatchTokens {
		t += m.Iteration(min(left, m.MaxBatchTokens), 0, in)
	}
	return t
}
