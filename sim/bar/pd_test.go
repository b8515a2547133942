package bar

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/pd"
	"github.com/inferscale/inferscale/sim/runner"
)

// goodPDRow passes every criterion: 99.5 % user TTFT and 99.8 % ITL on
// 10 GPU-h, a static pair of the same attainment at 12, a peer that
// reaches it at 11 and a cheaper one that does not.
func goodPDRow() PDRow {
	return PDRow{Case: "pd/x/s1/gpu×1",
		PDFigures: PDFigures{UserAttainment: 0.995, ITLAttainment: 0.998, PrefillGPUHours: 4, DecodeGPUHours: 6},
		OracleOK:  true, Oracle: PDFigures{UserAttainment: 0.993, ITLAttainment: 0.999, PrefillGPUHours: 3, DecodeGPUHours: 4},
		StaticPrefill: 5, StaticDecode: 7, Static: PDFigures{UserAttainment: 0.996, ITLAttainment: 0.999, PrefillGPUHours: 5, DecodeGPUHours: 7},
		PrefillFlapsPerHour: 1, DecodeFlapsPerHour: 0,
		Peers: []PDPeer{
			{Name: "a + a", PDFigures: PDFigures{UserAttainment: 0.996, ITLAttainment: 0.999, PrefillGPUHours: 5, DecodeGPUHours: 6}},
			{Name: "b + b", PDFigures: PDFigures{UserAttainment: 0.90, ITLAttainment: 0.999, PrefillGPUHours: 1, DecodeGPUHours: 1}},
		}}
}

func TestJudgePDAppliesEachCriterion(t *testing.T) {
	s := DefaultPDSettings()
	for _, c := range []struct {
		name  string
		edit  func(*PDRow)
		check func(PDVerdict) bool
	}{
		{"all pass", func(*PDRow) {}, func(v PDVerdict) bool { return v.All() && v.UserBar == 0.99 && v.ITLBar == 0.99 }},
		{"user TTFT below 99%", func(r *PDRow) { r.UserAttainment = 0.985 }, func(v PDVerdict) bool { return !v.UserAttainment && !v.All() }},
		{"the oracle's user TTFT is the bar where it is below 99%", func(r *PDRow) { r.UserAttainment, r.Oracle.UserAttainment = 0.986, 0.985 },
			func(v PDVerdict) bool { return v.UserAttainment && v.UserBar == 0.985 }},
		{"below the oracle's own user TTFT", func(r *PDRow) { r.UserAttainment, r.Oracle.UserAttainment = 0.984, 0.985 },
			func(v PDVerdict) bool { return !v.UserAttainment }},
		{"ITL below 99%", func(r *PDRow) { r.ITLAttainment = 0.98 }, func(v PDVerdict) bool { return !v.ITLAttainment && !v.All() }},
		{"the oracle's ITL is the bar where it is below 99%", func(r *PDRow) { r.ITLAttainment, r.Oracle.ITLAttainment = 0.975, 0.97 },
			func(v PDVerdict) bool { return v.ITLAttainment && v.ITLBar == 0.97 && v.All() }},
		{"no oracle: the bars are 99%", func(r *PDRow) { r.OracleOK, r.Oracle = false, PDFigures{} },
			func(v PDVerdict) bool { return v.UserBar == 0.99 && v.ITLBar == 0.99 && v.All() }},
		{"dearer than the static pair", func(r *PDRow) { r.Static.DecodeGPUHours = 4.5 }, func(v PDVerdict) bool { return !v.BelowStatic && !v.All() }},
		{"as dear as the static pair", func(r *PDRow) { r.Static.DecodeGPUHours = 5 }, func(v PDVerdict) bool { return !v.BelowStatic }},
		{"no static pair reaches the policy", func(r *PDRow) { r.StaticPrefill, r.StaticDecode, r.Static = 0, 0, PDFigures{} },
			func(v PDVerdict) bool { return v.BelowStatic }},
		{"dearer than a peer of the same attainment", func(r *PDRow) { r.Peers[0].DecodeGPUHours = 4 },
			func(v PDVerdict) bool { return !v.BelowPeers && !v.All() }},
		{"a cheaper peer that misses the ITL the policy reaches is not compared", func(r *PDRow) { r.Peers[0].DecodeGPUHours, r.Peers[0].ITLAttainment = 4, 0.997 },
			func(v PDVerdict) bool { return v.BelowPeers }},
		{"no peers", func(r *PDRow) { r.Peers = nil }, func(v PDVerdict) bool { return v.BelowPeers && v.All() }},
		{"a kill in the prefill pool", func(r *PDRow) { r.PrefillKilled = 1 }, func(v PDVerdict) bool { return !v.NoKills && !v.All() }},
		{"a kill in the decode pool", func(r *PDRow) { r.DecodeKilled = 2 }, func(v PDVerdict) bool { return !v.NoKills }},
		{"more than one flap an hour in the decode pool", func(r *PDRow) { r.DecodeFlapsPerHour = 1.05 }, func(v PDVerdict) bool { return !v.FewFlaps && !v.All() }},
		{"more than one flap an hour in the prefill pool", func(r *PDRow) { r.PrefillFlapsPerHour = 2 }, func(v PDVerdict) bool { return !v.FewFlaps }},
	} {
		r := goodPDRow()
		r.Peers = append([]PDPeer(nil), r.Peers...)
		c.edit(&r)
		s.Judge(&r)
		if !c.check(r.Verdict) {
			t.Errorf("%s: verdict %+v", c.name, r.Verdict)
		}
	}
	r := goodPDRow()
	s.Judge(&r)
	if !r.Peers[0].Compared || r.Peers[1].Compared {
		t.Errorf("peers compared %v, %v; want the one reaching the policy's attainments only", r.Peers[0].Compared, r.Peers[1].Compared)
	}
}

