package tune

import (
	"context"
	"errors"
	"math"
	"testing"
)

// A synthetic landscape: attainment rises with x (capacity) and falls with
// y (a delay); cost rises with x. The cheapest setting meeting 0.99 is
// x=4, y=0.
func landscape(_ context.Context, p map[string]float64) (Outcome, error) {
	x, y := p["x"], p["y"]
	att := math.Min(1, 0.9+0.025*x) - 0.01*y
	return Outcome{Attainment: att, GPUHours: x + 0.1*y}, nil
}

func TestSearchFindsCheapestSettingMeetingTarget(t *testing.T) {
	params := []Param{{Name: "x", Min: 0, Max: 8, Default: 8, Integer: true}, {Name: "y", Min: 0, Max: 6, Default: 3, Integer: true}}
	res, err := Search(context.Background(), params, landscape, Options{Target: 0.99, Grid: 9, Passes: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Met || res.Best.Params["x"] != 4 || res.Best.Params["y"] != 0 {
		t.Fatalf("best %v (met %v), want x=4 y=0", res.Best, res.Met)
	}
	for _, tr := range res.Trials {
		if tr.Outcome.Attainment >= 0.99 && tr.Outcome.GPUHours < res.Best.Outcome.GPUHours {
			t.Errorf("trial %v is cheaper and meets the target but was not chosen", tr)
		}
	}
}

func TestSearchPrefersHigherAttainmentWhenNothingMeetsTarget(t *testing.T) {
	params := []Param{{Name: "x", Min: 0, Max: 2, Default: 0, Integer: true}, {Name: "y", Min: 0, Max: 1, Default: 1, Integer: true}}
	res, err := Search(context.Background(), params, landscape, Options{Target: 0.999})
	if err != nil {
		t.Fatal(err)
	}
	if res.Met || res.Best.Params["x"] != 2 || res.Best.Params["y"] != 0 {
		t.Fatalf("best %v (met %v), want the highest attainment x=2 y=0 and not met", res.Best, res.Met)
	}
}

func TestSearchRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	if _, err := Search(ctx, nil, landscape, Options{Target: 0.99}); err == nil {
		t.Error("no parameters accepted")
	}
	if _, err := Search(ctx, []Param{{Name: "x", Min: 2, Max: 1}}, landscape, Options{Target: 0.99}); err == nil {
		t.Error("inverted range accepted")
	}
	if _, err := Search(ctx, []Param{{Name: "x", Max: 1}}, landscape, Options{Target: 1.5}); err == nil {
		t.Error("target above 1 accepted")
	}
	boom := errors.New("boom")
	_, err := Search(ctx, []Param{{Name: "x", Max: 1}}, func(context.Context, map[string]float64) (Outcome, error) { return Outcome{}, boom }, Options{Target: 0.9})
	if !errors.Is(err, boom) {
		t.Errorf("evaluation error not returned: %v", err)
	}
}

func TestGridIsLogSpacedOverDecadesAndIncludesDefault(t *testing.T) {
	g := Grid(Param{Name: "q", Min: 0.5, Max: 50, Default: 3}, 3)
	want := []float64{0.5, 3, 5, 50}
	if len(g) != len(want) {
		t.Fatalf("grid %v, want %v", g, want)
	}
	for i := range want {
		if math.Abs(g[i]-want[i]) > 1e-9 {
			t.Fatalf("grid %v, want %v", g, want)
		}
	}
}

func TestGridValuesPrintExactlyAndStayInRange(t *testing.T) {
	for _, v := range Grid(Param{Name: "q", Min: 0.5, Max: 50, Default: 3}, 7) {
		s := Key(map[string]float64{"q": v})
		if len(s) > len("q=")+6 {
			t.Errorf("grid value %v prints as %q: too long to read back reliably", v, s)
		}
		if v < 0.5 || v > 50 {
			t.Errorf("grid value %v outside [0.5, 50]", v)
		}
	}
	if Key(map[string]float64{"a": math.Copysign(0, -1)}) != "a=0" {
		t.Error("-0 prints as -0")
	}
}
