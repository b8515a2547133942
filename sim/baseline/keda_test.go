package baseline

import (
	"testing"
	"time"

	"github.com/inferscale/inferscale/sim/scaler"
)

// constQuery returns a query whose value the test sets.
func constQuery(v *float64) func(scaler.Observation) (float64, error) {
	return func(scaler.Observation) (float64, error) { return *v, nil }
}

func newTestKEDA(t *testing.T, value *float64, activation float64, crons []CronTrigger) *KEDA {
	t.Helper()
	k, err := NewKEDA(KEDAConfig{
		Name: "keda", PollingInterval: 30 * time.Second, CooldownPeriod: 300 * time.Second, Tolerance: 0.1,
		Prometheus: []PrometheusTrigger{{Name: "q", Query: constQuery(value), Threshold: 3, ActivationThreshold: activation}},
		Cron:       crons,
	})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestKEDAActivation(t *testing.T) {
	v := 5.0
	k := newTestKEDA(t, &v, 0, nil)
	// at 0 replicas with min 0: value 5 > activationThreshold 0 → activate to max(min, 1) = 1
	if got, _ := k.Recommend(obsOf(at(0), 0, 0, 10)); got != 1 {
		t.Fatalf("activation: got %d, want 1", got)
	}
	v = 0
	k2 := newTestKEDA(t, &v, 0, nil)
	if got, _ := k2.Recommend(obsOf(at(0), 0, 0, 10)); got != 0 {
		t.Fatalf("inactive at 0: got %d, want 0", got)
	}
	// activationThreshold 10: a value of 5 does not activate
	v = 5
	k3 := newTestKEDA(t, &v, 10, nil)
	if got, _ := k3.Recommend(obsOf(at(0), 0, 0, 10)); got != 0 {
		t.Fatalf("below activationThreshold: got %d, want 0", got)
	}
}

func TestKEDACooldown(t *testing.T) {
	v := 9.0
	k := newTestKEDA(t, &v, 0, nil)
	pods := []podSpec{ready(3), ready(3), ready(3)}
	// t=0: active (poll), HPA External AverageValue ceil(9/3) = 3 = cur
	if got, _ := k.Recommend(obsOf(at(0), 3, 0, 10, pods...)); got != 3 {
		t.Fatalf("t=0: got %d, want 3", got)
	}
	v = 0
	// Inactive from t=15. The HPA proposes ceil(0/3) = 0 → its min 1, but the legacy
	// 300 s stabilisation keeps 3. KEDA deactivates only at a poll where
	// lastActive (0) + cooldown 300 s is before now: polls run at 30, 60, ..., 300, 330.
	for s := 15; s <= 315; s += 15 {
		got, _ := k.Recommend(obsOf(at(float64(s)), 3, 0, 10, pods...))
		if got == 0 {
			t.Fatalf("t=%d: scaled to zero before the cooldown ended", s)
		}
	}
	if got, _ := k.Recommend(obsOf(at(330), 3, 0, 10, pods...)); got != 0 {
		t.Fatalf("t=330: got %d, want 0 after the cooldown", got)
	}
}

func TestKEDAMinReplicasNeverIdles(t *testing.T) {
	v := 0.0
	k := newTestKEDA(t, &v, 0, nil)
	for s := 0; s <= 900; s += 15 {
		got, _ := k.Recommend(obsOf(at(float64(s)), 2, 2, 10, ready(0), ready(0)))
		if got < 2 {
			t.Fatalf("t=%d: min 2 without idleReplicaCount must never go below 2, got %d", s, got)
		}
	}
}

func TestKEDAIdleReplicas(t *testing.T) {
	v := 0.0
	idle := 1
	k, err := NewKEDA(KEDAConfig{Name: "keda", PollingInterval: 30 * time.Second, CooldownPeriod: 300 * time.Second,
		Tolerance: 0.1, IdleReplicas: &idle,
		Prometheus: []PrometheusTrigger{{Name: "q", Query: constQuery(&v), Threshold: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	pods := []podSpec{ready(0), ready(0)}
	// min 2, idle 1, never active: lastActiveTime is unset, so the first poll after
	// creation + initialCooldownPeriod (0) parks the target at idle — t=0 is not yet
	// after creation, t=30 is.
	if got, _ := k.Recommend(obsOf(at(0), 2, 2, 10, pods...)); got != 2 {
		t.Fatalf("t=0: got %d, want 2", got)
	}
	if got, _ := k.Recommend(obsOf(at(30), 2, 2, 10, pods...)); got != 1 {
		t.Fatalf("t=30: got %d, want idle 1", got)
	}
	// parked at idle: the HPA does not act between polls
	if got, _ := k.Recommend(obsOf(at(45), 1, 2, 10, pods[:1]...)); got != 1 {
		t.Fatalf("t=45: got %d, want 1", got)
	}
	// activity at the next poll → back to min 2
	v = 4
	if got, _ := k.Recommend(obsOf(at(60), 1, 2, 10, pods[:1]...)); got != 2 {
		t.Fatalf("t=60: got %d, want 2", got)
	}
	// idleReplicaCount not below min is rejected
	if _, err := k.Recommend(obsOf(at(75), 2, 1, 10, pods...)); err == nil {
		t.Fatal("idle 1 with min 1: want an error")
	}
}

func TestKEDACronFloor(t *testing.T) {
	v := 0.0
	crons := []CronTrigger{{Start: "0 8 * * *", End: "0 10 * * *", DesiredReplicas: 4}}
	// t0 is 09:00 UTC: inside the window → cron metric 4 / AverageValue 1 → 4; queue ceil(0/3) = 0; max → 4
	k := newTestKEDA(t, &v, 0, crons)
	if got, _ := k.Recommend(obsOf(at(0), 2, 1, 10, ready(0), ready(0))); got != 4 {
		t.Fatalf("inside the cron window: got %d, want 4", got)
	}
	// 11:00: outside → both metrics 0 → proposal min 1, but the generated
	// HPA's first sync records the scale it found (2), which holds for its
	// 300 s down window; after it the HPA goes to min 1
	k2 := newTestKEDA(t, &v, 0, crons)
	if got, _ := k2.Recommend(obsOf(at(7200), 2, 1, 10, ready(0), ready(0))); got != 2 {
		t.Fatalf("outside the cron window, first sync: got %d, want 2 (initial recommendation)", got)
	}
	if got, _ := k2.Recommend(obsOf(at(7200+301), 2, 1, 10, ready(0), ready(0))); got != 1 {
		t.Fatalf("outside the cron window after the down window: got %d, want 1", got)
	}
	// the queue wins when higher: ceil(30/3) = 10 > 4
	v = 30
	k3 := newTestKEDA(t, &v, 0, crons)
	if got, _ := k3.Recommend(obsOf(at(0), 5, 1, 20, ready(6), ready(6), ready(6), ready(6), ready(6))); got != 10 {
		t.Fatalf("queue above the cron floor: got %d, want 10", got)
	}
}

func TestKEDACronPresetWindow(t *testing.T) {
	a, err := Presets()["keda-cron"](Params{"cron_start_minute": 530, "cron_end_minute": 600, "cron_replicas": 5})
	if err != nil {
		t.Fatal(err)
	}
	// t0 is 09:00 UTC, inside 08:50–10:00 → floor 5 (queue empty); legacy clamp max(2·2, 4) = 4 this tick
	if got, _ := a.Recommend(obsOf(at(0), 2, 1, 10, ready(0), ready(0))); got != 4 {
		t.Fatalf("got %d, want 4 (rate-limited towards the floor of 5)", got)
	}
	if got, _ := a.Recommend(obsOf(at(15), 4, 1, 10, ready(0), ready(0), ready(0), ready(0))); got != 5 {
		t.Fatalf("got %d, want 5", got)
	}
}

func TestKEDARejectsBadConfig(t *testing.T) {
	v := 0.0
	q := []PrometheusTrigger{{Name: "q", Query: constQuery(&v), Threshold: 3}}
	for name, cfg := range map[string]KEDAConfig{
		"no triggers": {PollingInterval: time.Second},
		"bad cron":    {PollingInterval: time.Second, Cron: []CronTrigger{{Start: "not cron", End: "0 1 * * *", DesiredReplicas: 1}}},
		"same cron":   {PollingInterval: time.Second, Cron: []CronTrigger{{Start: "0 1 * * *", End: "0 1 * * *", DesiredReplicas: 1}}},
		"no polling":  {Prometheus: q},
		"threshold":   {PollingInterval: time.Second, Prometheus: []PrometheusTrigger{{Name: "q", Query: constQuery(&v)}}},
	} {
		if _, err := NewKEDA(cfg); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}
