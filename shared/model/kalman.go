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
	// updates the innovation gate refused (reset on acceptance).
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

// resetAfter consecutive rejections mean the server itself changed (a new
// GPU, another model): the covariance is re-widened so the filter learns
// again instead of refusing everything.
const resetAfter = 20

// Update folds one observation y of regressors x with noise variance r,
// after inflating the covariance by the random-walk variances q. Theta is
// then clamped to [lo, hi]. It reports whether the observation was used.
func (k *Kalman) Update(x []float64, y, r float64, q, lo, hi, resetSD []float64) bool {
	n := len(k.Theta)
	for i := 0; i < n; i++ {
		k.Cov[i][i] += q[i]
	}
	px := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			px[i] += k.Cov[i][j] * x[j]
		}
	}
	s := r
	pred := 0.0
	for i := 0; i < n; i++ {
		s += x[i] * px[i]
		pred += x[i] * k.Theta[i]
	}
	e := y - pred
	if !(s > 0) || !finite(e) {
		return false
	}
	if e*e/s > gateNIS {
		k.Rejected++
		if k.Rejected < resetAfter {
			return false
		}
		// Re-widen around what is known (at least resetSD) and take this
		// observation.
		for i := range k.Cov {
			for j := range k.Cov[i] {
				k.Cov[i][j] = 0
			}
			sd := math.Max(resetSD[i], math.Abs(k.Theta[i]))
			k.Cov[i][i] = sd * sd
		}
		k.Rejected = 0
		return k.Update(x, y, r, make([]float64, n), lo, hi, resetSD)
	}
	k.Rejected = 0
	for i := 0; i < n; i++ {
		k.Theta[i] += px[i] / s * e
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			k.Cov[i][j] -= px[i] * px[j] / s
		}
	}
	for i := 0; i < n; i++ {
		k.Theta[i] = math.Min(math.Max(k.Theta[i], lo[i]), hi[i])
		if k.Cov[i][i] < 0 { // numerical drift
			k.Cov[i][i] = 0
		}
	}
	k.Samples++
	return true
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
