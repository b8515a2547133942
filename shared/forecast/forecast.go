// Package forecast predicts a demand series over a horizon H with a
// calibrated upper bound, for sizing a fleet whose new pods take H to
// become ready.
//
// The point forecast is Holt's linear smoothing (level and damped trend,
// gains from time constants so irregular ticks are handled). Its upper
// bound comes from the series' own past errors at the same horizon, in
// the split-conformal way: every tick's forecast is kept until H has
// passed, then scored as log((peak over the horizon + ε)/(forecast + ε)),
// and the upper bound is the forecast times exp of the (1−α_t) quantile
// of the recent scores. α_t follows Adaptive Conformal Inference (Gibbs &
// Candès 2021): α_{t+1} = α_t + γ(α − err_t), err_t = 1 when the peak beat
// the bound, which holds the long-run miss rate at α whatever the series
// does. Bursty traffic therefore gets wide bounds and smooth traffic
// narrow ones, without per-workload settings.
//
// The package is pure: the caller owns the State and the clock.
package forecast

import (
	"math"
	"sort"
	"time"
)

// State is what the forecaster remembers between ticks.
type State struct {
	// Unit names what the series counts (the caller's: package sizing
	// forecasts requests per second). A state in another unit is not
	// continued: its level, trend and errors mean something else.
	Unit  string    `json:"unit,omitempty"`
	Level float64   `json:"level"`
	Trend float64   `json:"trend"` // per second
	At    time.Time `json:"at"`
	// Since is the first observation: forecasts made within Settle of it
	// are not scored (the smoothing has not settled yet).
	Since time.Time `json:"since"`
	// Scores are the recent log-ratio errors at the horizon, oldest first.
	Scores []float64 `json:"scores,omitempty"`
	// Alpha is ACI's current miss level α_t.
	Alpha float64 `json:"alpha"`
	// Pending are forecasts whose horizon has not passed yet, oldest first.
	Pending []Pending `json:"pending,omitempty"`
	// Covered and Missed count resolved forecasts (for reports).
	Covered int `json:"covered,omitempty"`
	Missed  int `json:"missed,omitempty"`
	// Excess are the recent resolved horizons' mean demand over the
	// upper bound forecast for them, less one (negative: within it),
	// oldest first: what the surges the bound did not foresee were.
	Excess []float64 `json:"excess,omitempty"`
}

// Pending is one forecast waiting for its horizon.
type Pending struct {
	At       time.Time `json:"at"`
	Due      time.Time `json:"due"`
	Forecast float64   `json:"forecast"`
	Upper    float64   `json:"upper"`
	Peak     float64   `json:"peak"`
	// Sum and Seen add up the demand observed over the horizon.
	Sum  float64 `json:"sum,omitempty"`
	Seen int     `json:"seen,omitempty"`
}

// Options set the forecaster.
type Options struct {
	// Horizon is H: how far ahead the sizing must hold.
	Horizon time.Duration
	// LevelTau and TrendTau are the smoothing time constants.
	LevelTau, TrendTau time.Duration
	// Miss is the target miss rate α of the upper bound.
	Miss float64
	// Gamma is ACI's step size.
	Gamma float64
	// MaxScores bounds the error history (and the state).
	MaxScores int
	// MinScores is how many scores the quantile needs; before that the
	// upper bound is the forecast times WarmupFactor. 0: the fewest at
	// which the split-conformal rank at the target level exists,
	// ⌈(1−Miss)/Miss⌉ (Calibrated).
	MinScores    int
	WarmupFactor float64
	// Epsilon keeps the log ratio finite at zero demand, in demand units.
	Epsilon float64
	// MaxGrowth caps the trend's extrapolation over the horizon.
	MaxGrowth float64
	// Settle is how long after the first observation forecasts go
	// unscored: the first level and trend are guesses, and their errors
	// would widen the band for hours.
	Settle time.Duration
}

// DefaultOptions for horizon h.
func DefaultOptions(h time.Duration) Options {
	return Options{Horizon: h, LevelTau: 45 * time.Second, TrendTau: 3 * time.Minute, Miss: 0.05, Gamma: 0.005,
		MaxScores: 240, WarmupFactor: 2, Epsilon: 0.05, MaxGrowth: 2, Settle: 3 * time.Minute}
}

// Calibrated reports whether n scores rank the upper bound: at least
// MinScores, or, without it, the fewest for which the split-conformal rank
// ⌈(n+1)(1−Miss)⌉ is at most n — 3 at a miss rate of 0.3, 19 at 0.05 —
// and never more than the MaxScores the history keeps.
// Before that the bound is the warm-up stand-in, a guess: holding it
// longer than the level needs (a fixed 20 had) sizes the first minutes of
// every start for twice their load.
func (o Options) Calibrated(n int) bool {
	least := o.MinScores
	if least <= 0 {
		least = 1
		if o.Miss > 0 && o.Miss < 1 {
			least = int(math.Ceil((1-o.Miss)/o.Miss - 1e-9))
		}
	}
	if o.MaxScores > 0 {
		// A level finer than the history holds ranks at its largest error.
		least = min(least, o.MaxScores)
	}
	return n >= least
}

