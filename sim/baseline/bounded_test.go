package baseline

import (
	"fmt"
	"testing"
	"time"

	"github.com/inferscale/inferscale/sim/scaler"
)

// TestStateStaysBounded runs controllers for many ticks with pod churn and
// checks that their histories do not grow with the run length (a 14-day
// simulation is 600 k KPA ticks).
func TestStateStaysBounded(t *testing.T) {
	h, _ := NewHPA(HPAConfig{Name: "b", Metrics: []HPAMetric{queueMetric(1)}, Tolerance: 0.1, Behavior: Seed002Behavior()})
	k := newTestKPA(t, nil)
	s := newTestSeed000(t)
	spec := 2
	for i := range 4000 {
		now := at(float64(15 * i))
		n := 2 + i%5 // the fleet changes size every tick
		var pods []podSpec
		for range n {
			pods = append(pods, podSpec{phase: scaler.Ready, waiting: f(float64(i % 7)), run: f(3), kv: f(0.5), util: f(0.5),
				ttft: hist(float64(i), float64(i), float64(i), float64(i), float64(i), float64(i))})
		}
		o := obsOf(now, spec, 1, 10, pods...)
		// rename pods so old names disappear (replacement pods)
		for j := range o.Pods {
			o.Pods[j].Name = fmt.Sprintf("pod-%d-%d", i/10, j)
		}
		got, err := h.Recommend(o)
		if err != nil {
			t.Fatal(err)
		}
		spec = got
		o.Now = now.Add(2 * time.Second)
		k.Recommend(o)
		s.Recommend(o)
	}
	// HPA: recommendations within max(30 s, 600 s) / 15 s ≈ 41, events within 120 s / 15 s ≈ 9
	if len(h.recommendations) > 45 || len(h.upEvents)+len(h.downEvents) > 20 {
		t.Errorf("hpa history grew: %d recommendations, %d+%d events", len(h.recommendations), len(h.upEvents), len(h.downEvents))
	}
	if len(k.samples) > 31 {
		t.Errorf("kpa kept %d samples for a 60 s window", len(k.samples))
	}
	if len(s.win.pods) > 12 || len(s.p99s) > 6 {
		t.Errorf("seed000 kept %d pod histories and %d P99 samples", len(s.win.pods), len(s.p99s))
	}
}
