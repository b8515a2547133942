package decide

import (
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/decide/knobs"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

// promFleet is a Prometheus fleet report of a fleet whose pod list was
// refused (no readyPods): waiting requests in all, 4 pods with series.
func promFleet(now time.Time, waiting float64) []Entry {
	four := 4
	f := &signal.Fleet{Source: "prometheus", ServingPods: &four, Waiting: signal.F(waiting), Running: signal.F(8),
		KVCacheMean: signal.F(0.3), KVCacheMax: signal.F(0.4), StalenessSeconds: signal.F(5), TTFTRequests: signal.F(0),
		ArrivalRate: signal.F(2), WindowSeconds: 60,
		Errors: []string{`pod list: kubernetes API: HTTP 403: pods is forbidden`}}
	return []Entry{{Resource: "vllm", Report: &signal.Report{Version: signal.Version, ScrapeTime: now, Fleet: f}}}
}

// N10 (issue 15): in Prometheus mode with the pod list refused (403), the
// fleet read ready = 0: a queue over its target proposed the current
// count, and the reason spoke of "waiting 4 per ready pod" with no ready
// pod. The pods Prometheus holds series for stand in for the ready ones,
// so the fleet-wide queue scales up; the reasons say the pod list is
// missing; and it never scales down.
func TestPrometheusWithoutThePodListScalesUpNeverDown(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, v2 := range []bool{true, false} {
		cfg := knobs.Defaults()
		cfg.ServiceModel = v2
		st := state.New()
		d := Step(cfg, st, 4, promFleet(t0, 60), t0)
		if d.Target <= 4 {
			t.Errorf("v2 %v: a queue of 15 per pod with the pod list refused: target %d, want above 4; reasons %q", v2, d.Target, d.Reasons)
		}
		if !strings.Contains(strings.Join(d.Reasons, "\n"), "no pod list") {
			t.Errorf("v2 %v: the reasons do not say the pod list is missing: %q", v2, d.Reasons)
		}
		st = state.New()
		for i := 0; i < 80; i++ {
			now := t0.Add(time.Duration(i) * 15 * time.Second)
			if d := Step(cfg, st, 4, promFleet(now, 0), now); d.Target < 4 {
				t.Fatalf("v2 %v, tick %d: scaled down 4 -> %d without the pod list; reasons %q", v2, i, d.Target, d.Reasons)
			}
		}
	}
}
