package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/inferscale/inferscale/internal/promtest"
	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/history"
	"github.com/inferscale/inferscale/sim/inferscale"
	"github.com/inferscale/inferscale/sim/oracle"
	"github.com/inferscale/inferscale/sim/runner"
	"github.com/inferscale/inferscale/sim/workload"
)

// Tolerances of the history round trip, original workload vs rebuilt from
// Prometheus (justified in docs/sre.md, "Tune it on your traffic"):
const (
	// A 1-minute window's request count: Prometheus holds completions, not
	// arrivals (a request lands in the window it finishes in, seconds
	// later), increase() extrapolates to the window's edges, and a pod's
	// last requests before it is deleted, or first ones before its first
	// scrape, are partly lost.
	windowRateTolerance = 0.10
	// The whole period's request count.
	totalRateTolerance = 0.02
	// Token-length quantiles (p50, p90) and means: the histograms' 1-2-5
	// buckets pin the mass per bucket exactly; inside a bucket the rebuild
	// relies on a log-normal fit.
	lengthTolerance = 0.05
)

// recordedFleet replays a known 30-minute workload through inferscale and
// returns it and the pod scrapes a Prometheus would hold.
func recordedFleet(t *testing.T) ([]workload.Request, engine.Config, []byte) {
	t.Helper()
	src := workload.Synthetic(workload.SyntheticOptions{Duration: 30 * time.Minute, BaseRate: 20, DiurnalAmplitude: 0.5,
		DiurnalPeriod: 30 * time.Minute, PeakAt: 15 * time.Minute, Seed: 7,
		Bursts: []workload.Burst{{At: 20 * time.Minute, Duration: 2 * time.Minute, Amplitude: 1}}})
	reqs, err := workload.All(src)
	if err != nil {
		t.Fatal(err)
	}
	cfg := engine.DefaultConfig()
	cfg.MaxReplicas = 32
	cfg.InitialReplicas = oracle.InitialReplicas(reqs, cfg.Model, cfg.MinReplicas, cfg.MaxReplicas)
	b, err := runner.Build(runner.Spec{Name: "inferscale", Params: map[string]string{}}, cfg, runner.Options{Mode: runner.Fast, CPA: inferscale.DefaultCPA()})
	if err != nil {
		t.Fatal(err)
	}
	rec := &history.Recorder{Autoscaler: b.Policy}
	res, err := engine.Run(context.Background(), cfg, workload.FromRequests(reqs), rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ScaleEvents) < 2 {
		t.Fatalf("the fleet scaled %d times: the history would not exercise pod churn", len(res.ScaleEvents))
	}
	var om bytes.Buffer
	if err := engine.WriteOpenMetrics(&om, rec.Scrapes, "meta-llama/Llama-3.1-8B-Instruct", map[string]string{"job": "vllm"}); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d requests, %d pods, %d scale events, %d scrapes, %d bytes of OpenMetrics", len(reqs), res.Pods, len(res.ScaleEvents), len(rec.Scrapes), om.Len())
	return reqs, cfg, om.Bytes()
}

func quantile(v []float64, q float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(len(s)-1, int(math.Ceil(q*float64(len(s))))-1)]
}

func relErr(got, want float64) float64 { return math.Abs(got-want) / want }

