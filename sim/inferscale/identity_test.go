package inferscale_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
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
	logs := map[runner.Mode]string{runner.Fast: t.TempDir(), runner.Faithful: t.TempDir()}
	run := func(mode runner.Mode) *engine.Result {
		b, err := runner.Build(runner.Spec{Name: "inferscale"}, cfg, runner.Options{Mode: mode, BinDir: bin, CPA: inferscale.DefaultCPA(),
			DecisionLogs: logs[mode]})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := b.Close(); err != nil {
				t.Error(err)
			}
		}()
		if l, ok := b.Policy.(*inferscale.Logged); ok {
			l.Fast.RoundTripState(true)
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
	// The decision logs: fast mode writes the line evaluate would; faithful
	// mode copies the one evaluate wrote on stderr. They are the same.
	read := func(mode runner.Mode) []byte {
		b, err := os.ReadFile(filepath.Join(logs[mode], runner.LogFileName("inferscale")))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	fastLog, faithfulLog := read(runner.Fast), read(runner.Faithful)
	// The same lines but for the build evaluate stamps on its own.
	faithfulLog = regexp.MustCompile(`,"build":"[^"]*"}`).ReplaceAll(faithfulLog, []byte("}"))
	if n := bytes.Count(fastLog, []byte("\n")); n != len(fast.Decisions) {
		t.Errorf("fast mode logged %d decisions of %d", n, len(fast.Decisions))
	}
	if !bytes.Equal(fastLog, faithfulLog) {
		fl, gl := strings.Split(string(fastLog), "\n"), strings.Split(string(faithfulLog), "\n")
		for i := range min(len(fl), len(gl)) {
			if fl[i] != gl[i] {
				t.Fatalf("decision log line %d differs:\nfast     %s\nfaithful %s", i+1, fl[i], gl[i])
			}
		}
		t.Fatalf("decision logs differ in length: fast %d lines, faithful %d", len(fl), len(gl))
	}
}
