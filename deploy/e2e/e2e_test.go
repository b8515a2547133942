//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/inferscale/inferscale/internal/testenv"
	"github.com/inferscale/inferscale/shared/state"
	"github.com/inferscale/inferscale/shared/state/store"
)

const (
	namespace  = "inference"
	autoscaler = "inferscale-vllm"
	target     = "vllm"
	stateCM    = "inferscale-vllm-state"
	overlay    = "deploy/overlays/edge"

	tick = 2 * time.Second // CPA interval in this test
	// Short windows so the run takes about two minutes (shipped defaults: scaleUpCooldown 60 s, scaleDownCooldown
	// and downStabilization 300 s, peakWindow 2 min).
	scaleUpCooldown = 6 * time.Second
	downWindow      = 20 * time.Second // evaluate's scaleDownCooldown = downStabilization = peakWindow
	// Demands (in "pods at 100 %") the emulated fleet carries.
	idleDemand = 0.3
	busyDemand = 3.6 // 14.4 req/s: 4.5 pods at capacityTarget 0.8, away from a rounding boundary
)

// testOverrides are the CustomPodAutoscaler config entries a user would set for fast windows; they are passed
// as env vars exactly like the operator passes the config list.
func testOverrides() []string {
	return []string{
		fmt.Sprintf("interval=%d", tick.Milliseconds()),
		"scaleUpCooldown=" + scaleUpCooldown.String(),
		"scaleDownCooldown=" + downWindow.String(),
		"downStabilization=" + downWindow.String(),
		"peakWindow=" + downWindow.String(),
		"defaultStartup=2s", // kwok pods are Ready at once; no startup to compensate for
		fmt.Sprintf("podCapacityRPS=%g", podCapacityRPS),
		"logVerbosity=3", // CPA then logs every evaluation (with evaluate's reasons) into the CPA log
	}
}

func repoRoot(t *testing.T) string { return testenv.ModuleRoot(t) }

// toolchainBin finds the control-plane binaries build-toolchain.sh built.
func toolchainBin(t *testing.T) string {
	cache := os.Getenv("INFERSCALE_E2E_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "inferscale-e2e")
	}
	bin := filepath.Join(cache, "bin")
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok", "custom-pod-autoscaler"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			t.Fatalf("%s missing in %s: run deploy/e2e/build-toolchain.sh (make e2e does): %v", b, bin, err)
		}
	}
	return bin
}

// replicas returns the Deployment's spec.replicas.
func (c *cluster) replicas(t *testing.T) int {
	t.Helper()
	var d appsv1.Deployment
	if err := c.getJSON(fmt.Sprintf("/apis/apps/v1/namespaces/%s/deployments/%s", namespace, target), &d); err != nil {
		t.Fatal(err)
	}
	if d.Spec.Replicas == nil {
		t.Fatal("deployment has no spec.replicas")
	}
	return int(*d.Spec.Replicas)
}

// podIPs lists the IPs of the target's Running pods.
func (c *cluster) podIPs() ([]string, error) {
	var pods corev1.PodList
	if err := c.getJSON(fmt.Sprintf("/api/v1/namespaces/%s/pods?labelSelector=app.kubernetes.io%%2Fname%%3D%s", namespace, target), &pods); err != nil {
		return nil, err
	}
	var ips []string
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && p.DeletionTimestamp == nil {
			ips = append(ips, p.Status.PodIP)
		}
	}
	sort.Strings(ips)
	return ips, nil
}

