package bar

import (
	"math"
	"testing"
	"time"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/workload"
)

// TestDownsInBreachCountsScaleDownsAboveTheObjective: one request a second
// for ten minutes, TTFT 0.5 s except in minutes 3-4 (3 s) and for the
// requests that arrived in minute 7, which never got a first token. A
// scale-down the policy made seeing minute 4 is in a breach, one seeing
// minute 6 is not, one seeing minute 8 is (those requests are still
// waiting); a scale-up in a breach is not counted.
func TestDownsInBreachCountsScaleDownsAboveTheObjective(t *testing.T) {
	res := &engine.Result{}
	var reqs []workload.Request
	for s := 0; s < 600; s++ {
		reqs = append(reqs, workload.Request{Arrival: time.Duration(s) * time.Second})
		ttft := float32(0.5)
		switch {
		case s >= 180 && s < 300:
			ttft = 3
		case s >= 420 && s < 480:
			ttft = float32(math.Inf(1))
		}
		res.TTFT = append(res.TTFT, ttft)
	}
	b := Breach{Window: 60, Lag: 15, SLO: 2, Share: 0.05, MinRequests: 20}
	for _, c := range []struct {
		at   float64
		down bool
		want int
	}{{at: 255, down: true, want: 1}, {at: 375, down: true, want: 0}, {at: 495, down: true, want: 1}, {at: 255, down: false, want: 0}} {
		ev := engine.ScaleEvent{T: c.at, From: 5, To: 4}
		if !c.down {
			ev.To = 6
		}
		res.ScaleEvents = []engine.ScaleEvent{ev}
		if got := b.DownsInBreach(res, reqs); got != c.want {
			t.Errorf("scale %d → %d at %.0fs: %d in a breach, want %d", ev.From, ev.To, c.at, got, c.want)
		}
	}
	r := Row{Attainment: 1, DownsInBreach: 1}
	DefaultSettings().Judge(&r)
	if r.Verdict.NoDownInBreach || r.Verdict.All() {
		t.Errorf("a scale-down in a breach passes: %+v", r.Verdict)
	}
}
