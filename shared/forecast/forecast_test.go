package forecast

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// poisson draws a Poisson count (normal approximation above 50).
func poisson(rng *rand.Rand, mean float64) float64 {
	if mean > 50 {
		return math.Max(0, math.Round(mean+math.Sqrt(mean)*rng.NormFloat64()))
	}
	l, k, p := math.Exp(-mean), 0.0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// coverage replays a demand process and returns the share of horizons
// whose demand stayed within the upper bound given H earlier.
func coverage(t *testing.T, o Options, demand func(i int, rng *rand.Rand) float64) (float64, State) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	var st State
	for i := 0; i < 4000; i++ {
		Observe(&st, demand(i, rng), t0.Add(time.Duration(i)*15*time.Second), o)
	}
	n := st.Covered + st.Missed
	if n < 3000 {
		t.Fatalf("only %d forecasts resolved", n)
	}
	return float64(st.Covered) / float64(n), st
}

func TestUpperBoundCoversTheRequestedShare(t *testing.T) {
	o := DefaultOptions(90 * time.Second)
	for _, c := range []struct {
		name   string
		demand func(i int, rng *rand.Rand) float64
	}{
		{"poisson, flat", func(i int, rng *rand.Rand) float64 { return poisson(rng, 40) / 15 }},
		{"poisson, diurnal", func(i int, rng *rand.Rand) float64 {
			return poisson(rng, 15*(3+2*math.Sin(float64(i)/300))) / 15
		}},
		{"bursty (on/off)", func(i int, rng *rand.Rand) float64 {
			if (i/20)%3 == 0 {
				return poisson(rng, 150) / 15
			}
			return poisson(rng, 5) / 15
		}},
		{"low rate", func(i int, rng *rand.Rand) float64 { return poisson(rng, 2) / 15 }},
	} {
		got, _ := coverage(t, o, c.demand)
		if want := 1 - o.Miss; math.Abs(got-want) > 0.02 {
			t.Errorf("%s: the upper bound covered %.3f of the horizons, want %.2f ± 0.02", c.name, got, want)
		}
	}
}

func TestBandIsWiderForBurstyTrafficThanForSmooth(t *testing.T) {
	o := DefaultOptions(90 * time.Second)
	width := func(demand func(i int, rng *rand.Rand) float64) float64 {
		_, st := coverage(t, o, demand)
		f := Observe(&st, st.Level, t0.Add(4001*15*time.Second), o)
		return f.Upper / math.Max(f.Point, 1e-9)
	}
	smooth := width(func(i int, rng *rand.Rand) float64 { return poisson(rng, 600) / 15 })
	bursty := width(func(i int, rng *rand.Rand) float64 {
		if rng.Float64() < 0.10 { // more often than the 5 % miss level
			return poisson(rng, 1800) / 15
		}
		return poisson(rng, 600) / 15
	})
	if !(bursty > smooth*1.3) || smooth > 1.3 {
		t.Errorf("upper/point: smooth %.2f, bursty %.2f; want smooth near 1 and bursty well above", smooth, bursty)
	}
}

func TestForecastFollowsATrendAndCapsIt(t *testing.T) {
	o := DefaultOptions(2 * time.Minute)
	var st State
	var f Forecast
	for i := 0; i < 100; i++ {
		f = Observe(&st, 1+0.01*float64(i)*15, t0.Add(time.Duration(i)*15*time.Second), o)
	}
	// Rising 0.01/s: about 1.2 more at the horizon than now.
	now := 1 + 0.01*99*15
	if f.Point < now+0.8 || f.Point > now+1.6 {
		t.Errorf("point %.2f for a series at %.2f rising 1.2 per horizon", f.Point, now)
	}
	// A jump is not extrapolated beyond MaxGrowth.
	f = Observe(&st, 1000, t0.Add(100*15*time.Second), o)
	if f.Point > o.MaxGrowth*f.Level+1e-9 {
		t.Errorf("point %.1f is more than %g× the level %.1f", f.Point, o.MaxGrowth, f.Level)
	}
}

// TestTrendFadesOverALongHorizon: over a 10-minute horizon a trend carries
// the forecast at most trend·TrendTau, not trend·H.
func TestTrendFadesOverALongHorizon(t *testing.T) {
	o := DefaultOptions(10 * time.Minute)
	var st State
	var f Forecast
	for i := 0; i < 100; i++ {
		f = Observe(&st, 10+0.01*float64(i)*15, t0.Add(time.Duration(i)*15*time.Second), o)
	}
	lifted, linear, most := f.Point-f.Level, f.Trend*o.Horizon.Seconds(), f.Trend*o.TrendTau.Seconds()
	if f.Trend <= 0 || lifted > most+1e-9 || lifted < 0.5*most || lifted >= linear {
		t.Errorf("trend %.4f/s lifts the point by %.2f over 10 min; want at most trend·τ = %.2f (linear would be %.2f)", f.Trend, lifted, most, linear)
	}
}

