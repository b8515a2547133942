package pd

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/workload"
)

func TestProfileDynamoPrefillSweep(t *testing.T) {
	m := engine.Llama31_8B_H100()
	p, err := ProfileDynamo(m)
	if err != nil {
		t.Fatal(err)
	}
	between := (m.IsolatedTTFT(1024) + m.IsolatedTTFT(1448)) / 2
	for _, tc := range []struct {
		name       string
		isl        float64
		ttft, thpt float64
	}{
		{"a swept point: the lone prompt's TTFT", 1024, m.IsolatedTTFT(1024), 1024 / m.IsolatedTTFT(1024)},
		{"between points: linear", (1024 + 1448) / 2.0, between, (1024/m.IsolatedTTFT(1024) + 1448/m.IsolatedTTFT(1448)) / 2},
		{"below the sweep: clamped", 1, m.IsolatedTTFT(16), 16 / m.IsolatedTTFT(16)},
		{"past the model length: clamped", 1e7, m.IsolatedTTFT(m.MaxModelLen), float64(m.MaxModelLen) / m.IsolatedTTFT(m.MaxModelLen)},
	} {
		if got := p.PrefillTTFT(tc.isl); math.Abs(got-tc.ttft) > 1e-12 {
			t.Errorf("%s: TTFT(%g) = %g, want %g", tc.name, tc.isl, got, tc.ttft)
		}
		if got := p.PrefillThroughput(tc.isl); math.Abs(got-tc.thpt) > 1e-6 {
			t.Errorf("%s: throughput(%g) = %g, want %g", tc.name, tc.isl, got, tc.thpt)
		}
	}
	// 1024 tokens: 6 ms + 1024 × (14.94 µs + 0.039 µs of KV read) +
	// 0.812 ns × 1024²/2 = 21.76 ms, 47,050 tokens/s.
	if got := p.PrefillThroughput(1024); math.Abs(got-47050) > 1 {
		t.Errorf("throughput at 1024 tokens %g, want ≈ 47,050 tokens/s", got)
	}
	bad := m
	bad.PerPrefillToken = -1
	if _, err := ProfileDynamo(bad); err == nil {
		t.Error("a model with a negative cost was profiled")
	}
}

func TestProfileDynamoDecodeSweep(t *testing.T) {
	m := engine.Llama31_8B_H100()
	p, err := ProfileDynamo(m)
	if err != nil {
		t.Fatal(err)
	}
	step := func(b, ctx int) float64 { return m.DecodeStep(b, b*ctx) }
	for _, tc := range []struct {
		name     string
		itl      float64
		ctx      float64
		want     float64
		tolerant bool // interpolated between contexts
	}{
		// (50 − 6) ms / (0.29 ms + 1024 × 0.039 µs) = 133.4 sequences.
		{"the largest batch within the ITL", 0.05, 1024, 133 / step(133, 1024), false},
		{"a tighter ITL, a smaller batch", 0.025, 1024, 57 / step(57, 1024), false},
		{"below one sequence's ITL: one sequence", 0.001, 1024, 1 / step(1, 1024), false},
		{"a loose ITL: max-num-seqs", 10, 1024, 256 / step(256, 1024), false},
		// 400,000 KV tokens hold 24 sequences of 16,384.
		{"a loose ITL, long contexts: the KV cache", 10, 16384, 24 / step(24, 16384), false},
		{"between contexts", 0.05, 1200, 130 / m.DecodeStep(130, 130*1200), true},
	} {
		got := p.BestDecodeThroughput(tc.itl, tc.ctx)
		if tol := map[bool]float64{false: 1e-9, true: 0.01}[tc.tolerant]; math.Abs(got/tc.want-1) > tol {
			t.Errorf("%s: best throughput(ITL %g, ctx %g) = %.1f, want %.1f", tc.name, tc.itl, tc.ctx, got, tc.want)
		}
	}
	if got, want := p.DecodeITL(10.5, 1024), (step(10, 1024)+step(11, 1024))/2; math.Abs(got-want) > 1e-12 {
		t.Errorf("ITL at concurrency 10.5 = %g, want %g", got, want)
	}
	if got, want := p.DecodeITL(1e6, 1024), step(256, 1024); got != want {
		t.Errorf("ITL past max-num-seqs = %g, want the largest batch's %g", got, want)
	}
}

// The profile is what the engine does: a lone prompt's TTFT on one pod,
// and the gaps of a batch of prefilled requests decoding together (their
// KV grows by 64 tokens, 0.5% of the step).
func TestProfileDynamoMatchesAnEngineReplay(t *testing.T) {
	cfg := engine.DefaultConfig()
	p, err := ProfileDynamo(cfg.Model)
	if err != nil {
		t.Fatal(err)
	}
	const isl = 2048
	res, err := engine.Run(context.Background(), cfg, workload.FromRequests([]workload.Request{{Arrival: time.Second, InputTokens: isl, OutputTokens: 1}}), fixed{1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := float64(res.TTFT[0]), p.PrefillTTFT(isl); math.Abs(got-want) > 1e-6 {
		t.Errorf("replayed TTFT of %d tokens %.6f, profiled %.6f", isl, got, want)
	}
	const batch = 64
	itl := p.DecodeITL(batch, isl)
	for _, tc := range []struct {
		slo      float64
		lo, high float64
	}{{itl * 1.01, 0.97, 1}, {itl * 0.99, 0, 0.03}} { // the batch's first and last steps hold one sequence more or less
		c := cfg
		c.TPOTSLOSeconds = tc.slo
		var reqs []workload.Request
		for range batch {
			reqs = append(reqs, workload.Request{Arrival: time.Second, InputTokens: isl, OutputTokens: 64, Prefilled: true})
		}
		res, err := engine.Run(context.Background(), c, workload.FromRequests(reqs), fixed{1})
		if err != nil {
			t.Fatal(err)
		}
		if a := res.ITLAttainment(); a < tc.lo || a > tc.high {
			t.Errorf("%d sequences of %d tokens: %.3f of the gaps within %.5f s, want [%g, %g] (profiled ITL %.5f s)",
				batch, isl, a, tc.slo, tc.lo, tc.high, itl)
		}
	}
}
