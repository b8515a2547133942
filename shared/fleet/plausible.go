package fleet

import (
	"math"

	"github.com/inferscale/inferscale/shared/signal"
)

// One pod's readings may each be within the schema's ranges (package
// signal) and still say something no server does between two scrapes: a
// counter that jumped by 1e15, a prompt-length sum that grew by 1e19 over
// ten requests. Such a delta is not read (the pod's rate or latency is
// then unknown, never low, and never sizes the fleet on its own).
const (
	// maxPodRPS is the most requests per second one pod receives or
	// finishes.
	maxPodRPS = 1e5
	// maxPodTokenRate is the most tokens per second one pod processes.
	maxPodTokenRate = 1e8
)

// plausibleRate reports whether a pod's rate is finite and within limit.
func plausibleRate(r, limit float64) bool {
	return !math.IsNaN(r) && !math.IsInf(r, 0) && r >= 0 && r <= limit
}

// plausibleDelta reports whether a histogram delta's mean observation is
// one a server makes (at most signal.MaxPerObservation).
func plausibleDelta(d signal.Histogram) bool {
	return !math.IsNaN(d.Sum) && math.Abs(d.Sum) <= signal.MaxPerObservation*math.Max(d.Count, 1)
}
