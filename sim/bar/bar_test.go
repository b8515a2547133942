package bar

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/runner"
)

func TestJudgeAppliesEachCriterion(t *testing.T) {
	s := DefaultSettings()
	good := Row{Attainment: 0.995, GPUHours: 10, OracleOK: true, OracleAttainment: 0.999, OracleGPUHours: 9, OracleMeanFleet: 12,
		StaticN: 14, StaticGPUHours: 14, StaticE2EN: 16, StaticE2EGPUHours: 16, FlapsPerHour: 1,
		OracleE2EOK: true, OracleE2EGPUHours: 9.5, OracleE2EMeanFleet: 12}
	for _, c := range []struct {
		name  string
		edit  func(*Row)
		check func(Verdict) bool
	}{
		{"all pass", func(*Row) {}, func(v Verdict) bool { return v.All() && v.NearOracle != nil && *v.NearOracle }},
		{"below 99%", func(r *Row) { r.Attainment = 0.985 }, func(v Verdict) bool { return !v.Attainment && !v.All() }},
		{"the oracle's own attainment is the bar where it is below 99%",
			func(r *Row) { r.Attainment, r.OracleAttainment = 0.93, 0.925 }, func(v Verdict) bool { return v.Attainment && v.AttainmentBar == 0.925 }},
		{"below the oracle's own", func(r *Row) { r.Attainment, r.OracleAttainment = 0.92, 0.925 }, func(v Verdict) bool { return !v.Attainment }},
		{"dearer than the static fleet", func(r *Row) { r.StaticGPUHours = 9.5 }, func(v Verdict) bool { return !v.BelowStatic }},
		{"a day's share of the static fleet: 0.8 × 14 GPU-h is the bar", func(r *Row) { r.StaticShare, r.GPUHours = 0.8, 11.3 },
			func(v Verdict) bool { return !v.BelowStatic }},
		{"within a day's share of the static fleet", func(r *Row) { r.StaticShare, r.GPUHours = 0.8, 11.1 },
			func(v Verdict) bool { return v.BelowStatic }},
		{"no static fleet reaches the policy", func(r *Row) { r.StaticN, r.StaticGPUHours = 0, 0 }, func(v Verdict) bool { return v.BelowStatic }},
		{"dearer than the static fleet of TTFT alone, below the one that meets the end-to-end objective too: reported, not a criterion",
			func(r *Row) { r.StaticGPUHours = 9.5 }, func(v Verdict) bool { return !v.BelowStatic && v.BelowStaticE2E && !v.All() }},
		{"dearer than the static fleet that meets both objectives", func(r *Row) { r.StaticE2EGPUHours = 9.5 },
			func(v Verdict) bool { return v.BelowStatic && !v.BelowStaticE2E && v.All() }},
		{"over 1.15 × the oracle, within it of the oracle held to the end-to-end objective: reported, not a criterion",
			func(r *Row) { r.GPUHours, r.OracleE2EGPUHours = 10.6, 10 }, func(v Verdict) bool { return !*v.NearOracle && *v.NearOracleE2E && !v.All() }},
		{"over 1.15 × the oracle held to the end-to-end objective", func(r *Row) { r.OracleE2EGPUHours = 8 },
			func(v Verdict) bool { return !*v.NearOracleE2E && v.All() }},
		{"no oracle held to the end-to-end objective, or a small fleet: n/a", func(r *Row) { r.OracleE2EOK = false },
			func(v Verdict) bool { return v.NearOracleE2E == nil }},
		{"the oracle held to the end-to-end objective runs a small fleet: n/a", func(r *Row) { r.OracleE2EMeanFleet = 7.5 },
			func(v Verdict) bool { return v.NearOracleE2E == nil }},
		{"no static fleet meets the end-to-end objective", func(r *Row) { r.StaticE2EN, r.StaticE2EGPUHours = 0, 0 },
			func(v Verdict) bool { return v.BelowStaticE2E }},
		{"a day's share of the static fleet of both objectives", func(r *Row) { r.StaticShare, r.GPUHours, r.StaticE2EGPUHours = 0.8, 11.3, 14 },
			func(v Verdict) bool { return !v.BelowStaticE2E }},
		{"above 1.15 × oracle", func(r *Row) { r.GPUHours, r.StaticGPUHours = 10.6, 20 }, func(v Verdict) bool { return !*v.NearOracle && !v.All() }},
		{"small oracle fleet: the 1.15 rule does not apply", func(r *Row) { r.OracleMeanFleet, r.GPUHours, r.StaticGPUHours = 7.9, 11, 20 },
			func(v Verdict) bool { return v.NearOracle == nil && v.All() }},
		{"a kill", func(r *Row) { r.Killed = 1 }, func(v Verdict) bool { return !v.NoKills && !v.All() }},
		{"unfinished at the end is not a kill", func(r *Row) { r.Unfinished = 5 }, func(v Verdict) bool { return v.NoKills }},
		{"more than one flap an hour", func(r *Row) { r.FlapsPerHour = 1.05 }, func(v Verdict) bool { return !v.FewFlaps }},
	} {
		r := good
		c.edit(&r)
		s.Judge(&r)
		if !c.check(r.Verdict) {
			t.Errorf("%s: verdict %+v", c.name, r.Verdict)
		}
	}
}

