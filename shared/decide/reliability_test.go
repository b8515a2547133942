package decide

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/cpa"
	"github.com/inferscale/inferscale/shared/decide/knobs"
	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

// mutateState rewrites the state file at path with set applied to its
// JSON object.
func mutateState(t *testing.T, path string, set func(doc map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	set(doc)
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// obj is the object at the keys' path in doc.
func obj(t *testing.T, doc map[string]any, keys ...string) map[string]any {
	t.Helper()
	m := doc
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			t.Fatalf("state has no object %s in %v", k, keys)
		}
		m = next
	}
	return m
}

// tickOnce runs one evaluate tick at now on the 4-pod idle fleet of
// runTicks and returns its output and log.
func tickOnce(t *testing.T, dir string, now time.Time, i int) (cpa.EvaluateOutput, string, error) {
	t.Helper()
	m := map[string]string{"stateFile": filepath.Join(dir, "state.json"), "configPath": filepath.Join(dir, "none.yaml"),
		"INFERSCALE_NOW": now.Format(time.RFC3339)}
	var out, logs bytes.Buffer
	err := Run(context.Background(), Process{Stdin: bytes.NewReader(idleInput(t, 4, 4, now, i)), Stdout: &out,
		Lookup: env(m), Log: slog.New(slog.NewTextHandler(&logs, nil)), api: &cluster{}})
	var o cpa.EvaluateOutput
	if err == nil {
		if jerr := json.Unmarshal(out.Bytes(), &o); jerr != nil {
			t.Fatal(jerr)
		}
	}
	return o, logs.String(), err
}

