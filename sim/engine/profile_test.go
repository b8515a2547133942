package engine

import (
	"math"
	"testing"
)

// TestProfilePredictsTheEnginesOwnPrefill guards the mapping of the
// engine's terms onto the service model's (Model.Profile): on an idle
// replica a one-chunk prompt of the profile's length prefills in one step
// of IterBase + PerPrefillToken·n + PerAttnPair·n²/2 + PerKVToken·n, which
// is exactly α + β·n + γkv·(n / KVCapacity), at every GPU speed.
func TestProfilePredictsTheEnginesOwnPrefill(t *testing.T) {
	for _, speed := range []float64{0.5, 1, 2} {
		m := Llama31_8B_H100().Scaled(speed)
		for _, n := range []int{TypicalPrompt, 4000, m.MaxBatchTokens} {
			p := m.Profile(n)
			got := p.Step(float64(n), 0, float64(n)/float64(m.KVCapacity))
			if want := m.IsolatedTTFT(n); math.Abs(got/want-1) > 1e-9 {
				t.Errorf("speed %g, %d-token prompt: the profile predicts %.6g s, the engine takes %.6g s", speed, n, got, want)
			}
		}
	}
}
