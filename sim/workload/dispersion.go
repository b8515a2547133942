package workload

import "time"

// Dispersion is the index of dispersion of reqs' arrival counts in
// consecutive windows of the given length: 1 for Poisson arrivals, k for
// requests arriving in batches of k, more where the rate wanders between
// windows. It is the estimate the policy's peakedness reads from its
// ticks (shared/sizing/peakedness.go): half the mean squared difference of
// consecutive counts over their mean (an Allan variance, which a slow
// change of level hardly moves). Only whole windows count: the last,
// partial one is left out. ok is false with fewer than two whole windows
// or no arrivals. reqs are in arrival order (a Source's).
func Dispersion(reqs []Request, window time.Duration) (z float64, ok bool) {
	if window <= 0 || len(reqs) == 0 {
		return 0, false
	}
	first := reqs[0].Arrival
	n := int((reqs[len(reqs)-1].Arrival - first) / window)
	if n < 2 {
		return 0, false
	}
	counts := make([]float64, n)
	for _, r := range reqs {
		if i := int((r.Arrival - first) / window); i < n {
			counts[i]++
		}
	}
	var diff, mean float64
	for i := 1; i < n; i++ {
		d := counts[i] - counts[i-1]
		diff += d * d / 2
		mean += (counts[i] + counts[i-1]) / 2
	}
	if mean <= 0 {
		return 0, false
	}
	return diff / mean, true
}
