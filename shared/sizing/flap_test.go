package sizing

import (
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/state"
)

// TestAStepDownHoldsWhatARisingLoadBringsBack: on a ramp, the need a flap
// window later is more than the need now; a step down judged on the need
// now would be asked back within the window (a flap), so the need a step
// down keeps looks along the trend. A flat load keeps no more.
func TestAStepDownHoldsWhatARisingLoadBringsBack(t *testing.T) {
	o := options()
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 15 * time.Second) }
	window := int(FlapWindowSeconds / 15)
	run := func(rate func(i int) float64, n int) []Assessment {
		var st state.Service
		out := make([]Assessment, n)
		for i := range out {
			out[i], st = Assess(view(20, rate(i)), st, o, at(i))
		}
		return out
	}
	ramp := run(func(i int) float64 { return 20 + 0.5*float64(i) }, 120)
	kept, flapped := 0, 0
	for i := 60; i+window < len(ramp); i++ {
		a, later := ramp[i], ramp[i+window].Need
		bare := o.staff(a.Offered*(1+DownTolerance), a.Beta)
		if bare < later {
			flapped++
			if a.NeedDown > bare {
				kept++
			}
		}
		if a.NeedDown < bare {
			t.Fatalf("tick %d: a step down keeps %d, less than the need now (%d)", i, a.NeedDown, bare)
		}
	}
	if flapped == 0 {
		t.Fatal("the ramp never raised the need within a flap window: the test proves nothing")
	}
	if kept*2 < flapped {
		t.Errorf("of %d ticks whose need a flap window later was more, a step down kept a pod more at %d", flapped, kept)
	}
	flat := run(func(int) float64 { return 60 }, 80)
	for i := 60; i < len(flat); i++ {
		a := flat[i]
		if bare := o.staff(a.Offered*(1+DownTolerance), a.Beta); a.NeedDown != bare {
			t.Errorf("tick %d of a flat load: a step down keeps %d, want the need's %d", i, a.NeedDown, bare)
		}
	}
}
