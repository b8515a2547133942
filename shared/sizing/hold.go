package sizing

import (
	"time"

	"github.com/inferscale/inferscale/shared/state"
)

// hold drops the needs older than the hold and returns the largest of
// the rest and need. It keeps the largest need, bursts included: a
// scale-up a burst asked for and a hold that forgot it is a flap (keeping
// only needs that lasted a minute cut the GPU-hours by up to 30 % and
// raised Mooncake's flaps from 1-2 to 8-24 an hour). What it no longer
// keeps is a backlog draining (Assessment.HoldNeed).
func hold(next *state.Service, need int, now time.Time, seconds float64) int {
	kept := next.Needs[:0]
	for _, n := range next.Needs {
		if age := now.Sub(n.At).Seconds(); age >= 0 && age < seconds {
			kept = append(kept, n)
		}
	}
	next.Needs = kept
	return recentHold(kept, need, now, seconds)
}

// recentHold is the largest of need and the needs of the last seconds.
func recentHold(needs []state.Need, need int, now time.Time, seconds float64) int {
	h := need
	for _, n := range needs {
		if age := now.Sub(n.At).Seconds(); age >= 0 && age < seconds {
			h = max(h, n.Pods)
		}
	}
	return h
}

// Remember records this tick's need of the arrivals in the hold (a
// reactive scale-up is held by its floor: RaiseFloor).
func Remember(next *state.Service, now time.Time, pods int) {
	next.Needs = append(next.Needs, state.Need{At: now, Pods: pods})
	if n := len(next.Needs) - state.MaxServiceNeeds; n > 0 {
		next.Needs = append(next.Needs[:0], next.Needs[n:]...)
	}
}