func TestCheapestStaticFindsTheSmallestFleetReachingTheAttainment(t *testing.T) {
	r := &Runner{Settings: DefaultSettings()}
	cfg := r.Settings.Config(Case{Speed: 1, Startup: Startup{60, 0}})
	e := &Entry{Static: map[string]StaticResult{}}
	for n := 1; n <= cfg.MaxReplicas; n++ { // a cached curve: no replay runs
		e.setStatic(n, StaticResult{Attainment: min(1, 0.5+0.05*float64(n)), GPUHours: float64(n),
			E2EAttainment: new(min(1, 0.4+0.04*float64(n)))})
	}
	for _, c := range []struct {
		ttft, e2e float64
		n         int
	}{{0.5, 0, 1}, {0.7, 0, 4}, {0.72, 0, 5}, {0.99, 0, 10}, {1, 0, 10}, {0.7, 0.8, 10}, {1, 0.99, 15}} {
		n, s, err := r.cheapestStatic(context.Background(), cfg, nil, e, func(s StaticResult) bool {
			return s.Attainment >= c.ttft && *s.E2EAttainment >= c.e2e
		})
		if err != nil || n != c.n || s.GPUHours != float64(c.n) {
			t.Errorf("attainment %.2f, end-to-end %.2f: %d pods (%+v, %v), want %d", c.ttft, c.e2e, n, s, err, c.n)
		}
	}
	e.setStatic(cfg.MaxReplicas, StaticResult{Attainment: 0.9, E2EAttainment: new(0.9)})
	if n, _, err := r.cheapestStatic(context.Background(), cfg, nil, e, func(s StaticResult) bool { return s.Attainment >= 0.95 }); err != nil || n != 0 {
		t.Errorf("out of reach: %d pods, %v; want none", n, err)
	}
}

// A static fleet cached before its end-to-end attainment was kept is not
// a cached result: the fleet is replayed again.
func TestAStaticFleetCachedWithoutItsEndToEndAttainmentIsReplayed(t *testing.T) {
	e := &Entry{Static: map[string]StaticResult{"3": {Attainment: 0.99, GPUHours: 3}, "4": {Attainment: 1, GPUHours: 4, E2EAttainment: new(0.98)}}}
	if _, ok := e.static(3); ok {
		t.Error("a fleet without its end-to-end attainment read as cached")
	}
	if s, ok := e.static(4); !ok || *s.E2EAttainment != 0.98 {
		t.Errorf("the 4-pod fleet: %+v, %v", s, ok)
	}
}

