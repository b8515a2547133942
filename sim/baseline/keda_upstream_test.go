package baseline

// KEDA's own scale-executor tests, translated into calls of this package.
//
// Source: kedacore/keda pkg/scaling/executor/scale_scaledobjects_test.go at
// commit 03b6a23a64ed41d9bb0fffdc5d60c8836686640f. Each case carries the
// upstream test's name and expected replica count. Upstream hands
// RequestScale an isActive flag; here a prometheus trigger's value (1 or
// 0, activationThreshold 0) makes the ScaledObject active or not. Upstream's
// ScaledObject has a zero creation time and no lastActiveTime, so its
// cooldown has long passed; here the ScaledObject is created an hour before
// the tick. The 1↔N part is the generated HPA (hpa_upstream_test.go).
//
// Not translated: the paused-replicas, paused-scale-in/out and
// force-activation annotations, events and the HPA-health conditions,
// which the emulation does not model.

import (
	"testing"
	"time"
)

func TestKEDAExecutor(t *testing.T) {
	idle0 := 0
	cases := []struct {
		name       string
		minR, idle int
		useIdle    bool
		current    int
		active     bool
		want       int
	}{
		{"TestScaleToMinReplicasWhenNotActive", 0, 0, false, 10, false, 0},
		{"TestScaleToMinReplicasFromLowerInitialReplicaCount", 5, 0, false, 1, false, 5},
		{"TestScaleFromMinReplicasWhenActive", 0, 0, false, 0, true, 1},
		{"TestScaleToIdleReplicasWhenNotActive", 5, 0, true, 10, false, 0},
		{"TestScaleFromIdleToMinReplicasWhenActive", 5, 0, true, 0, true, 5},
		{"TestEventWitTriggerInfo", 5, 0, true, 2, true, 5}, // "from 2 to 5"
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := 0.0
			if c.active {
				v = 1
			}
			cfg := KEDAConfig{Name: "name", PollingInterval: 30 * time.Second, CooldownPeriod: 300 * time.Second, Tolerance: 0.1,
				Prometheus: []PrometheusTrigger{{Name: "q", Query: constQuery(&v), Threshold: 3}}}
			if c.useIdle {
				cfg.IdleReplicas = &idle0
			}
			k, err := NewKEDA(cfg)
			if err != nil {
				t.Fatal(err)
			}
			now := at(0)
			k.created = now.Add(-time.Hour)
			pods := make([]podSpec, c.current)
			for i := range pods {
				pods[i] = ready(0)
			}
			got, err := k.Recommend(obsOf(now, c.current, c.minR, 100, pods...))
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("replicas %d, want %d", got, c.want)
			}
		})
	}
}