// TestPDStaticSearchFindsACheapPairOfTheAttainment searches a cached
// grid (no replay runs): a pair reaches 99 % user TTFT from 6 prefill
// pods with 40 − 3·(prefill pods) decode pods (at least 10), and ITL
// from 10 decode pods. The smallest prefill pool, 6, needs 22 decode
// pods (28 GPU-h); 7 + 19 (26) and 8 + 16 (24) are cheaper.
func TestPDStaticSearchFindsACheapPairOfTheAttainment(t *testing.T) {
	s := DefaultPDSettings()
	pools := s.Pools(PDCase{Speed: 1, Seed: 1}, runner.Options{})
	e := &Entry{PDStatic: map[string]PDFigures{}}
	grid := func(p, d int) PDFigures {
		f := PDFigures{UserAttainment: 0.9, ITLAttainment: 0.9, PrefillGPUHours: float64(p), DecodeGPUHours: float64(d)}
		if p >= 6 && d >= max(40-3*p, 10) {
			f.UserAttainment = 0.99
		}
		if d >= 10 {
			f.ITLAttainment = 0.995
		}
		return f
	}
	for p := 1; p <= 64; p++ {
		for d := 1; d <= 64; d++ {
			e.PDStatic[fmt.Sprintf("%d+%d", p, d)] = grid(p, d)
		}
	}
	st := &pdStatics{pools: pools, entry: e, pre: map[int]*engine.Result{}}
	p, d, f, err := st.cheapest(context.Background(), PDFigures{UserAttainment: 0.99, ITLAttainment: 0.99})
	if err != nil || p != 8 || d != 16 || f.GPUHours() != 24 {
		t.Errorf("cheapest static pair %d + %d (%+v, %v), want 8 + 16 at 24 GPU-h", p, d, f, err)
	}
	if p, d, _, err := st.cheapest(context.Background(), PDFigures{UserAttainment: 0.995}); err != nil || p != 0 || d != 0 {
		t.Errorf("out of reach: %d + %d, %v; want none", p, d, err)
	}
}

