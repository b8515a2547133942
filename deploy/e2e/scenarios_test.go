//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Loads the emulated fleet carries, in "pods at 100 %" (podCapacityRPS requests/s each).
const (
	idleDemand = 0.3
	busyDemand = 3.6 // 14.4 req/s: 4.5 pods at capacityTarget 0.8, away from a rounding boundary
	// busyReplicas is what busyDemand needs: ceil(3.6 / 0.8). The fleet may settle one above: the demand rule
	// plans for the rate fitted along its trend (trendWindow 3 min still holds the ramp), and a scale-down
	// also waits for the KV cache to go under its low-water mark (0.5; 24 running per pod is 0.52 here).
	busyReplicas = 5
	// window is the scale-down window of the scenarios: evaluate's downStabilization and peakWindow (shipped: 300 s
	// and 2 min); scaleDownCooldown is window too unless a scenario says otherwise.
	window = 10 * time.Second
)

// tuning is the config a scenario sets on the CustomPodAutoscaler on top of the overlay's (short windows so that a
// scenario takes about a minute), plus extra.
func tuning(extra map[string]string) map[string]string {
	m := map[string]string{
		"interval":          fmt.Sprint(tick.Milliseconds()),
		"scaleUpCooldown":   "6s",
		"scaleDownCooldown": window.String(),
		"downStabilization": window.String(),
		"peakWindow":        window.String(),
		"defaultStartup":    "2s", // kwok pods are Ready at once
		"podCapacityRPS":    fmt.Sprint(podCapacityRPS),
		"metricsPort":       fmt.Sprint(vllmPort),
		"logVerbosity":      "3", // CPA logs every evaluation (with evaluate's reasons)
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// TestOnARealControlPlane runs every scenario on one control plane with the real operator. Each scenario deploys
// an overlay as a user does, drives the emulated vLLM fleet, asserts the replica counts the Deployment reaches, and
// removes it all again. A new scenario is a function of the table below.
func TestOnARealControlPlane(t *testing.T) {
	e := startEnvironment(t)
	used := map[grant]bool{}
	var granted map[grant]bool
	scenarios := []struct {
		name string
		run  func(t *testing.T, e *environment) *deployment
	}{
		{"OverlaysValidateAgainstTheOperatorsCRD", overlaysValidate},
		{"PerPodDirectScrape", perPodDirectScrape},
		{"PerResourceListsPodsOncePerTick", perResource},
		{"PrometheusLatencyRule", prometheusLatency},
		{"StateSurvivesRestartAndCRChange", stateSurvivesRestartAndCRChange},
		{"RESTAPIDryRunLeavesStateAlone", restAPIDryRun},
		{"FailedScrapesHoldThenRecover", failedScrapesHold},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			began := time.Now()
			if d := sc.run(t, e); d != nil && !t.Failed() {
				for g := range d.checkLeastPrivilege(t) {
					used[g] = true
				}
				granted = d.roleGrants(t)
			}
			t.Logf("%s: %s", sc.name, time.Since(began).Round(time.Second))
		})
	}
	if t.Failed() {
		return
	}
	// Least privilege: together the scenarios use every grant of the Role (and checkLeastPrivilege found none
	// used without one).
	for g := range granted {
		if !used[g] {
			t.Errorf("the Role grants %s, which no scenario used", g)
		}
	}
	e.c.uninstallOperator(t)
}

// overlaysValidate applies every overlay as a server-side dry run with strict field validation: the API server
// checks each object against its schema — the CustomPodAutoscaler against the operator's real CRD, installed from
// its chart — and refuses unknown fields. A CustomPodAutoscaler with a misspelt field must be refused, so the check
// can fail.
func overlaysValidate(t *testing.T, e *environment) *deployment {
	if _, err := e.c.kubectl("", "create", "namespace", namespace); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := e.c.kubectl("", "delete", "namespace", namespace, "--timeout=120s"); err != nil {
			t.Error(err)
		}
	})
	dirs, err := filepath.Glob(filepath.Join(e.repo, "deploy", "overlays", "*"))
	if err != nil || len(dirs) < 3 {
		t.Fatalf("overlays: %v %v", dirs, err)
	}
	for _, dir := range dirs {
		if _, err := e.c.kubectl("", "apply", "--server-side", "--dry-run=server", "--validate=strict", "-k", dir); err != nil {
			t.Errorf("overlay %s: %v", filepath.Base(dir), err)
		}
	}
	bad := "apiVersion: custompodautoscaler.com/v1\nkind: CustomPodAutoscaler\nmetadata: {name: x, namespace: " + namespace + "}\n" +
		"spec: {provisionRoles: false, scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: x}, template: {spec: {containers: [{name: x, image: x}]}}}\n"
	if _, err := e.c.kubectl(bad, "apply", "--server-side", "--dry-run=server", "--validate=strict", "-f", "-"); err == nil ||
		!strings.Contains(err.Error(), "provisionRoles") {
		t.Errorf("a CustomPodAutoscaler with the unknown field provisionRoles: err %v, want it refused", err)
	}
	return nil
}

