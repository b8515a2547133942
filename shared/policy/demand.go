package policy

import (
	"fmt"
	"math"
)

// projection is the demand at now + one startup time: the arrival rate
// projected along its trend, plus the waiting backlog to drain within
// that time, over the per-pod throughput planned for.
type projection struct {
	level, projected float64
	// perPod is the planned throughput of one pod (0: capacity unknown).
	perPod float64
	// needed is the pods the projection needs; -1 when it cannot be made
	// (no arrival rate, no capacity, or startup compensation off).
	needed int
}

func project(in Input, c Config) projection {
	p := projection{needed: -1}
	if in.ArrivalRate != nil {
		p.level = *in.ArrivalRate
		if in.RateFitted != nil && *in.RateFitted > p.level {
			p.level = *in.RateFitted
		}
		p.projected = p.level
		if in.RateTrend != nil && *in.RateTrend > 0 {
			p.projected = math.Min(p.level*c.MaxGrowth, p.level+*in.RateTrend*in.StartupSeconds)
		}
		p.projected += in.Waiting / math.Max(in.StartupSeconds, 1)
	}
	capRPS := podCapacity(in, c)
	if c.StartupCompensation && capRPS > 0 && in.ArrivalRate != nil {
		p.perPod = capRPS * c.CapacityTarget
		p.needed = ceilInt(p.projected / p.perPod)
	}
	return p
}

// podCapacity is the per-pod throughput to plan with: the learned one,
// else the configured one (0: unknown).
func podCapacity(in Input, c Config) float64 {
	if in.PodCapacityRPS != nil && *in.PodCapacityRPS > 0 {
		return *in.PodCapacityRPS
	}
	return c.PodCapacityRPS
}

// demand is startup compensation: the pods the projected demand needs,
// minus the capacity already starting (it is in the replica count).
func demand(in Input, c Config) Rule {
	r := Rule{Name: RuleDemand, Low: true}
	p := project(in, c)
	if p.needed < 0 {
		return r
	}
	avail := in.avail()
	r.Value = new(p.projected)
	r.Threshold = float64(avail) * p.perPod
	r.Over = p.needed > avail && float64(p.needed) > float64(avail)*(1+c.Tolerance)
	r.Low = p.needed < avail
	r.Note = fmt.Sprintf("%.3g req/s expected at now+%.0fs (now %.3g, trend %+.3g/s, backlog %.0f) needs %d pods at %.3g req/s each",
		p.projected, in.StartupSeconds, p.level, deref(in.RateTrend), in.Waiting, p.needed, p.perPod)
	if r.Over {
		r.Proposal = p.needed
	}
	return r
}
