package policy

import (
	"time"

	"github.com/inferscale/inferscale/shared/state"
)

// v1 is policy v1 (serviceModel false), kept for comparison and for
// fleets without the service model: the demand rule projects the arrival
// rate one startup time ahead; one signal over threshold gives a moderate
// step, two or more a decisive one; a scale-down needs every signal under
// its low-water mark and a simulated removal that keeps headroom; the
// stabilisation windows and cooldowns hold both.
type v1 struct{}

func (v1) planRule() rule { return rule{eval: demand} }

func (v1) recommend(d *Decision, in Input, c Config, maxProp int, p *projection) int {
	current, avail := in.Current, in.avail()
	switch {
	case d.Signals == 0:
		// Removals must also fit the peak rate of the recent past (bursts).
		if p.needed >= 0 && in.RatePeak != nil {
			if peakNeed := ceilInt(*in.RatePeak / p.perPod); peakNeed > p.needed {
				p.needed = peakNeed
				d.because("peak arrival rate %.3g req/s within %s needs %d pods", *in.RatePeak, c.PeakWindow, peakNeed)
			}
		}
		return scaleDown(d, in, c, p.needed)
	case covered(d, in, maxProp):
		return current
	case d.Signals == 1:
		step := max(1, ceilInt(float64(avail)*c.ModerateFactor)-avail)
		rec := min(maxProp, avail+step) + (current - avail)
		d.because("one signal: moderate step to %d (at most +%d)", rec, step)
		return rec
	default:
		limit := max(c.DecisiveMaxPods, ceilInt(float64(avail)*c.DecisiveMaxFraction))
		rec := min(maxProp, avail+limit) + (current - avail)
		d.because("%d signals agree: decisive step to %d (largest proposal %d, cap +%d)", d.Signals, rec, maxProp, limit)
		return rec
	}
}

// stabilise applies the stabilisation windows and cooldowns to rec, as
// the HPA controller does apart from its replica calculator.
func (v1) stabilise(d *Decision, st *state.State, c Config, rec int, now time.Time) int {
	lastUp, lastDown := st.ScaleTimes(d.Current)
	switch {
	case rec > d.Current:
		return stabiliseUp(d, st, c, d.Current, rec, lastUp, now)
	case rec < d.Current:
		return stabiliseDown(d, st, c, d.Current, rec, lastDown, now)
	}
	return rec
}

// settle: v1 keeps nothing besides what Memory records.
func (v1) settle(*Decision, Input, Config, int, time.Time) {}
