package policy

import "math"

// unknownCapacityStep caps the growth of the load per pod that one
// scale-down may cause while the per-pod capacity is unknown.
const unknownCapacityStep = 1.25

// scaleDown returns the replica count with the pods that can go while
// keeping headroom removed, or the current count with the reason it may
// not. needed is the pods the projected demand needs (-1: unknown).
func scaleDown(d *Decision, in Input, c Config, needed int) int {
	current := in.Current
	floor := max(c.MinReplicas, 1)
	if current <= floor {
		d.because("no signal over threshold; at the minimum (%d)", floor)
		return current
	}
	// A missing or stale signal never causes a scale-down.
	if in.Missing > 0 {
		d.because("no scale-down: %d pod(s) with missing, failed or stale data %v", in.Missing, in.MissingNames)
		return current
	}
	if in.Starting > 0 {
		d.because("no scale-down: %d pod(s) still starting", in.Starting)
		return current
	}
	if in.Ready == 0 {
		d.because("no scale-down: no ready pod reports")
		return current
	}
	capRPS := podCapacity(in, c)
	// GPU duty cycle is near 1 whenever a batch runs, so it gates
	// scale-down only when it is the sole utilisation evidence.
	haveCapacityModel := in.KVMean != nil || capRPS > 0 || c.MaxNumSeqs > 0 || c.QueueIncludesRunning
	var high []string
	for _, r := range d.Rules {
		if r.Name == RuleGPU && haveCapacityModel {
			continue
		}
		if !r.Low {
			high = append(high, r.Name)
		}
	}
	if len(high) > 0 {
		d.because("hold: no signal over threshold, but %v not under the low-water mark", high)
		return current
	}
	k := removable(in, c, needed, floor, capRPS, haveCapacityModel)
	if k == 0 {
		d.because("hold: signals are low, but removing a pod would leave too little headroom")
		return current
	}
	d.because("every signal under its low-water mark; simulated removal of %d pod(s) keeps headroom", k)
	return current - k
}

// removable is the simulated removal (llm-d WVA): the largest k whose
// removal keeps every signal at or under its target on the remaining pods.
func removable(in Input, c Config, needed, floor int, capRPS float64, haveCapacityModel bool) int {
	current := in.Current
	maxK := max(1, int(math.Floor(float64(current)*c.MaxScaleDownFraction)))
	if !haveCapacityModel {
		maxK = 1
	}
	if capRPS <= 0 {
		// No per-pod capacity known yet: running requests and KV grow
		// much faster than the load per pod near saturation, so their
		// projection cannot tell how far the pods can be packed. One
		// step raises the load per pod by at most unknownCapacityStep.
		maxK = min(maxK, max(1, int(math.Floor(float64(in.Ready)*(1-1/unknownCapacityStep)))))
	}
	k := 0
	for try := 1; try <= maxK && current-try >= floor; try++ {
		n := float64(in.Ready - try)
		if n < 1 || !fitsAfterRemoval(in, c, n, current-try-in.Stuck, needed, haveCapacityModel) {
			break
		}
		k = try
	}
	return k
}

// fitsAfterRemoval reports whether n ready pods (left pods serving, of
// the replicas) still keep every signal at or under its target.
func fitsAfterRemoval(in Input, c Config, n float64, left, needed int, haveCapacityModel bool) bool {
	ready := float64(in.Ready)
	if in.KVMean != nil && *in.KVMean*ready/n > c.KVTarget {
		return false
	}
	if !haveCapacityModel && in.GPUUtilEWMA != nil && *in.GPUUtilEWMA*ready/n > c.GPUTarget {
		return false
	}
	if c.QueueIncludesRunning && (in.Waiting+in.Running)/n > c.QueueTarget {
		return false
	}
	// Running requests grow faster than the load per pod (a fuller batch
	// runs each step slower), so the batch after removal is projected
	// quadratically.
	if c.MaxNumSeqs > 0 {
		grow := ready / n
		if in.Running/ready*grow*grow > c.MaxNumSeqs*c.BatchTarget {
			return false
		}
	}
	return needed < 0 || left >= needed
}
