package sizing

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/state"
)

// poisson draws a Poisson count of mean m (normal approximation above 50).
func poisson(r *rand.Rand, m float64) float64 {
	if m > 50 {
		return math.Max(0, math.Round(m+math.Sqrt(m)*r.NormFloat64()))
	}
	l, k, p := math.Exp(-m), 0.0, 1.0
	for {
		p *= r.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

func TestPeakednessIsOneForPoissonArrivalsAndLearnsOverdispersion(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var smooth, bursty state.Dispersion
	for i := range 400 {
		observeDispersion(&smooth, poisson(r, 150)/15, 15)
		// Batches of 6 requests: the counts vary 6 times their mean.
		observeDispersion(&bursty, 6*poisson(r, 25)/15, 15)
		if i == 0 && Peakedness(bursty, 2, 15) != 1 {
			t.Fatalf("one tick already moves z: %g", Peakedness(bursty, 2, 15))
		}
	}
	if z := Peakedness(smooth, 2, 15); z > 1.3 {
		t.Errorf("Poisson arrivals learn z = %.2f, want ≈ 1", z)
	}
	if z := Peakedness(bursty, 2, 15); z != MaxPeakedness {
		t.Errorf("arrivals in batches of 6 learn z = %.2f, want the bound %g", z, MaxPeakedness)
	}
	if z := Peakedness(state.Dispersion{}, 2, 15); z != 1 {
		t.Errorf("an old state without a dispersion reads z = %g, want 1 (Poisson)", z)
	}
}

func TestASlowRampHardlyMovesPeakedness(t *testing.T) {
	var d state.Dispersion
	for i := range 240 {
		observeDispersion(&d, 5+float64(i)*0.1, 15) // 5 → 29 req/s over an hour, no noise
	}
	if z := Peakedness(d, 2, 15); z > 1.1 {
		t.Errorf("a noiseless ramp learns z = %.2f, want ≈ 1", z)
	}
}

func TestPeakednessWidensThePoissonMargin(t *testing.T) {
	o := options()
	r := rand.New(rand.NewPCG(3, 4))
	var smooth, bursty state.Service
	var as, ab Assessment
	for i := range 120 {
		now := t0.Add(time.Duration(i) * 15 * time.Second)
		// The same 20 req/s, Poisson or in batches of 10, never missing.
		as, smooth = Assess(view(4, poisson(r, 300)/15), smooth, o, now)
		ab, bursty = Assess(view(4, 10*poisson(r, 30)/15), bursty, o, now)
	}
	if as.Peakedness > 1.3 || ab.Peakedness < 2 {
		t.Fatalf("peakedness smooth %.2f, bursty %.2f", as.Peakedness, ab.Peakedness)
	}
	// Both margins widen with z (the window's as √z, the queue's as z),
	// so their smaller does by at least √z, and β keeps it.
	params := bursty.Fit.Params(o.Prior)
	pods := o.demandPods(view(4, 20), params, bursty.Mix)
	slack := o.queueSlack(params, bursty.Prompts, bursty.Mix)
	calm := o.leastHeadroom(params, bursty.Mix, 1, false, pods, slack)
	least := o.leastHeadroom(params, bursty.Mix, ab.Peakedness, false, pods, slack)
	if want := calm * math.Sqrt(ab.Peakedness); least < want-1e-9 {
		t.Errorf("bursty arrivals (z %.2f) keep a least β of %.3g, want at least √z × Poisson arrivals' %.3g = %.3g", ab.Peakedness, least, calm, want)
	}
	if ab.Beta < least-1e-9 {
		t.Errorf("β %.3g is below its least %.3g", ab.Beta, least)
	}
}