// perPodDirectScrape: the edge overlay (CPA per-pod mode, metric scraping each pod). An idle fleet stays at 1;
// load scales it to exactly what the demand needs; idle again, it scales back down to 1. The pod the operator made
// meets the "restricted" Pod Security level, and CPA itself lists the pods.
func perPodDirectScrape(t *testing.T, e *environment) *deployment {
	d := e.deploy(t, "edge", tuning(nil))
	checkRestricted(t, d)
	checkOwnedByTheCPA(t, d)
	d.waitScrapes(t, 3, 10*tick)
	if r := d.replicas(t); r != 1 {
		t.Fatalf("idle fleet: replicas %d, want 1", r)
	}
	d.fleet.set(load{Demand: busyDemand})
	rose := time.Now()
	r, at := d.expectReplicas(t, 5*tick, "busy fleet", func(r int) bool { return r > 1 })
	t.Logf("scale-up 1 -> %d after %s", r, at.Sub(rose).Round(100*time.Millisecond))
	settled := d.settle(t, window+2*tick, 2*time.Minute)
	checkBusy(t, settled)
	checkDeploymentFollowed(t, d, settled)
	watchAsDocumented(t, d)
	d.fleet.set(load{Demand: idleDemand})
	d.expectReplicas(t, 6*window, "idle fleet back to one replica", func(r int) bool { return r == 1 })
	if n := countCalls(d.autoscalerCalls(t), "cpa", "list", "pods"); n == 0 {
		t.Error("in per-pod mode CPA lists the target's pods, but the audit log shows no such call")
	}
	return d
}

// perResource: the per-resource overlay (one metric run per tick for the whole fleet, scraping every pod it
// lists through the API). Scales like per-pod; metric, not CPA, lists the pods, once per tick.
func perResource(t *testing.T, e *environment) *deployment {
	d := e.deploy(t, "per-resource", tuning(nil))
	d.fleet.set(load{Demand: busyDemand})
	from := time.Now()
	d.expectReplicas(t, 5*tick, "busy fleet", func(r int) bool { return r > 1 })
	checkBusy(t, d.settle(t, window+2*tick, 2*time.Minute))
	elapsed := time.Since(from)
	var metricLists, cpaLists int
	for _, c := range d.autoscalerCalls(t) {
		if c.Verb != "list" || c.Resource != "pods" || c.At.Before(from) {
			continue
		}
		switch c.program() {
		case "inferscale":
			metricLists++
		case "cpa":
			cpaLists++
		}
	}
	ticks := int(elapsed / tick)
	if cpaLists != 0 || metricLists < ticks-2 || metricLists > ticks+2 {
		t.Errorf("in %s (%d ticks): metric listed pods %d times and CPA %d times; want about one metric list per tick and none by CPA",
			elapsed.Round(time.Second), ticks, metricLists, cpaLists)
	}
	return d
}

