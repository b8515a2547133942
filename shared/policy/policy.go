// Package policy is inferscale's scaling decision: a pure function of the
// fleet view, the persisted state, the configuration and the time. It
// reads nothing else and changes nothing.
//
// Decide runs in steps, each in its own file, in the shape of Kubernetes'
// replica calculator and HPA controller. Policy v1 and v2 differ in a few
// of them: each is a sizer (sizer.go; v1.go, v2.go), and pick is the one
// place that chooses (serviceModel).
//
//  1. rules (rules.go, one file per rule): queue pressure, batch headroom,
//     KV-cache headroom, the latency SLO and the policy's plan rule (v1:
//     the demand projected one startup time ahead, demand.go; v2: the
//     plan, plan.go) can each propose a replica count; GPU utilisation
//     only corroborates. Every rule reports its value, threshold and
//     proposal, and every branch says why.
//  2. combine (combine.go) counts the signals over threshold; the sizer
//     recommends: v1 a moderate step for one, a decisive one for two or
//     more, and with none a scale-down (scaledown.go) when every signal is
//     under its low-water mark, the data complete and a simulated removal
//     keeps headroom; v2 the plan's need in one step, a step from the
//     ready pods for reactive signals, and the hold's need
//     (scaledown_plan.go).
//  3. stabilise (stabilise.go): v1's stabilisation windows and cooldowns;
//     v2 keeps the up-cooldown for reactive steps only.
//  4. floors (floors.go): the schedule and predictive floors.
//  5. bounds (bounds.go): minReplicas and maxReplicas; and no scale-down
//     while an objective is breached, whatever the breach is attributed
//     to (breach.go).
//  6. settle (v2 only): the hold's memory and the pods to remove
//     (victims.go).
package policy

import (
	"fmt"
	"math"
	"time"

	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/sizing"
	"github.com/inferscale/inferscale/shared/state"
)

// Input is what the rules judge: the fleet view, the replica count
// (spec.replicas) it belongs to, and policy v2's plan (nil in v1).
type Input struct {
	fleet.View
	Current int
	Plan    *sizing.Assessment
}

// base is the ready pod count a per-pod mean scales to (at least 1).
func (in Input) base() int { return max(in.Ready, 1) }

// reporting is the pod count per-pod loads are taken over (at least 1):
// the ready pods that reported. A pod whose scrape failed (an overloaded
// server answers /metrics slowly) must not dilute the others' load.
func (in Input) reporting() int { return max(in.Reporting(), 1) }

// allReady scales a sum over the reporting pods to every ready pod.
func (in Input) allReady(sum float64) float64 {
	if in.Unreported == 0 {
		return sum
	}
	return sum * float64(in.base()) / float64(in.reporting())
}

// avail is the replicas that serve or will: stuck pods are in
// spec.replicas but will not, so proposals are compared with the rest and
// a scale-up keeps them on top.
func (in Input) avail() int { return max(0, in.Current-in.Stuck) }

// Decision is the result of one evaluation.
type Decision struct {
	Target  int `json:"target"`
	Current int `json:"current"`
	// Recommendation is the count before stabilisation, cooldowns and floors;
	// the state keeps it for the stabilisation windows.
	Recommendation int `json:"recommendation"`
	// Need is what the predictive floor remembers: v2's plan's need, else
	// the reactive need (before floors and windows: the demand model's
	// count when nothing is over threshold).
	Need int `json:"need"`
	// Urgent is true when requests are already queueing or missing the SLO,
	// another signal agrees and no pod is starting: the scale-up cooldown
	// does not delay it.
	Urgent bool `json:"urgent,omitempty"`
	// DecidedBy is the step that set Target (the last that changed it).
	DecidedBy       Step     `json:"decidedBy"`
	Signals         int      `json:"signals"`
	Rules           []Rule   `json:"rules"`
	ScheduleFloor   int      `json:"scheduleFloor,omitempty"`
	PredictiveFloor int      `json:"predictiveFloor,omitempty"`
	RatioFloor      int      `json:"ratioFloor,omitempty"`
	Reasons         []string `json:"reasons"`
	Alerts          []string `json:"alerts,omitempty"`
	// Warnings are the alerts with the reason a Kubernetes Warning Event
	// carries (MaxReplicasReached, StuckPods, ...).
	Warnings []Warning  `json:"warnings,omitempty"`
	Fleet    fleet.View `json:"fleet"`
	// Plan is policy v2's sizing and everything that explains it: the
	// forecast (level, trend, upper bound, quantile, horizon), the service
	// model and where it came from, the per-pod ceiling, the headroom.
	Plan *sizing.Assessment `json:"plan,omitempty"`
	// Breach is the objective this tick read breached ("" when none):
	// no scale-down now, nor for BreachCalm after (breach.go).
	Breach string `json:"breach,omitempty"`
	// Victims are the pods a scale-down should remove (the idlest first),
	// for the pod-deletion-cost annotation; empty unless Target < Current.
	Victims []string `json:"victims,omitempty"`

	// service is the plan's next memory, for Memory.
	service *state.Service
}

