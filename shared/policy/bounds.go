package policy

// bounds clamps the target to [minReplicas, maxReplicas]; rec is the
// recommendation, for the alert when maxReplicas blocks a needed scale-up.
func bounds(d *Decision, c Config, rec, target int) int {
	if target > c.MaxReplicas {
		if rec > c.MaxReplicas {
			d.warn(WarnMaxReplicas, "maxReplicas %d blocks a needed scale-up to %d", c.MaxReplicas, rec)
		}
		d.because("clamped to maxReplicas %d", c.MaxReplicas)
		target = d.changed(StepMaxReplicas, target, c.MaxReplicas)
	}
	if target < c.MinReplicas {
		d.because("raised to minReplicas %d", c.MinReplicas)
		target = d.changed(StepMinReplicas, target, c.MinReplicas)
	}
	return target
}
