package runner_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferscale/inferscale/internal/testenv"
	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/inferscale"
	"github.com/inferscale/inferscale/sim/oracle"
	"github.com/inferscale/inferscale/sim/runner"
)

// updateDecisions rewrites testdata/decision-timelines.json from the
// current code. Only do that when a change is meant to change decisions
// (a policy or engine change), and say so in the commit.
var updateDecisions = flag.Bool("update-decisions", false, "rewrite the stored decision timelines")

const timelinesFile = "testdata/decision-timelines.json"

// timeline is what a replay stores of inferscale's decisions: a hash of
// every tick's (time, replicas) and a few figures to read a diff by.
type timeline struct {
	Hash        string  `json:"hash"`
	Decisions   int     `json:"decisions"`
	ScaleEvents int     `json:"scaleEvents"`
	TTFTMet     int     `json:"ttftMet"`
	GPUHours    float64 `json:"gpuHours"`
}

type replayCase struct {
	name   string
	trace  runner.Trace
	mode   runner.Mode
	policy runner.Spec
	// shared: trace.Spec is a path inside ../shared (the public traces); the
	// synthetic cases need nothing outside the repository.
	shared bool
}

// replayCases are the replays that guard refactors: the demo and the three
// shared traces in fast mode with seeds 1-3, and the demo in faithful mode
// (the real binaries through the CPA contract), for policy v2 (the
// defaults) and v1 (serviceModel=false).
func replayCases() []replayCase {
	var cases []replayCase
	for _, p := range []struct {
		name string
		spec runner.Spec
	}{
		{"v2", runner.Spec{Name: "inferscale"}},
		{"v1", runner.Spec{Name: "inferscale", Params: map[string]string{"serviceModel": "false"}}},
	} {
		for _, c := range policyCases() {
			c.name, c.policy = p.name+"/"+c.name, p.spec
			cases = append(cases, c)
		}
	}
	return cases
}

func policyCases() []replayCase {
	traces := []struct {
		name   string
		t      runner.Trace
		shared bool
	}{
		{"demo", runner.Trace{Spec: "synthetic:demo"}, false},
		{"azure-code", runner.Trace{Spec: "traces/azure_llm_2023/AzureLLMInferenceTrace_code.csv", Duration: time.Hour}, true},
		{"mooncake-conversation", runner.Trace{Spec: "traces/mooncake_fast25/conversation_trace.jsonl", Duration: time.Hour}, true},
		{"servegen-m-large-day2-5pct", runner.Trace{Spec: "traces/servegen/servegen_trace_csvs_m-large.tar.gz",
			Start: 24 * time.Hour, Duration: 24 * time.Hour, RateFactor: 0.05}, true},
	}
	var cases []replayCase
	for _, tr := range traces {
		for seed := int64(1); seed <= 3; seed++ {
			t := tr.t
			t.Seed = seed
			cases = append(cases, replayCase{name: fmt.Sprintf("%s/seed%d/fast", tr.name, seed), trace: t, mode: runner.Fast, shared: tr.shared})
		}
	}
	demo := traces[0].t
	demo.Seed = 1
	return append(cases, replayCase{name: "demo/seed1/faithful", trace: demo, mode: runner.Faithful})
}

// resolve points a shared case's trace into ../shared, or skips the case
// without it (failing under CI=true); a synthetic case runs anywhere.
func (c replayCase) resolve(t *testing.T) runner.Trace {
	t.Helper()
	tr := c.trace
	if c.shared {
		tr.Spec = filepath.Join(testenv.SharedDir(t, "traces"), tr.Spec)
	}
	return tr
}

func replayTimeline(t *testing.T, c replayCase, bin string) timeline {
	t.Helper()
	reqs, err := runner.Load(c.resolve(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg := engine.DefaultConfig()
	cfg.Seed = uint64(c.trace.Seed)
	cfg.InitialReplicas = oracle.InitialReplicas(reqs, cfg.Model, cfg.MinReplicas, cfg.MaxReplicas)
	b, err := runner.Build(c.policy, cfg, runner.Options{Mode: c.mode, BinDir: bin, CPA: inferscale.DefaultCPA()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	res, err := runner.Run(context.Background(), cfg, reqs, b)
	if err != nil {
		t.Fatal(err)
	}
	if res.PolicyErrors > 0 {
		t.Fatalf("%d failed ticks, first: %s", res.PolicyErrors, res.FirstPolicyError)
	}
	h := sha256.New()
	for _, d := range res.Decisions {
		fmt.Fprintf(h, "%.3f %d\n", d.T, d.Replicas)
	}
	return timeline{Hash: hex.EncodeToString(h.Sum(nil))[:16], Decisions: len(res.Decisions), ScaleEvents: len(res.ScaleEvents),
		TTFTMet: res.TTFTMet, GPUHours: float64(int(res.GPUHours()*1000)) / 1000}
}

// TestDecisionTimelinesUnchanged replays the guard cases and compares every
// tick's decision with the stored timelines: a refactor changes structure,
// never a decision. Each case is a subtest: on a clone without ../shared the
// synthetic demo cases run and only the shared traces' cases skip.
func TestDecisionTimelinesUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("replays four traces with three seeds")
	}
	bin := testenv.BuildBinaries(t)
	want := map[string]timeline{}
	if !*updateDecisions {
		b, err := os.ReadFile(timelinesFile)
		if err != nil {
			t.Fatalf("reading the stored timelines (go test ./sim/runner -run TestDecisionTimelinesUnchanged -update-decisions writes them): %v", err)
		}
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("%s: %v", timelinesFile, err)
		}
	}
	got := map[string]timeline{}
	cases := replayCases()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tl := replayTimeline(t, c, bin)
			got[c.name] = tl
			if *updateDecisions {
				return
			}
			w, ok := want[c.name]
			switch {
			case !ok:
				t.Errorf("no stored timeline")
			case w != tl:
				t.Errorf("decisions changed: stored %+v, now %+v", w, tl)
			}
		})
	}
	if *updateDecisions {
		writeTimelines(t, got, len(cases))
	}
}

// writeTimelines stores the replayed timelines; it refuses a partial set (a
// case skipped for want of ../shared), which would drop stored ones.
func writeTimelines(t *testing.T, got map[string]timeline, cases int) {
	t.Helper()
	if len(got) != cases {
		t.Fatalf("%d of %d cases replayed: -update-decisions rewrites every timeline and needs ../shared", len(got), cases)
	}
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(timelinesFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(timelinesFile, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d timelines to %s", len(got), timelinesFile)
}
