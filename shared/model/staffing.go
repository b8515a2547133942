package model

import "math"

// Headroom is the square-root-staffing headroom β = (n − r)/√r of n pods
// at an offered load of r pods (+Inf at no load): in the Halfin–Whitt
// regime the chance that a request waits depends on β alone, not on n, so
// a headroom learned on a small fleet holds for a large one.
func Headroom(n, r float64) float64 {
	if r <= 0 {
		return math.Inf(1)
	}
	return (n - r) / math.Sqrt(r)
}
