package state

import (
	"fmt"
	"math"

	"github.com/inferscale/inferscale/shared/signal"
)

// MaxValue bounds every number the state keeps: a larger one (JSON holds
// 1e308 fine) is no reading, and in the arithmetic it becomes +Inf or NaN,
// which no decision can be encoded with.
const MaxValue = signal.MaxCount

// MaxReplicas bounds every replica count the state keeps (CPA's input
// allows no more).
const MaxReplicas = 1_000_000

// inRange reports whether v is finite and at most MaxValue in magnitude.
func inRange(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > MaxValue {
			return false
		}
	}
	return true
}

func inRangePtr(ps ...*float64) bool {
	for _, p := range ps {
		if p != nil && (!inRange(*p) || *p < 0) {
			return false
		}
	}
	return true
}

// sanitize resets each component of a decoded state that holds a number
// out of range to what a fresh state has (nil, empty), so one damaged
// value costs that component, not the whole state or every tick. It
// returns what it reset (kept in Repairs for the caller to say).
func (s *State) sanitize() []string {
	var notes []string
	reset := func(what string) { notes = append(notes, what) }
	kept := s.Pods[:0]
	for _, p := range s.Pods {
		if p.valid() {
			kept = append(kept, p)
		} else {
			reset(fmt.Sprintf("pod %q counters", p.Name))
		}
	}
	s.Pods = kept
	for _, f := range []struct {
		what  string
		p     **float64
		limit float64
	}{{"GPU utilisation EWMA", &s.GPUUtilEWMA, fractionLimit}, {"learned pod capacity", &s.PodCapacityRPS, signal.MaxFleetRequests},
		{"last queue", &s.LastQueue, signal.MaxRequests}} {
		if *f.p != nil && (!inRangePtr(*f.p) || **f.p > f.limit) {
			*f.p = nil
			reset(f.what)
		}
	}
	if s.Replicas != nil && (*s.Replicas < 0 || *s.Replicas > MaxReplicas) {
		s.Replicas = nil
		reset("observed replicas")
	}
	if s.LastScaleUpSignals < 0 || s.LastScaleUpSignals > 64 {
		s.LastScaleUpSignals = 0
		reset("scale-up signal count")
	}
	notes = append(notes, s.sanitizeHistory()...)
	notes = append(notes, s.sanitizeLast()...)
	if s.Service != nil && s.Service.Check() != nil {
		s.Service = nil
		reset("service memory (fit, forecast, mix)")
	}
	return notes
}

// fractionLimit is the most a 0-1 fraction may read (rounding slack).
const fractionLimit = 1.0001

// sanitizeHistory resets the histories holding a value out of range.
func (s *State) sanitizeHistory() []string {
	var notes []string
	for _, r := range s.Rates {
		if !inRange(r.RPS) || r.RPS < 0 || r.RPS > signal.MaxFleetRequests {
			s.Rates = nil
			notes = append(notes, "arrival-rate history")
			break
		}
	}
	for _, st := range s.Startups {
		if !inRange(st.Seconds) || st.Seconds < 0 {
			s.Startups = nil
			notes = append(notes, "startup history")
			break
		}
	}
	for _, r := range s.Recommendations {
		if r.Replicas > MaxReplicas {
			s.Recommendations = nil
			notes = append(notes, "recommendation history")
			break
		}
	}
	for _, p := range s.HourlyPeaks {
		if p.Replicas < 0 || p.Replicas > MaxReplicas {
			s.HourlyPeaks = nil
			notes = append(notes, "hourly peaks")
			break
		}
	}
	for _, a := range s.Advisory {
		if a.Current < 0 || a.Current > MaxReplicas || a.Target < 0 || a.Target > MaxReplicas {
			s.Advisory = nil
			notes = append(notes, "advisory history")
			break
		}
	}
	return notes
}

// valid reports whether every number of p is in range: the counters
// non-negative, the histograms as signal.Validate accepts them.
func (p *PodCounters) valid() bool {
	if !inRangePtr(p.RequestsTotal, p.InFlight) {
		return false
	}
	if c := p.Service; c != nil {
		if !inRangePtr(c.PromptTokens, c.OutputTokens, &c.ITLSum, &c.ITLCount, &c.Running, &c.KV, &c.E2ESum, &c.E2ECount, c.Waiting) {
			return false
		}
	}
	for _, h := range p.hists() {
		if *h != nil && (*h).Signal().Validate() != nil {
			return false
		}
	}
	return true
}
