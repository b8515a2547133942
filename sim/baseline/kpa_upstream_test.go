package baseline

// Knative's own decider tests, translated into calls of this package.
//
// Source: knative/serving pkg/autoscaler/scaling/autoscaler_test.go at
// commit 98e5ef90aa7033797aa0a61ef97f3ff7e49a3944. Each test below carries
// the upstream test's name and expected desired pod counts; the upstream
// fake metric client (stable and panic values set directly) becomes the
// stable/panic arguments of kpaDecider.scale, the fake pod counter its ready
// pod count. Upstream's DeciderSpec.TargetValue is ContainerConcurrency with
// TargetUtilization 1 here; the test autoscaler's defaults (60 s stable
// window, panic threshold 2, scale rates 10) are those of newUpstreamDecider.
//
// Not translated, because the emulation has no such input: excess burst
// capacity (the activator is not modelled), Reachable=false
// (TestAutoscalerScaleDownDelayNotReachable and the
// AutoscalerStableModeDecreaseNonReachable row), ActivationScale
// (TestAutoscalerActivationScale), pod-counter errors (TestCantCountPods,
// TestNewFail) and the OpenTelemetry gauges (TestAutoscalerStartMetrics).
// The RPS tests run as concurrency: the decider's arithmetic is the same.

import (
	"testing"
	"time"

	"github.com/inferscale/inferscale/sim/scaler"
)

// newUpstreamDecider is newTestAutoscaler: a decider created with one
// ready pod (so not in panic), target targetValue, 60 s stable window,
// panic threshold 2, max scale-up and scale-down rates 10.
func newUpstreamDecider(targetValue float64, created time.Time, createdReady int) *kpaDecider {
	return newKPADecider(KPAConfig{
		Name: "kpa", ContainerConcurrency: targetValue, TargetUtilization: 1,
		StableWindow: upstreamStableWindow, PanicWindowPercentage: 10, PanicThreshold: 2,
		MaxScaleUpRate: 10, MaxScaleDownRate: 10,
	}, created, createdReady)
}

const upstreamStableWindow = 60 * time.Second

// expectScale is the upstream helper: one Scale call and its desired count.
func expectScale(t *testing.T, d *kpaDecider, now time.Time, ready int, stable, panicV float64, want int) {
	t.Helper()
	if got := d.scale(now, ready, stable, panicV); got != want {
		t.Errorf("scale(ready %d, stable %g, panic %g) = %d, want %d", ready, stable, panicV, got, want)
	}
}

func TestAutoscalerScaleDownDelay(t *testing.T) {
	// target 10, rates 10, panic threshold 100 (never panics), delay 5 min;
	// created with a pod counter at 0 (ready counts as 1).
	d := newKPADecider(KPAConfig{ContainerConcurrency: 10, TargetUtilization: 1, StableWindow: upstreamStableWindow,
		PanicThreshold: 100, MaxScaleUpRate: 10, MaxScaleDownRate: 10, ScaleDownDelay: 5 * time.Minute}, at(0), 0)
	t.Run("simple", func(t *testing.T) {
		expectScale(t, d, at(2), 0, 40, 40, 4)
		expectScale(t, d, at(300), 0, 0, 0, 4) // less than the delay
		expectScale(t, d, at(302), 0, 0, 0, 0) // the delay has passed
	})
	t.Run("gradual", func(t *testing.T) {
		expectScale(t, d, at(9*60), 0, 40, 40, 4)
		expectScale(t, d, at(10*60), 0, 30, 30, 4) // 4 still dominates
		expectScale(t, d, at(11*60), 0, 0, 0, 4)
		expectScale(t, d, at(14*60), 0, 0, 0, 3) // 4 scrolls out
		expectScale(t, d, at(15*60), 0, 0, 0, 0) // everything scrolled out
	})
}

func TestAutoscalerScaleDownDelayZero(t *testing.T) {
	d := newKPADecider(KPAConfig{ContainerConcurrency: 10, TargetUtilization: 1, StableWindow: upstreamStableWindow,
		PanicThreshold: 100, MaxScaleUpRate: 10, MaxScaleDownRate: 10}, at(0), 0)
	expectScale(t, d, at(0), 0, 40, 40, 4)
	expectScale(t, d, at(0.5), 0, 20, 20, 2) // no delay: down at once
}

// TestAutoscalerNoDataNoAutoscale: with no metrics the decider makes no
// recommendation. The emulation's equivalent is the KPA with no sample in
// its window, which keeps the current scale.
func TestAutoscalerNoDataNoAutoscale(t *testing.T) {
	k := newTestKPA(t, nil)
	got, err := k.Recommend(obsOf(at(0), 3, 1, 100, missingPod(), missingPod(), missingPod()))
	if err != nil || got != 3 {
		t.Fatalf("no data: got %d, %v; want the current 3 (no recommendation)", got, err)
	}
}

