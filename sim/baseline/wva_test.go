package baseline

import (
	"testing"
	"time"

	"github.com/inferscale/inferscale/sim/scaler"
)

func newTestWVA(t *testing.T) *WVA {
	t.Helper()
	w, err := NewWVA(WVAConfig{Name: "wva", KVCacheThreshold: 0.8, QueueLengthThreshold: 5, KVSpareTrigger: 0.1,
		QueueSpareTrigger: 3, PeakWindow: time.Minute, Interval: time.Minute, Scrape: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func wpod(kv, q float64) podSpec { return podSpec{phase: scaler.Ready, kv: f(kv), waiting: f(q)} }

func TestWVADecisions(t *testing.T) {
	cases := []struct {
		name string
		cur  int
		pods []podSpec
		want int
	}{
		// spare KV mean ((0.8−0.75)+(0.8−0.72))/2 = 0.065 < 0.10 → +1
		{"kv spare low", 2, []podSpec{wpod(0.75, 0), wpod(0.72, 0)}, 3},
		// same, but a replica is still pending → no cascade
		{"pending holds", 3, []podSpec{wpod(0.75, 0), wpod(0.72, 0), pending()}, 3},
		// every replica saturated (kv ≥ 0.8 or q ≥ 5) → +1
		{"all saturated", 2, []podSpec{wpod(0.85, 0), wpod(0.1, 6)}, 3},
		// spare queue mean (5−2.5) = 2.5 < 3 → +1
		{"queue spare low", 2, []podSpec{wpod(0.1, 2.5), wpod(0.1, 2.5)}, 3},
		// simulated removal: 0.8 − 0.6/2 = 0.5 ≥ 0.1 and 5 − 3/2 = 3.5 ≥ 3 → −1
		{"removal safe", 3, []podSpec{wpod(0.2, 1), wpod(0.2, 1), wpod(0.2, 1)}, 2},
		// removal: 5 − 4.5/2 = 2.75 < 3 → hold (no scale-up either: spare queue 3.5 ≥ 3)
		{"removal unsafe", 3, []podSpec{wpod(0.2, 1.5), wpod(0.2, 1.5), wpod(0.2, 1.5)}, 3},
		// removal: 0.8 − 1.35/2 = 0.125 ≥ 0.1 → −1; at 0.5 each: 0.8 − 1.5/2 = 0.05 → hold
		{"kv removal safe", 3, []podSpec{wpod(0.45, 0), wpod(0.45, 0), wpod(0.45, 0)}, 2},
		{"kv removal unsafe", 3, []podSpec{wpod(0.5, 0), wpod(0.5, 0), wpod(0.5, 0)}, 3},
		// one non-saturated replica: never scale down
		{"single replica", 1, []podSpec{wpod(0, 0)}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := newTestWVA(t).Recommend(obsOf(t0, c.cur, 1, 10, c.pods...))
			if err != nil || got != c.want {
				t.Errorf("got %d, %v; want %d", got, err, c.want)
			}
		})
	}
}

func TestWVAPeakAndInterval(t *testing.T) {
	w := newTestWVA(t)
	low := []podSpec{wpod(0.2, 0), wpod(0.2, 0), wpod(0.2, 0)}
	spike := []podSpec{wpod(0.79, 0), wpod(0.79, 0), wpod(0.79, 0)}
	// t=0 decides (removal safe → 2); the simulator keeps 3 for this test
	if got, _ := w.Recommend(obsOf(at(0), 3, 1, 10, low...)); got != 2 {
		t.Fatalf("t=0: got %d, want 2", got)
	}
	// t=15: a spike, but no decision before t=60
	if got, _ := w.Recommend(obsOf(at(15), 3, 1, 10, spike...)); got != 3 {
		t.Fatalf("t=15: got %d, want 3 (between reconciles)", got)
	}
	w.Recommend(obsOf(at(30), 3, 1, 10, low...))
	w.Recommend(obsOf(at(45), 3, 1, 10, low...))
	// t=60: current 0.2, but the 1 m peak is 0.79 → spare 0.01 < 0.1 → +1
	if got, _ := w.Recommend(obsOf(at(60), 3, 1, 10, low...)); got != 4 {
		t.Fatalf("t=60: got %d, want 4 (max_over_time peak)", got)
	}
}

func TestWVANoReplicas(t *testing.T) {
	if _, err := newTestWVA(t).Recommend(obsOf(t0, 1, 1, 10, starting())); err == nil {
		t.Error("no ready replica: want an error")
	}
	if _, err := NewWVA(WVAConfig{KVCacheThreshold: 2, QueueLengthThreshold: 5, Interval: time.Minute, Scrape: time.Second}); err == nil {
		t.Error("kv threshold 2: want an error")
	}
}
