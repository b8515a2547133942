package policy

import "fmt"

// kv is KV-cache headroom: a full KV cache preempts requests. It proposes
// the pods that bring the mean usage to kvTarget.
func kv(in Input, c Config) Rule {
	r := Rule{Name: RuleKV, Threshold: c.KVHigh, Low: true}
	if in.KVMean == nil {
		// No pod reports its KV cache (llama.cpp has no such metric).
		return r
	}
	mean := *in.KVMean
	r.Value = new(mean)
	r.Over = mean >= c.KVHigh
	r.Low = mean < c.KVLowWater
	if r.Over {
		r.Proposal = ceilInt(float64(in.base()) * mean / c.KVTarget)
		r.Note = fmt.Sprintf("KV cache mean %.2f >= %.2f; target %.2f", mean, c.KVHigh, c.KVTarget)
	}
	return r
}