// TestAutoscalerMetrics (its Scale call): stable and panic 50, target 10.
func TestAutoscalerMetrics(t *testing.T) {
	expectScale(t, newUpstreamDecider(10, at(0), 1), at(0), 1, 50, 50, 5)
}

// TestAutoscalerMetricsWithRPS (its Scale call): stable 100, panic 99 RPS.
func TestAutoscalerMetricsWithRPS(t *testing.T) {
	expectScale(t, newUpstreamDecider(10, at(0), 1), at(61), 1, 100, 99, 10)
}

func TestAutoscalerStableModeIncreaseWithConcurrencyDefault(t *testing.T) {
	d := newUpstreamDecider(10, at(0), 1)
	expectScale(t, d, at(0), 1, 50, 10, 5)
	expectScale(t, d, at(0), 1, 100, 10, 10)
}

func TestAutoscalerStableModeIncreaseWithRPS(t *testing.T) {
	d := newUpstreamDecider(10, at(0), 1)
	expectScale(t, d, at(0), 1, 50, 50, 5)
	expectScale(t, d, at(0), 1, 100, 99, 10)
}

func TestAutoscalerUnpanicAfterSlowIncrease(t *testing.T) {
	d := newUpstreamDecider(1, at(0), 1)
	start := at(0)
	expectScale(t, d, start, 10, 11, 25, 25) // jump from 10 to 25 pods
	if d.panicTime != start {
		t.Errorf("panicTime = %v, want %v", d.panicTime, start)
	}
	// half the stable window later, +1 pod per cycle: 40 ready
	expectScale(t, d, start.Add(upstreamStableWindow/2), 40, 30, 41, 41)
	if d.panicTime != start {
		t.Error("panic time should not have moved")
	}
	// at the end of the window (+ one tick): panic ends
	expectScale(t, d, start.Add(upstreamStableWindow+2*time.Second), 55, 50, 56, 50)
	if !d.panicTime.IsZero() {
		t.Errorf("panicTime = %v, want zero", d.panicTime)
	}
}

func TestAutoscalerExtendPanicWindow(t *testing.T) {
	d := newUpstreamDecider(1, at(0), 1)
	start := at(0)
	expectScale(t, d, start, 10, 11, 25, 25)
	tm := start.Add(upstreamStableWindow / 2)
	expectScale(t, d, tm, 40, 30, 80, 80) // still surging
	if d.panicTime != tm {
		t.Errorf("panicTime = %v, want %v (extended)", d.panicTime, tm)
	}
}

func TestAutoscalerStableModeDecrease(t *testing.T) {
	d := newUpstreamDecider(10, at(0), 1)
	expectScale(t, d, at(0), 8, 100, 100, 10)
	expectScale(t, d, at(0), 8, 50, 50, 5)
}

func TestAutoscalerStableModeNoTrafficScaleToZero(t *testing.T) {
	d := newUpstreamDecider(10, at(0), 1)
	expectScale(t, d, at(0), 1, 1, 0, 1)
	expectScale(t, d, at(0), 1, 0, 0, 0)
}

func TestAutoscalerPanicModeExponentialTrackAndStabilize(t *testing.T) {
	d := newUpstreamDecider(1, at(0), 1)
	expectScale(t, d, at(0), 1, 6, 6, 6)
	tm := at(0)
	expectScale(t, d, tm, 6, 36, 36, 36)
	if d.panicTime != tm {
		t.Errorf("panicTime = %v, want %v", d.panicTime, tm)
	}
	tm = tm.Add(time.Second)
	expectScale(t, d, tm, 36, 216, 216, 216)
	expectScale(t, d, tm, 216, 1296, 1296, 1296)
	if d.panicTime != tm {
		t.Errorf("panicTime = %v, want %v", d.panicTime, tm)
	}
	expectScale(t, d, tm.Add(time.Second), 1296, 1296, 1296, 1296) // stabilised
}

