package baseline

import (
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/sim/scaler"
)

// podReading extracts one value from a pod's metrics; ok is false when the
// pod has no such reading.
type podReading func(m *signal.Pod) (v float64, ok bool)

func readWaiting(m *signal.Pod) (float64, bool) { return deref(m.Waiting) }
func readRunning(m *signal.Pod) (float64, bool) { return deref(m.Running) }
func readKV(m *signal.Pod) (float64, bool)      { return deref(m.KVCacheUsage) }

func readGPUUtil(m *signal.Pod) (float64, bool) {
	if m.GPU == nil || m.GPU.Error != "" {
		return 0, false
	}
	return deref(m.GPU.Utilization)
}

// readConcurrency is running + waiting, the in-flight requests of a pod.
func readConcurrency(m *signal.Pod) (float64, bool) {
	r, okR := deref(m.Running)
	w, okW := deref(m.Waiting)
	if !okR && !okW {
		return 0, false
	}
	return r + w, true
}

func deref(p *float64) (float64, bool) {
	if p == nil {
		return 0, false
	}
	return *p, true
}

// usable reports whether a pod's metrics may be read: delivered and not
// marked as a failed scrape.
func usable(p scaler.PodView) bool {
	return p.Metrics != nil && p.Metrics.Error == ""
}

// fleetSum adds a reading over every non-draining pod that has it and
// returns the sum and how many pods contributed.
func fleetSum(obs scaler.Observation, read podReading) (sum float64, n int) {
	for _, p := range obs.Pods {
		if p.Phase == scaler.Draining || !usable(p) {
			continue
		}
		if v, ok := read(p.Metrics); ok {
			sum += v
			n++
		}
	}
	return sum, n
}

// fleetMean is the mean of a reading over the pods that have it; ok is
// false when no pod has it.
func fleetMean(obs scaler.Observation, read podReading) (mean float64, ok bool) {
	s, n := fleetSum(obs, read)
	if n == 0 {
		return 0, false
	}
	return s / float64(n), true
}

// activeReplicas counts pods that are not terminating (status.replicas).
func activeReplicas(obs scaler.Observation) int {
	n := 0
	for _, p := range obs.Pods {
		if p.Phase != scaler.Draining {
			n++
		}
	}
	return n
}

// notYetReady counts Pending and Starting pods.
func notYetReady(obs scaler.Observation) int {
	n := 0
	for _, p := range obs.Pods {
		if p.Phase == scaler.Pending || p.Phase == scaler.Starting {
			n++
		}
	}
	return n
}

func clamp(v, lo, hi int) int {
	if hi < lo {
		hi = lo
	}
	return max(lo, min(hi, v))
}

// fromMetrics adapts a metrics reading to a pod-view reading.
func fromMetrics(read podReading) func(p scaler.PodView) (float64, bool) {
	return func(p scaler.PodView) (float64, bool) { return read(p.Metrics) }
}