func TestStateStaysBoundedAndSurvivesTheClockGoingBack(t *testing.T) {
	o := DefaultOptions(3 * time.Minute)
	var st State
	for i := 0; i < 20000; i++ {
		Observe(&st, 5, t0.Add(time.Duration(i)*15*time.Second), o)
	}
	if len(st.Scores) > o.MaxScores || len(st.Pending) > int(o.Horizon/(15*time.Second))+2 {
		t.Errorf("state grew: %d scores (cap %d), %d pending", len(st.Scores), o.MaxScores, len(st.Pending))
	}
	// The clock steps back an hour: pending forecasts from the "future"
	// are dropped, never scored, and forecasting goes on.
	f := Observe(&st, 5, t0.Add(19000*15*time.Second), o)
	for _, p := range st.Pending {
		if p.At.After(t0.Add(19000 * 15 * time.Second)) {
			t.Fatalf("a pending forecast from the future survived: %v", p.At)
		}
	}
	if math.IsNaN(f.Upper) || f.Upper < f.Point {
		t.Errorf("after the clock went back: %+v", f)
	}
}

func TestScenariosBeforeAndAfterWarmUp(t *testing.T) {
	o := DefaultOptions(time.Minute)
	var st State
	f := Observe(&st, 2, t0, o)
	if sc := Scenarios(&st, f, o); len(sc) != 2 || sc[1] != 2*o.WarmupFactor {
		t.Errorf("warm-up scenarios %v, want the point and %g× it", sc, o.WarmupFactor)
	}
	for i := 1; i < 200; i++ {
		f = Observe(&st, 2, t0.Add(time.Duration(i)*15*time.Second), o)
	}
	sc := Scenarios(&st, f, o)
	if len(sc) != len(st.Scores) {
		t.Fatalf("%d scenarios for %d scores", len(sc), len(st.Scores))
	}
	for _, v := range sc {
		if math.Abs(v-2) > 0.01 {
			t.Fatalf("a constant series gave scenario %g", v)
		}
	}
}

func TestTheWarmUpEndsWhenTheConformalRankExists(t *testing.T) {
	for _, tc := range []struct {
		miss      float64
		minScores int
		n         int
		want      bool
	}{
		{0.3, 0, 2, false}, {0.3, 0, 3, true}, // ⌈(3+1)·0.7⌉ = 3 ≤ 3
		{0.05, 0, 18, false}, {0.05, 0, 19, true},
		{0.5, 0, 0, false}, {0.5, 0, 1, true},
		{0.001, 0, 998, false}, {0.001, 0, 999, true},
		{0.001, 0, 240, false},                    // MaxScores unset: no cap
		{0.3, 20, 19, false}, {0.3, 20, 20, true}, // a set MinScores rules
	} {
		o := Options{Miss: tc.miss, MinScores: tc.minScores}
		if got := o.Calibrated(tc.n); got != tc.want {
			t.Errorf("miss %g, MinScores %d: Calibrated(%d) = %v, want %v", tc.miss, tc.minScores, tc.n, got, tc.want)
		}
	}
	// forecastMiss's least, 0.001, asks for 999 errors; the history keeps
	// 240, so the bound is calibrated once it is full, not never.
	for _, tc := range []struct {
		n    int
		want bool
	}{{239, false}, {240, true}} {
		o := DefaultOptions(time.Minute)
		o.Miss = 0.001
		if got := o.Calibrated(tc.n); got != tc.want {
			t.Errorf("miss 0.001, MaxScores %d: Calibrated(%d) = %v, want %v", o.MaxScores, tc.n, got, tc.want)
		}
	}
	// At sizing's miss rate the third scored error ends the stand-in: a
	// flat series' bound falls from twice the point onto it.
	o := DefaultOptions(time.Minute)
	o.Miss = 0.3
	var st State
	for i := 0; ; i++ {
		f := Observe(&st, 10, t0.Add(time.Duration(i)*15*time.Second), o)
		n := len(st.Scores)
		switch {
		case n < 3 && math.Abs(f.Upper-(2*f.Point+o.Epsilon)) > 1e-9:
			t.Fatalf("tick %d, %d scores: upper %g, want the stand-in %g", i, n, f.Upper, 2*f.Point+o.Epsilon)
		case n >= 3:
			if f.Upper > 1.01*f.Point {
				t.Errorf("tick %d, %d scores: upper %g on a flat series at %g, want the calibrated bound", i, n, f.Upper, f.Point)
			}
			return
		case i > 100:
			t.Fatal("no score after 100 ticks")
		}
	}
}

