package policy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/decide/knobs"
	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/model"
	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/state"
)

func ruleNamed(d policy.Decision, name string) (policy.Rule, bool) {
	for _, r := range d.Rules {
		if r.Name == name {
			return r, true
		}
	}
	return policy.Rule{}, false
}

// The inter-token objective's rule, off and on, at each reading.
func TestITLRuleReadsTheInterTokenP95(t *testing.T) {
	for _, c := range []struct {
		name             string
		slo              time.Duration
		p95              *float64
		unread           []string
		over, low, value bool
		proposal         int
	}{
		{name: "off by default: inert", p95: p(1), low: true},
		{name: "no reading: low (nothing streams)", slo: 50 * time.Millisecond, low: true},
		{name: "a pod unread: never low", slo: 50 * time.Millisecond, unread: []string{"pod-1"}},
		{name: "within the low-water mark", slo: 50 * time.Millisecond, p95: p(0.02), low: true, value: true},
		{name: "near the objective: holds", slo: 50 * time.Millisecond, p95: p(0.045), value: true},
		{name: "breached: one pod more", slo: 50 * time.Millisecond, p95: p(0.08), over: true, value: true, proposal: 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := knobs.Defaults()
			cfg.ServiceModel = false
			cfg.ITLSLO = c.slo
			v := fleet.View{Ready: 4, ArrivalRate: p(1), StartupSeconds: 60, Pods: pods(4), LatencyRequests: 100,
				TTFTP95: p(0.1), ITLP95: c.p95, LatencyUnread: c.unread}
			d := policy.Decide(v, state.New(), cfg, 4, t0)
			r, ok := ruleNamed(d, policy.RuleITL)
			if !ok {
				t.Fatalf("no itl rule in %+v", d.Rules)
			}
			if r.Over != c.over || r.Low != c.low || (r.Value != nil) != c.value || r.Proposal != c.proposal {
				t.Errorf("rule %+v; want over %v low %v value %v proposal %d", r, c.over, c.low, c.value, c.proposal)
			}
			if c.over && d.Target <= 4 {
				t.Errorf("a breached objective did not scale up: target %d, reasons %q", d.Target, d.Reasons)
			}
		})
	}
}

// With an inter-token objective the plan's per-pod ceiling keeps the
// modelled step within it: the same load needs more pods, and the plan
// says the ceiling binds on itl.
func TestITLObjectiveBoundsThePlansCeiling(t *testing.T) {
	v := fleet.View{Ready: 4, ArrivalRate: p(30), StartupSeconds: 60, Pods: pods(4)}
	plain := knobs.Defaults()
	plain.MaxReplicas = 100
	strict := plain
	prior := model.DefaultPrior()
	strict.ITLSLO = time.Duration(1.5 * prior.Alpha * float64(time.Second))
	a := policy.Decide(v, state.New(), plain, 4, t0)
	b := policy.Decide(v, state.New(), strict, 4, t0)
	if a.Plan == nil || b.Plan == nil {
		t.Fatal("no plan")
	}
	if b.Plan.Ceiling.Bound != "itl" || a.Plan.Ceiling.Bound == "itl" {
		t.Errorf("ceiling bounds: without the objective %q, with it %q (want itl)", a.Plan.Ceiling.Bound, b.Plan.Ceiling.Bound)
	}
	if b.Plan.Need <= a.Plan.Need {
		t.Errorf("need %d with a step objective of 1.5 α, %d without: want more pods", b.Plan.Need, a.Plan.Need)
	}
	if step := prior.StepAt(b.Plan.Ceiling.Utilisation); step > strict.ITLSLO.Seconds()*1.0001 {
		t.Errorf("the ceiling's step %.4gs is above the objective %s", step, strict.ITLSLO)
	}
}

// An objective below the fitted step's fixed cost cannot be met by any pod
// count: the breach is an alert, and it still holds a scale-down.
func TestITLObjectiveBelowTheFixedStepCostIsAnAlert(t *testing.T) {
	cfg := knobs.Defaults()
	cfg.MaxReplicas = 20
	cfg.ITLSLO = time.Duration(0.5 * model.DefaultPrior().Alpha * float64(time.Second))
	v := fleet.View{Ready: 6, ArrivalRate: p(0.5), StartupSeconds: 60, Pods: pods(6), LatencyRequests: 100,
		TTFTP95: p(0.1), ITLP95: p(0.02)}
	v.Service.Queue.Count, v.Service.Queue.Sum = 100, 0.1
	d := steady(t, state.New(), cfg, v, 6, 45)
	r, _ := ruleNamed(d, policy.RuleITL)
	if r.Proposal != 0 || !strings.Contains(r.Note, "more replicas would not help") {
		t.Errorf("itl rule %+v: want no proposal and the reason", r)
	}
	found := false
	for _, w := range d.Warnings {
		found = found || w.Reason == policy.WarnITLUnmet
	}
	if !found {
		t.Errorf("warnings %+v: want %s", d.Warnings, policy.WarnITLUnmet)
	}
	if d.Target < 6 {
		t.Errorf("scaled down to %d while the objective is breached; reasons %q", d.Target, d.Reasons)
	}
}
