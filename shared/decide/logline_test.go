package decide

import (
	"slices"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/policy"
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
