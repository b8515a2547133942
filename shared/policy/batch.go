package policy

import "fmt"

// batch is batch headroom: running requests per ready pod against the
// server's concurrency limit (vLLM --max-num-seqs). Latency climbs
// steeply as a pod's batch fills, well before requests wait.
func batch(in Input, c Config) Rule {
	r := Rule{Name: RuleBatch, Threshold: c.BatchTarget, Low: true}
	if c.MaxNumSeqs <= 0 || in.Ready == 0 {
		// The rule is off, or no pod serves.
		return r
	}
	perPod := in.Running / float64(in.reporting())
	fill := perPod / c.MaxNumSeqs
	r.Value = new(fill)
	r.Over = fill > c.BatchTarget*(1+c.Tolerance)
	r.Low = fill <= c.BatchTarget
	if r.Over {
		r.Proposal = ceilInt(float64(in.Ready) * fill / c.BatchTarget)
		r.Note = fmt.Sprintf("running %.3g per ready pod is %.0f%% of maxNumSeqs %g > target %.0f%%",
			perPod, 100*fill, c.MaxNumSeqs, 100*c.BatchTarget)
	}
	return r
}