// prometheusLatency: the Prometheus overlay against a real Prometheus scraping the emulated pods. A fleet with
// nothing queueing and little demand, whose time to first token breaches the SLO (2 s) because prefill takes 3 s,
// scales out on the latency rule alone: one step (+1) and then the scale-up cooldown holds. latencyNeedsLoad=false:
// by default a breach with nothing waiting is deliberately not scaled for (the emulated engine cannot hold a
// steady small queue), so this isolates the latency rule's data path: Prometheus -> metric -> evaluate.
//
// Two more entries work around issue 8 §4.9 (the Prometheus source's defaults leave the latency rule dead: the
// default prometheusQuantiles has no 0.95, and the fleet report carries no finished-request count, so the default
// latencyMinRequests 5 is never met); drop them once that fix lands.
func prometheusLatency(t *testing.T, e *environment) *deployment {
	prom := e.c.startPrometheus(t, namespace)
	d := e.deployScraped(t, "prometheus", tuning(map[string]string{
		"prometheusURL":    prom.url,
		"prometheusWindow": "10s",
		"latencyNeedsLoad": "false",
		"scaleUpCooldown":  "60s",
		// Issue 8 §4.9 workaround, see above.
		"prometheusQuantiles": "0.5,0.9,0.95,0.99",
		"latencyMinRequests":  "0",
	}), prom)
	const demand = 0.5
	d.fleet.set(load{Demand: demand})
	if err := waitFor(30*time.Second, "Prometheus scraping the vLLM pod", func() error {
		if n, err := prom.seriesCount(`vllm:num_requests_running{namespace="` + namespace + `"}`); err != nil || n == 0 {
			return fmt.Errorf("%d series (%v): %w", n, err, errNotYet)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	healthy := time.Now()
	d.waitStateTick(t, healthy, 5*tick)
	d.heldBetween(t, 1, healthy, healthy.Add(window), "healthy fleet")
	d.fleet.set(load{Demand: demand, Prefill: 3 * time.Second})
	breach := time.Now()
	_, at := d.expectReplicas(t, window+6*tick, "TTFT above the SLO", func(r int) bool { return r > 1 })
	d.heldBetween(t, 2, at, at.Add(4*tick), "one step on the latency rule, then the up-cooldown")
	t.Logf("latency scale-up 1 -> 2 %s after the breach began", at.Sub(breach).Round(100*time.Millisecond))
	if log := d.cpaLog(t); !strings.Contains(log, "latency over threshold") {
		t.Errorf("the CPA log shows no evaluation with the latency rule over its threshold")
	}
	return d
}

// stateSurvivesRestartAndCRChange: evaluate's durable state (the state ConfigMap) carries the scale-down window and
// the scale-down cooldown across a CPA pod deletion and a change to the CustomPodAutoscaler (the operator deletes
// and recreates the pod on every change). CPA's own downscaleStabilization is 0 and in memory: only the state can
// hold. The cooldown (20 s) is longer than the window (10 s), so a fresh state after the restart would scale down
// earlier than the cooldown allows: the timing itself proves the state survived.
func stateSurvivesRestartAndCRChange(t *testing.T, e *environment) *deployment {
	const cooldown = 2 * window
	d := e.deploy(t, "edge", tuning(map[string]string{"scaleDownCooldown": cooldown.String()}))
	d.fleet.set(load{Demand: busyDemand})
	d.expectReplicas(t, 5*tick, "busy fleet", func(r int) bool { return r > 1 })
	s := d.settle(t, cooldown+2*tick, 2*time.Minute)
	before := d.state(t)
	if before.LastScaleUp == nil || len(before.Recommendations) == 0 {
		t.Fatalf("no scale-up time or recommendations in the state: %+v", before)
	}

	// The down-window across both.
	d.fleet.set(load{Demand: idleDemand})
	dropped := time.Now()
	d.restartCPA(t)
	d.setConfig(t, map[string]string{"scaleUpCooldown": "7s"})
	d.heldBetween(t, s, dropped, dropped.Add(window-tick), "scale-down window across a CPA restart and a CR change")
	after := d.state(t)
	if after.LastScaleUp == nil || !after.LastScaleUp.Equal(*before.LastScaleUp) {
		t.Fatalf("last scale-up %v before the restart, %v after: the state did not survive", before.LastScaleUp, after.LastScaleUp)
	}
	if !after.Recommendations[0].At.Before(dropped) {
		t.Fatalf("no recommendation from before the restart survived: %+v", after.Recommendations)
	}
	r1, at := d.expectReplicas(t, window+6*tick, "idle fleet", func(r int) bool { return r < s })
	t.Logf("first scale-down %d -> %d %s after the load fell", s, r1, at.Sub(dropped).Round(100*time.Millisecond))
	if r1 == 1 {
		t.Fatalf("scaled %d -> 1 in one step; the cooldown phase needs a second one (maxScaleDownFraction)", s)
	}

	// The scale-down cooldown across both. evaluate dates a scale when it sees it, at the next tick.
	var down *time.Time
	if err := waitFor(3*tick, "the scale-down in the state", func() error {
		if down = d.state(t).LastScaleDown; down == nil {
			return errNotYet
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	d.restartCPA(t)
	d.setConfig(t, map[string]string{"scaleUpCooldown": "8s"})
	d.heldBetween(t, r1, at, down.Add(cooldown-tick), "scale-down cooldown across a CPA restart and a CR change")
	if got := d.state(t).LastScaleDown; got == nil || !got.Equal(*down) {
		t.Fatalf("last scale-down %v before the restart, %v after", down, got)
	}
	r2, at2 := d.expectReplicas(t, time.Until(down.Add(cooldown+5*tick)), "idle fleet after the cooldown", func(r int) bool { return r < r1 })
	t.Logf("second scale-down %d -> %d %s after the first (cooldown %s)", r1, r2, at2.Sub(at).Round(100*time.Millisecond), cooldown)
	return d
}

// restAPIDryRun: CPA's REST API, through the API server's pod proxy. With ticks 10 min apart nothing else
// evaluates. A dry-run evaluation returns a decision, leaves the replicas and the state ConfigMap untouched; a real
// one scales and writes the state.
func restAPIDryRun(t *testing.T, e *environment) *deployment {
	d := e.deploy(t, "edge", tuning(map[string]string{"interval": "600000"}))
	metrics := d.cpaAPI(t, "GET", "/api/v1/metrics?dry_run=true")
	if !strings.Contains(metrics, `"resource":"`+target+`-`) {
		t.Fatalf("GET /api/v1/metrics: %s; want a metric for the %s pod", metrics, target)
	}
	if got := evaluation(t, d.cpaAPI(t, "POST", "/api/v1/evaluation")); got != 1 {
		t.Fatalf("evaluation of the idle fleet: %d replicas, want 1", got)
	}
	cm := d.stateConfigMap(t)
	if cm == nil {
		t.Fatal("a real evaluation left no state ConfigMap")
	}
	d.fleet.set(load{Demand: busyDemand})
	time.Sleep(6 * time.Second) // the batch fills (64 running) and a queue builds
	dry := evaluation(t, d.cpaAPI(t, "POST", "/api/v1/evaluation?dry_run=true"))
	if dry <= 1 {
		t.Fatalf("dry-run evaluation of the busy fleet: %d replicas, want more than 1", dry)
	}
	asked := time.Now()
	d.heldBetween(t, 1, asked, asked.Add(tick), "after a dry-run evaluation")
	if after := d.stateConfigMap(t); after.ResourceVersion != cm.ResourceVersion || after.Data[stateKey] != cm.Data[stateKey] {
		t.Fatalf("the dry run changed the state ConfigMap (resourceVersion %s -> %s)", cm.ResourceVersion, after.ResourceVersion)
	}
	real := evaluation(t, d.cpaAPI(t, "POST", "/api/v1/evaluation"))
	if real <= 1 {
		t.Fatalf("real evaluation of the busy fleet: %d replicas, want more than 1", real)
	}
	d.expectReplicas(t, 5*time.Second, "after a real evaluation", func(r int) bool { return r == real })
	if after := d.stateConfigMap(t); after.ResourceVersion == cm.ResourceVersion {
		t.Fatal("a real evaluation did not write the state ConfigMap (so the dry-run check proves nothing)")
	}
	t.Logf("dry run: %d replicas, real: %d", dry, real)
	return d
}

func evaluation(t *testing.T, body string) int {
	t.Helper()
	var ev struct {
		TargetReplicas *int `json:"targetReplicas"`
	}
	if err := json.Unmarshal([]byte(body), &ev); err != nil || ev.TargetReplicas == nil {
		t.Fatalf("evaluation answer %q: %v", body, err)
	}
	return *ev.TargetReplicas
}

// failedScrapesHold: a wave of failed scrapes (HTTP 500, connections closed, servers down) longer than the
// scale-down window, while the engines keep serving the same demand, moves nothing — no data is not "idle" — and
// CPA ticks on; once the servers answer again with the load gone, scale-down resumes.
func failedScrapesHold(t *testing.T, e *environment) *deployment {
	d := e.deploy(t, "edge", tuning(nil))
	d.fleet.set(load{Demand: busyDemand})
	d.expectReplicas(t, 5*tick, "busy fleet", func(r int) bool { return r > 1 })
	s := d.settle(t, window+2*tick, 2*time.Minute)
	pod, err := d.cpaPod()
	if err != nil {
		t.Fatal(err)
	}
	waveStart := time.Now()
	for _, mode := range []string{fail500, failClose, failDown} {
		d.fleet.set(load{Demand: busyDemand, Fail: mode})
		from := time.Now()
		d.waitStateTick(t, from.Add(tick), 4*tick) // CPA ticked and evaluate saved with this failure
		d.heldBetween(t, s, from, from.Add(window/2+tick), "scrapes failing ("+mode+")")
	}
	if wave := time.Since(waveStart); wave < window {
		t.Fatalf("the failure wave lasted %s, less than the window %s: the check proves nothing", wave, window)
	}
	if r := d.env.kl.running(pod.UID); r == nil || r.starts != 1 {
		t.Fatalf("the CPA container restarted during the failure wave (or its pod went away)")
	}
	d.fleet.set(load{Demand: idleDemand})
	d.expectReplicas(t, window+8*tick, "scrapes recovered, load gone", func(r int) bool { return r < s })
	return d
}

// checkRestricted asks the API server whether the CPA pod the operator created meets the "restricted" Pod
// Security level: a server-side dry run of labelling the namespace enforce=restricted warns about every existing
// pod that does not (the example vLLM pods run as root and may be listed; ours must not be).
func checkRestricted(t *testing.T, d *deployment) {
	t.Helper()
	_, stderr, err := d.c.kubectlStderr("", "label", "--dry-run=server", "--overwrite", "namespace", namespace,
		"pod-security.kubernetes.io/enforce=restricted")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, autoscaler+":") || strings.Contains(line, autoscaler+" ") {
			t.Errorf("the CPA pod violates the restricted Pod Security level: %s", line)
		}
	}
	if !strings.Contains(stderr, target+"-") {
		t.Logf("note: no restricted-level warning for the example vLLM pods either: %q", stderr)
	}
}

// checkDeploymentFollowed fails unless the Deployment controller acted on the scale (an Event on the Deployment
// for the last step) and the pods exist: as many Running as replicas.
func checkDeploymentFollowed(t *testing.T, d *deployment, replicas int) {
	t.Helper()
	scaled := false
	for _, ev := range d.deploymentEvents(t) {
		scaled = scaled || (ev.Reason == "ScalingReplicaSet" && strings.HasSuffix(ev.Message, fmt.Sprintf(" to %d", replicas)))
	}
	if !scaled {
		t.Errorf("no ScalingReplicaSet event on the Deployment for the scale to %d", replicas)
	}
	running := 0
	for _, p := range d.targetPodObjects(t) {
		if p.Status.Phase == "Running" && p.DeletionTimestamp == nil {
			running++
		}
	}
	if running != replicas {
		t.Errorf("%d target pods Running, want %d", running, replicas)
	}
}

// watchAsDocumented runs docs/deploy.md's "Watch it work" commands and checks what they show.
func watchAsDocumented(t *testing.T, d *deployment) {
	t.Helper()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "cpa", "-n", namespace}, autoscaler},
		{[]string{"get", "pod", autoscaler, "-n", namespace}, "Running"},
		{[]string{"logs", "-n", namespace, autoscaler, "--tail=50"}, "Evaluation determined"},
		{[]string{"get", "configmap", stateCM, "-n", namespace, "-o", `jsonpath={.data.state\.json}`}, `"lastTick"`},
	} {
		out, err := d.c.kubectl("", c.args...)
		if err != nil {
			t.Errorf("kubectl %s: %v", strings.Join(c.args, " "), err)
			continue
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("kubectl %s shows no %q:\n%s", strings.Join(c.args, " "), c.want, out)
		}
	}
}

// checkOwnedByTheCPA fails unless the operator made the CustomPodAutoscaler an owner of the RBAC objects the base
// supplies (provision*: false), so that they are garbage-collected with it.
func checkOwnedByTheCPA(t *testing.T, d *deployment) {
	t.Helper()
	for _, path := range []string{"/api/v1/namespaces/" + namespace + "/serviceaccounts/" + autoscaler,
		"/apis/rbac.authorization.k8s.io/v1/namespaces/" + namespace + "/roles/" + autoscaler,
		"/apis/rbac.authorization.k8s.io/v1/namespaces/" + namespace + "/rolebindings/" + autoscaler} {
		if err := waitFor(10*time.Second, path+" owned by the CustomPodAutoscaler", func() error {
			var obj metav1.PartialObjectMetadata
			if err := d.c.getJSON(path, &obj); err != nil {
				return err
			}
			for _, o := range obj.OwnerReferences {
				if o.Kind == "CustomPodAutoscaler" && o.Name == autoscaler {
					return nil
				}
			}
			return fmt.Errorf("owners %v: %w", obj.OwnerReferences, errNotYet)
		}); err != nil {
			t.Error(err)
		}
	}
}

// checkBusy fails unless the busy fleet settled on what its demand needs (or one more, see busyReplicas).
func checkBusy(t *testing.T, settled int) {
	t.Helper()
	if settled < busyReplicas || settled > busyReplicas+1 {
		t.Fatalf("busy fleet settled at %d replicas, want %d or %d", settled, busyReplicas, busyReplicas+1)
	}
	t.Logf("busy fleet settled at %d replicas", settled)
}

func countCalls(calls []apiCall, program, verb, resource string) int {
	n := 0
	for _, c := range calls {
		if c.program() == program && c.Verb == verb && c.Resource == resource {
			n++
		}
	}
	return n
}
