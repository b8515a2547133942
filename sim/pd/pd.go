// Package pd is the simulator's prefill/decode disaggregated fleet model:
// a prefill pool, a KV transfer per prompt token, and a decode pool, each
// pool replayed by the unchanged engine with its own policy, startup and
// step model. The pipeline is feed-forward, so two replays model it
// exactly: the prefill pool replays the trace with every output cut to one
// token (vLLM's P/D proxy sends max_tokens=1 to the prefill instance);
// the decode pool replays the requests the prefill pool served, each
// arriving when its prefill leg and its KV transfer are done, marked
// prefilled (workload.Request.Prefilled), with its original output. A
// user's TTFT is the sum of the three legs; a request lost in either pool
// is a miss.
//
// Left out: backpressure from the decode pool to the prefill pool (a
// prefill pod here never waits for a decode pod to read its KV), the KV a
// prefill pod holds until it is read, and transfer contention.
package pd

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/workload"
)

// DefaultTransferPerToken is the KV transfer time per prompt token, in
// seconds: 5 µs. Llama-3.1-8B's KV is 2 (K, V) × 32 layers × 8 KV heads ×
// 128 dims × 2 bytes (BF16) = 128 KiB per token (its config.json); NIXL
// over one 400 Gb/s RDMA NIC (ConnectX-7, 50 GB/s line rate) at half its
// line rate moves that in 5.2 µs, so an 8k-token Mooncake prompt takes
// about 43 ms.
const DefaultTransferPerToken = 5e-6

// Replay runs one pool's replay of reqs under that pool's fleet model
// and policy.
type Replay func(ctx context.Context, reqs []workload.Request) (*engine.Result, error)

// Result is one P/D pair's outcome.
type Result struct {
	Prefill, Decode *engine.Result
	// UserTTFT is each request's time to first token as the user sees
	// it (prefill leg + transfer + decode leg), by arrival order; +Inf
	// for a request rejected, killed or unfinished in either pool.
	UserTTFT []float32
	// UserMet counts the requests whose UserTTFT is within SLOSeconds.
	UserMet    int
	SLOSeconds float64
	// Infeasible is the requests no pair serves in time (Infeasible; 0
	// unless the caller sets it).
	Infeasible int
}

// UserAttainment is the share of all requests that met the user's TTFT
// objective (misses in either pool included).
func (r *Result) UserAttainment() float64 {
	if len(r.UserTTFT) == 0 {
		return 1
	}
	return float64(r.UserMet) / float64(len(r.UserTTFT))
}

// GPUHours is both pools' GPU-hours.
func (r *Result) GPUHours() float64 { return r.Prefill.GPUHours() + r.Decode.GPUHours() }

// Killed is the requests both pools lost to scale-down.
func (r *Result) Killed() int { return r.Prefill.Killed + r.Decode.Killed }

// PrefillRequests is the prefill pool's workload: every request with its
// output cut to one token.
func PrefillRequests(reqs []workload.Request) []workload.Request {
	out := slices.Clone(reqs)
	for i := range out {
		out[i].OutputTokens = 1
		out[i].Prefilled = false
	}
	return out
}

// ArrivePrefilled is reqs as the decode pool receives them, before any
// prefill replay has timed them: every prompt's KV arrives with it. Its
// work (oracle.Work) is what sizes the decode pool's warm start; the
// prompts as such would price the prefill the pool never does (6 warm
// decode pods on Mooncake's hour, where 2 carry it).
func ArrivePrefilled(reqs []workload.Request) []workload.Request {
	out := slices.Clone(reqs)
	for i := range out {
		out[i].Prefilled = true
	}
	return out
}

