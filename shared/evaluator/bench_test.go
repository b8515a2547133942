package evaluator

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/state"
)

// BenchmarkDecide is the pure policy on a 64-pod fleet view.
func BenchmarkDecide(b *testing.B) {
	in, _, err := ParseInput(SyntheticInput(64, t0))
	if err != nil {
		b.Fatal(err)
	}
	cfg := policy.Default()
	st := state.New()
	d := Step(cfg, st, 64, in.Entries, t0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d = policy.Decide(d.Fleet, st, cfg, 64, t0)
	}
}

// BenchmarkStep is aggregation + policy + bookkeeping for 64 pods.
func BenchmarkStep(b *testing.B) {
	in, _, err := ParseInput(SyntheticInput(64, t0))
	if err != nil {
		b.Fatal(err)
	}
	cfg := policy.Default()
	st := state.New()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Step(cfg, st, 64, in.Entries, t0.Add(time.Duration(i)*15*time.Second))
	}
}

// BenchmarkRun is the whole evaluate run in-process for 64 pods: parse,
// configuration, state file read and write, decision, output.
func BenchmarkRun(b *testing.B) {
	input := SyntheticInput(64, t0)
	path := filepath.Join(b.TempDir(), "s.json")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now := t0.Add(time.Duration(i) * 15 * time.Second).Format(time.RFC3339)
		e := env(map[string]string{"stateFile": path, "INFERSCALE_NOW": now, "staleAfter": "0", "configPath": "/nonexistent"})
		if err := Run(context.Background(), bytes.NewReader(input), io.Discard, e, FileStoreOpener, quietLog()); err != nil {
			b.Fatal(err)
		}
	}
}
