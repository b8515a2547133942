package sizing

import (
	"time"

	"github.com/inferscale/inferscale/shared/state"
)

// FloorStepSeconds is how often the floor of a reactive scale-up comes
// down by one pod once the hold has passed and the recent requests spend
// little of the miss budget.
const FloorStepSeconds = 60.0

// FloorLastStepSeconds is how long the step that gives the floor up onto
// the plan's need waits after the one before it: a flap window (a
// reversal within 5 minutes is a flap). The plan was short when the floor
// rose; its need a minute after the floor came down onto it rose by a pod
// as the load did, and on Mooncake at 5-6 pods that reversal was the
// flap of three cells.
const FloorLastStepSeconds = FlapWindowSeconds

// RaiseFloor records a reactive scale-up to pods asked for while the
// fleet was at the plan: the plan was short, so the hold keeps it
// (Floor) for holdSeconds, and then until the misses say fewer pods do.
func RaiseFloor(next *state.Service, now time.Time, pods int, holdSeconds float64) {
	if pods >= next.Floor.Pods {
		next.Floor = state.Floor{Pods: pods, Next: now.Add(seconds(holdSeconds))}
	}
}

// lowerFloor lets the floor down one pod a FloorStepSeconds once the hold
// after its last rise has passed, while for a minute no objective was
// breached and the recent requests missed it at most as often as the plan
// aims at, with DownTolerance to spare (or too few were seen to say: a
// step at the budget's very edge let the next breach tick take it back,
// a flap within 15 s on Mooncake): one pod at a time, because the
// plan was short when it rose and its need says nothing about how short.
// Letting it go at once (the hold alone) took Mooncake from 24 pods to
// the plan's 8 in one step, which the misses took back within minutes;
// keeping it while every breach added a pod took the same fleet to 30
// pods where 12 meet the objective. It is gone once the need reaches it.
func lowerFloor(next *state.Service, spent *float64, target float64, breached bool, need int, now time.Time, holdSeconds float64) int {
	f := &next.Floor
	if !f.At.IsZero() {
		// A floor written before Next: its next step is a hold after its
		// last change, as that build read it.
		f.Next, f.At = f.At.Add(seconds(holdSeconds)), time.Time{}
	}
	if f.Pods <= need {
		*f = state.Floor{}
		return 0
	}
	// After a step, and after a tick that is not calm, the next step is a
	// minute away (a scale-down comes no sooner than a minute after a
	// breach).
	step := now.Add(seconds(FloorStepSeconds))
	calm := !breached && (spent == nil || *spent*(1+DownTolerance) <= target)
	switch {
	case !calm:
		if step.After(f.Next) {
			f.Next = step
		}
	case !now.Before(f.Next):
		f.Pods, f.Next = f.Pods-1, step
		if f.Pods-1 <= need {
			// The next step would give the floor up onto the plan's
			// need: it waits FloorLastStepSeconds.
			f.Next = now.Add(seconds(FloorLastStepSeconds))
		}
	}
	return f.Pods
}

// seconds is s seconds as a duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
