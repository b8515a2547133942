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
)

const (
	namespace  = "inference"
	autoscaler = "inferscale-vllm"
	target     = "vllm"
	stateCM    = "inferscale-vllm-state"
	overlay    = "deploy/overlays/edge"

	tick = 2 * time.Second // CPA interval in this test
	// Short windows so the run takes about two minutes; the shipped defaults are 60 s / 300 s / 300 s.
	scaleUpCooldown = 6 * time.Second
	downWindow      = 20 * time.Second // scaleDownCooldown = downStabilization = CPA downscaleStabilization
	// Demands (in "pods at 100 %") the emulated fleet carries.
	idleDemand = 0.3
	busyDemand = 4.0
	hugeDemand = 12.0
)

// testOverrides are the CustomPodAutoscaler config entries a user would set for fast windows; they are passed
// as env vars exactly like the operator passes the config list.
func testOverrides() []string {
	secs := func(d time.Duration) string { return fmt.Sprint(int(d.Seconds())) }
	return []string{
		fmt.Sprintf("interval=%d", tick.Milliseconds()),
		"downscaleStabilization=" + secs(downWindow),
		"scaleUpCooldown=" + scaleUpCooldown.String(),
		"scaleDownCooldown=" + downWindow.String(),
		"downStabilization=" + downWindow.String(),
		"defaultStartup=2s",
		"logVerbosity=1",
	}
}

func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

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
	cpaProc := c.startCPA("custom-pod-autoscaler", ap, testOverrides()...)

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
	// Let it settle: unchanged for 4 ticks (cooldowns, corroboration).
	var settled int
	if err := waitFor(90*time.Second, "replicas to settle", func() error {
		seen := c.observe(t, 4*tick)
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

	// 3. Scrapes fail (HTTP 500, then connections closed) while demand would call for more pods: nothing moves.
	for _, mode := range []string{fail500, failClose} {
		fleet.set(load{Demand: hugeDemand, Fail: mode})
		start := fleet.scrapeCount()
		seen := c.observe(t, 4*tick)
		if len(seen) != 1 || seen[0] != settled {
			t.Fatalf("scrapes failing (%s): replicas went %v, want to stay %d", mode, seen, settled)
		}
		if fleet.scrapeCount()-start < 2 {
			t.Fatalf("scrapes failing (%s): only %d scrapes in 4 ticks; the test proved nothing", mode, fleet.scrapeCount()-start)
		}
	}
	fleet.set(load{Demand: busyDemand})
	if seen := c.observe(t, 2*tick); len(seen) != 1 || seen[0] != settled {
		t.Fatalf("after scrapes recovered at the same demand: replicas went %v, want to stay %d", seen, settled)
	}

	// 4. Load falls, and the CPA restarts in the middle of the scale-down window: CPA's in-memory
	// stabilisation is gone, so only evaluate's durable state can hold the replicas until the window ends.
	fleet.set(load{Demand: idleDemand})
	dropped := time.Now()
	if seen := c.observe(t, 2*tick); len(seen) != 1 {
		t.Fatalf("replicas moved right after the load fell: %v", seen)
	}
	cpaProc.stop(10 * time.Second)
	stateData := c.stateConfigMap(t)
	t.Logf("state ConfigMap before the restart: %d keys, %d bytes", len(stateData), totalLen(stateData))
	c.startCPA("custom-pod-autoscaler-restarted", ap, testOverrides()...)
	holdUntil := dropped.Add(downWindow - tick - time.Second)
	if seen := c.observe(t, time.Until(holdUntil)); len(seen) != 1 || seen[0] != settled {
		t.Fatalf("after a CPA restart %s into the %s scale-down window: replicas went %v before the window ended, want %d held",
			time.Since(dropped).Round(time.Second), downWindow, seen, settled)
	}
	r, at, ok = c.waitReplicas(t, 8*tick, func(r int) bool { return r < settled })
	if !ok {
		t.Fatalf("idle fleet: replicas still %d %s after the load fell (window %s)", r, time.Since(dropped).Round(time.Second), downWindow)
	}
	t.Logf("scale-down %d -> %d, %s after the load fell (window %s)", settled, r, at.Sub(dropped).Round(100*time.Millisecond), downWindow)
	after := c.stateConfigMap(t)
	if len(after) == 0 {
		t.Fatalf("state ConfigMap %s is empty after the restarted CPA scaled", stateCM)
	}
	t.Logf("whole run %s", time.Since(began).Round(time.Second))
}

// stateConfigMap returns evaluate's durable state ConfigMap's data; it must exist.
func (c *cluster) stateConfigMap(t *testing.T) map[string]string {
	t.Helper()
	var cm corev1.ConfigMap
	if err := c.getJSON(fmt.Sprintf("/api/v1/namespaces/%s/configmaps/%s", namespace, stateCM), &cm); err != nil {
		t.Fatalf("evaluate's state: %v", err)
	}
	if len(cm.Data)+len(cm.BinaryData) == 0 {
		t.Fatalf("state ConfigMap %s has no data", stateCM)
	}
	return cm.Data
}

func totalLen(m map[string]string) int {
	n := 0
	for _, v := range m {
		n += len(v)
	}
	return n
}