func TestAutoscalerScale(t *testing.T) {
	now := at(0)
	inPanic := func(d *kpaDecider) { d.panicTime, d.maxPanicPods = now.Add(-5*time.Second), 5 }
	for _, c := range []struct {
		label          string
		target         float64
		stable, panicV float64
		prep           func(*kpaDecider)
		baseScale      int
		want           int
	}{
		{"AutoscalerNoDataAtZeroNoAutoscale", 10, 0, 0, nil, 1, 0},
		{"AutoscalerNoDataAtZeroNoAutoscaleWithExplicitEPs", 10, 0, 0, nil, 1, 0},
		{"AutoscalerStableModeUnlimitedTBC", 181, 21, 26, nil, 1, 1},
		{"Autoscaler0TBC", 10, 50, 49, nil, 1, 5},
		{"AutoscalerStableModeNoChange", 10, 50, 50, nil, 1, 5},
		{"AutoscalerPanicStableLargerThanPanic", 1, 50, 30, inPanic, 5, 50}, // the stable value wins
		{"AutoscalerPanicStableLessThanPanic", 1, 20, 30, inPanic, 5, 30},   // the panic value wins
		{"AutoscalerStableModeNoChangeAlreadyScaled", 10, 50, 50, nil, 5, 5},
		{"AutoscalerStableModeIncreaseWithSmallScaleUpRate", 1, 3, 3.1,
			func(d *kpaDecider) { d.cfg.MaxScaleUpRate = 1.1 }, 2, 3},
		{"AutoscalerStableModeDecreaseWithSmallScaleDownRate", 10, 1, 1,
			func(d *kpaDecider) { d.cfg.MaxScaleDownRate = 1.1 }, 100, 90},
		{"AutoscalerPanicModeDoublePodCount", 10, 50, 100, nil, 1, 10}, // the panic value takes precedence
	} {
		t.Run(c.label, func(t *testing.T) {
			d := newUpstreamDecider(c.target, now, 1)
			if c.prep != nil {
				c.prep(d)
			}
			expectScale(t, d, now, c.baseScale, c.stable, c.panicV, c.want)
		})
	}
}

func TestAutoscalerPanicThenUnPanicScaleDown(t *testing.T) {
	d := newUpstreamDecider(10, at(0), 1)
	expectScale(t, d, at(0), 1, 100, 100, 10)
	panicTime := at(0.001)
	expectScale(t, d, panicTime, 10, 100, 1000, 100)
	// traffic drops off; the scale stays while in panic
	expectScale(t, d, panicTime.Add(30*time.Second), 10, 1, 1, 100)
	// down after the stable window
	expectScale(t, d, panicTime.Add(61*time.Second), 10, 1, 1, 1)
}

func TestAutoscalerRateLimitScaleUp(t *testing.T) {
	d := newUpstreamDecider(10, at(0), 1)
	expectScale(t, d, at(0), 1, 1000, 1001, 10)   // needs 100, only ×10
	expectScale(t, d, at(0), 10, 1000, 1001, 100) // ×10 again
}

func TestAutoscalerRateLimitScaleDown(t *testing.T) {
	d := newUpstreamDecider(10, at(0), 1)
	expectScale(t, d, at(0), 100, 1, 1, 10) // needs 1, only ÷10
	expectScale(t, d, at(0), 10, 1, 1, 1)   // ÷10 again
}

func TestAutoscalerUseOnePodAsMinimumIfEndpointsNotFound(t *testing.T) {
	// no ready pods: the rate limit is computed from one pod
	expectScale(t, newUpstreamDecider(10, at(0), 1), at(0), 0, 1000, 888, 10)
}

func TestAutoscalerUpdateTarget(t *testing.T) {
	d := newUpstreamDecider(10, at(0), 1)
	expectScale(t, d, at(0), 1, 100, 101, 10)
	d.cfg.ContainerConcurrency = 1 // Update: target 1, rates 10, panic threshold 2
	expectScale(t, d, at(0), 10, 100, 101, 100)
}

// TestStartInPanicMode: a decider created with 0 or 1 ready pods is not in
// panic and holds that count as maxPanicPods; created with 2 it starts in
// panic mode holding 2. The emulation creates its decider at the KPA's
// first tick; the second half checks what that means for a fleet: at low
// load a KPA started with 2 ready pods keeps them for the first stable
// window instead of halving at once.
func TestStartInPanicMode(t *testing.T) {
	for i := range 2 {
		d := newUpstreamDecider(100, at(0), i)
		if d.panicking() {
			t.Errorf("created at scale %d with panic mode on", i)
		}
		if d.maxPanicPods != i {
			t.Errorf("created at scale %d: maxPanicPods = %d, want %d", i, d.maxPanicPods, i)
		}
	}
	d := newUpstreamDecider(100, at(0), 2)
	if !d.panicking() {
		t.Error("created at scale 2 with panic mode off")
	}
	if d.maxPanicPods != 2 {
		t.Errorf("maxPanicPods = %d, want 2", d.maxPanicPods)
	}

	k := newTestKPA(t, nil) // target 7 per pod
	idle := func(sec float64) scaler.Observation {
		return obsOf(at(sec), 2, 1, 100, podSpec{phase: scaler.Ready, run: f(1), waiting: f(0)},
			podSpec{phase: scaler.Ready, run: f(1), waiting: f(0)})
	}
	for sec := 0.0; sec <= 60; sec += 2 {
		if got, _ := k.Recommend(idle(sec)); got != 2 {
			t.Fatalf("t=%g: got %d, want 2 held by the start-up panic", sec, got)
		}
	}
	if got, _ := k.Recommend(idle(62)); got != 1 {
		t.Fatalf("t=62: got %d, want 1 once the start-up panic is over", got)
	}
}
