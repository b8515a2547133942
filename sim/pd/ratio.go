package pd

import (
	"fmt"
	"math"
	"time"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/scaler"
)

// Ratio is the fixed-ratio peer for a decode pool (Kthena's role ratio):
// spec.replicas is K × the prefill pool's spec.replicas at the same
// instant, rounded up. The prefill pool replays first, so its spec
// timeline is known; a ratio controller reads the other Deployment's
// spec.replicas live, which is what this reads.
type Ratio struct {
	k      float64
	start  int
	events []engine.ScaleEvent
	base   time.Time
}

// NewRatio follows the prefill replay pre at ratio k (> 0).
func NewRatio(k float64, pre *engine.Result) (*Ratio, error) {
	if !(k > 0) || math.IsInf(k, 0) {
		return nil, fmt.Errorf("ratio: k=%g, want a finite ratio > 0 of decode to prefill pods", k)
	}
	return &Ratio{k: k, start: pre.SpecStart, events: pre.ScaleEvents, base: pre.Config.Base}, nil
}

// Name implements scaler.Autoscaler.
func (r *Ratio) Name() string { return fmt.Sprintf("ratio:k=%g", r.k) }

// Period implements scaler.Autoscaler.
func (r *Ratio) Period() time.Duration { return 15 * time.Second }

// Recommend implements scaler.Autoscaler.
func (r *Ratio) Recommend(obs scaler.Observation) (int, error) {
	t := obs.Now.Sub(r.base).Seconds()
	n := r.start
	for _, ev := range r.events {
		if ev.T > t {
			break
		}
		n = ev.To
	}
	return int(math.Ceil(r.k * float64(n))), nil
}
