package state

import (
	"errors"
	"unicode/utf8"
)

// Last is the summary of the last saved tick's decision: what was
// decided, by which step, and the few numbers of policy v2's plan behind
// it. Nothing decides on it; it is kept for what reads the state from
// outside, the exporter (package export) first, since evaluate is a
// process that ends with its tick. Record writes it, from Decided.Last,
// and counts the ticks.
//
// A state holding it is refused by a build older than it (strict
// decoding: an unknown field), which then starts fresh, as from any state
// it cannot read.
type Last struct {
	// Mode is active or advisory (in advisory mode Target is the advice,
	// not what CPA got).
	Mode string `json:"mode"`
	// Current is spec.replicas at the tick; Target the replicas decided.
	Current int `json:"current"`
	Target  int `json:"target"`
	// MinReplicas and MaxReplicas are the bounds the policy ran with.
	MinReplicas int `json:"minReplicas"`
	MaxReplicas int `json:"maxReplicas"`
	// DecidedBy names the step that set Target, as the policy recorded
	// it (policy.Step): a rule (sizing, queue, ...), scaleFromZero,
	// scaleDown, hold, stabilisation, scheduleFloor, predictiveFloor, ratioFloor,
	// minReplicas, maxReplicas, breachHold.
	DecidedBy string `json:"decidedBy"`
	// Plan is policy v2's sizing behind the decision (nil: v1, or no
	// demand reading that tick).
	Plan *LastPlan `json:"plan,omitempty"`
	// SLOSeconds is the TTFT objective the policy ran with.
	SLOSeconds float64 `json:"sloSeconds,omitempty"`
	// Alerts are the Event reasons of the tick's alerts, one per alert,
	// in the order raised (at most MaxLastAlerts).
	Alerts []string `json:"alerts,omitempty"`
	// Ticks counts the ticks saved into this state (Record sets it).
	Ticks int64 `json:"ticks"`
}

// LastPlan is the part of policy v2's plan a dashboard shows: the demand
// forecast (in pods of work: GPU-seconds per second) and its calibrated
// upper bound, the per-pod ceiling (requests per second) and whether its
// service model is the prior or fitted, the headroom β, the surge
// reserve (a share of the load; nil in a state saved before it was
// recorded) and whether the workload taught it, and the need, hold and
// floor it sized.
type LastPlan struct {
	ForecastLevel  float64  `json:"forecastLevel"`
	ForecastUpper  float64  `json:"forecastUpper"`
	CeilingRPS     float64  `json:"ceilingRps"`
	CeilingSource  string   `json:"ceilingSource"`
	Beta           float64  `json:"beta"`
	SurgeReserve   *float64 `json:"surgeReserve,omitempty"`
	ReserveLearned bool     `json:"reserveLearned,omitempty"`
	// Need is the fleet the plan asked for, Hold the lowest a scale-down
	// could go (the hold's window and the floor) and Floor what a reactive
	// scale-up still kept (0: none); nil in a state saved before they were
	// recorded.
	Need  *int `json:"need,omitempty"`
	Hold  *int `json:"hold,omitempty"`
	Floor int  `json:"floor,omitempty"`
}

// Bounds of Last (a longer one is not kept, and refused on decode).
const (
	MaxLastAlerts = 64
	MaxLastName   = 64
)

// check rejects a summary out of bounds or holding a number out of range.
func (l *Last) check() error {
	names := append([]string{l.Mode, l.DecidedBy}, l.Alerts...)
	if l.Plan != nil {
		names = append(names, l.Plan.CeilingSource)
		if !inRange(l.Plan.ForecastLevel, l.Plan.ForecastUpper, l.Plan.CeilingRPS, l.Plan.Beta) {
			return errors.New("state last decision holds a number that is not finite or out of range")
		}
	}
	for _, n := range names {
		if len(n) > MaxLastName || !utf8.ValidString(n) {
			return errors.New("state last decision holds a name too long or not UTF-8")
		}
	}
	switch {
	case len(l.Alerts) > MaxLastAlerts:
		return errors.New("state last decision holds more alerts than this build keeps")
	case !inRange(l.SLOSeconds) || l.Ticks < 0:
		return errors.New("state last decision holds a number out of range")
	}
	counts := []int{l.Current, l.Target, l.MinReplicas, l.MaxReplicas}
	if p := l.Plan; p != nil {
		counts = append(counts, p.Floor)
		for _, n := range []*int{p.Need, p.Hold} {
			if n != nil {
				counts = append(counts, *n)
			}
		}
	}
	for _, r := range counts {
		if r < 0 || r > MaxReplicas {
			return errors.New("state last decision holds a replica count out of range")
		}
	}
	return nil
}

// recordLast keeps l (nil: none this tick) as the last decision, counting
// the tick. One that fails check is not kept, and the count starts again
// (a summary of zeros would read as a decision).
func (s *State) recordLast(l *Last) {
	var ticks int64
	if s.Last != nil {
		ticks = s.Last.Ticks
	}
	s.Last = nil
	if l == nil {
		return
	}
	c := *l
	c.Alerts = append([]string(nil), l.Alerts[:min(len(l.Alerts), MaxLastAlerts)]...)
	if c.Plan != nil {
		p := *l.Plan
		c.Plan = &p
	}
	c.Ticks = ticks + 1
	if c.check() == nil {
		s.Last = &c
	}
}

// sanitizeLast drops a decoded summary that fails check: it costs the
// summary, not the state.
func (s *State) sanitizeLast() []string {
	if s.Last == nil || s.Last.check() == nil {
		return nil
	}
	s.Last = nil
	return []string{"last decision summary"}
}
