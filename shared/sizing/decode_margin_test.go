package sizing

import (
	"math"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/model"
	"github.com/inferscale/inferscale/shared/state"
)

// decodeHeavy is a decode pool's mix: long answers, the prompt's KV
// already there.
var decodeHeavy = model.Mix{PromptTokens: 1000, OutputTokens: 800, KVPerSeq: 0.002}

func TestADecodePoolsWorkLandsOverItsGeneration(t *testing.T) {
	p := model.DefaultPrior()
	o := options()
	c := p.Ceiling(decodeHeavy, o.Limits).Utilisation
	if got := o.workWindow(p, decodeHeavy, c); got != o.TTFTSLO {
		t.Errorf("unified pool: window %.3gs, want the TTFT objective %.3gs", got, o.TTFTSLO)
	}
	o.Decode = true
	want := decodeHeavy.OutputTokens * p.Alpha / (1 - c)
	if got := o.workWindow(p, decodeHeavy, c); math.Abs(got-want) > 1e-9*want || want <= o.TTFTSLO {
		t.Errorf("decode pool: window %.3gs, want the generation at the ceiling, %.3gs (> the objective)", got, want)
	}
	// A pod at or past saturation has no generation time to speak of: the
	// objective stands rather than a window of 1/0.
	if got := o.workWindow(p, decodeHeavy, 1); got != o.TTFTSLO {
		t.Errorf("decode pool at c = 1: window %.3gs, want the objective", got)
	}
	// A generation shorter than the objective never shortens the window.
	short := model.Mix{PromptTokens: 100, OutputTokens: 1}
	if got := o.workWindow(p, short, 0.5); got != o.TTFTSLO {
		t.Errorf("a one-token answer: window %.3gs, want the objective", got)
	}

	uni := options()
	for _, z := range []float64{1, 4} {
		u, d := uni.leastHeadroom(p, decodeHeavy, z), o.leastHeadroom(p, decodeHeavy, z)
		if !(d < u) {
			t.Errorf("z %g: the decode pool's least β %.3g, want below the unified pool's %.3g at the same mix", z, d, u)
		}
		if want := PoissonZ * math.Sqrt(z*p.Work(decodeHeavy)/(c*want)); math.Abs(d-want) > 1e-9 {
			t.Errorf("z %g: the decode pool's least β %.4g, want PoissonZ·√(z·w/(c·τ)) = %.4g", z, d, want)
		}
	}
}

func TestADecodePoolKeepsAReserveForASurge(t *testing.T) {
	o := options()
	d := options()
	d.Decode = true
	for _, r := range []float64{0.3, 1, 4.2, 10, 37.5} {
		if got, want := d.staff(r, 0), int(math.Ceil(r*(1+DecodeReserve)-1e-9)); got != want {
			t.Errorf("decode pool, R %.3g at β 0: %d pods, want ⌈R·(1+%.2g)⌉ = %d", r, got, DecodeReserve, want)
		}
		if got, want := o.staff(r, 0), int(math.Ceil(r-1e-9)); got != want {
			t.Errorf("unified pool, R %.3g at β 0: %d pods, want ⌈R⌉ = %d (no reserve)", r, got, want)
		}
		// A learned β above the reserve still decides.
		if got, want := d.staff(r, 3), Staff(r, 3, d.MaxPods); got != want {
			t.Errorf("decode pool, R %.3g at β 3: %d pods, want the square-root staffing's %d", r, got, want)
		}
	}
	d.MaxPods = 8
	if got := d.staff(10, 0); got != 8 {
		t.Errorf("the reserve past the fleet's bound: %d pods, want the bound 8", got)
	}
	for _, r := range []float64{0, -1, math.NaN()} {
		if got := d.staff(r, 1); got != 0 {
			t.Errorf("no offered load (%g): %d pods, want 0", r, got)
		}
	}
}

func TestADecodePoolIsSizedOnItsSequencesAndItsReserve(t *testing.T) {
	plan := func(decode bool) Assessment {
		o := options()
		o.Decode = decode
		st := state.Service{Mix: decodeHeavy}
		var a Assessment
		for i := range 40 {
			a, st = Assess(view(40, 60), st, o, t0.Add(time.Duration(i)*15*time.Second))
		}
		return a
	}
	u, d := plan(false), plan(true)
	if u.Offered != d.Offered {
		t.Fatalf("the same demand offered %.3g pods to the unified plan and %.3g to the decode one", u.Offered, d.Offered)
	}
	if reserve := int(math.Ceil(d.Offered * (1 + DecodeReserve))); d.Need < reserve {
		t.Errorf("decode pool: need %d at R %.3g, want at least its reserve, %d", d.Need, d.Offered, reserve)
	}
	if !(d.Need < u.Need) {
		t.Errorf("decode pool: need %d (β %.2g), want below the unified pool's %d (β %.2g), whose margin takes the answers as due within the TTFT objective",
			d.Need, d.Beta, u.Need, u.Beta)
	}
}
