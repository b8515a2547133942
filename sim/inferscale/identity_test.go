package inferscale_test

import (
	"context"
	"testing"
	"time"

	"github.com/inferscale/inferscale/internal/testenv"
	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/inferscale"
	"github.com/inferscale/inferscale/sim/runner"
	"github.com/inferscale/inferscale/sim/workload"
)

// scenario: 20 minutes rising from 8 to 24 req/s with a 3-minute burst,
// enough to make inferscale scale up and back down.
func scenario() []workload.Request {
	src := workload.Synthetic(workload.SyntheticOptions{
		Duration: 20 * time.Minute, BaseRate: 14, DiurnalAmplitude: 0.6, DiurnalPeriod: 40 * time.Minute, PeakAt: 20 * time.Minute,
		Bursts: []workload.Burst{{At: 8 * time.Minute, Duration: 3 * time.Minute, Amplitude: 1.5}}, Seed: 3,
	})
	reqs, err := workload.All(src)
	if err != nil {
		panic(err)
	}
	return reqs
}

func TestFastAndFaithfulModesDecideIdentically(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the metric and evaluate binaries a few hundred times")
	}
	bin := testenv.BuildBinaries(t)
	cfg := engine.DefaultConfig()
	cfg.MaxReplicas = 16
	reqs := scenario()
	run := func(mode runner.Mode) *engine.Result {
		b, err := runner.Build(runner.Spec{Name: "inferscale"}, cfg, runner.Options{Mode: mode, BinDir: bin, CPA: inferscale.DefaultCPA()})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if f, ok := b.Policy.(*inferscale.Fast); ok {
			f.RoundTripState(true)
		}
		res, err := runner.Run(context.Background(), cfg, reqs, b)
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := b.Policy.(*inferscale.Faithful); ok {
			if f.MetricRuns == 0 || f.ReadyScrapeErrors > 0 {
				t.Fatalf("faithful mode: %d metric runs, %d scrape errors on serving pods", f.MetricRuns, f.ReadyScrapeErrors)
			}
			t.Logf("faithful mode ran bin/metric %d times", f.MetricRuns)
		}
		if res.PolicyErrors > 0 {
			t.Fatalf("%s mode: %d failed ticks, first: %s", mode, res.PolicyErrors, res.FirstPolicyError)
		}
		return res
	}
	fast, faithful := run(runner.Fast), run(runner.Faithful)
	if len(fast.Decisions) != len(faithful.Decisions) {
		t.Fatalf("fast made %d decisions, faithful %d", len(fast.Decisions), len(faithful.Decisions))
	}
	changes := 0
	for i := range fast.Decisions {
		if fast.Decisions[i] != faithful.Decisions[i] {
			t.Fatalf("decision %d at t=%.0fs: fast %d, faithful %d", i, fast.Decisions[i].T, fast.Decisions[i].Replicas, faithful.Decisions[i].Replicas)
		}
		if i > 0 && fast.Decisions[i].Replicas != fast.Decisions[i-1].Replicas {
			changes++
		}
	}
	if changes < 2 {
		t.Fatalf("the scenario exercised only %d replica changes; it proves little", changes)
	}
	if fast.GPUSeconds != faithful.GPUSeconds || fast.TTFTMet != faithful.TTFTMet {
		t.Errorf("same decisions but different outcomes: GPU %.1f/%.1f s, TTFT met %d/%d", fast.GPUSeconds, faithful.GPUSeconds, fast.TTFTMet, faithful.TTFTMet)
	}
	t.Logf("%d identical decisions, %d replica changes, %d scale events", len(fast.Decisions), changes, len(fast.ScaleEvents))
}
