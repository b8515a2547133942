package baseline

import (
	"testing"
	"time"

	"github.com/inferscale/inferscale/sim/scaler"
)

func newTestSeed000(t *testing.T) *Seed000 {
	t.Helper()
	a, err := Presets()["seed000"](nil)
	if err != nil {
		t.Fatal(err)
	}
	return a.(*Seed000)
}

// s0pod is a ready pod with GPU utilisation, waiting requests and KV usage.
func s0pod(util, queue, kv float64) podSpec {
	return podSpec{phase: scaler.Ready, util: f(util), waiting: f(queue), kv: f(kv)}
}

func TestSeed000RuleAWithEWMA(t *testing.T) {
	s := newTestSeed000(t)
	// EWMA: 0.5 → 0.3·1 + 0.7·0.5 = 0.65 → 0.755 → 0.8285; rule A needs > 0.8 (and queue 11 > 10)
	want := []int{2, 2, 2, 3}
	for i, u := range []float64{0.5, 1, 1, 1} {
		got, err := s.Recommend(obsOf(at(float64(5*i)), 2, 1, 10, s0pod(u, 11, 0.1), s0pod(u, 11, 0.1)))
		if err != nil || got != want[i] {
			t.Fatalf("tick %d: got %d, %v; want %d", i, got, err, want[i])
		}
	}
}

func TestSeed000UpCooldown(t *testing.T) {
	s := newTestSeed000(t)
	hot := func(sec float64) scaler.Observation { return obsOf(at(sec), 2, 1, 10, s0pod(0.9, 20, 0.95)) }
	if got, _ := s.Recommend(hot(0)); got != 3 { // rule A: +1
		t.Fatalf("t=0: got %d, want 3", got)
	}
	// t=5..55: rule A matches but the 60 s up cooldown returns no-op, and rule B
	// (KV 0.95, util 0.9 → +2) is never reached
	for sec := 5.0; sec < 60; sec += 5 {
		if got, _ := s.Recommend(hot(sec)); got != 3 {
			t.Fatalf("t=%g: got %d, want 3 (cooldown)", sec, got)
		}
	}
	if got, _ := s.Recommend(hot(60)); got != 4 {
		t.Fatalf("t=60: got %d, want 4", got)
	}
}

func TestSeed000RuleBAndMax(t *testing.T) {
	s := newTestSeed000(t)
	// util 0.7 (not > 0.8), KV 0.95 > 0.9 and util > 0.6 → +2
	if got, _ := s.Recommend(obsOf(at(0), 3, 1, 10, s0pod(0.7, 0, 0.95))); got != 5 {
		t.Fatalf("rule B: got %d, want 5", got)
	}
	// at 9 of max 10, +2 would exceed max: alert, no scaling at all
	s2 := newTestSeed000(t)
	if got, _ := s2.Recommend(obsOf(at(0), 9, 1, 10, s0pod(0.7, 0, 0.95))); got != 9 || s2.LastAlert() == "" {
		t.Fatalf("over max: got %d (alert %q), want 9 and an alert", got, s2.LastAlert())
	}
}

func TestSeed000RuleDCooldownAndMin(t *testing.T) {
	s := newTestSeed000(t)
	idle := func(sec float64, spec int) scaler.Observation { return obsOf(at(sec), spec, 1, 10, s0pod(0.1, 0, 0.1)) }
	if got, _ := s.Recommend(idle(0, 3)); got != 2 {
		t.Fatalf("t=0: got %d, want 2", got)
	}
	if got, _ := s.Recommend(idle(150, 2)); got != 2 {
		t.Fatalf("t=150: got %d, want 2 (300 s down cooldown)", got)
	}
	if got, _ := s.Recommend(idle(300, 2)); got != 1 {
		t.Fatalf("t=300: got %d, want 1", got)
	}
	if got, _ := s.Recommend(idle(600, 1)); got != 1 {
		t.Fatalf("t=600: at min, got %d, want 1", got)
	}
}

func TestSeed000RuleCBlocksScaleDown(t *testing.T) {
	// idle GPU and empty queue, but P99 TTFT 1.99 s > 2×500 ms → alert only
	slow := podSpec{phase: scaler.Ready, util: f(0.1), waiting: f(0), kv: f(0.1),
		ttft: hist(0, 0, 0, 10, 10, 10), createdBefore: 10 * time.Second}
	s := newTestSeed000(t)
	if got, _ := s.Recommend(obsOf(at(0), 3, 1, 10, slow)); got != 3 || s.LastAlert() == "" {
		t.Fatalf("rule C: got %d (alert %q), want 3 and an alert", got, s.LastAlert())
	}
	// the same with fast requests (P99 ≤ 0.1 s) scales down
	fast := slow
	fast.ttft = hist(10, 10, 10, 10, 10, 10)
	s2 := newTestSeed000(t)
	if got, _ := s2.Recommend(obsOf(at(0), 3, 1, 10, fast)); got != 2 {
		t.Fatalf("fast requests: got %d, want 2", got)
	}
}

func TestSeed000MissingMetrics(t *testing.T) {
	s := newTestSeed000(t)
	if _, err := s.Recommend(obsOf(at(0), 2, 1, 10, starting(), readyKV(0.5))); err == nil {
		t.Fatal("no GPU reading: want an error")
	}
}