// watchPods keeps an emulated vLLM server on every Running pod's IP until stop is closed.
func (c *cluster) watchPods(t *testing.T, fleet *vllmFleet, stop <-chan struct{}) {
	for {
		if ips, err := c.podIPs(); err == nil {
			if err := fleet.sync(ips); err != nil {
				t.Errorf("emulated servers: %v", err)
			}
		}
		select {
		case <-stop:
			return
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// observe polls replicas for d and returns every distinct value seen, in order.
func (c *cluster) observe(t *testing.T, d time.Duration) []int {
	var seen []int
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		r := c.replicas(t)
		if len(seen) == 0 || seen[len(seen)-1] != r {
			seen = append(seen, r)
		}
	}
	return seen
}

// waitReplicas waits up to d for cond(replicas) and returns the replicas and when it became true.
func (c *cluster) waitReplicas(t *testing.T, d time.Duration, cond func(int) bool) (int, time.Time, bool) {
	r := 0
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if r = c.replicas(t); cond(r) {
			return r, time.Now(), true
		}
	}
	return r, time.Time{}, false
}

// waitScrapes waits until the emulated servers answered (or failed) n more scrapes.
func waitScrapes(t *testing.T, fleet *vllmFleet, n int, d time.Duration) {
	t.Helper()
	start := fleet.scrapeCount()
	if err := waitFor(d, fmt.Sprintf("%d scrapes", n), func() error {
		if got := fleet.scrapeCount() - start; got < n {
			return fmt.Errorf("%d scrapes so far: %w", got, errNotYet)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestAutoscalesVLLMOnARealControlPlane(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the e2e test needs root (a private mount namespace for the CPA's service-account files)")
		}
		t.Skip("the e2e test needs root (a private mount namespace for the CPA's service-account files)")
	}
	repo := repoRoot(t)
	bin := toolchainBin(t)
	began := time.Now()
	c := startCluster(t, bin)
	t.Logf("control plane up in %s", time.Since(began).Round(time.Millisecond))
	c.addFakeNodes(2)

	// The manifests, as a user would apply them: the CRD the operator installs, then the edge overlay.
	if _, err := c.kubectl("", "apply", "-f", filepath.Join(repo, "deploy/e2e/custompodautoscaler-crd.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.kubectl("", "wait", "--for=condition=Established", "--timeout=30s", "crd/custompodautoscalers.custompodautoscaler.com"); err != nil {
		t.Fatal(err)
	}
	out, err := c.kubectl("", "apply", "--server-side", "-k", filepath.Join(repo, overlay))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("applied %s:\n%s", overlay, out)
	// The Prometheus overlay is validated by the apiserver too (server-side dry run over the same objects).
	if _, err := c.kubectl("", "apply", "--server-side", "--dry-run=server", "-k", filepath.Join(repo, "deploy/overlays/prometheus")); err != nil {
		t.Fatal(err)
	}

	fleet := newVLLMFleet(8000)
	fleet.set(load{Demand: idleDemand})
	stop := make(chan struct{})
	watcherDone := make(chan struct{})
	go func() { defer close(watcherDone); c.watchPods(t, fleet, stop) }()
	t.Cleanup(func() { close(stop); <-watcherDone; fleet.close() })
	if err := waitFor(60*time.Second, "the vLLM pod Running with an IP", func() error {
		ips, err := c.podIPs()
		if err != nil || len(ips) == 0 {
			return fmt.Errorf("no pod IP yet (%v): %w", err, errNotYet)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	ap, err := c.emulateOperator(namespace, autoscaler, repo)
	if err != nil {
		t.Fatal(err)
	}
	// The pod's /tmp is an emptyDir; evaluate keeps its lock file there. Give the local process its own.
	podTmp := filepath.Join(c.root, "pod-tmp")
	if err := os.MkdirAll(podTmp, 0o755); err != nil {
		t.Fatal(err)
	}
	overrides := append(testOverrides(), "stateFile="+filepath.Join(podTmp, "inferscale-state.json"))
	cpaProc := c.startCPA("custom-pod-autoscaler", ap, overrides...)

	// 1. Idle: nothing moves.
	waitScrapes(t, fleet, 3, 10*tick)
	if r := c.replicas(t); r != 1 {
		t.Fatalf("idle fleet: replicas = %d, want 1", r)
	}

	// 2. Load rises: replicas rise within a bounded number of ticks.
	fleet.set(load{Demand: busyDemand})
	rose := time.Now()
	r, at, ok := c.waitReplicas(t, 5*tick+time.Second, func(r int) bool { return r > 1 })
	if !ok {
		t.Fatalf("busy fleet: replicas still %d after %s (5 ticks)", r, 5*tick)
	}
	t.Logf("scale-up 1 -> %d after %s", r, at.Sub(rose).Round(100*time.Millisecond))
	// Let it settle: unchanged for longer than the scale-down window, so that whatever evaluate held back
	// (the queue spike's peak rate, its down-stabilisation window) has played out.
	var settled int
	if err := waitFor(120*time.Second, "replicas to settle", func() error {
		seen := c.observe(t, downWindow+2*tick)
		if len(seen) != 1 {
			return fmt.Errorf("still moving: %v: %w", seen, errNotYet)
		}
		settled = seen[0]
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if settled <= 1 {
		t.Fatalf("settled at %d replicas under load, want more than 1", settled)
	}
	t.Logf("settled at %d replicas", settled)

	// 3. Scrapes fail (HTTP 500, then connections closed) for longer than the scale-down window, while the
	// engines keep serving the same demand: nothing moves, neither down (no data is not "idle") nor up.
	for _, mode := range []string{fail500, failClose} {
		fleet.set(load{Demand: busyDemand, Fail: mode})
		start := fleet.scrapeCount()
		seen := c.observe(t, downWindow/2+2*tick)
		if len(seen) != 1 || seen[0] != settled {
			t.Fatalf("scrapes failing (%s): replicas went %v, want to stay %d", mode, seen, settled)
		}
		if n := fleet.scrapeCount() - start; n < 4 {
			t.Fatalf("scrapes failing (%s): only %d scrape attempts; the check proved nothing", mode, n)
		}
	}
	// Scrapes recover at the same demand: still nothing moves.
	fleet.set(load{Demand: busyDemand})
	if seen := c.observe(t, 3*tick); len(seen) != 1 || seen[0] != settled {
		t.Fatalf("after scrapes recovered at the same demand: replicas went %v, want to stay %d", seen, settled)
	}

	// 4. Load falls, and the CPA restarts in the middle of the scale-down window: only evaluate's durable state
	// (CPA's downscaleStabilization is 0, and would be lost on restart anyway) can hold the replicas until the
	// window ends.
	fleet.set(load{Demand: idleDemand})
	dropped := time.Now()
	if seen := c.observe(t, 2*tick); len(seen) != 1 {
		t.Fatalf("replicas moved right after the load fell: %v", seen)
	}
	cpaProc.stop(10 * time.Second)
	before := c.evaluateState(t)
	if before.LastScaleUp == nil || len(before.Recommendations) == 0 {
		t.Fatalf("evaluate's state before the restart has no scale-up time or recommendations: %+v", before)
	}
	restarted := time.Now()
	c.startCPA("custom-pod-autoscaler-restarted", ap, overrides...)
	holdUntil := dropped.Add(downWindow - tick - time.Second)
	if seen := c.observe(t, time.Until(holdUntil)); len(seen) != 1 || seen[0] != settled {
		t.Fatalf("after a CPA restart %s into the %s scale-down window: replicas went %v before the window ended, want %d held",
			restarted.Sub(dropped).Round(time.Second), downWindow, seen, settled)
	}
	// The restarted evaluate worked on the state from before the restart instead of starting afresh (a fresh
	// one would also hold, for lack of history, so the timing alone would not prove it).
	after := c.evaluateState(t)
	if after.LastTick == nil || !after.LastTick.After(restarted) {
		t.Fatalf("evaluate saved no state after the restart (lastTick %v, restart %s)", after.LastTick, restarted.Format(time.RFC3339Nano))
	}
	if after.LastScaleUp == nil || !after.LastScaleUp.Equal(*before.LastScaleUp) {
		t.Fatalf("last scale-up was %v before the restart and %v after: the state did not survive", before.LastScaleUp, after.LastScaleUp)
	}
	if len(after.Recommendations) == 0 || !after.Recommendations[0].At.Before(restarted) {
		t.Fatalf("no recommendation from before the restart survived the restart: %+v", after.Recommendations)
	}
	r, at, ok = c.waitReplicas(t, 8*tick, func(r int) bool { return r < settled })
	if !ok {
		t.Fatalf("idle fleet: replicas still %d %s after the load fell (window %s)", r, time.Since(dropped).Round(time.Second), downWindow)
	}
	t.Logf("scale-down %d -> %d, %s after the load fell (window %s)", settled, r, at.Sub(dropped).Round(100*time.Millisecond), downWindow)
	t.Logf("whole run %s", time.Since(began).Round(time.Second))
}

// evaluateState decodes evaluate's durable state from its ConfigMap, which must exist.
func (c *cluster) evaluateState(t *testing.T) *state.State {
	t.Helper()
	var cm corev1.ConfigMap
	if err := c.getJSON(fmt.Sprintf("/api/v1/namespaces/%s/configmaps/%s", namespace, stateCM), &cm); err != nil {
		t.Fatalf("evaluate's state: %v", err)
	}
	st, err := state.Decode([]byte(cm.Data[store.ConfigMapKey]))
	if err != nil {
		t.Fatalf("evaluate's state in ConfigMap %s: %v", stateCM, err)
	}
	return st
}