// TestHistoryRoundTripThroughARealPrometheus writes a simulated fleet's
// scrapes as timestamped OpenMetrics, backfills them with promtool, serves
// them with Prometheus, rebuilds the workload from range queries and checks
// it against the original; then runs `simulate history` on the same server.
func TestHistoryRoundTripThroughARealPrometheus(t *testing.T) {
	reqs, cfg, om := recordedFleet(t)
	dir := t.TempDir()
	omPath := filepath.Join(dir, "history.om")
	if err := os.WriteFile(omPath, om, 0o644); err != nil {
		t.Fatal(err)
	}
	url := promtest.Serve(t, promtest.Backfill(t, omPath))

	start, end := cfg.Base, cfg.Base.Add(30*time.Minute)
	o := history.Options{URL: url, Selector: `{namespace="sim",job="vllm"}`, Start: start, End: end, Step: time.Minute}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	api, err := history.NewAPI(o)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := history.Fetch(context.Background(), api, o)
	if err != nil {
		t.Fatal(err)
	}
	rebuilt, err := rec.Rebuild(1)
	if err != nil {
		t.Fatal(err)
	}

	perWindow := func(rs []workload.Request) []float64 {
		out := make([]float64, o.Windows())
		for _, r := range rs {
			if k := int(r.Arrival / time.Minute); k < len(out) {
				out[k]++
			}
		}
		return out
	}
	orig, got := perWindow(reqs), perWindow(rebuilt)
	worst, sumErr := 0.0, 0.0
	var table strings.Builder
	for k := range orig {
		e := relErr(got[k], orig[k])
		worst, sumErr = math.Max(worst, e), sumErr+e
		fmt.Fprintf(&table, "  minute %2d: original %5.0f  finished %7.1f  in flight %5.0f  rebuilt %5.0f  (%+.1f%%)\n", k, orig[k], rec.Finished[k], rec.InFlight[k+1], got[k], 100*(got[k]-orig[k])/orig[k])
	}
	total := relErr(float64(len(rebuilt)), float64(len(reqs)))
	t.Logf("requests per minute:\n%s  worst %.1f%%, mean %.1f%%, total %d vs %d (%.2f%%)", table.String(), 100*worst, 100*sumErr/float64(len(orig)),
		len(rebuilt), len(reqs), 100*total)
	if worst > windowRateTolerance || total > totalRateTolerance {
		t.Errorf("rebuilt rate: worst window %.1f%% (tolerance %.0f%%), total %.2f%% (tolerance %.0f%%)", 100*worst, 100*windowRateTolerance, 100*total, 100*totalRateTolerance)
	}

	lengths := func(rs []workload.Request, input bool) []float64 {
		out := make([]float64, len(rs))
		for i, r := range rs {
			out[i] = float64(r.OutputTokens)
			if input {
				out[i] = float64(r.InputTokens)
			}
		}
		return out
	}
	for _, side := range []struct {
		name  string
		input bool
	}{{"prompt", true}, {"output", false}} {
		a, b := lengths(reqs, side.input), lengths(rebuilt, side.input)
		for _, m := range []struct {
			stat string
			f    func([]float64) float64
		}{
			{"mean", func(v []float64) float64 {
				s := 0.0
				for _, x := range v {
					s += x
				}
				return s / float64(len(v))
			}},
			{"p50", func(v []float64) float64 { return quantile(v, 0.5) }},
			{"p90", func(v []float64) float64 { return quantile(v, 0.9) }},
		} {
			want, have := m.f(a), m.f(b)
			t.Logf("%s tokens %s: original %.0f, rebuilt %.0f (%+.1f%%)", side.name, m.stat, want, have, 100*(have-want)/want)
			if relErr(have, want) > lengthTolerance {
				t.Errorf("%s tokens %s: rebuilt %.0f, original %.0f: beyond %.0f%%", side.name, m.stat, have, want, 100*lengthTolerance)
			}
		}
	}

	// The recipe's command on the same server.
	policy, csvPath := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "rebuilt.csv")
	var out bytes.Buffer
	err = cmdHistory(context.Background(), []string{"-prometheus", url, "-selector", `{namespace="sim",job="vllm"}`,
		"-start", start.Format(time.RFC3339), "-end", end.Format(time.RFC3339), "-step", "1m", "-slo", "2", "-max", "32",
		"-params", "forecastMiss,scaleDownHold", "-grid", "3", "-passes", "1", "-seeds", "2", "-quiet", "-out", policy, "-workload", csvPath}, &out, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("simulate history:\n%s", out.String())
	b, err := os.ReadFile(policy)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s:\n%s", policy, b)
	var keys map[string]any
	if err := yaml.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	if keys["ttftSLO"] != "2s" || keys["forecastMiss"] == nil || keys["scaleDownHold"] == nil || len(keys) != 3 {
		t.Errorf("policy keys: %v", keys)
	}
	for _, want := range []string{"# Expected on that traffic", "TTFT attainment", "GPU-hours", "# Rebuilt load vs recorded:", `{namespace="sim",job="vllm"}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("policy file lacks %q", want)
		}
	}
	replay, err := runner.Load(runner.Trace{Spec: csvPath})
	if err != nil || len(replay) != len(rebuilt) {
		t.Errorf("the rebuilt workload CSV: %d requests, want %d (%v)", len(replay), len(rebuilt), err)
	}
}

func TestHistoryCommandRejectsBadInput(t *testing.T) {
	ok := []string{"-prometheus", "http://127.0.0.1:1", "-selector", `{job="vllm"}`, "-start", "2026-11-30T00:00:00Z", "-end", "2026-11-30T01:00:00Z", "-quiet"}
	with := func(kv ...string) []string {
		args := slices.Clone(ok)
		for i := 0; i < len(kv); i += 2 {
			j := slices.Index(args, kv[i])
			if j < 0 {
				args = append(args, kv[i], kv[i+1])
			} else if kv[i+1] == "" {
				args = slices.Delete(args, j, j+2)
			} else {
				args[j+1] = kv[i+1]
			}
		}
		return args
	}
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"no prometheus":  {with("-prometheus", ""), "no Prometheus URL"},
		"no start":       {with("-start", ""), "-start is required"},
		"bad end":        {with("-end", "yesterday"), "-end \"yesterday\""},
		"reversed":       {with("-end", "2026-11-29T00:00:00Z"), "start before the end"},
		"bad selector":   {with("-selector", `job="vllm"`), "in braces"},
		"short step":     {with("-step", "5s"), "at least 30s"},
		"unknown param":  {with("-params", "nosuch"), "no tunable"},
		"bad target":     {with("-target", "2"), "-target"},
		"no seeds":       {with("-seeds", "0"), "-seeds 0"},
		"unreachable":    {ok, "connection refused"},
		"extra argument": {append(slices.Clone(ok), "now"), "unexpected argument"},
	} {
		err := cmdHistory(context.Background(), c.args, io.Discard, quietLog())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, c.want)
		}
	}
}
