package decide

import (
	"testing"
	"time"

	"github.com/inferscale/inferscale/internal/evalinput"
	"github.com/inferscale/inferscale/shared/decide/knobs"
	"github.com/inferscale/inferscale/shared/state"
)

// BenchmarkStep is one in-process tick (aggregation, policy, record) for
// 64 pods: the simulator's fast mode runs it every 15 simulated seconds.
func BenchmarkStep(b *testing.B) {
	in, _, err := ParseInput(evalinput.Synthetic(64, t0))
	if err != nil {
		b.Fatal(err)
	}
	cfg := knobs.Defaults()
	st := state.New()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Step(cfg, st, 64, in.Entries, t0.Add(time.Duration(i)*15*time.Second))
	}
}
