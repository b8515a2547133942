package sizing

import (
	"math"

	"github.com/inferscale/inferscale/shared/state"
)

// Peakedness of the arrivals (Whitt's peakedness-adjusted square-root
// staffing): square-root staffing ⌈R + β√R⌉ assumes Poisson arrivals,
// whose counts have a variance equal to their mean. Real traffic is
// overdispersed (requests in batches, sessions, retries): its counts vary
// z times more than their mean, and the margin that absorbs them grows
// with √z, n = ⌈R + β√(z·R)⌉.
//
// What the margin absorbs is the arrivals within the time τ = the TTFT
// objective in which the pods' batches must take them (the time scale of
// leastHeadroom); the pods' counters give counts per tick, T seconds. z is
// read at both T and 2T from the halved squared difference of consecutive
// counts over their mean (an Allan-variance estimate, which a slow change
// of level — the daily cycle, a ramp — hardly moves), with exponential
// forgetting, and carried down to τ along the line through the two: the
// excess of bursts of requests that arrive together (a batch) is the same
// at every scale and stays, the excess of a rate that wanders between
// ticks grows with the window, is the forecast's to cover, and mostly
// goes. z starts at 1 (Poisson), is shrunk toward 1 while few ticks back
// it, and is bounded by [1, MaxPeakedness]: traffic smoother than Poisson
// keeps the Poisson margin, and a flash crowd raises it for a while,
// never without bound.
const (
	// MaxPeakedness bounds z (√z at most doubles the margin).
	MaxPeakedness = 4.0
	// peakednessHalfLife (seconds) is how fast old ticks fade.
	peakednessHalfLife = 1800
	// peakednessPrior is the pseudo-count of Poisson differences each
	// scale's z is shrunk toward while its own are few.
	peakednessPrior = 8.0
)

// observeDispersion folds this tick's arrival rate (requests/s over an
// interval of dt seconds) into d.
func observeDispersion(d *state.Dispersion, rate, dt float64) {
	if !(rate >= 0) || !(dt > 0) {
		return
	}
	n := rate * dt
	d.Ticks++
	observeScale(&d.Tick, n, dt)
	if d.Ticks%2 == 1 {
		d.Pending = n
		return
	}
	observeScale(&d.Pair, d.Pending+n, 2*dt)
	d.Pending = 0
}

// observeScale folds one count n of a window of dt seconds into s.
func observeScale(s *state.DispersionScale, n, dt float64) {
	if !s.Seen {
		s.Last, s.Seen = n, true
		return
	}
	w := s.Weight * math.Exp2(-dt/peakednessHalfLife)
	s.Diff = (s.Diff*w + (n-s.Last)*(n-s.Last)/2) / (w + 1)
	s.Mean = (s.Mean*w + (n+s.Last)/2) / (w + 1)
	s.Weight = w + 1
	s.Last = n
}

// scaleIndex is one scale's index of dispersion, shrunk toward 1 while few
// differences back it.
func scaleIndex(s state.DispersionScale) float64 {
	if !(s.Mean > 0) || !(s.Weight > 0) || !(s.Diff >= 0) {
		return 1
	}
	return (s.Diff/s.Mean*s.Weight + peakednessPrior) / (s.Weight + peakednessPrior)
}

// Peakedness is z at the time scale tau (seconds) for ticks of dt
// seconds: the index of dispersion at the tick, carried down to tau along
// the line through the tick's and the pair's (never above the tick's, as
// a pair reading below it is noise), in [1, MaxPeakedness].
func Peakedness(d state.Dispersion, tau, dt float64) float64 {
	z := scaleIndex(d.Tick)
	if slope := scaleIndex(d.Pair) - z; slope > 0 && tau > 0 && tau < dt {
		z -= slope * (1 - tau/dt)
	}
	return math.Min(math.Max(z, 1), MaxPeakedness)
}
