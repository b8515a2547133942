package baseline

import (
	"testing"
	"time"
)

func newTestAPA(t *testing.T, window time.Duration) *APA {
	t.Helper()
	a, err := NewAPA(APAConfig{Name: "apa", Metric: readKV, MetricName: "kv", Target: 0.5, UpTolerance: 0.1,
		DownTolerance: 0.2, MaxScaleUpRate: 2, MaxScaleDownRate: 2, Window: window, ScaleDownCooldown: 300 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func kvPods(n int, kv float64) []podSpec {
	out := make([]podSpec, n)
	for i := range out {
		out[i] = readyKV(kv)
	}
	return out
}

func TestAPAFormula(t *testing.T) {
	cases := []struct {
		name string
		cur  int
		kv   float64
		want int
	}{
		{"up", 4, 0.8, 7},           // r = 1.6 → min(ceil(6.4), ceil(8)) = 7
		{"up capped 2x", 2, 1.0, 4}, // r = 2 → min(ceil(4), 4) = 4
		{"within up band", 4, 0.54, 4},
		{"within down band", 4, 0.41, 4}, // r = 0.82 ≥ 0.8
		{"down", 4, 0.2, 2},              // r = 0.4 → max(ceil(1.6), floor(4/2)) = 2
		{"down capped half", 6, 0.05, 3}, // r = 0.1 → max(ceil(0.6), 3) = 3
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := newTestAPA(t, 0).Recommend(obsOf(t0, c.cur, 1, 100, kvPods(c.cur, c.kv)...))
			if err != nil || got != c.want {
				t.Errorf("got %d, %v; want %d", got, err, c.want)
			}
		})
	}
}

func TestAPACooldownAndWindow(t *testing.T) {
	a := newTestAPA(t, 0)
	if got, _ := a.Recommend(obsOf(at(0), 4, 1, 100, kvPods(4, 0.8)...)); got != 7 {
		t.Fatalf("t=0: got %d, want 7", got)
	}
	// r = 0.2 wants max(ceil(1.4), floor(3.5)) = 3, but the last scaling was 10 s ago
	if got, _ := a.Recommend(obsOf(at(10), 7, 1, 100, kvPods(7, 0.1)...)); got != 7 {
		t.Fatalf("t=10: scale-down inside the 300 s cooldown: got %d, want 7", got)
	}
	if got, _ := a.Recommend(obsOf(at(300), 7, 1, 100, kvPods(7, 0.1)...)); got != 3 {
		t.Fatalf("t=300: got %d, want 3", got)
	}
	// 30 s window: samples 0.5, 0.5, 1.1 → mean 0.7 → r 1.4 → ceil(5.6) = 6
	w := newTestAPA(t, 30*time.Second)
	w.Recommend(obsOf(at(0), 4, 1, 100, kvPods(4, 0.5)...))
	w.Recommend(obsOf(at(10), 4, 1, 100, kvPods(4, 0.5)...))
	if got, _ := w.Recommend(obsOf(at(20), 4, 1, 100, kvPods(4, 1.1)...)); got != 6 {
		t.Fatalf("windowed: got %d, want 6", got)
	}
}

func TestAPANoMetrics(t *testing.T) {
	a := newTestAPA(t, 0)
	got, err := a.Recommend(obsOf(t0, 3, 1, 10, starting(), starting(), starting()))
	if err == nil || got != 3 {
		t.Fatalf("no readings: got %d, %v; want 3 and an error", got, err)
	}
	if _, err := NewAPA(APAConfig{Metric: readKV, Target: 0, MaxScaleUpRate: 2, MaxScaleDownRate: 2}); err == nil {
		t.Error("zero target: want an error")
	}
}
