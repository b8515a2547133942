package runner

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/inferscale/inferscale/internal/testenv"
	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/workload"
)

// sharedDir finds ../shared relative to the module root.
func sharedDir(tb testing.TB) string {
	tb.Helper()
	return testenv.SharedDir(tb, "traces")
}

// BenchmarkServeGen14Days replays the whole 14-day ServeGen m-large trace
// at 2% of its rate (≈3.9 req/s on average, ≈4.7M requests: every client,
// every window, the diurnal and weekly cycles intact) through inferscale
// (fast mode): the ≤ 60 s objective.
func BenchmarkServeGen14Days(b *testing.B) {
	path := filepath.Join(sharedDir(b), "traces", "servegen", "servegen_trace_csvs_m-large.tar.gz")
	cfg := engine.DefaultConfig()
	for i := 0; i < b.N; i++ {
		src, err := workload.OpenServeGen(path, workload.ServeGenOptions{Seed: 1, RateFactor: 0.02})
		if err != nil {
			b.Fatal(err)
		}
		bp, err := Build(Spec{Name: "inferscale", Params: map[string]string{}}, cfg, Options{Mode: Fast})
		if err != nil {
			b.Fatal(err)
		}
		res, err := engine.Run(context.Background(), cfg, src, bp.Policy)
		src.Close()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Requests), "requests")
		b.ReportMetric(res.EndSeconds/86400, "sim-days")
		b.ReportMetric(res.TTFTAttainment(), "attain")
	}
}

// BenchmarkOneHour20kInferscale is the 1 h / 20k-request objective (≤ 2 s)
// with inferscale in fast mode deciding every 15 s.
func BenchmarkOneHour20kInferscale(b *testing.B) {
	all, err := Load(Trace{Spec: "synthetic:demo", Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	// Thin the demo hour to about 20,000 requests, whatever its size.
	reqs, err := Load(Trace{Spec: "synthetic:demo", Seed: 1, RateFactor: 20000 / float64(len(all))})
	if err != nil {
		b.Fatal(err)
	}
	cfg := engine.DefaultConfig()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bp, err := Build(Spec{Name: "inferscale", Params: map[string]string{}}, cfg, Options{Mode: Fast})
		if err != nil {
			b.Fatal(err)
		}
		res, err := Run(context.Background(), cfg, reqs, bp)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Requests), "requests")
	}
}