// Decide evaluates the policy. It reads st but never changes it.
func Decide(v fleet.View, st *state.State, cfg Config, current int, now time.Time) Decision {
	in := Input{View: v, Current: current}
	d := Decision{Current: current, Fleet: v}
	s := pick(&d, &in, st, cfg, now)
	rs := rules(s.planRule())
	d.Rules = evaluate(in, cfg, rs)
	for _, r := range d.Rules {
		for _, w := range r.alerts {
			d.warn(w.Reason, "%s", w.Message)
		}
	}
	rec := combine(&d, in, cfg, s, rs)
	target := d.changed(StepStabilisation, rec, s.stabilise(&d, st, cfg, rec, now))
	target = floors(&d, st, cfg, in, target, now)
	d.Target = holdInBreach(&d, in, cfg, st, bounds(&d, cfg, rec, target), now)
	s.settle(&d, in, cfg, rec, now)
	if d.Target == current && len(d.Reasons) == 0 {
		d.because("hold: no signal over threshold and scale-down not warranted")
	}
	return d
}

// Memory is what the state must remember of d (state.Record stores it).
func (d Decision) Memory(cfg Config) state.Decided {
	return state.Decided{Replicas: d.Current, Recommendation: d.Recommendation,
		RecommendationKeep: max(cfg.DownStabilization, cfg.UpStabilization) + time.Minute,
		ScaleUp:            d.Target > d.Current, Signals: d.Signals, Breached: d.Breach != "", Need: d.Need,
		Service: d.service, Marked: d.Victims}
}

// rule returns the decision's rule called name (zero when absent).
func (d *Decision) rule(name string) Rule {
	for _, r := range d.Rules {
		if r.Name == name {
			return r
		}
	}
	return Rule{}
}

func (d *Decision) because(format string, args ...any) {
	d.Reasons = append(d.Reasons, fmt.Sprintf(format, args...))
}

// Warning is an alert with its reason.
type Warning struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Warning reasons (UpperCamelCase, as Kubernetes Event reasons are).
const (
	WarnMaxReplicas    = "MaxReplicasReached"
	WarnStuckPods      = "StuckPods"
	WarnLatencyOutlier = "LatencyOutlier"
	WarnNotLoadDriven  = "SLOBreachedNotLoadDriven"
	WarnITLUnmet       = "ITLObjectiveUnreachable"
	WarnStateReset     = "StateReset"
)

// warn records an alert: its sentence in Alerts and, with its reason, in
// Warnings.
func (d *Decision) warn(reason, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	d.Alerts = append(d.Alerts, msg)
	d.Warnings = append(d.Warnings, Warning{Reason: reason, Message: msg})
}

// Warn adds an alert raised outside the policy (the decide stage's).
func (d *Decision) Warn(reason, message string) { d.warn(reason, "%s", message) }

func ceilInt(x float64) int {
	if math.IsNaN(x) || x < 0 {
		return 0
	}
	if x > 1e9 {
		return 1e9
	}
	return int(math.Ceil(x - 1e-9))
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
