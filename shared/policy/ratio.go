package policy

import (
	"math"
)

// ratioFloor is the ratio guard between the two pools of a P/D
// deployment: at least RatioMin replicas per replica the other pool asks
// for (its scale subresource's spec.replicas, read by metric: ratioPeer),
// rounded up. It only raises the target, as the other floors do: each pool
// is sized on its own work, and the guard keeps a pool from falling so far
// under its peer that the peer's work has nowhere to go while this pool's
// own signals have not yet seen it (a prefill pool that scaled up for a
// burst of prompts, and the decode pool those prompts are about to reach).
// An unread peer sets no floor and says so: the pool's own plan still
// governs, and a missing reading never causes a scale-down.
func ratioFloor(d *Decision, c Config, in Input, target int) int {
	if !(c.RatioMin > 0) {
		return target
	}
	p := in.Peer
	switch {
	case p == nil:
		d.because("ratio guard off this tick: ratioMin %g but metric read no other pool (set ratioPeer)", c.RatioMin)
		return target
	case p.Replicas == nil:
		d.because("ratio guard off this tick: the other pool %s is unread (%s)", p.Name, p.Error)
		return target
	}
	d.RatioFloor = int(math.Ceil(c.RatioMin*float64(*p.Replicas) - 1e-9))
	if d.RatioFloor <= target {
		return target
	}
	d.because("ratio guard: %g per replica of %s (%d asked for) is %d, which raises the target from %d", c.RatioMin, p.Name, *p.Replicas, d.RatioFloor, target)
	return d.changed(StepRatioFloor, target, d.RatioFloor)
}
