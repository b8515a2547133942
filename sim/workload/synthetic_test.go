package workload

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestSyntheticDeterministic(t *testing.T) {
	opts := DemoOptions(5)
	a := drain(t, Synthetic(opts))
	b := drain(t, Synthetic(opts))
	c := drain(t, Synthetic(DemoOptions(6)))
	if len(a) == 0 || !slices.Equal(a, b) {
		t.Fatalf("same seed: %d and %d requests, or different ones", len(a), len(b))
	}
	if slices.Equal(a, c) {
		t.Error("different seeds gave identical workloads")
	}
	checkOrdered(t, a)
}

// expectedDemo integrates the demo's rate over [from, to) seconds.
func expectedDemo(from, to float64) float64 {
	o := DemoOptions(0)
	sum := 0.0
	for s := from; s < to; s += 0.5 {
		t := s + 0.25
		r := o.BaseRate * (1 + o.DiurnalAmplitude*math.Cos(2*math.Pi*(t-o.PeakAt.Seconds())/o.DiurnalPeriod.Seconds()))
		for _, b := range o.Bursts {
			if t >= b.At.Seconds() && t < (b.At+b.Duration).Seconds() {
				r += o.BaseRate * b.Amplitude
			}
		}
		sum += r * 0.5
	}
	return sum
}

func TestSyntheticDemoRateShape(t *testing.T) {
	reqs := drain(t, Synthetic(DemoOptions(1)))
	// Count per 5-minute bucket against the integral of the rate.
	var counts [12]int
	for _, r := range reqs {
		counts[int(r.Arrival/(5*time.Minute))]++
	}
	for i, n := range counts {
		want := expectedDemo(float64(i*300), float64(i*300+300))
		// Poisson: sd = sqrt(want) ≈ 1–2.5 %; 8 % is > 3 sd everywhere.
		if !within(float64(n), want, 0.08) {
			t.Errorf("bucket %d (%v): %d requests, want %.0f ± 8%%", i, time.Duration(i)*5*time.Minute, n, want)
		}
	}
	if counts[0] >= counts[5] || counts[11] >= counts[6] {
		t.Errorf("no rise and fall: %v", counts)
	}
	st, err := Stats(FromRequests(reqs))
	if err != nil {
		t.Fatal(err)
	}
	// The burst (40–43 min) holds the busiest minute, ≈102 req/s.
	if st.PeakMinute < 40*time.Minute || st.PeakMinute >= 43*time.Minute || st.PeakPerMinute < 5500 {
		t.Errorf("peak %d req/min at %v, want ≈6100 inside the 40–43 min burst", st.PeakPerMinute, st.PeakMinute)
	}
	if st.MeanInput < 1050 || st.MeanInput > 1260 || st.MeanOutput < 190 || st.MeanOutput > 235 {
		t.Errorf("mean tokens in %.0f out %.0f, want ≈1155 and ≈211 (Azure conversation)", st.MeanInput, st.MeanOutput)
	}
	t.Logf("demo: %v", st)
}

func TestSyntheticRandomBursts(t *testing.T) {
	base := SyntheticOptions{Duration: 6 * time.Hour, BaseRate: 2, Seed: 3}
	flat := drain(t, Synthetic(base))
	bursty := base
	bursty.BurstsPerHour, bursty.BurstAmplitude, bursty.BurstDuration = 2, 4, 5*time.Minute
	withBursts := drain(t, Synthetic(bursty))
	// Expected extra: 12 bursts × 5 min × 8 req/s = 28,800 on top of 43,200.
	if !within(float64(len(flat)), 43200, 0.03) {
		t.Errorf("flat: %d requests, want 43200 ± 3%%", len(flat))
	}
	extra := float64(len(withBursts) - len(flat))
	if extra < 28800*0.4 || extra > 28800*2 {
		t.Errorf("bursts added %.0f requests, want about 28800", extra)
	}
	sf, _ := Stats(FromRequests(flat))
	sb, _ := Stats(FromRequests(withBursts))
	if sb.PeakPerMinute < 3*sf.PeakPerMinute {
		t.Errorf("peak per minute %d with bursts vs %d without: want ≥3×", sb.PeakPerMinute, sf.PeakPerMinute)
	}
	// Amplitude sweep: a larger amplitude gives a higher peak.
	bigger := bursty
	bigger.BurstAmplitude = 8
	sbig, _ := Stats(Synthetic(bigger))
	if sbig.PeakPerMinute <= sb.PeakPerMinute {
		t.Errorf("amplitude 8 peak %d not above amplitude 4 peak %d", sbig.PeakPerMinute, sb.PeakPerMinute)
	}
}

func TestSyntheticBadOptions(t *testing.T) {
	ok := DemoOptions(1)
	cases := map[string]func(*SyntheticOptions){
		"duration":  func(o *SyntheticOptions) { o.Duration = 0 },
		"rate":      func(o *SyntheticOptions) { o.BaseRate = -1 },
		"nan":       func(o *SyntheticOptions) { o.BaseRate = math.NaN() },
		"amplitude": func(o *SyntheticOptions) { o.DiurnalAmplitude = 1.5 },
		"period":    func(o *SyntheticOptions) { o.DiurnalPeriod = -time.Second },
		"burst":     func(o *SyntheticOptions) { o.Bursts = []Burst{{At: time.Minute}} },
		"random":    func(o *SyntheticOptions) { o.BurstsPerHour = 1; o.BurstAmplitude = 1 },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			o := ok
			mutate(&o)
			if o.Validate() == nil {
				t.Fatal("Validate accepted bad options")
			}
			if _, _, err := Synthetic(o).Next(); err == nil {
				t.Fatal("Next did not fail on bad options")
			}
		})
	}
	if n := len(drain(t, Synthetic(SyntheticOptions{Duration: time.Hour}))); n != 0 {
		t.Errorf("zero rate produced %d requests", n)
	}
}