// MaxPending bounds the forecasts waiting for their horizon (two hours of
// 15 s ticks).
const MaxPending = 480

// Forecast is one tick's answer.
type Forecast struct {
	Level float64 `json:"level"`
	Trend float64 `json:"trend"` // per second
	// Point is the forecast peak over (now, now+H]; Upper its calibrated
	// upper bound at level Quantile.
	Point    float64 `json:"point"`
	Upper    float64 `json:"upper"`
	Quantile float64 `json:"quantile"`
	Horizon  float64 `json:"horizonSeconds"`
	Scores   int     `json:"scores"`
}

// Observe folds this tick's demand y into st and forecasts the horizon.
func Observe(st *State, y float64, now time.Time, o Options) Forecast {
	y = math.Max(y, 0)
	resolve(st, y, now, o)
	smooth(st, y, now, o)
	point := st.Level
	h := o.Horizon.Seconds()
	if st.Trend > 0 {
		point += math.Min(damped(st.Trend, h, o.TrendTau.Seconds()), (o.MaxGrowth-1)*st.Level)
	}
	point = math.Max(point, 0)
	f := Forecast{Level: st.Level, Trend: st.Trend, Point: point, Horizon: h, Scores: len(st.Scores)}
	if st.Alpha <= 0 {
		st.Alpha = o.Miss
	}
	f.Quantile = math.Min(1, math.Max(0, 1-st.Alpha))
	if o.Calibrated(len(st.Scores)) {
		s := quantile(st.Scores, f.Quantile)
		r := math.Max(0, math.Sqrt(point+o.Epsilon)+s)
		f.Upper = r*r - o.Epsilon
	} else {
		f.Upper = point*o.WarmupFactor + o.Epsilon
	}
	f.Upper = math.Max(f.Upper, point)
	if st.Since.IsZero() || now.Before(st.Since) {
		st.Since = now
	}
	if now.Sub(st.Since) >= o.Settle {
		st.Pending = append(st.Pending, Pending{At: now, Due: now.Add(o.Horizon), Forecast: point, Upper: f.Upper})
	}
	return f
}

// Beyond is how much further a rising trend carries the load over extra
// seconds past the horizon (0 for a flat or falling one): what a step down
// must also hold if the pod it gives up is not to be asked back within
// extra seconds. It is the straight line, trend·extra, not the damped
// trend the point follows: the damping is for a long startup, over which
// a ramp has usually ended, while a step down asks whether the load goes
// on rising for the next minutes, and on a ramp it does. Damped (2.6 req/s
// over 5 minutes at the demo's trend of 0.029 req/s²; the load rose 15),
// it let the demo's and the demo ×4's ramps give up a pod and ask for it
// back within the flap window in six cells of the bar.
func (f Forecast) Beyond(extra float64) float64 {
	if !(f.Trend > 0) || !(extra > 0) {
		return 0
	}
	return f.Trend * extra
}

// damped is how far a rising trend carries the series over h seconds
// when the trend fades with time constant tau (Gardner and McKenzie's
// damped trend in continuous time): trend·τ·(1 − e^(−h/τ)), which is the
// linear trend·h for a short horizon and at most trend·τ for a long one.
// A trend is a fact about the last minutes; over a 10-minute startup the
// undamped line would size for a ramp that has usually ended. The peak of
// a rising curve over (now, now+H] is at its end.
func damped(trend, h, tau float64) float64 {
	if tau <= 0 {
		return trend * h
	}
	return trend * tau * (1 - math.Exp(-h/tau))
}

// resolve adds y to the peaks of the pending forecasts and scores those
// whose horizon has passed.
func resolve(st *State, y float64, now time.Time, o Options) {
	kept := st.Pending[:0]
	for _, p := range st.Pending {
		if now.Before(p.At) { // the clock went back: drop, never score
			continue
		}
		if now.After(p.At) {
			p.Peak = math.Max(p.Peak, y)
			p.Sum += y
			p.Seen++
		}
		if now.Before(p.Due) {
			kept = append(kept, p)
			continue
		}
		st.Scores = append(st.Scores, math.Sqrt(y+o.Epsilon)-math.Sqrt(p.Forecast+o.Epsilon))
		if p.Seen > 0 && p.Upper > 0 {
			st.Excess = append(st.Excess, p.Sum/float64(p.Seen)/p.Upper-1)
		}
		miss := 0.0
		if y > p.Upper {
			miss = 1
			st.Missed++
		} else {
			st.Covered++
		}
		if st.Alpha <= 0 {
			st.Alpha = o.Miss
		}
		st.Alpha = math.Min(0.5, math.Max(0.001, st.Alpha+o.Gamma*(o.Miss-miss)))
	}
	st.Pending = kept
	st.Scores, st.Excess = lastOf(st.Scores, o.MaxScores), lastOf(st.Excess, o.MaxScores)
	// A horizon's worth of ticks at most (a clock jump forward resolves
	// the rest on the next tick).
	if over := len(st.Pending) - MaxPending; over > 0 {
		st.Pending = append(st.Pending[:0], st.Pending[over:]...)
	}
}

