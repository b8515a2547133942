package policy

import "fmt"

// queue is queue pressure: waiting (optionally + running) requests per
// ready pod against queueTarget (GKE's recommended signal for LLM
// serving). It proposes the pods that bring the load to the target.
func queue(in Input, c Config) Rule {
	load, name := in.Waiting, "waiting"
	if c.QueueIncludesRunning {
		load += in.Running
		name = "waiting+running"
	}
	r := Rule{Name: RuleQueue, Threshold: c.QueueTarget}
	if in.Ready == 0 && load == 0 {
		// No pod serves and nothing waits: no pressure.
		r.Low = true
		return r
	}
	reporting := float64(in.reporting())
	per := load / reporting
	r.Value = new(per)
	r.Over = per > c.QueueTarget*(1+c.Tolerance)
	r.Low = in.Waiting/reporting <= c.QueueLowWater
	if r.Over {
		r.Proposal = ceilInt(in.allReady(load) / c.QueueTarget)
		r.Note = fmt.Sprintf("%s %.3g per ready pod > target %g", name, per, c.QueueTarget)
	}
	return absorbedInTime(r, in, c)
}
