package decide

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/decisionlog"
	"github.com/inferscale/inferscale/shared/model"
	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/sizing"
)

// The decision line carries the bounds the policy ran with and the alerts'
// Event reasons, once each, so a picture can draw the cap and name them.
func TestDecisionLineCarriesBoundsAndAlertReasons(t *testing.T) {
	var d policy.Decision
	d.Current, d.Target = 10, 10
	d.Warn(policy.WarnMaxReplicas, "more replicas are needed")
	d.Warn(policy.WarnMaxReplicas, "still")
	d.Warn(policy.WarnStuckPods, "pod-3 stuck")
	l := DecisionLine(d, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), "active", policy.Config{MinReplicas: 2, MaxReplicas: 10, TTFTSLO: 2 * time.Second})
	if l.MinReplicas != 2 || l.MaxReplicas != 10 || l.SLOSeconds != 2 {
		t.Errorf("bounds %d..%d, SLO %g; want 2..10, 2", l.MinReplicas, l.MaxReplicas, l.SLOSeconds)
	}
	if want := []string{policy.WarnMaxReplicas, policy.WarnStuckPods}; !slices.Equal(l.AlertReasons, want) {
		t.Errorf("alert reasons %q, want %q", l.AlertReasons, want)
	}
}

// A prefill/decode pool's line says its role and, with an inter-token
// objective, the inter-token p95; a unified pool's says neither.
func TestDecisionLineCarriesTheRoleAndInterTokenP95(t *testing.T) {
	var d policy.Decision
	d.Current, d.Target = 3, 4
	itl := 0.07
	d.Fleet.ITLP95 = &itl
	decode := DecisionLine(d, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), "active", policy.Config{Role: "decode", ITLSLO: 50 * time.Millisecond})
	if decode.Role != "decode" || decode.Fleet.ITLP95 == nil || *decode.Fleet.ITLP95 != itl {
		t.Errorf("decode pool: role %q, inter-token p95 %v; want decode, %g", decode.Role, decode.Fleet.ITLP95, itl)
	}
	d.Fleet.ITLP95 = nil
	if unified := DecisionLine(d, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), "active", policy.Config{Role: "unified"}); unified.Role != "" || unified.Fleet.ITLP95 != nil {
		t.Errorf("unified pool: role %q, inter-token p95 %v; want neither", unified.Role, unified.Fleet.ITLP95)
	}
}

// With the ratio guard on, the line carries the other pool's reading and
// the floor it made, or why the other pool was unread; off, nothing.
func TestDecisionLineCarriesTheRatioGuard(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var d policy.Decision
	d.Current, d.Target, d.RatioFloor = 2, 6, 6
	three := 3
	d.Fleet.Peer = &signal.Peer{Name: "llm-prefill", Replicas: &three}
	l := DecisionLine(d, at, "active", policy.Config{RatioMin: 2})
	if l.Ratio == nil || l.Ratio.Peer != "llm-prefill" || l.Ratio.PeerReplicas == nil || *l.Ratio.PeerReplicas != 3 || l.Ratio.Floor != 6 {
		t.Errorf("ratio %+v, want llm-prefill at 3 and a floor of 6", l.Ratio)
	}
	d.Fleet.Peer, d.RatioFloor = &signal.Peer{Name: "llm-prefill", Error: "HTTP 403"}, 0
	if l := DecisionLine(d, at, "active", policy.Config{RatioMin: 2}); l.Ratio == nil || l.Ratio.Error != "HTTP 403" || l.Ratio.PeerReplicas != nil {
		t.Errorf("unread peer: ratio %+v, want its error", l.Ratio)
	}
	if l := DecisionLine(d, at, "active", policy.Config{}); l.Ratio != nil {
		t.Errorf("guard off: ratio %+v, want none", l.Ratio)
	}
}

// Policy v2's line carries what its plan keeps: the demand, the headroom,
// the need, the hold and the floor of a reactive scale-up, so an operator
// can read why a fleet is held above its need; policy v1's has no plan.
func TestDecisionLineCarriesThePlan(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	spent := 0.002
	var d policy.Decision
	d.Current, d.Target = 18, 18
	d.Plan = &sizing.Assessment{Valid: true, Offered: 3.09, Beta: 4.5, Need: 7, Hold: 18, Floor: 18, Spent: &spent, ParamsSource: "fitted"}
	l := DecisionLine(d, at, "active", policy.Config{})
	want := decisionlog.Plan{DemandPods: 3.09, Beta: 4.5, Need: 7, Hold: 18, Floor: 18, BudgetSpent: &spent}
	if l.Plan == nil || !reflect.DeepEqual(*l.Plan, want) {
		t.Errorf("plan %+v, want %+v", l.Plan, want)
	}
	d.Plan = nil
	if l := DecisionLine(d, at, "active", policy.Config{}); l.Plan != nil {
		t.Errorf("no plan: the line carries %+v", l.Plan)
	}
}

// The line's capacity carries the model the plan read its ceiling from and
// the work it prices a request at, so a decision log shows what the fit
// has learned of the pods (docs/performance.md, "Stop 44", reads them).
func TestDecisionLineCarriesTheFittedModel(t *testing.T) {
	var d policy.Decision
	d.Current, d.Target = 3, 3
	d.Plan = &sizing.Assessment{Valid: true, ParamsSource: "fitted", WorkPerRequest: 0.042,
		Params:  model.Params{Alpha: 0.0115, Beta: 3.45e-5, GammaSeq: 1.2e-5},
		Ceiling: model.Ceiling{RequestsPerSecond: 19.4}}
	l := DecisionLine(d, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), "active", policy.Config{})
	c := l.Capacity
	want := &decisionlog.Model{Alpha: 0.0115, Beta: 3.45e-5, GammaSeq: 1.2e-5}
	if c == nil || c.Model == nil || *c.Model != *want || c.WorkPerRequest != 0.042 || c.PerPod != 19.4 {
		t.Fatalf("capacity %+v, want the plan's model %+v at 0.042 GPU-s a request", c, want)
	}
	var b strings.Builder
	if err := decisionlog.Write(&b, l); err != nil || !strings.Contains(b.String(), `"model":{"alpha":0.0115,"beta":0.0000345,"gammaSeq":0.000012,"gammaKv":0},"workPerRequest":0.042`) {
		t.Errorf("written %q, %v", b.String(), err)
	}
}
