package baseline

import (
	"testing"
	"time"

	"github.com/inferscale/inferscale/sim/scaler"
)

func newTestKPA(t *testing.T, mut func(*KPAConfig)) *KPA {
	t.Helper()
	cfg := KPAConfig{Name: "kpa", ContainerConcurrency: 10, TargetUtilization: 0.7, StableWindow: 60 * time.Second,
		PanicWindowPercentage: 10, PanicThreshold: 2, MaxScaleUpRate: 1000, MaxScaleDownRate: 2,
		ScaleToZeroGrace: 30 * time.Second, Tick: 2 * time.Second}
	if mut != nil {
		mut(&cfg)
	}
	k, err := NewKPA(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// two ready pods sharing a total concurrency (running only).
func kpaObs(sec float64, spec int, total float64) scaler.Observation {
	half := total / 2
	return obsOf(at(sec), spec, 1, 100,
		podSpec{phase: scaler.Ready, run: f(half), waiting: f(0)},
		podSpec{phase: scaler.Ready, run: f(half), waiting: f(0)})
}

func TestKPAPanicEntryHoldAndExit(t *testing.T) {
	k := newTestKPA(t, nil) // target 0.7·10 = 7 per pod
	// t=0..60: created with 2 ready pods, the decider starts in panic mode
	// (holding 2) until 60 s pass with no over-threshold tick; total 14 →
	// ceil(14/7) = 2, panic window 14 → 2/2 = 1 < 2 is never over.
	for s := 0; s <= 60; s += 2 {
		got, _ := k.Recommend(kpaObs(float64(s), 2, 14))
		if got != 2 || !k.Panicking() {
			t.Fatalf("t=%d: got %d panic=%v, want 2 in the start-up panic", s, got, k.Panicking())
		}
	}
	// t=62: burst to 70. Panic window (56,62] = {14,14,70} → 32.67 → ceil(4.67) = 5; 5/2 = 2.5 ≥ 2 → panic.
	// Stable window (2,62] = 29×14 + 70 over 30 → 15.87 → ceil(2.27) = 3. Panic: max(3, 5) = 5.
	got, _ := k.Recommend(kpaObs(62, 2, 70))
	if got != 5 || !k.Panicking() {
		t.Fatalf("t=62: got %d panic=%v, want 5 and panic", got, k.Panicking())
	}
	// Load vanishes. Over-threshold ticks continue while the 70 sample is in the panic
	// window: t=64 (58,64] = {14,70,0} → ceil(4) = 4 → 4/2 = 2 ≥ 2; t=66 (60,66] = {70,0,0} →
	// ceil(3.33) = 4 → 2 ≥ 2; t=68 (62,68] = {0,0,0}: no longer over.
	// No scale-down while panicking: stays 5 until now > 66 + 60.
	for s := 64; s <= 126; s += 2 {
		got, _ := k.Recommend(kpaObs(float64(s), 5, 0))
		if got != 5 || !k.Panicking() {
			t.Fatalf("t=%d: got %d panic=%v, want 5 held in panic", s, got, k.Panicking())
		}
	}
	// t=128 > 126: panic ends; stable window (68,128] is all 0 → 0, bounded by
	// maxDown floor(2/2) = 1 → 1.
	got, _ = k.Recommend(kpaObs(128, 5, 0))
	if got != 1 || k.Panicking() {
		t.Fatalf("t=128: got %d panic=%v, want 1 and panic over", got, k.Panicking())
	}
}

func TestKPAScaleDownRateAndDelay(t *testing.T) {
	eight := func(sec float64, total float64) scaler.Observation {
		var ps []podSpec
		for range 8 {
			ps = append(ps, podSpec{phase: scaler.Ready, run: f(total / 8), waiting: f(0)})
		}
		return obsOf(at(sec), 8, 1, 100, ps...)
	}
	k := newTestKPA(t, nil)
	// created with 8 ready pods: the start-up panic holds 8 for the first 60 s
	if got, _ := k.Recommend(eight(0, 0)); got != 8 {
		t.Fatalf("start-up panic: got %d, want 8", got)
	}
	// t=62: panic over; no load: ceil(0) = 0 bounded by floor(8/2) = 4
	if got, _ := k.Recommend(eight(62, 0)); got != 4 {
		t.Fatalf("max scale-down rate: got %d, want 4", got)
	}
	// scale-down delay 20 s: the desired count is the max over the last 20 s
	kd := newTestKPA(t, func(c *KPAConfig) { c.ScaleDownDelay = 20 * time.Second })
	// t=0 (start-up panic) and t=62 (panic over): 8 pods at 56 → ceil(56/7) = 8
	for _, sec := range []float64{0, 62} {
		if got, _ := kd.Recommend(eight(sec, 56)); got != 8 {
			t.Fatalf("t=%g: got %d, want 8", sec, got)
		}
	}
	// t=72: stable avg over (12,72] (56+0)/2 = 28 → 4; delayed: max(8, 4) = 8
	if got, _ := kd.Recommend(eight(72, 0)); got != 8 {
		t.Fatalf("scale-down delay: got %d, want 8", got)
	}
	// t=84: the t=62 decision is older than 20 s; stable avg (56+0+0)/3 = 18.67 → 3,
	// bounded by floor(8/2) = 4; window {4 (t=72), 4} → 4
	if got, _ := kd.Recommend(eight(84, 0)); got != 4 {
		t.Fatalf("after the delay: got %d, want 4", got)
	}
}

func TestKPAScraperAndNoData(t *testing.T) {
	k := newTestKPA(t, nil)
	// ready pods whose metrics have not arrived yet: no data → no recommendation (spec kept)
	if got, err := k.Recommend(obsOf(at(0), 3, 1, 100, missingPod(), missingPod(), missingPod())); err != nil || got != 3 {
		t.Fatalf("no data: got %d, %v; want 3", got, err)
	}
	// one of three ready pods answers with 14 in flight: total = 14 × 3 = 42 → ceil(42/7) = 6
	// (summing only the answering pod would give 2)
	got, _ := k.Recommend(obsOf(at(2), 3, 1, 100,
		podSpec{phase: scaler.Ready, run: f(10), waiting: f(4)}, missingPod(), missingPod()))
	if got != 6 {
		t.Fatalf("extrapolated scrape: got %d, want 6", got)
	}
}

func TestKPARejectsBadConfig(t *testing.T) {
	for _, mut := range []func(*KPAConfig){
		func(c *KPAConfig) { c.ContainerConcurrency = 0 },
		func(c *KPAConfig) { c.TargetUtilization = 1.5 },
		func(c *KPAConfig) { c.PanicThreshold = 1 },
		func(c *KPAConfig) { c.StableWindow = 0 },
		func(c *KPAConfig) { c.ScaleDownDelay = -time.Second },
	} {
		cfg := KPAConfig{ContainerConcurrency: 10, TargetUtilization: 0.7, StableWindow: time.Minute,
			PanicWindowPercentage: 10, PanicThreshold: 2, MaxScaleUpRate: 1000, MaxScaleDownRate: 2}
		mut(&cfg)
		if _, err := NewKPA(cfg); err == nil {
			t.Errorf("config %+v: want an error", cfg)
		}
	}
}
