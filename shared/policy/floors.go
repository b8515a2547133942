package policy

import (
	"math"
	"sort"
	"time"

	"github.com/inferscale/inferscale/shared/state"
)

// floors raises the target to the schedule floor active now, to the
// predictive floor (the same hour on previous days, one startup ahead)
// and to the ratio guard's (ratio.go).
func floors(d *Decision, st *state.State, c Config, in Input, target int, now time.Time) int {
	for _, f := range c.ScheduleFloors {
		if f.Active(now) && f.Replicas > d.ScheduleFloor {
			d.ScheduleFloor = f.Replicas
		}
	}
	if d.ScheduleFloor > target {
		d.because("schedule floor %d raises the target from %d", d.ScheduleFloor, target)
		target = d.changed(StepScheduleFloor, target, d.ScheduleFloor)
	}
	if c.PredictiveFloor {
		d.PredictiveFloor = predictiveFloor(st, c, now.Add(time.Duration(in.StartupSeconds*float64(time.Second))))
		if d.PredictiveFloor > target {
			d.because("predictive floor %d (same hour on previous days) raises the target from %d", d.PredictiveFloor, target)
			target = d.changed(StepPredictiveFloor, target, d.PredictiveFloor)
		}
	}
	return ratioFloor(d, c, in, target)
}

// predictiveFloor is PredictiveFraction x the lower median of the peaks of
// the same clock hour on the previous PredictiveDays days.
func predictiveFloor(st *state.State, c Config, at time.Time) int {
	var peaks []int
	for day := 1; day <= c.PredictiveDays; day++ {
		if p, ok := st.PeakAt(at.Add(-time.Duration(day) * 24 * time.Hour)); ok {
			peaks = append(peaks, p)
		}
	}
	if len(peaks) == 0 {
		return 0
	}
	sort.Ints(peaks)
	return int(math.Floor(float64(peaks[(len(peaks)-1)/2]) * c.PredictiveFraction))
}
