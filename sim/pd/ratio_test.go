package pd

import (
	"testing"
	"time"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/scaler"
)

func TestRatioFollowsThePrefillSpec(t *testing.T) {
	cfg := engine.DefaultConfig()
	pre := &engine.Result{Config: cfg, SpecStart: 4, ScaleEvents: []engine.ScaleEvent{{T: 60, From: 4, To: 10}, {T: 120, From: 10, To: 3}}}
	r, err := NewRatio(0.25, pre)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		t    float64
		want int
	}{{0, 1}, {59, 1}, {60, 3}, {119, 3}, {120, 1}, {3600, 1}} {
		obs := scaler.Observation{Now: cfg.Base.Add(time.Duration(tc.t * float64(time.Second)))}
		if got, _ := r.Recommend(obs); got != tc.want {
			t.Errorf("at %gs: %d decode pods, want %d (⌈0.25 × prefill spec⌉)", tc.t, got, tc.want)
		}
	}
	for _, k := range []float64{0, -1} {
		if _, err := NewRatio(k, pre); err == nil {
			t.Errorf("k=%g accepted", k)
		}
	}
}