// DecodeRequests is the decode pool's workload after a prefill replay
// whose per-request TTFTs are prefillTTFT (in reqs' order): each request
// the prefill pool served arrives at its arrival + prefill TTFT + its
// prompt's transfer, prefilled, with its original output, in arrival
// order. from[i] is the index in reqs of the decode workload's i-th
// request; requests the prefill pool lost are not in it.
func DecodeRequests(reqs []workload.Request, prefillTTFT []float32, transferPerToken float64) (dec []workload.Request, from []int, err error) {
	if len(prefillTTFT) != len(reqs) {
		return nil, nil, fmt.Errorf("pd: %d prefill TTFTs for %d requests", len(prefillTTFT), len(reqs))
	}
	for i, r := range reqs {
		t := float64(prefillTTFT[i])
		if math.IsInf(t, 0) || math.IsNaN(t) {
			continue
		}
		lat := t + transferPerToken*float64(max(r.InputTokens, 1))
		r.Arrival += time.Duration(lat * float64(time.Second))
		r.Prefilled = true
		dec = append(dec, r)
		from = append(from, i)
	}
	order := make([]int, len(dec))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(dec[a].Arrival, dec[b].Arrival) })
	sd, sf := make([]workload.Request, len(dec)), make([]int, len(dec))
	for i, k := range order {
		sd[i], sf[i] = dec[k], from[k]
	}
	return sd, sf, nil
}

// Compose is the user's view of a pair's two replays: dec replayed the
// decode workload whose requests came from reqs at from (DecodeRequests).
func Compose(reqs []workload.Request, pre *engine.Result, dec *engine.Result, from []int, transferPerToken, slo float64) (*Result, error) {
	if len(pre.TTFT) != len(reqs) || len(dec.TTFT) != len(from) {
		return nil, fmt.Errorf("pd: replays of %d and %d requests for %d and %d", len(pre.TTFT), len(dec.TTFT), len(reqs), len(from))
	}
	out := &Result{Prefill: pre, Decode: dec, SLOSeconds: slo, UserTTFT: make([]float32, len(reqs))}
	for i := range out.UserTTFT {
		out.UserTTFT[i] = float32(math.Inf(1))
	}
	for k, i := range from {
		d := float64(dec.TTFT[k])
		if math.IsInf(d, 0) || math.IsNaN(d) {
			continue
		}
		u := float64(pre.TTFT[i]) + transferPerToken*float64(max(reqs[i].InputTokens, 1)) + d
		out.UserTTFT[i] = float32(u)
		if u <= slo {
			out.UserMet++
		}
	}
	return out, nil
}

// Run replays one pair: the prefill pool, then the decode pool on what the
// prefill pool served.
func Run(ctx context.Context, reqs []workload.Request, prefill, decode Replay, transferPerToken, slo float64) (*Result, error) {
	pre, err := prefill(ctx, PrefillRequests(reqs))
	if err != nil {
		return nil, fmt.Errorf("prefill pool: %w", err)
	}
	return RunDecode(ctx, reqs, pre, decode, transferPerToken, slo)
}

// RunDecode is Run's second pass after a prefill replay pre (a prefill
// replay is shared by every pair with the same prefill policy).
func RunDecode(ctx context.Context, reqs []workload.Request, pre *engine.Result, decode Replay, transferPerToken, slo float64) (*Result, error) {
	dreqs, from, err := DecodeRequests(reqs, pre.TTFT, transferPerToken)
	if err != nil {
		return nil, err
	}
	if len(dreqs) == 0 {
		return nil, fmt.Errorf("pd: the prefill pool (%s) served none of %d requests", pre.Policy, len(reqs))
	}
	dec, err := decode(ctx, dreqs)
	if err != nil {
		return nil, fmt.Errorf("decode pool: %w", err)
	}
	return Compose(reqs, pre, dec, from, transferPerToken, slo)
}

// FeasibleUserAttainment is UserAttainment over the requests that could
// meet the user's objective at all (all but Infeasible).
func (r *Result) FeasibleUserAttainment() float64 {
	n := len(r.UserTTFT) - r.Infeasible
	if n <= 0 {
		return 1
	}
	return float64(r.UserMet) / float64(n)
}

// Infeasible counts the requests whose prompt alone, prefilled on an idle
// prefill pod of model m and transferred, takes longer than slo: no pair
// of policies serves them in time.
func Infeasible(reqs []workload.Request, m engine.Model, transferPerToken, slo float64) int {
	n := 0
	for _, r := range reqs {
		in := max(r.InputTokens, 1)
		if m.IsolatedTTFT(in)+transferPerToken*float64(in) > slo {
			n++
		}
	}
	return n
}
