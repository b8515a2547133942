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
