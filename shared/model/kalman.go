package model

import "math"

// Kalman is a linear Kalman filter with an identity transition (the
// parameters drift slowly as a random walk): y = xᵀθ + noise. It is what
// llm-d's workload-variant-autoscaler uses to tune its queueing model
// online, in the linear form our iteration-time model allows.
//
// Theta and Cov are persisted; the prior and noise levels come from the
// caller on every update, so a change of settings takes effect at once.
type Kalman struct {
	Theta []float64   `json:"theta"`
	Cov   [][]float64 `json:"cov"`
	// Samples counts accepted updates; Rejected counts the consecutive
	// updates of the filter's first series (the service model's inter-token
	// gaps) that the innovation gate refused (reset on acceptance); a
	// filter fed by other series keeps their counts beside it.
	Samples  int `json:"samples"`
	Rejected int `json:"rejected,omitempty"`
}

// NewKalman starts at prior with independent standard deviations sd.
func NewKalman(prior, sd []float64) Kalman {
	k := Kalman{Theta: append([]float64(nil), prior...), Cov: make([][]float64, len(prior))}
	for i := range k.Cov {
		k.Cov[i] = make([]float64, len(prior))
		k.Cov[i][i] = sd[i] * sd[i]
	}
	return k
}

// Valid reports whether k has the dimension n and finite numbers (a state
// written by another version, or damaged, is not used).
func (k *Kalman) Valid(n int) bool {
	if len(k.Theta) != n || len(k.Cov) != n {
		return false
	}
	for i, row := range k.Cov {
		if len(row) != n || !finite(k.Theta[i]) {
			return false
		}
		for _, v := range row {
			if !finite(v) {
				return false
			}
		}
	}
	return true
}

// gateNIS rejects an observation whose normalised innovation squared is
// beyond the χ²(1) 99.9 % point: an outlier (a preemption storm, a pod
// restarting) must not drag the model.
const gateNIS = 10.83

// Update folds one observation y of regressors x with noise variance r,
// after inflating the covariance by the random-walk variances q. Theta is
// then projected into [lo, hi] (project). It reports whether the
// observation was used.
//
// streak counts the consecutive refusals of the observation's series (a
// filter fed by several series keeps one count each, so that one series'
// accepted samples do not hide another's consistent refusals); after
// resetAfter of them the server itself has changed (a new GPU, another
// model, a prior that was wrong for it): the covariance is re-widened
// around what is known (at least resetSD) and, where that still leaves
// the observation beyond the gate, further until it is plausible, and the
// observation is taken.
func (k *Kalman) Update(x []float64, y, r float64, q, lo, hi, resetSD []float64, streak *int, resetAfter int) bool {
	for i := range k.Theta {
		k.Cov[i][i] += q[i]
	}
	px, s, e, ok := k.innovation(x, y, r)
	if !ok {
		return false
	}
	if e*e/s > gateNIS {
		*streak++
		if *streak < resetAfter {
			return false
		}
		k.rewiden(x, e, r, resetSD)
		px, s, e, _ = k.innovation(x, y, r)
	}
	*streak = 0
	for i := range k.Theta {
		k.Theta[i] += px[i] / s * e
	}
	for i := range k.Theta {
		for j := range k.Theta {
			k.Cov[i][j] -= px[i] * px[j] / s
		}
	}
	for i := range k.Theta {
		if k.Cov[i][i] < 0 { // numerical drift
			k.Cov[i][i] = 0
		}
	}
	k.project(lo, hi)
	k.Samples++
	return true
}

// project brings Theta into [lo, hi] one coordinate at a time, moving
// the others by what the covariance says they owe it: the nearest point
// in the filter's own metric (estimate projection), not a clip that
// leaves the correlated coefficients where the out-of-range one had put
// them. A pod whose batch and KV move together fixes γs + γkv·φ better
// than either; clipped at 0, a γs the update had pushed below it left γkv
// the share it had given back (on BLIS's engine, which charges nothing
// for the KV cache, a sequence's cost fitted at 1.7 × the engine's). What
// the projection moves past its own bound is then clipped.
func (k *Kalman) project(lo, hi []float64) {
	for i := range k.Theta {
		d := math.Min(math.Max(k.Theta[i], lo[i]), hi[i]) - k.Theta[i]
		if d == 0 {
			continue
		}
		if v := k.Cov[i][i]; v > 0 {
			for j := range k.Theta {
				if j != i {
					k.Theta[j] += k.Cov[j][i] / v * d
				}
			}
		}
		k.Theta[i] += d
	}
	for i := range k.Theta {
		k.Theta[i] = math.Min(math.Max(k.Theta[i], lo[i]), hi[i])
	}
}

// innovation is P·x, the innovation's variance s = r + xᵀPx and the
// innovation e = y − xᵀθ; ok is false when they are not usable numbers.
func (k *Kalman) innovation(x []float64, y, r float64) (px []float64, s, e float64, ok bool) {
	n := len(k.Theta)
	px = make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			px[i] += k.Cov[i][j] * x[j]
		}
	}
	s = r
	for i := 0; i < n; i++ {
		s += x[i] * px[i]
	}
	e = y - k.Predict(x)
	return px, s, e, s > 0 && finite(e)
}

// rewiden replaces the covariance by independent deviations of |θ| (at
// least resetSD), scaled up as far as the innovation e of regressors x
// needs to be within the gate: the parameters then move in proportion to
// their share of the prediction, each by a multiple of its own size, so a
// prefill cost sixteen times the prior's is learned from the observation
// that showed it, not over dozens of refused ticks, and a coefficient far
// below the prior is not given the prior's deviation.
func (k *Kalman) rewiden(x []float64, e, r float64, resetSD []float64) {
	spread := 0.0
	for i := range k.Cov {
		for j := range k.Cov[i] {
			k.Cov[i][j] = 0
		}
		sd := math.Max(resetSD[i], math.Abs(k.Theta[i]))
		k.Cov[i][i] = sd * sd
		spread += x[i] * x[i] * sd * sd
	}
	if need := e*e/gateNIS - r; spread > 0 && need > spread {
		for i := range k.Cov {
			k.Cov[i][i] *= need / spread
		}
	}
}

// Predict is xᵀθ.
func (k *Kalman) Predict(x []float64) float64 {
	p := 0.0
	for i := range k.Theta {
		p += x[i] * k.Theta[i]
	}
	return p
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Clone is a deep copy.
func (k Kalman) Clone() Kalman {
	c := k
	c.Theta = append([]float64(nil), k.Theta...)
	c.Cov = make([][]float64, len(k.Cov))
	for i, row := range k.Cov {
		c.Cov[i] = append([]float64(nil), row...)
	}
	return c
}