func TestPDMatrixSeedsOnlyTheGeneratedTrace(t *testing.T) {
	m := PDMatrix(PDWorkloads("/x"), []int64{1, 2, 3}, Speeds())
	if len(m) != 3+3*3 {
		t.Fatalf("%d P/D cells, want 3 (Mooncake, seed 1) + 9 (demo, 3 seeds)", len(m))
	}
	names := map[string]bool{}
	for _, c := range m {
		names[c.Name()] = true
	}
	for _, want := range []string{"pd/mooncake-conv/s1/gpu×0.5", "pd/demo-out×4/s3/gpu×2"} {
		if !names[want] {
			t.Errorf("no cell %s in %v", want, names)
		}
	}
	if names["pd/mooncake-conv/s2/gpu×1"] {
		t.Error("the recorded Mooncake trace got a second seed")
	}
	if got := Filter(m, "mooncake"); len(got) != 3 {
		t.Errorf("-only mooncake keeps %d P/D cells, want 3", len(got))
	}
	s := DefaultPDSettings()
	a, b, c := m[0], m[1], m[3]
	key := func(c PDCase) string { return PDKey(c, s.Pools(c, runner.Options{}), s) }
	if key(a) != key(a) || key(a) == key(b) || key(a) == key(c) {
		t.Error("P/D cache keys: the same cell differs, or another speed or workload matches")
	}
	if p := s.Pools(b, runner.Options{}); p.Prefill.TTFTSLOSeconds != 1.5 || p.Decode.TTFTSLOSeconds != 0.5 || p.Decode.TPOTSLOSeconds != 0.05 {
		t.Errorf("pools' objectives %+v / %+v, want simulate pd's 1.5 s + 0.5 s and 50 ms", p.Prefill, p.Decode)
	}
}

// A P/D cell runs both pools on the settings' engine at its GPU speed
// (simulate bar -pd -engine), and its cached oracle and static pairs are
// that engine's, not the default's.
func TestPDPoolsRunOnTheSettingsEngine(t *testing.T) {
	blis := DefaultPDSettings()
	blis.Model = engine.BLISLlama31_8B_H100()
	c := PDCase{Workload: PDWorkloads("/x")[0], Seed: 1, Speed: 0.5}
	p := blis.Pools(c, runner.Options{})
	want := engine.BLISLlama31_8B_H100().Scaled(0.5)
	if p.Prefill.Model != want || p.Decode.Model != want {
		t.Errorf("pools on %+v / %+v, want BLIS's engine at half speed %+v", p.Prefill.Model, p.Decode.Model, want)
	}
	def := DefaultPDSettings()
	if got := def.Pools(c, runner.Options{}).Prefill.Model; got != engine.Llama31_8B_H100().Scaled(0.5) {
		t.Errorf("default settings' prefill pool on %+v, want the calibrated engine", got)
	}
	if PDKey(c, p, blis) == PDKey(c, def.Pools(c, runner.Options{}), def) {
		t.Error("a P/D cell on BLIS's engine has the default engine's cache key")
	}
}

