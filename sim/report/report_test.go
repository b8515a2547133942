package report

import (
	"bytes"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferscale/inferscale/sim/engine"
)

func TestFlapsCountReversalsWithinFiveMinutes(t *testing.T) {
	ev := []engine.ScaleEvent{
		{T: 0, From: 1, To: 3},    // up
		{T: 100, From: 3, To: 2},  // down within 100 s: flap
		{T: 150, From: 2, To: 4},  // up within 50 s: flap
		{T: 200, From: 4, To: 6},  // up again: no flap
		{T: 900, From: 6, To: 2},  // down after 700 s: no flap
		{T: 1199, From: 2, To: 3}, // up after 299 s: flap
	}
	if got := Flaps(ev); got != 3 {
		t.Fatalf("flaps = %d, want 3", got)
	}
	if Flaps(nil) != 0 || Flaps(ev[:1]) != 0 {
		t.Fatal("no events, no flaps")
	}
}

func result() *engine.Result {
	cfg := engine.DefaultConfig()
	inf := float32(math.Inf(1))
	return &engine.Result{
		Policy: "p", Config: cfg, Requests: 10, Completed: 8, Killed: 1, Unfinished: 1, TTFTMet: 6, E2EMet: 5,
		GPUSeconds: 7200,
		// bins: [0.1 0.2] ok, [3 inf] bad, [] empty, [5] bad, [0.1 0.1 0.3] ok, [inf] bad
		TTFT: []float32{0.1, 0.2, 3, inf, 5, 0.1, 0.1, 0.3, inf, 0.5},
		Bins: []engine.Bin{{Arrivals: 2}, {Arrivals: 2}, {Arrivals: 0}, {Arrivals: 1}, {Arrivals: 3}, {Arrivals: 1}, {Arrivals: 1}},
	}
}

func TestSummariseAndAbsorb(t *testing.T) {
	res := result()
	r := Summarise(res, 0.99)
	if r.TTFTAttainment != 0.6 || r.E2EAttainment != 0.5 || r.GPUHours != 2 || r.Killed != 1 || r.Unfinished != 1 || r.Rejected != 0 {
		t.Fatalf("row %+v", r)
	}
	if r.MeetsTarget {
		t.Error("60% attainment meets a 99% target?")
	}
	if math.Abs(r.TTFTP50-0.3) > 1e-6 || !math.IsInf(r.TTFTP99, 1) {
		t.Errorf("p50 %v p99 %v, want 0.3 and +Inf", r.TTFTP50, r.TTFTP99)
	}
	// Bins 1-3 (3 bins, the empty one inside) are one episode of 30 s.
	if r.AbsorbSeconds != 30 {
		t.Errorf("absorb %.0f s, want 30", r.AbsorbSeconds)
	}
	rows := []Row{r}
	SetOracle(rows, 1)
	if rows[0].VsOracle != 2 {
		t.Errorf("×oracle %.2f, want 2", rows[0].VsOracle)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"policy", "60.00%", "2.00", "lost", "killed", "unfinished"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteMarkdown(&b, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "| policy |") || strings.Count(b.String(), "\n") != 3 {
		t.Errorf("markdown:\n%s", b.String())
	}
}

func TestPlotWritesAPNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.png")
	a, b := result(), result()
	b.Policy = "q"
	if err := Plot(path, "test", []*engine.Result{a, b}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if img.Bounds().Dx() < 600 {
		t.Errorf("picture only %d px wide", img.Bounds().Dx())
	}
	if err := Plot(path, "x", nil); err == nil {
		t.Error("no results accepted")
	}
	if err := Plot(filepath.Join(t.TempDir(), "missing", "p.png"), "x", []*engine.Result{a}); err == nil {
		t.Error("unwritable path accepted")
	}
}

func TestPlotSweepWritesAPNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.png")
	r := Summarise(result(), 0.99)
	series := map[string][]SweepPoint{"p": {{Value: 0, Row: r}, {Value: 60, Row: r}}}
	if err := PlotSweep(path, "t", "startup (s)", 0.99, series, []string{"p"}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if err := PlotSweep(path, "t", "x", 0.99, nil, nil); err == nil {
		t.Error("empty sweep accepted")
	}
}

// The sweep's two panels share the swept values' x range (the target line
// once started at 0 while the points started at 60).
func TestSweepPanelsShareTheXRange(t *testing.T) {
	r := Summarise(result(), 0.99)
	series := map[string][]SweepPoint{"p": {{Value: 60, Row: r}, {Value: 180, Row: r}}}
	att, cost, err := sweepPlots("t", "startup (s)", 0.99, series, []string{"p"})
	if err != nil {
		t.Fatal(err)
	}
	if att.X.Min != 60 || att.X.Max != 180 || cost.X.Min != att.X.Min || cost.X.Max != att.X.Max {
		t.Errorf("x ranges: attainment %g..%g, cost %g..%g; want both 60..180", att.X.Min, att.X.Max, cost.X.Min, cost.X.Max)
	}
}

// The demo figure's legend carries each policy's outcome, and the oracle
// is drawn apart from every policy colour.
func TestDemoFigureLegendAndStyles(t *testing.T) {
	r := result()
	if l := legendLabel(r); !strings.Contains(l, r.Policy) || !strings.Contains(l, "GPU-h") || !strings.Contains(l, "%") {
		t.Errorf("legend label %q lacks the outcome", l)
	}
	oc, od := lineStyle(0, oracleName)
	if len(od) == 0 {
		t.Error("the oracle is not dashed")
	}
	seen := map[color.Color]bool{oc: true}
	for i := range palette() {
		c, d := lineStyle(i, "p")
		if seen[c] || len(d) != 0 {
			t.Errorf("policy colour %d %v repeats or is dashed", i, c)
		}
		seen[c] = true
	}
}
