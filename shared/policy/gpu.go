package policy

import "fmt"

// gpu is GPU headroom. GPU duty cycle is near 1 whenever a batch runs, so
// it only corroborates another signal; alone it never moves replicas.
func gpu(in Input, c Config) Rule {
	r := Rule{Name: RuleGPU, Threshold: c.GPUTarget, Low: true}
	if in.GPUUtilEWMA == nil {
		return r
	}
	u := *in.GPUUtilEWMA
	r.Value = new(u)
	r.Over = u > c.GPUTarget*(1+c.Tolerance)
	r.Low = u < c.GPULowWater
	if r.Over {
		r.Proposal = ceilInt(float64(in.base()) * u / c.GPUTarget)
	}
	return r
}

// gpuCorroborates says what a GPU over its target means.
func gpuCorroborates(r Rule, c Config, primaries int) string {
	if primaries > 0 {
		return fmt.Sprintf("gpu corroborates: utilisation EWMA %.2f > target %.2f (its own proposal %d is not used)", *r.Value, c.GPUTarget, r.Proposal)
	}
	return fmt.Sprintf("gpu utilisation EWMA %.2f > target %.2f but nothing corroborates it: GPU alone never moves replicas", *r.Value, c.GPUTarget)
}