// lastOf keeps the last n of xs, in place.
func lastOf(xs []float64, n int) []float64 {
	if over := len(xs) - n; over > 0 {
		return append(xs[:0], xs[over:]...)
	}
	return xs
}

// smooth is Holt's update with gains 1−exp(−dt/τ).
func smooth(st *State, y float64, now time.Time, o Options) {
	if st.At.IsZero() || !now.After(st.At) {
		if st.At.IsZero() || now.Before(st.At) {
			st.Level, st.Trend = y, 0
		}
		st.At = now
		return
	}
	dt := now.Sub(st.At).Seconds()
	a := 1 - math.Exp(-dt/o.LevelTau.Seconds())
	b := 1 - math.Exp(-dt/o.TrendTau.Seconds())
	pred := st.Level + st.Trend*dt
	level := pred + a*(y-pred)
	trend := st.Trend + b*((level-st.Level)/dt-st.Trend)
	st.Level, st.Trend, st.At = math.Max(level, 0), trend, now
}

// quantile is the q-quantile of xs at rank ceil((n+1)q) (split
// conformal's finite-sample rank), the largest value when that passes n.
func quantile(xs []float64, q float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	k := conformalRank(len(s), q) - 1
	return s[min(max(k, 0), len(s)-1)]
}

// conformalRank is split conformal's finite-sample rank of the
// q-quantile of n scores: ⌈(n+1)q⌉ (1-based; above n when n is too few).
func conformalRank(n int, q float64) int { return int(math.Ceil(float64(n+1) * q)) }

// Scenarios are the demands the horizon may bring: the point forecast
// moved by each recent error at the horizon (in √ space, where a Poisson
// count's noise is even). Before the errors rank the bound (Calibrated),
// the point and WarmupFactor times it stand in.
func Scenarios(st *State, f Forecast, o Options) []float64 {
	if !o.Calibrated(len(st.Scores)) {
		return []float64{f.Point, f.Point * o.WarmupFactor}
	}
	out := make([]float64, len(st.Scores))
	r := math.Sqrt(f.Point + o.Epsilon)
	for i, sc := range st.Scores {
		v := math.Max(0, r+sc)
		out[i] = math.Max(0, v*v-o.Epsilon)
	}
	return out
}

// Clone is a deep copy.
func (st State) Clone() State {
	c := st
	c.Scores = append([]float64(nil), st.Scores...)
	c.Pending = append([]Pending(nil), st.Pending...)
	return c
}

// Surge is the reserve (a share of the upper bound) the recent horizons
// ask for, and whether a full window of them (MaxScores) backs it: the
// least r at which their demand beyond the bound would have missed no
// more of their requests than the q-quantile allows a horizon to miss
// whole (n − ⌈(n+1)q⌉ of n, split conformal's finite-sample rank).
//
// A horizon whose mean demand came e over its bound overloads a fleet
// keeping r spare by e − r of its work: the backlog grows at that rate,
// and a request waits past the slack the objective leaves it once the
// backlog holds that much of the fleet's work, after absorb/(e − r) of
// the horizon (absorb: the slack over the horizon). The rest of its
// requests, 1 − absorb/(e − r), miss. With absorb 0 every horizon over
// the reserve misses whole and r is the q-quantile of the excesses; the
// queue's credit takes off what a backlog within the slack absorbs.
// Counted whole, ServeGen's evening kept a fifth pod for hours where
// four met every request (docs/performance.md, "Stop 39").
func (st State) Surge(q, absorb float64, o Options) (float64, bool) {
	if len(st.Excess) == 0 {
		return 0, false
	}
	full := o.MaxScores > 0 && len(st.Excess) >= o.MaxScores
	whole := quantile(st.Excess, q) // absorb 0's reserve, and the most it may be
	if !(absorb > 0) || whole <= 0 {
		return math.Max(0, whole), full
	}
	allowed := float64(max(0, len(st.Excess)-conformalRank(len(st.Excess), q)))
	missed := func(r float64) float64 {
		m := 0.0
		for _, e := range st.Excess {
			if x := e - r; x > absorb {
				m += 1 - absorb/x
			}
		}
		return m
	}
	if missed(0) <= allowed {
		return 0, full
	}
	lo, hi := 0.0, whole
	for range 50 {
		mid := (lo + hi) / 2
		if missed(mid) <= allowed {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, full
}