// N2 (issue 15): one huge finite value in the persisted state (a forecast
// trend of 1e308, a fit θ, the mix, a rate, a pod's counters) decoded
// fine, turned into NaN/+Inf in the arithmetic and "encoding the
// decision: json: unsupported value" failed every tick. The value is
// range-checked as the state is read: that component starts fresh with a
// warning, and the tick decides and saves.
func TestAHugePersistedValueResetsItsComponentNotTheTicks(t *testing.T) {
	cases := map[string]func(t *testing.T, doc map[string]any){
		"forecast trend": func(t *testing.T, doc map[string]any) { obj(t, doc, "service", "forecast")["trend"] = 1e308 },
		"forecast level": func(t *testing.T, doc map[string]any) { obj(t, doc, "service", "forecast")["level"] = 1e308 },
		"mix":            func(t *testing.T, doc map[string]any) { obj(t, doc, "service", "mix")["promptTokens"] = 1e308 },
		"beta":           func(t *testing.T, doc map[string]any) { obj(t, doc, "service")["beta"] = 1e308 },
		"rates": func(t *testing.T, doc map[string]any) {
			doc["rates"].([]any)[0].(map[string]any)["rps"] = 1e308
		},
		"pod in-flight": func(t *testing.T, doc map[string]any) {
			doc["pods"].([]any)[0].(map[string]any)["inFlight"] = 1e308
		},
		"pod requests": func(t *testing.T, doc map[string]any) {
			doc["pods"].([]any)[1].(map[string]any)["requestsTotal"] = 1e308
		},
		"capacity": func(t *testing.T, doc map[string]any) { doc["podCapacityRps"] = 1e308 },
	}
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for name, mutate := range cases {
		dir := t.TempDir()
		for i := 0; i < 3; i++ {
			if _, _, err := tickOnce(t, dir, t0.Add(time.Duration(i)*15*time.Second), i); err != nil {
				t.Fatalf("%s: clean tick %d: %v", name, i, err)
			}
		}
		mutateState(t, filepath.Join(dir, "state.json"), func(doc map[string]any) { mutate(t, doc) })
		for i := 3; i < 6; i++ {
			o, logs, err := tickOnce(t, dir, t0.Add(time.Duration(i)*15*time.Second), i)
			if err != nil {
				t.Fatalf("%s: tick %d after the value: %v", name, i, err)
			}
			if o.TargetReplicas < 1 || o.TargetReplicas > 4 {
				t.Errorf("%s: tick %d: target %d from an idle 4-pod fleet", name, i, o.TargetReplicas)
			}
			if i == 3 && !strings.Contains(logs, "out of range") {
				t.Errorf("%s: no warning that a persisted value was out of range: %s", name, logs)
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, "state.json"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := state.Decode(b); err != nil {
			t.Errorf("%s: the state saved after does not decode: %v", name, err)
		}
	}
}

// N2: a decision that holds a non-finite number (whatever put it there)
// is never an encoding failure: the tick holds the current count, says so
// and the service memory starts fresh.
func TestANonFiniteDecisionIsHeldNotFailed(t *testing.T) {
	cfg := knobs.Defaults()
	d := policy.Decision{Current: 6, Target: 9, Recommendation: 9, Fleet: fleet.View{Ready: 6, Waiting: math.Inf(1)},
		Rules: []policy.Rule{{Name: policy.RuleQueue, Value: signal.F(math.NaN())}}}
	if encodable(d) == nil {
		t.Fatal("a decision with +Inf inside encoded")
	}
	h, mem := held(d, cfg, encodable(d))
	if err := encodable(h); err != nil {
		t.Fatalf("the held decision does not encode: %v", err)
	}
	if h.Target != 6 || mem.Recommendation != 6 || !mem.ResetService || len(h.Warnings) != 1 || h.Fleet.Ready != 6 {
		t.Fatalf("held %+v, memory %+v: want 6 held, the recommendation 6, the service memory reset and a warning", h, mem)
	}
	// Large but in-range values everywhere in the service memory still
	// give an encodable decision.
	st := state.New()
	entries := slowPods(4, t0, 0)
	Step(cfg, st, 4, entries, t0)
	if st.Service == nil {
		t.Fatal("no service memory after a v2 tick")
	}
	st.Service.Forecast.Level, st.Service.Forecast.Trend, st.Service.Beta = state.MaxValue, state.MaxValue, state.MaxValue
	st.Service.Mix.PromptTokens, st.Service.Mix.OutputTokens = state.MaxValue, state.MaxValue
	for i := range st.Service.Fit.Step.Theta {
		st.Service.Fit.Step.Theta[i] = state.MaxValue
	}
	next := Step(cfg, st, 4, slowPods(4, t0.Add(15*time.Second), 10), t0.Add(15*time.Second))
	if err := encodable(next); err != nil || next.Target < 1 || next.Target > cfg.MaxReplicas {
		t.Fatalf("target %d, %v", next.Target, err)
	}
}

// idleEntries are n ready, nearly idle pods at now (tick i's counters),
// the fleet of idleInput as Step takes it.
func idleEntries(n int, now time.Time, i int) []Entry {
	created := now.Add(-2 * time.Hour)
	ready := created.Add(70 * time.Second)
	var out []Entry
	for p := 0; p < n; p++ {
		total := float64(10*i + p)
		h := &signal.Histogram{Buckets: []signal.Bucket{{UpperBound: 0.5, Count: total}, {UpperBound: 2.5, Count: total}}, Count: total, Sum: total * 0.1}
		pod := signal.Pod{Name: "vllm-" + string(rune('a'+p)), Namespace: "inference", Phase: "Running", Ready: true,
			CreatedAt: &created, ReadyAt: &ready, StartupSeconds: signal.F(70), AgeSeconds: signal.F(7200), ScrapeTime: now, Server: "vllm",
			Waiting: signal.F(0), Running: signal.F(float64(p)), KVCacheUsage: signal.F(0.01 * float64(p)),
			RequestsTotal: signal.F(total), TTFT: h, QueueTime: h}
		out = append(out, Entry{Resource: pod.Name, Report: &signal.Report{Version: signal.Version, ScrapeTime: now, Pods: []signal.Pod{pod}}})
	}
	return out
}

// firstScaleDown replays the idle 4-pod fleet (held at 4) until its clean
// decision is a scale-down and returns that tick's index.
func firstScaleDown(t *testing.T, cfg policy.Config, t0 time.Time) int {
	t.Helper()
	st := state.New()
	for i := 0; i < 200; i++ {
		now := t0.Add(time.Duration(i) * 15 * time.Second)
		if d := Step(cfg, st, 4, idleEntries(4, now, i), now); d.Target < 4 {
			return i
		}
	}
	t.Fatal("the idle fleet never scaled down")
	return 0
}

// N11 (issue 15): replaying the ticks whose clean decision was a
// scale-down with one fault injected still scaled down: a pod absent from
// metrics[], a scrape time an hour ahead, a counter reset, an hours-old pod
// turning not-ready (taken as stuck at once). Each is unknown now: the
// tick holds.
func TestFaultyTicksNeverScaleDown(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	faults := map[string]func(es []Entry, now time.Time) []Entry{
		"clean":                     func(es []Entry, _ time.Time) []Entry { return es },
		"pod absent from metrics[]": func(es []Entry, _ time.Time) []Entry { return es[1:] },
		"scrape an hour ahead": func(es []Entry, now time.Time) []Entry {
			es[2].Report.Pods[0].ScrapeTime = now.Add(time.Hour)
			return es
		},
		"counter reset": func(es []Entry, _ time.Time) []Entry {
			p := &es[3].Report.Pods[0]
			p.RequestsTotal = signal.F(1)
			p.TTFT = &signal.Histogram{Buckets: []signal.Bucket{{UpperBound: 0.5, Count: 1}, {UpperBound: 2.5, Count: 1}}, Count: 1, Sum: 0.1}
			p.QueueTime = p.TTFT
			return es
		},
		"old pod turns not-ready": func(es []Entry, _ time.Time) []Entry {
			p := &es[3].Report.Pods[0]
			p.Ready, p.ReadyAt, p.Waiting, p.Running, p.KVCacheUsage = false, nil, nil, nil, nil
			return es
		},
	}
	for _, v2 := range []bool{true, false} {
		cfg := knobs.Defaults()
		cfg.ServiceModel = v2
		k := firstScaleDown(t, cfg, t0)
		for name, fault := range faults {
			st := state.New()
			for i := 0; i < k; i++ {
				now := t0.Add(time.Duration(i) * 15 * time.Second)
				Step(cfg, st, 4, idleEntries(4, now, i), now)
			}
			now := t0.Add(time.Duration(k) * 15 * time.Second)
			d := Step(cfg, st, 4, fault(idleEntries(4, now, k), now), now)
			if name == "clean" {
				if d.Target >= 4 {
					t.Fatalf("v2 %v: the clean replay did not scale down at tick %d", v2, k)
				}
				continue
			}
			if d.Target < 4 {
				t.Errorf("v2 %v, %s: scaled down 4 -> %d; reasons %q", v2, name, d.Target, d.Reasons)
			}
		}
	}
}

// N9 (issue 15): after at least one scaleDownHold with no ticks (the CPA
// pod down, the state kept) the first tick scaled down in one step on one
// reading (18 -> 3 after a 615 s gap). A gap counts as unknown, as a fresh
// state does: no scale-down until the hold is seen again.
func TestAGapOfAHoldCountsAsAFreshState(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, v2 := range []bool{true, false} {
		cfg := knobs.Defaults()
		cfg.ServiceModel = v2
		k := firstScaleDown(t, cfg, t0)
		st := state.New()
		for i := 0; i < k-1; i++ {
			now := t0.Add(time.Duration(i) * 15 * time.Second)
			Step(cfg, st, 4, idleEntries(4, now, i), now)
		}
		gap := max(cfg.ScaleDownHold, cfg.DownStabilization) + 15*time.Second
		now := t0.Add(time.Duration(k-2)*15*time.Second + gap)
		if d := Step(cfg, st, 4, idleEntries(4, now, k), now); d.Target < 4 {
			t.Errorf("v2 %v: the first tick after a %s gap scaled down 4 -> %d; reasons %q", v2, gap, d.Target, d.Reasons)
		}
	}
}
