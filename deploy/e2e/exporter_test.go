//go:build e2e

package e2e

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// exporterPort is the exporter sidecar's containerPort and prometheus.io/port (deploy/overlays/exporter).
const exporterPort = 9102

// exporterSeriesFollowAScaleUp: the exporter overlay as docs/exporter.md deploys it — the exporter a sidecar of the
// CPA pod (the kubelet runs both containers), reading the state ConfigMap evaluate saves — scraped by a real
// Prometheus that finds it by the pod's prometheus.io annotations (the kubernetes-pods job). The busy load of
// perPodDirectScrape scales the fleet up against a maxReplicas of 2 (it needs 3 or more: checkBusy), so the one
// scale event also raises an alert. Read back through Prometheus's HTTP API: target and current replicas go 1 -> 2,
// the ticks counter climbs a tick at a time and agrees with the state, the forecast rises, decided_by goes from the
// idle fleet's step to maxReplicas and the MaxReplicasReached alert from 0 to 1.
func exporterSeriesFollowAScaleUp(t *testing.T, e *environment) *deployment {
	const capped = 2
	prom := e.c.startPodPrometheus(t, namespace)
	d := e.deployScraped(t, "exporter", tuning(map[string]string{"maxReplicas": strconv.Itoa(capped)}), prom)
	checkRestricted(t, d) // the sidecar included
	pod, err := d.cpaPod()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pod.Spec.Containers); n != 2 || pod.Spec.Containers[1].Name != "exporter" {
		t.Fatalf("the CPA pod has %d containers, want inferscale and the exporter sidecar", n)
	}
	if r := d.env.kl.running(pod.UID); r == nil || r.starts("exporter") != 1 {
		t.Fatal("the kubelet does not run the exporter container")
	}
	s := exporterSeries{t: t, prom: prom, sel: fmt.Sprintf(`{job="kubernetes-pods",namespace=%q,pod=%q,instance="%s:%d"}`,
		namespace, autoscaler, pod.Status.PodIP, exporterPort)}

	// Idle: found by its annotations, the state read, one replica decided and seen, no alert.
	s.wait("inferscale_state_up", 30*time.Second, func(v float64) bool { return v == 1 })
	s.wait("inferscale_target_replicas", 10*tick, func(v float64) bool { return v == 1 })
	s.wait("inferscale_current_replicas", 10*tick, func(v float64) bool { return v == 1 })
	s.wait(`inferscale_alerts{reason="MaxReplicasReached"}`, 5*tick, func(v float64) bool { return v == 0 })
	s.wait("inferscale_max_replicas", 5*tick, func(v float64) bool { return v == capped })
	idleBy := s.decidedBy(func(by string) bool { return by != "maxReplicas" })
	idleForecast := s.wait("inferscale_forecast_arrivals_requests_per_second", 5*tick, func(v float64) bool { return v > 0 })
	if reasons := s.labelValues("inferscale_alerts", "reason"); len(reasons) < 6 {
		t.Errorf("inferscale_alerts has series for %v; want one for each known reason (docs/exporter.md)", reasons)
	}
	ticks0, at0 := s.wait("inferscale_ticks_total", 5*tick, func(v float64) bool { return v >= 1 }), time.Now()

	// The scale event.
	d.fleet.set(load{Demand: busyDemand})
	rose := time.Now()
	d.expectReplicas(t, 8*tick, "busy fleet, capped at maxReplicas", func(r int) bool { return r == capped })
	s.wait("inferscale_target_replicas", 5*tick, func(v float64) bool { return v == capped })
	s.wait("inferscale_current_replicas", 5*tick, func(v float64) bool { return v == capped })
	// The plan asks for 3 once its forecast (a 45 s time constant) has risen far enough: seconds after the step to 2.
	s.wait(`inferscale_decision_info{mode="active",decided_by="maxReplicas"}`, 30*tick, func(v float64) bool { return v == 1 })
	s.wait(`inferscale_alerts{reason="MaxReplicasReached"}`, 5*tick, func(v float64) bool { return v == 1 })
	busyForecast := s.wait("inferscale_forecast_arrivals_requests_per_second", 10*tick, func(v float64) bool { return v > 2*idleForecast })
	// The plan's need is what maxReplicas caps, and the hold keeps at least that need.
	busyNeed := s.wait("inferscale_plan_need_replicas", 10*tick, func(v float64) bool { return v > capped })
	s.wait("inferscale_plan_hold_replicas", 5*tick, func(v float64) bool { return v > capped })
	t.Logf("exporter via Prometheus: target 1 -> %d, decided_by %s -> maxReplicas, MaxReplicasReached 0 -> 1, forecast %.2f -> %.2f req/s, the plan's need %.0f, %s after the load rose",
		capped, idleBy, idleForecast, busyForecast, busyNeed, time.Since(rose).Round(100*time.Millisecond))

	// Ticks: one a tick (CPA's interval, give or take the scrape and the poll), and what the state counts.
	ticks1, at1 := s.value("inferscale_ticks_total"), time.Now()
	if want := at1.Sub(at0).Seconds() / tick.Seconds(); math.Abs(ticks1-ticks0-want) > want/4+2 {
		t.Errorf("inferscale_ticks_total went %.0f -> %.0f in %s, want about %.0f more (one a tick)", ticks0, ticks1, at1.Sub(at0).Round(time.Second), want)
	}
	if st := d.state(t); st.Last == nil || math.Abs(float64(st.Last.Ticks)-ticks1) > 2 {
		t.Errorf("inferscale_ticks_total %.0f, the state's summary %+v", ticks1, st.Last)
	}
	// Prometheus holds the move, not only its last value.
	window := fmt.Sprintf("[%ds]", int(time.Since(d.began).Seconds())+1)
	if lo, hi := s.value("min_over_time(inferscale_target_replicas"+s.sel+window+")"),
		s.value("max_over_time(inferscale_target_replicas"+s.sel+window+")"); lo != 1 || hi != capped {
		t.Errorf("inferscale_target_replicas over the scenario: min %.0f max %.0f, want 1 and %d", lo, hi, capped)
	}
	// docs/exporter.md's way to read it without Prometheus.
	raw := fmt.Sprintf("/api/v1/namespaces/%s/pods/%s:%d/proxy/metrics", namespace, autoscaler, exporterPort)
	if out, err := d.c.kubectl("", "get", "--raw", raw); err != nil || !strings.Contains(out, "\ninferscale_target_replicas "+strconv.Itoa(capped)+"\n") {
		t.Errorf("kubectl get --raw %s (%v) shows no inferscale_target_replicas %d:\n%.2000s", raw, err, capped, out)
	}
	return d
}