func TestPDRowsRoundTripAndDiff(t *testing.T) {
	s := DefaultPDSettings()
	a, b := goodPDRow(), goodPDRow()
	b.Peers = append([]PDPeer(nil), b.Peers...)
	b.Case = "pd/y/s1/gpu×2"
	s.Judge(&a)
	s.Judge(&b)
	var buf strings.Builder
	if err := WriteReport(&buf, Report{PDPolicy: "p + d", PDRows: []PDRow{a, b}}); err != nil {
		t.Fatal(err)
	}
	old, err := ReadReport(strings.NewReader(buf.String()))
	if err != nil || len(old.PDRows) != 2 || old.PDRows[0].Peers[0].Name != "a + a" {
		t.Fatalf("read back %+v, %v", old, err)
	}
	nw := old
	nw.PDRows = []PDRow{old.PDRows[0], old.PDRows[1]}
	nw.PDRows[1].DecodeKilled = 3
	s.Judge(&nw.PDRows[1])
	d := Diff(old, nw)
	if len(d.PDMoved) != 1 || d.PDSame != 1 || d.Unchanged() {
		t.Fatalf("delta: %d moved, %d same", len(d.PDMoved), d.PDSame)
	}
	buf.Reset()
	if err := WriteDelta(&buf, d, "old", "new"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"P/D pair p + d", "2 cells in both, 1 moved, 1 unchanged", "| pd/y/s1/gpu×2 |", "0+0 → 0+3",
		"0 killed pass→FAIL, all pass→FAIL", "- 0 killed: 2/2 → 1/2\n"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("delta lacks %q:\n%s", want, buf.String())
		}
	}
	if strings.Contains(buf.String(), "\ncells passing") {
		t.Errorf("a P/D-only delta counts unified cells:\n%s", buf.String())
	}
	for _, bad := range []string{
		`{"format":"inferscale-bar/1","pdRows":[{"case":"pd/x","userAttainment":1.5}]}`,
		`{"format":"inferscale-bar/1","pdRows":[{"case":"pd/x"},{"case":"pd/x"}]}`,
		`{"format":"inferscale-bar/1","pdRows":[{"case":""}]}`,
		`{"format":"inferscale-bar/1","pdRows":[{"case":"pd/x","decodeGPUHours":-1}]}`,
	} {
		if _, err := ReadReport(strings.NewReader(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	buf.Reset()
	if err := WritePDMarkdown(&buf, []PDRow{a}); err != nil || !strings.HasPrefix(buf.String(), "| P/D case |") ||
		!strings.Contains(buf.String(), "a + a: 11.00 (99.60%/99.90%) *") || !strings.Contains(buf.String(), "all criteria 1/1") {
		t.Errorf("markdown %q, %v", buf.String(), err)
	}
}

func TestThePDOracleIsSearchedLowerUntilFound(t *testing.T) {
	ctx := context.Background()
	reach := func(best float64, tried *[]float64) func(float64) (float64, error) {
		return func(t float64) (float64, error) {
			*tried = append(*tried, t)
			if t > best+1e-12 {
				return 0, errors.New("no plan reaches it")
			}
			return t, nil
		}
	}
	for _, c := range []struct {
		name        string
		start, best float64
		want        []float64
		found       bool
	}{
		{"found at once", 0.933, 0.95, []float64{0.933}, true},
		{"found two steps lower", 0.933, 0.9312, []float64{0.933, 0.932, 0.931}, true},
		{"not within the steps", 0.933, 0.9, []float64{0.933, 0.932, 0.931, 0.93, 0.929, 0.928}, false},
	} {
		var tried []float64
		got, res, err := searchDown(ctx, c.start, PDOracleSteps, reach(c.best, &tried))
		if !slices.Equal(tried, c.want) {
			t.Errorf("%s: searched at %v, want %v", c.name, tried, c.want)
		}
		if (err == nil) != c.found || got != c.want[len(c.want)-1] || (c.found && res != got) {
			t.Errorf("%s: got target %g, result %g, err %v; want found %v at %g", c.name, got, res, err, c.found, c.want[len(c.want)-1])
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	var tried []float64
	if _, _, err := searchDown(cancelled, 0.933, PDOracleSteps, reach(0.9, &tried)); err == nil || len(tried) != 1 {
		t.Errorf("a cancelled search went on: searched at %v, err %v", tried, err)
	}
}

// A pool's flaps are counted over the pair's replay: the prefill pool's
// own replay ends with its last prefill, before the decode pool's last
// token, and one flap in a cell of an hour is one flap an hour.
func TestAPoolsFlapsAreCountedOverThePairsReplay(t *testing.T) {
	flap := []engine.ScaleEvent{{T: 600, From: 2, To: 3}, {T: 800, From: 3, To: 2}}
	prefill := &engine.Result{EndSeconds: 3599.9, ScaleEvents: flap}
	decode := &engine.Result{EndSeconds: 3640}
	pair := &pd.Result{Prefill: prefill, Decode: decode}
	whole := runner.Trace{Spec: "synthetic:demo"}
	if got, want := pairFlapsPerHour(prefill, pair, whole), 3600/3640.0; math.Abs(got-want) > 1e-12 {
		t.Errorf("prefill flaps/h = %v, want %v (one flap over the pair's 3,640 s)", got, want)
	}
	if got := pairFlapsPerHour(decode, pair, whole); got != 0 {
		t.Errorf("decode flaps/h = %v, want 0", got)
	}
	// A pair whose replay ends before the trace's window does is counted
	// over the window.
	short := &pd.Result{Prefill: &engine.Result{EndSeconds: 3500, ScaleEvents: flap}, Decode: &engine.Result{EndSeconds: 3540}}
	if got := pairFlapsPerHour(short.Prefill, short, runner.Trace{Duration: time.Hour}); got != 1 {
		t.Errorf("one flap in an hour's window: flaps/h = %v, want 1", got)
	}
	if got := pairFlapsPerHour(prefill, &pd.Result{Prefill: &engine.Result{}, Decode: &engine.Result{}}, whole); got != 0 {
		t.Errorf("a replay of no length: flaps/h = %v, want 0", got)
	}
}