// A step down holds the rise of the straight line over the flap window,
// not the damped trend's: damped, the demo's ramp gave a pod up and asked
// for it back within five minutes.
func TestBeyondIsTheRisingTrendsStraightLinePastTheHorizon(t *testing.T) {
	o := DefaultOptions(90 * time.Second)
	tau := o.TrendTau.Seconds()
	for _, tc := range []struct {
		trend, extra, want float64
	}{
		{0, 300, 0},
		{-0.1, 300, 0}, // a falling load brings nothing back
		{0.1, 0, 0},
		{0.1, 300, 30},
	} {
		f := Forecast{Trend: tc.trend, Horizon: 90}
		if got := f.Beyond(tc.extra); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("trend %g over %gs past the horizon: %g, want %g", tc.trend, tc.extra, got, tc.want)
		}
	}
	if damped := 0.1 * tau * (math.Exp(-90/tau) - math.Exp(-390/tau)); (Forecast{Trend: 0.1, Horizon: 90}).Beyond(300) <= damped {
		t.Errorf("the rise beyond the horizon must exceed the damped trend's %g", damped)
	}
}

// The surge is what the horizons brought beyond the upper bound forecast
// for them: nothing to learn from before a full window of them, about
// nothing on a steady Poisson load (its mean over a horizon stays within
// the bound), and the jump of a flash crowd while its horizons are in
// the window, gone again once they have left it.
func TestSurgeIsWhatTheHorizonsBroughtBeyondTheirBound(t *testing.T) {
	o := DefaultOptions(2 * time.Minute)
	o.MaxScores = 60
	rng := rand.New(rand.NewPCG(3, 4))
	var st State
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 15 * time.Second) }
	i := 0
	for ; ; i++ {
		Observe(&st, poisson(rng, 60)/15, at(i), o)
		if _, full := st.Surge(0.99, 0, o); full {
			break
		}
		if i > 200 {
			t.Fatalf("%d ticks and the window (%d horizons) is not full: %d", i, o.MaxScores, len(st.Excess))
		}
	}
	if i < o.MaxScores {
		t.Fatalf("full after %d ticks, fewer than the %d horizons the window holds", i, o.MaxScores)
	}
	if s, _ := st.Surge(0.99, 0, o); s > 0.03 {
		// A tick's rate over the bound (not the horizon's mean) reads
		// 0.045 here: the arrivals' noise, which the queue absorbs.
		t.Errorf("steady Poisson load at 4 req/s: surge %.3g, want under 0.03", s)
	}
	// A crowd doubles the load for 3 minutes.
	crowd := i + 12
	peak := 0.0
	for ; i < crowd+12+o.MaxScores+20; i++ {
		rate := poisson(rng, 60) / 15
		if i >= crowd && i < crowd+12 {
			rate *= 2
		}
		Observe(&st, rate, at(i), o)
		s, _ := st.Surge(0.99, 0, o)
		peak = math.Max(peak, s)
	}
	if peak < 0.5 {
		t.Errorf("a crowd that doubled the load: surge peaked at %.3g, want at least 0.5", peak)
	}
	if s, full := st.Surge(0.99, 0, o); !full || s > 0.05 {
		t.Errorf("a window after the crowd: surge %.3g (full %v), want under 0.05 again", s, full)
	}
	if len(st.Excess) > o.MaxScores {
		t.Errorf("%d excesses kept, want at most %d", len(st.Excess), o.MaxScores)
	}
}

// A horizon over the reserve misses only the requests that arrive once
// its backlog passes the slack: a window of horizons each a little over
// their bound, by less than the queue absorbs, asks for no reserve, and
// a crowd far over it still asks for nearly the whole of it.
func TestSurgeCreditsWhatTheQueueAbsorbs(t *testing.T) {
	o := DefaultOptions(2 * time.Minute)
	o.MaxScores = 240
	st := State{Excess: make([]float64, o.MaxScores)}
	for i := range st.Excess {
		st.Excess[i] = 0.02
	}
	if r, full := st.Surge(0.99, 0, o); !full || math.Abs(r-0.02) > 1e-12 {
		t.Fatalf("every horizon 2 %% over its bound, no credit: reserve %.4g (full %v), want 0.02", r, full)
	}
	if r, _ := st.Surge(0.99, 0.025, o); r != 0 {
		t.Errorf("every horizon 2 %% over its bound, the queue absorbing 2.5 %%: reserve %.4g, want 0", r)
	}
	// A crowd: four horizons 80 % over their bound. With n = 240 and
	// q = 0.99 one horizon may miss whole, so the reserve leaves the four
	// a quarter of a horizon's misses each: 1 − a/(0.8 − r) = 1/4.
	for i := range 4 {
		st.Excess[i] = 0.8
	}
	const absorb = 0.02
	whole, _ := st.Surge(0.99, 0, o)
	r, _ := st.Surge(0.99, absorb, o)
	if want := 0.8 - absorb/0.75; math.Abs(r-want) > 1e-9 || !(r < whole) {
		t.Errorf("a crowd of four horizons 80 %% over: reserve %.6g with the credit (%.6g without), want %.6g", r, whole, want)
	}
	if r, _ := st.Surge(0.99, math.NaN(), o); r != whole {
		t.Errorf("an unreadable slack (NaN): reserve %.6g, want the quantile %.6g", r, whole)
	}
	if r, full := (State{}).Surge(0.99, absorb, o); r != 0 || full {
		t.Errorf("no horizons: reserve %.4g (full %v), want 0 and not full", r, full)
	}
}