// exporterSeries reads the CPA pod's exporter series from Prometheus: sel selects the one target.
type exporterSeries struct {
	t    *testing.T
	prom *prometheusServer
	sel  string
}

// with puts sel into a series selector: name or name{labels}.
func (s exporterSeries) with(series string) string {
	if name, labels, ok := strings.Cut(series, "{"); ok {
		return name + strings.TrimSuffix(s.sel, "}") + "," + labels
	}
	return series + s.sel
}

// wait polls the series until Prometheus has exactly one for the target and ok holds for its value, which it
// returns; it fails the test after within.
func (s exporterSeries) wait(series string, within time.Duration, ok func(float64) bool) float64 {
	s.t.Helper()
	q := s.with(series)
	var v float64
	if err := waitFor(within, q, func() error {
		got, err := s.prom.query(q)
		if err != nil {
			return err
		}
		if len(got) != 1 || !ok(got[0].value) {
			return fmt.Errorf("%d series %v: %w", len(got), got, errNotYet)
		}
		v = got[0].value
		return nil
	}); err != nil {
		s.t.Fatal(err)
	}
	return v
}

// value is the one series' value of a query, now (series may be a whole expression when it holds sel itself).
func (s exporterSeries) value(query string) float64 {
	s.t.Helper()
	if !strings.Contains(query, s.sel) {
		query = s.with(query)
	}
	got, err := s.prom.query(query)
	if err != nil || len(got) != 1 {
		s.t.Fatalf("%s: %v %v", query, got, err)
	}
	return got[0].value
}

// labelValues are the values label takes across the target's series of name, now.
func (s exporterSeries) labelValues(name, label string) []string {
	s.t.Helper()
	got, err := s.prom.query(s.with(name))
	if err != nil {
		s.t.Fatal(err)
	}
	var out []string
	for _, g := range got {
		out = append(out, g.labels[label])
	}
	return out
}

// decidedBy waits for the decision series of an active mode whose decided_by ok accepts and returns it.
func (s exporterSeries) decidedBy(ok func(string) bool) string {
	s.t.Helper()
	var by string
	if err := waitFor(5*tick, "inferscale_decision_info", func() error {
		got, err := s.prom.query(s.with(`inferscale_decision_info{mode="active"}`))
		if err != nil {
			return err
		}
		if len(got) != 1 || got[0].value != 1 || !ok(got[0].labels["decided_by"]) {
			return fmt.Errorf("%v: %w", got, errNotYet)
		}
		by = got[0].labels["decided_by"]
		return nil
	}); err != nil {
		s.t.Fatal(err)
	}
	return by
}