func TestCacheKeysAndRoundTrip(t *testing.T) {
	s := DefaultSettings()
	w := Workload{Name: "demo", Trace: runner.Trace{Spec: "synthetic:demo"}}
	a := Case{Workload: w, Seed: 1, Speed: 1, Startup: Startup{60, 0}}
	key := func(c Case) string { return Key(c, s.Config(c), s) }
	b, c2 := a, a
	b.Speed, c2.Seed = 2, 2
	if key(a) != key(a) || key(a) == key(b) || key(a) == key(c2) {
		t.Fatalf("keys: same cell %s/%s, other speed %s, other seed %s", key(a), key(a), key(b), key(c2))
	}
	dir := t.TempDir()
	c := &Cache{Dir: dir}
	e := c.Load(key(a))
	e.Oracle = &OracleResult{Found: true, Target: 0.99, GPUHours: 3}
	e.setStatic(4, StaticResult{Attainment: 0.97, GPUHours: 4, E2EAttainment: new(0.96)})
	if err := c.Store(key(a), e); err != nil {
		t.Fatal(err)
	}
	got := (&Cache{Dir: dir}).Load(key(a))
	if s, ok := got.static(4); got.Oracle == nil || got.Oracle.GPUHours != 3 || !ok || s.Attainment != 0.97 || *s.E2EAttainment != 0.96 {
		t.Errorf("reloaded %+v", got)
	}
	if err := os.WriteFile(filepath.Join(dir, key(b)+".json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if e := (&Cache{Dir: dir}).Load(key(b)); e.Oracle != nil || len(e.Static) != 0 {
		t.Errorf("a corrupt entry loaded as %+v", e)
	}
}

// TestRunnerEvaluatesACellAndReusesItsCache runs one small cell, then
// doctors its cached oracle: the second run reports the doctored value,
// so it read the cache instead of searching again.
func TestRunnerEvaluatesACellAndReusesItsCache(t *testing.T) {
	w := Workload{Name: "demo10m", Trace: runner.Trace{Spec: "synthetic:demo", Duration: 10 * time.Minute}}
	cases := []Case{{Workload: w, Seed: 1, Speed: 1, Startup: Startup{60, 0}}}
	dir := t.TempDir()
	run := func() Row {
		r := &Runner{Settings: DefaultSettings(), Policy: runner.Spec{Name: "static", Params: map[string]string{"replicas": "8"}},
			Cache: &Cache{Dir: dir}, Jobs: 1}
		rows, err := r.Run(context.Background(), cases)
		if err != nil {
			t.Fatal(err)
		}
		return rows[0]
	}
	first := run()
	if !first.OracleOK || first.OracleGPUHours <= 0 || first.StaticN < 1 || first.StaticN > 8 || first.Killed != 0 {
		t.Fatalf("first run: %+v", first)
	}
	if first.StaticGPUHours > first.GPUHours+1e-9 {
		t.Errorf("the cheapest static fleet reaching a static 8-pod fleet's attainment costs more (%.2f) than it (%.2f)", first.StaticGPUHours, first.GPUHours)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	var e Entry
	b, err := os.ReadFile(files[0])
	if err != nil || json.Unmarshal(b, &e) != nil || e.Oracle == nil {
		t.Fatalf("cache entry %s: %v", b, err)
	}
	e.Oracle.GPUHours = 123.5
	b, _ = json.Marshal(e)
	if err := os.WriteFile(files[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	second := run()
	if second.OracleGPUHours != 123.5 || second.Attainment != first.Attainment {
		t.Errorf("second run: oracle %.2f GPU-h (want the cached 123.5), attainment %v vs %v", second.OracleGPUHours, second.Attainment, first.Attainment)
	}
	var out strings.Builder
	if err := WriteTable(&out, []Row{first}); err != nil || !strings.Contains(out.String(), "demo10m/s1/gpu×1/60s") || !strings.Contains(out.String(), "cases passing") {
		t.Errorf("table %q, %v", out.String(), err)
	}
	out.Reset()
	if err := WriteMarkdown(&out, []Row{first}); err != nil || !strings.HasPrefix(out.String(), "| case |") {
		t.Errorf("markdown %q, %v", out.String(), err)
	}
	// Each summary line is a paragraph of its own.
	if !regexp.MustCompile(`all criteria \d/1\n\nbeside the criteria:`).MatchString(out.String()) {
		t.Errorf("markdown summary lines not apart: %q", out.String())
	}
}

func TestMatrixAndFilter(t *testing.T) {
	m := Matrix(Workloads("/x"), []int64{1, 2, 3}, Speeds(), Startups())
	if len(m) != 5*3*3*2 {
		t.Fatalf("%d cells, want 90", len(m))
	}
	names := map[string]bool{}
	for _, c := range m {
		names[c.Name()] = true
	}
	if len(names) != len(m) || !names["servegen-morning/s2/gpu×0.5/180s~0.5"] {
		t.Errorf("cell names not distinct or unexpected: %d names", len(names))
	}
	if got := Filter(m, "demo-x4/s1,azure"); len(got) != 6+18 {
		t.Errorf("filter kept %d cells, want 24", len(got))
	}
}

// The progress line's ETA is the mean time per finished cell times the
// cells left.
func TestProgressEstimatesTheTimeLeft(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	p := newProgress(4, t0)
	if n, eta := p.step(t0.Add(10 * time.Second)); n != 1 || eta != 30*time.Second {
		t.Errorf("after 1 of 4 in 10 s: %d, %s; want 1, 30s", n, eta)
	}
	if n, eta := p.step(t0.Add(30 * time.Second)); n != 2 || eta != 30*time.Second {
		t.Errorf("after 2 of 4 in 30 s: %d, %s; want 2, 30s", n, eta)
	}
	p.step(t0.Add(40 * time.Second))
	if n, eta := p.step(t0.Add(40 * time.Second)); n != 4 || eta != 0 {
		t.Errorf("after 4 of 4: %d, %s; want 4, 0s", n, eta)
	}
}

// The day is 24 h of a real trace, judged at 0.8 × the static fleet, and
// its cells are apart from the matrix's.
func TestDayIsADayOfAShared(t *testing.T) {
	days := Day("/x")
	if len(days) != 1 {
		t.Fatalf("%d day workloads, want 1", len(days))
	}
	d := days[0]
	if d.Trace.Duration != 24*time.Hour || d.StaticShare != 0.8 || !strings.HasPrefix(d.Trace.Spec, "/x/traces/") {
		t.Errorf("day %+v: want 24 h of a trace under /x/traces, judged at 0.8 × static", d)
	}
	all := Matrix(append(Workloads("/x"), days...), []int64{1}, []float64{1}, Startups())
	if got := Filter(all, d.Name); len(got) != 2 {
		t.Errorf("-only %s keeps %d cells, want its 2", d.Name, len(got))
	}
}

// The held-out cells replay windows and rates no other cell replays, and
// -only heldout keeps them alone.
func TestHeldOutCellsAreTracesNoOtherCellReplays(t *testing.T) {
	key := func(tr runner.Trace) string {
		return fmt.Sprintf("%s|%s|%s|%g", tr.Spec, tr.Start, tr.Duration, tr.RateFactor)
	}
	seen := map[string]string{}
	for _, w := range append(append(Workloads("/x"), Stress("/x")...), Day("/x")...) {
		seen[key(w.Trace)] = w.Name
	}
	held := HeldOut("/x")
	if len(held) != 4 {
		t.Fatalf("%d held-out workloads, want 4", len(held))
	}
	for _, w := range held {
		if other, ok := seen[key(w.Trace)]; ok {
			t.Errorf("%s replays what %s does: %+v", w.Name, other, w.Trace)
		}
		if !strings.HasPrefix(w.Name, "heldout-") || !strings.HasPrefix(w.Trace.Spec, "/x/traces/") {
			t.Errorf("%s (%s): want a name starting heldout- and a trace under /x/traces", w.Name, w.Trace.Spec)
		}
		seen[key(w.Trace)] = w.Name
	}
	all := Matrix(append(Workloads("/x"), held...), []int64{1}, []float64{1}, Startups())
	if got := Filter(all, "heldout"); len(got) != 8 {
		t.Errorf("-only heldout keeps %d cells, want 4 workloads × 2 startups", len(got))
	}
}

func TestStressCellsChangeTheEngineOrTheStartOnly(t *testing.T) {
	s := DefaultSettings()
	plain := map[string]Workload{}
	for _, w := range Workloads("/x") {
		plain[w.Name] = w
	}
	cells := Matrix(Stress("/x"), []int64{1}, []float64{1}, []Startup{{60, 0}})
	if len(cells) != 7 {
		t.Fatalf("%d stress cells, want 7", len(cells))
	}
	base := s.Config(Case{Workload: plain["demo"], Seed: 1, Speed: 1, Startup: Startup{60, 0}})
	for _, c := range cells {
		cfg := s.Config(c)
		switch {
		case len(c.Workload.Hidden) > 0:
			if err := (func() error { cfg.Hidden = c.Workload.Hidden; return cfg.Validate() })(); err != nil {
				t.Errorf("%s: %v", c.Name(), err)
			}
		case c.Workload.ColdStart == 2:
			if cfg.Model != base.Model {
				t.Errorf("%s: the cold start changed the engine", c.Name())
			}
		case c.Workload.Engine != nil:
			if cfg.Model == base.Model || cfg.Model.IterBase != base.Model.IterBase {
				t.Errorf("%s: engine %+v, want the prior's but for the changed costs", c.Name(), cfg.Model)
			}
		default:
			t.Errorf("%s: neither a cold start nor an engine off the prior", c.Name())
		}
	}
}

// TestACellsDecisionLogIsNamedByTheCell runs one small cell with
// decision logs: the file is the cell's, one line a tick.
func TestACellsDecisionLogIsNamedByTheCell(t *testing.T) {
	w := Workload{Name: "demo5m", Trace: runner.Trace{Spec: "synthetic:demo", Duration: 5 * time.Minute}}
	cases := []Case{{Workload: w, Seed: 1, Speed: 1, Startup: Startup{60, 0}}}
	logs := t.TempDir()
	r := &Runner{Settings: DefaultSettings(), Policy: runner.Spec{Name: "inferscale", Params: map[string]string{}},
		Cache: &Cache{Dir: t.TempDir()}, Jobs: 1, Options: runner.Options{Mode: runner.Fast, DecisionLogs: logs}}
	if _, err := r.Run(context.Background(), cases); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(logs, runner.LogFileName("demo5m/s1/gpu×1/60s")))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\"inferscale\":\"decision/v1\""); n < 18 || n > 20 {
		t.Errorf("the cell's log holds %d decisions, want one a tick of 5 min", n)
	}
}

// Flaps are counted per hour of the replay, and at least of the window
// the cell cuts from its trace: one flap in Mooncake's hour, whose last
// requests ended at 59:07, is one an hour; a trace replayed whole counts
// over its own length (Azure code's 57 minutes: 1.05 an hour).
func TestFlapsAreCountedOverTheReplayOrTheWindow(t *testing.T) {
	for _, c := range []struct {
		name  string
		flaps int
		end   float64
		trace runner.Trace
		want  float64
	}{
		{"an hour's window that ended early", 1, 3546.8, runner.Trace{Duration: time.Hour}, 1},
		{"a replay past its window", 2, 7200, runner.Trace{Duration: time.Hour}, 1},
		{"a trace replayed whole", 1, 3436, runner.Trace{}, 3600 / 3436.0},
		{"a window stretched twice", 1, 3000, runner.Trace{Duration: time.Hour, TimeFactor: 2}, 0.5},
		{"no flap", 0, 3600, runner.Trace{}, 0},
		{"a replay of no length", 1, 0, runner.Trace{}, 0},
	} {
		if got := flapsPerHour(c.flaps, c.end, c.trace); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %v flaps/h, want %v", c.name, got, c.want)
		}
	}
}

// The oracle held to the end-to-end objective is held to the policy's own
// end-to-end attainment where that is below the target (as the static
// fleet is), searched once per such target, and cached by it.
func TestTheOracleOfBothObjectivesIsHeldToWhatThePolicyReached(t *testing.T) {
	r := &Runner{Settings: DefaultSettings()}
	cfg := r.Settings.Config(Case{Speed: 1, Startup: Startup{60, 0}})
	e := &Entry{Static: map[string]StaticResult{}, OracleE2E: map[string]OracleResult{
		"0.990": {Found: true, Target: 0.99, GPUHours: 5},
		"0.983": {Found: true, Target: 0.983, GPUHours: 4},
		"0.913": {Found: true, Target: 0.913, GPUHours: 3},
	}}
	e.setStatic(cfg.MaxReplicas, StaticResult{Attainment: 1, GPUHours: 64, E2EAttainment: new(0.995)})
	for _, c := range []struct {
		policy, want float64
	}{{1, 5}, {0.99, 5}, {0.98335, 4}} {
		o, err := r.oracleE2E(context.Background(), cfg, nil, e, 0.99, c.policy)
		if err != nil || o.GPUHours != c.want {
			t.Errorf("policy end to end %.5f: the cached oracle of %.2f GPU-h (%+v, %v), want %.2f", c.policy, o.GPUHours, o, err, c.want)
		}
	}
	// Not even the largest static fleet answers 99 % end to end: the
	// oracle is held to what it reaches.
	e.setStatic(cfg.MaxReplicas, StaticResult{Attainment: 1, GPUHours: 64, E2EAttainment: new(0.9134)})
	if o, err := r.oracleE2E(context.Background(), cfg, nil, e, 0.99, 1); err != nil || o.GPUHours != 3 {
		t.Errorf("the largest static fleet at 91.34 %%: %+v, %v; want the oracle of 0.913", o, err)
	}
}

// -engine: every cell runs on the base model, a cell that changes its
// engine changes the base, and the default cells are left as they were
// (their cached oracle and static fleets still apply).
func TestOnEngineRunsEveryCellOnTheBase(t *testing.T) {
	base := engine.BLISLlama31_8B_H100()
	given := append(Workloads("."), Stress(".")...)
	ws := OnEngine(given, base)
	s := DefaultSettings()
	seen := 0
	for _, w := range ws {
		c := Case{Workload: w, Seed: 1, Speed: 2, Startup: Startups()[0]}
		got := s.Config(c).Model
		switch w.Name {
		case "demo":
			seen++
			if got != base.Scaled(2) {
				t.Errorf("demo on BLIS at speed 2: %+v", got)
			}
		case "mooncake-conv-prefill×4":
			seen++
			if got.PerPrefillToken != 4*base.PerPrefillToken/2 || got.PerDecodeSeq != base.PerDecodeSeq/2 {
				t.Errorf("prefill ×4 on BLIS at speed 2: %+v", got)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("%d of the 2 cells looked at were found", seen)
	}
	if given[0].Engine != nil {
		t.Error("OnEngine changed the workloads it was given")
	}
}
