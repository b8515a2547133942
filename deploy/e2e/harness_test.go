//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/inferscale/inferscale/internal/rbacgrant"
	"github.com/inferscale/inferscale/internal/testenv"
	"github.com/inferscale/inferscale/shared/state"
	"github.com/inferscale/inferscale/shared/state/store"
)

// Names the base manifests use (deploy/base).
const (
	namespace  = "inference"
	autoscaler = "inferscale-vllm" // the CustomPodAutoscaler, its pod, ServiceAccount, Role and RoleBinding
	target     = "vllm"
	stateCM    = "inferscale-vllm-state"

	// vllmPort is where the emulated vLLM servers listen, set on the CustomPodAutoscaler as metricsPort: the
	// manifests' 8000 is taken in this shared network namespace by the operator's metrics listener (main.go binds
	// ":8000"; in a cluster each pod has its own network namespace).
	vllmPort = 18000

	tick = 2 * time.Second // CPA interval in the scenarios
)

// environment is the control plane every scenario shares: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, kwok with two fake GPU nodes, the emulated kubelet, and the real CPA operator installed from
// its chart.
type environment struct {
	c    *cluster
	kl   *kubelet
	repo string
}

func startEnvironment(t *testing.T) *environment {
	if os.Geteuid() != 0 {
		testenv.SkipUnlessCI(t, "the e2e test needs root (chroot, uids, a private network namespace)")
	}
	repo := testenv.ModuleRoot(t)
	bin := toolchainBin(t)
	began := time.Now()
	c := startCluster(t, bin)
	t.Logf("control plane up in %s", time.Since(began).Round(time.Millisecond))
	c.addFakeNodes(2)
	src := operatorSource(t, repo)
	cpaImg, err := inferscaleImage(repo, bin)
	if err != nil {
		t.Fatal(err)
	}
	opImg, err := operatorImage(src, bin)
	if err != nil {
		t.Fatal(err)
	}
	simImg, err := simImage(emulatorSource(t, repo), bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("images: %s\n%s\n%s", cpaImg, opImg, simImg)
	e := &environment{c: c, kl: newKubelet(c, cpaImg, opImg, simImg), repo: repo}
	c.installOperator(t, src)
	t.Logf("operator %s installed and running, %s after start", operatorVersion, time.Since(began).Round(time.Millisecond))
	return e
}

// toolchainBin finds the binaries build-toolchain.sh built.
func toolchainBin(t *testing.T) string {
	cache := os.Getenv("INFERSCALE_E2E_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "inferscale-e2e")
	}
	bin := filepath.Join(cache, "bin")
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok",
		"custom-pod-autoscaler", "custom-pod-autoscaler-operator", "llm-d-inference-sim"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			t.Fatalf("%s missing in %s: run deploy/e2e/build-toolchain.sh (make e2e does): %v", b, bin, err)
		}
	}
	return bin
}

// emulatorSource is the vLLM emulator's source (its Dockerfile describes the image the kubelet runs).
func emulatorSource(t *testing.T, repo string) string {
	t.Helper()
	src := orDefault(os.Getenv("INFERSCALE_EMULATOR_SRC"), filepath.Join(filepath.Dir(repo), "shared", "third_party", "llm-d-inference-sim"))
	if _, err := os.Stat(filepath.Join(src, "Dockerfile")); err != nil {
		t.Fatalf("the vLLM emulator's source is not at %s: %v", src, err)
	}
	return src
}

// names are the objects one autoscaler of a deployment is about: its CustomPodAutoscaler (also its pod,
// ServiceAccount, Role and RoleBinding), its scale target and its state ConfigMap. baseNames are deploy/base's; the
// P/D overlay has one set per role (pd_test.go).
type names struct {
	autoscaler, target, stateCM string
}

var baseNames = names{autoscaler: autoscaler, target: target, stateCM: stateCM}

// deployment is one overlay applied as a user applies it, with the emulated vLLM fleet behind its Deployment.
type deployment struct {
	names
	env     *environment
	c       *cluster
	overlay string
	fleet   *vllmFleet
	began   time.Time
	config  map[string]string // the CustomPodAutoscaler's effective config list
	history *replicaHistory
	prom    *prometheusServer // scraping the target's pods (or the namespace's annotated pods), when set
	// emulated: the target's pods are llm-d's vLLM emulator, run by the kubelet (no in-test fluid model).
	emulated bool
}

// deploy applies deploy/overlays/<overlay> (`kubectl apply --server-side -k`, docs/deploy.md step 2), then sets
// the scenario's config entries on the CustomPodAutoscaler (`kubectl patch cpa`, docs/deploy.md "Tune"), and waits
// until the operator runs a CPA pod carrying them. Cleanup removes it all (`kubectl delete -k`, docs/deploy.md
// "Remove") and waits for the namespace to be gone.
func (e *environment) deploy(t *testing.T, overlay string, config map[string]string) *deployment {
	t.Helper()
	return e.deployScraped(t, overlay, config, nil)
}

// deployScraped is deploy with a Prometheus scraping the target's pods.
func (e *environment) deployScraped(t *testing.T, overlay string, config map[string]string, prom *prometheusServer) *deployment {
	t.Helper()
	d := &deployment{names: baseNames, env: e, c: e.c, overlay: overlay, fleet: newVLLMFleet(vllmPort), began: time.Now(), prom: prom}
	dir := filepath.Join(e.repo, "deploy", "overlays", overlay)
	out, err := e.c.kubectl("", "apply", "--server-side", "-k", dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("applied %s:\n%s", dir, out)
	stop, watcherDone := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() {
		close(stop)
		<-watcherDone
		d.fleet.close()
		d.remove(t, dir)
	})
	d.fleet.set(load{Demand: idleDemand})
	d.history = &replicaHistory{}
	go func() { defer close(watcherDone); d.watchPods(t, stop) }()
	d.setConfig(t, config)
	return d
}

// deployEmulated applies deploy/e2e/emulator (the edge overlay with llm-d's vLLM emulator as the vLLM Deployment,
// rendered with `kubectl kustomize` and its startup delay set to emulatorStartup), then the scenario's config
// entries, as deploy does; the kubelet runs the emulator pods. Cleanup removes it all.
func (e *environment) deployEmulated(t *testing.T, config map[string]string) *deployment {
	t.Helper()
	manifests := emulatorManifests(t, e)
	d := &deployment{names: baseNames, env: e, c: e.c, overlay: "e2e/emulator", fleet: newVLLMFleet(vllmPort), began: time.Now(), emulated: true}
	if _, err := e.c.kubectl(manifests, "apply", "--server-side", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	stop, watcherDone := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() {
		close(stop)
		<-watcherDone
		// The Deployment first, and its pods gone (preStop, drain), then the rest: the namespace controller, seeing
		// pods with a grace period left, waits that long (630 s) before it looks again.
		if err := deleteDeploymentAndWait(d.c, namespace, target); err != nil {
			t.Error(err)
		}
		if _, err := d.c.kubectl(manifests, "delete", "-f", "-", "--wait=false", "--ignore-not-found"); err != nil {
			t.Error(err)
		}
		d.waitGone(t)
	})
	d.history = &replicaHistory{}
	go func() { defer close(watcherDone); d.watchPods(t, stop) }()
	d.setConfig(t, config)
	return d
}

// deleteDeploymentAndWait deletes a Deployment (its pods go with it, through the garbage collector) and waits until
// none of its pods is left.
func deleteDeploymentAndWait(c *cluster, ns, name string) error {
	if _, err := c.kubectl("", "delete", "deployment", name, "-n", ns, "--wait=false", "--ignore-not-found"); err != nil {
		return err
	}
	return waitFor(2*time.Minute, "the pods of deployment "+ns+"/"+name+" gone", func() error {
		var pods corev1.PodList
		if err := c.getJSON("/api/v1/namespaces/"+ns+"/pods?labelSelector=app.kubernetes.io%2Fname%3D"+name, &pods); err != nil {
			return err
		}
		if n := len(pods.Items); n > 0 {
			return fmt.Errorf("%d pods left: %w", n, errNotYet)
		}
		return nil
	})
}

// emulatorManifests renders deploy/e2e/emulator with the emulator's --startup-duration set to emulatorStartup.
func emulatorManifests(t *testing.T, e *environment) string {
	t.Helper()
	return renderEmulated(t, e, "emulator")
}

// renderEmulated renders deploy/e2e/<dir> with every emulator's --startup-duration set to emulatorStartup.
func renderEmulated(t *testing.T, e *environment, dir string) string {
	t.Helper()
	out, err := e.c.kubectl("", "kustomize", filepath.Join(e.repo, "deploy", "e2e", dir))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(- --startup-duration\n\s*- )\S+`)
	if !re.MatchString(out) {
		t.Fatalf("deploy/e2e/%s renders no --startup-duration argument:\n%s", dir, out)
	}
	return re.ReplaceAllString(out, "${1}"+emulatorStartup(t).String())
}

// emulatorStartup is how long an emulator pod stays not Ready after its container starts (its --startup-duration,
// the model loading of a real vLLM pod): INFERSCALE_E2E_EMULATOR_STARTUP seconds, default 10 (a real 8B pod takes
// one to a few minutes; the plan learns the startup it sees, so seconds keep CI short and still real).
func emulatorStartup(t *testing.T) time.Duration {
	v := os.Getenv("INFERSCALE_E2E_EMULATOR_STARTUP")
	if v == "" {
		return 10 * time.Second
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 600 {
		t.Fatalf("INFERSCALE_E2E_EMULATOR_STARTUP=%q: want whole seconds in [0, 600]", v)
	}
	return time.Duration(n) * time.Second
}

// remove deletes what the overlay created and waits until its namespace is gone.
func (d *deployment) remove(t *testing.T, dir string) {
	if _, err := d.c.kubectl("", "delete", "-k", dir, "--wait=false"); err != nil {
		t.Error(err)
		return
	}
	d.waitGone(t)
}

// waitGone waits until the namespace is gone and checks the kubelet ran every pod it knew.
func (d *deployment) waitGone(t *testing.T) {
	if err := waitFor(120*time.Second, "namespace "+namespace+" deleted", func() error {
		var ns corev1.Namespace
		err := d.c.getJSON("/api/v1/namespaces/"+namespace, &ns)
		if isNotFound(err) {
			return nil
		}
		if err == nil {
			return fmt.Errorf("phase %s: %w", ns.Status.Phase, errNotYet)
		}
		return err
	}); err != nil {
		t.Error(err)
	}
	if err := d.env.kl.failures(); err != nil {
		t.Errorf("the kubelet could not run some pods: %v", err)
	}
}

// setConfig sets entries of the CustomPodAutoscaler's config list the way docs/deploy.md ("Tune") says: list the
// entries with `kubectl get cpa -o jsonpath` (one per line, so line i is entry i), then one `kubectl patch --type
// json` replacing the values of existing entries and adding new ones. It waits until the operator has replaced the
// CPA pod with one whose env carries them and the kubelet runs it.
func (d *deployment) setConfig(t *testing.T, entries map[string]string) *corev1.Pod {
	t.Helper()
	out, err := d.c.kubectl("", "get", "cpa", d.autoscaler, "-n", namespace, "-o", `jsonpath={range .spec.config[*]}{.name}={.value}{"\n"}{end}`)
	if err != nil {
		t.Fatal(err)
	}
	index := map[string]int{}
	d.config = map[string]string{}
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		k, v, _ := strings.Cut(line, "=")
		if _, dup := index[k]; dup {
			t.Fatalf("config key %s appears twice in the CustomPodAutoscaler", k)
		}
		index[k] = i
		d.config[k] = v
	}
	var names []string
	for k := range entries {
		names = append(names, k)
	}
	sort.Strings(names)
	var ops []map[string]any
	for _, k := range names {
		if i, ok := index[k]; ok {
			ops = append(ops, map[string]any{"op": "replace", "path": fmt.Sprintf("/spec/config/%d/value", i), "value": entries[k]})
		} else {
			ops = append(ops, map[string]any{"op": "add", "path": "/spec/config/-", "value": map[string]string{"name": k, "value": entries[k]}})
		}
		d.config[k] = entries[k]
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.c.kubectl("", "patch", "cpa", d.autoscaler, "-n", namespace, "--type", "json", "-p", string(patch)); err != nil {
		t.Fatal(err)
	}
	return d.waitCPAPod(t, func(p *corev1.Pod) error {
		env := map[string]string{}
		for _, e := range p.Spec.Containers[0].Env {
			env[e.Name] = e.Value
		}
		for k, v := range entries {
			if env[k] != v {
				return fmt.Errorf("pod %s has %s=%q, want %q: %w", p.UID, k, env[k], v, errNotYet)
			}
		}
		return nil
	})
}

const cpaPath = "/apis/custompodautoscaler.com/v1/namespaces/" + namespace + "/custompodautoscalers/" + autoscaler

// cpaPod returns the CPA pod the operator created (an error when there is none).
func (d *deployment) cpaPod() (*corev1.Pod, error) {
	var p corev1.Pod
	if err := d.c.getJSON("/api/v1/namespaces/"+namespace+"/pods/"+d.autoscaler, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// waitCPAPod waits until the CPA pod satisfies ok, is Running and not being deleted, and the kubelet runs its
// container; it returns that pod.
func (d *deployment) waitCPAPod(t *testing.T, ok func(*corev1.Pod) error) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	if err := waitFor(90*time.Second, "the operator's CPA pod running", func() error {
		p, err := d.cpaPod()
		if err != nil {
			return err
		}
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("pod %s phase %s deleting %v: %w", p.UID, p.Status.Phase, p.DeletionTimestamp != nil, errNotYet)
		}
		if err := ok(p); err != nil {
			return err
		}
		if d.env.kl.running(p.UID) == nil {
			return fmt.Errorf("pod %s not run by the kubelet yet: %w", p.UID, errNotYet)
		}
		pod = p
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return pod
}

// restartCPA deletes the CPA pod (`kubectl delete pod`, as an eviction or node drain would) and waits for the
// operator's replacement to run.
func (d *deployment) restartCPA(t *testing.T) *corev1.Pod {
	t.Helper()
	old, err := d.cpaPod()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.c.kubectl("", "delete", "pod", d.autoscaler, "-n", namespace, "--wait=false"); err != nil {
		t.Fatal(err)
	}
	return d.waitCPAPod(t, func(p *corev1.Pod) error {
		if p.UID == old.UID {
			return fmt.Errorf("still the old pod: %w", errNotYet)
		}
		return nil
	})
}

// cpaLog is the output of the CPA pod's container (CPA's own, and metric's and evaluate's stderr with logStderr), as
// `kubectl logs` shows it (docs/deploy.md "Watch").
func (d *deployment) cpaLog(t *testing.T) string {
	t.Helper()
	out, err := d.c.kubectl("", "logs", "-n", namespace, d.autoscaler)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// replicas returns the Deployment's spec.replicas.
func (d *deployment) replicas(t *testing.T) int {
	t.Helper()
	var dep appsv1.Deployment
	if err := d.c.getJSON("/apis/apps/v1/namespaces/"+namespace+"/deployments/"+d.target, &dep); err != nil {
		t.Fatal(err)
	}
	if dep.Spec.Replicas == nil {
		t.Fatal("deployment has no spec.replicas")
	}
	return int(*dep.Spec.Replicas)
}

// expectReplicas waits up to within for cond on the replica count and returns the count and when the history first
// saw it; it fails the test (saying what) otherwise.
func (d *deployment) expectReplicas(t *testing.T, within time.Duration, what string, cond func(int) bool) (int, time.Time) {
	t.Helper()
	r := 0
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		var at time.Time
		if r, at = d.history.latest(); cond(r) {
			return r, at
		}
	}
	t.Fatalf("%s: replicas %d after %s", what, r, within)
	return 0, time.Time{}
}

// settle waits until the replica count has not changed for quiet and returns it.
func (d *deployment) settle(t *testing.T, quiet, within time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(within)
	last, since := d.replicas(t), time.Now()
	for time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		if r := d.replicas(t); r != last {
			last, since = r, time.Now()
		}
		if time.Since(since) >= quiet {
			return last
		}
	}
	t.Fatalf("replicas did not settle for %s within %s (last %d)", quiet, within, last)
	return 0
}

// podAddr is a target pod's name and IP.
type podAddr struct{ name, ip string }

// targetPods lists the target's Running pods.
func (d *deployment) targetPods() ([]podAddr, error) {
	var pods corev1.PodList
	if err := d.c.getJSON("/api/v1/namespaces/"+namespace+"/pods?labelSelector=app.kubernetes.io%2Fname%3D"+d.target, &pods); err != nil {
		return nil, err
	}
	var out []podAddr
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && p.DeletionTimestamp == nil {
			out = append(out, podAddr{p.Name, p.Status.PodIP})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ip < out[j].ip })
	return out, nil
}

// watchPods keeps an emulated vLLM server on every Running pod's IP, the Prometheus's targets (the vLLM pods, or
// every pod of the namespace for one that discovers them), and records the replica count, until stop is closed.
func (d *deployment) watchPods(t *testing.T, stop <-chan struct{}) {
	for {
		var dep appsv1.Deployment
		if err := d.c.getJSON("/apis/apps/v1/namespaces/"+namespace+"/deployments/"+d.target, &dep); err == nil && dep.Spec.Replicas != nil {
			d.history.record(time.Now(), int(*dep.Spec.Replicas))
		}
		if pods, err := d.targetPods(); err == nil && !d.emulated {
			var ips []string
			for _, p := range pods {
				ips = append(ips, p.ip)
			}
			if err := d.fleet.sync(ips); err != nil {
				t.Errorf("emulated servers: %v", err)
			}
			if d.prom != nil && !d.prom.pods {
				if err := d.prom.setTargets(namespace, pods, vllmPort); err != nil {
					t.Errorf("Prometheus targets: %v", err)
				}
			}
		}
		if d.prom != nil && d.prom.pods {
			var all corev1.PodList
			if err := d.c.getJSON("/api/v1/namespaces/"+namespace+"/pods", &all); err == nil {
				if err := d.prom.setPodTargets(all.Items); err != nil {
					t.Errorf("Prometheus targets: %v", err)
				}
			}
		}
		select {
		case <-stop:
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// replicaHistory is every replica count the Deployment showed, as sampled every 250 ms.
type replicaHistory struct {
	mu      sync.Mutex
	changes []replicaChange
}

type replicaChange struct {
	at       time.Time
	replicas int
}

func (h *replicaHistory) record(at time.Time, r int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.changes); n == 0 || h.changes[n-1].replicas != r {
		h.changes = append(h.changes, replicaChange{at, r})
	}
}

// latest is the current count and since when (0 before the first sample).
func (h *replicaHistory) latest() (int, time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.changes) == 0 {
		return 0, time.Time{}
	}
	c := h.changes[len(h.changes)-1]
	return c.replicas, c.at
}

// between returns the counts seen from a to b (the one in force at a first).
func (h *replicaHistory) between(a, b time.Time) []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []int
	for i, c := range h.changes {
		inForceAtA := !c.at.After(a) && (i+1 == len(h.changes) || h.changes[i+1].at.After(a))
		if inForceAtA || (c.at.After(a) && !c.at.After(b)) {
			out = append(out, c.replicas)
		}
	}
	return out
}

// heldBetween fails the test unless the replica count was want all the time from a to b, waiting until b.
func (d *deployment) heldBetween(t *testing.T, want int, a, b time.Time, what string) {
	t.Helper()
	if seen := d.seenBetween(a, b); len(seen) != 1 || seen[0] != want {
		t.Fatalf("%s: replicas went %v between %s and %s, want %d held", what, seen, a.Format("15:04:05.0"), b.Format("15:04:05.0"), want)
	}
}

// heldAtLeast is heldBetween for a floor: the replicas never went below want between a and b (a scale-up the
// plan asks for meanwhile is not what the caller checks).
func (d *deployment) heldAtLeast(t *testing.T, want int, a, b time.Time, what string) {
	t.Helper()
	if seen := d.seenBetween(a, b); len(seen) == 0 || slices.Min(seen) < want {
		t.Fatalf("%s: replicas went %v between %s and %s, want none below %d", what, seen, a.Format("15:04:05.0"), b.Format("15:04:05.0"), want)
	}
}

// seenBetween waits until b has passed (and one more sample) and returns the replica counts seen between a and b.
func (d *deployment) seenBetween(a, b time.Time) []int {
	time.Sleep(time.Until(b.Add(300 * time.Millisecond)))
	return d.history.between(a, b)
}

// waitScrapes waits until the emulated servers answered (or failed) n more scrapes.
func (d *deployment) waitScrapes(t *testing.T, n int, within time.Duration) {
	t.Helper()
	start := d.fleet.scrapeCount()
	if err := waitFor(within, fmt.Sprintf("%d scrapes", n), func() error {
		if got := d.fleet.scrapeCount() - start; got < n {
			return fmt.Errorf("%d scrapes so far: %w", got, errNotYet)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// targetPodObjects returns the target's pods as the API has them (annotations such as
// controller.kubernetes.io/pod-deletion-cost included), by name.
func (d *deployment) targetPodObjects(t *testing.T) map[string]corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := d.c.getJSON("/api/v1/namespaces/"+namespace+"/pods?labelSelector=app.kubernetes.io%2Fname%3D"+d.target, &pods); err != nil {
		t.Fatal(err)
	}
	out := map[string]corev1.Pod{}
	for _, p := range pods.Items {
		out[p.Name] = p
	}
	return out
}

// deploymentEvents returns the Events recorded on the target Deployment (by reason, in order), e.g. the ones an
// autoscaler emits about its decisions.
func (d *deployment) deploymentEvents(t *testing.T) []corev1.Event {
	t.Helper()
	var evs corev1.EventList
	sel := "involvedObject.kind%3DDeployment%2CinvolvedObject.name%3D" + d.target
	if err := d.c.getJSON("/api/v1/namespaces/"+namespace+"/events?fieldSelector="+sel, &evs); err != nil {
		t.Fatal(err)
	}
	sort.SliceStable(evs.Items, func(i, j int) bool { return evs.Items[i].LastTimestamp.Before(&evs.Items[j].LastTimestamp) })
	return evs.Items
}

// stateConfigMap returns the state ConfigMap (nil when it does not exist).
func (d *deployment) stateConfigMap(t *testing.T) *corev1.ConfigMap {
	t.Helper()
	var cm corev1.ConfigMap
	err := d.c.getJSON("/api/v1/namespaces/"+namespace+"/configmaps/"+d.stateCM, &cm)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return &cm
}

// state decodes evaluate's state, which must exist, with the repository's own decoder (shared/state: strict, so a
// field this test reads cannot silently disappear).
func (d *deployment) state(t *testing.T) *state.State {
	t.Helper()
	cm := d.stateConfigMap(t)
	if cm == nil {
		t.Fatalf("no state ConfigMap %s", d.stateCM)
	}
	st, err := state.Decode([]byte(cm.Data[store.ConfigMapKey]))
	if err != nil {
		t.Fatalf("state ConfigMap %s key %s: %v", d.stateCM, store.ConfigMapKey, err)
	}
	return st
}

// waitStateTick waits until evaluate saved a tick after t0 (proof that CPA ticked and evaluate ran).
func (d *deployment) waitStateTick(t *testing.T, after time.Time, within time.Duration) {
	t.Helper()
	if err := waitFor(within, "evaluate to save a tick", func() error {
		if st := d.state(t); st.LastTick == nil || !st.LastTick.After(after) {
			return fmt.Errorf("last tick %v: %w", st.LastTick, errNotYet)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// cpaAPI calls CPA's REST API on the CPA pod through the API server's pod proxy, as docs/deploy.md shows:
// GET with `kubectl get --raw`, POST with `kubectl create --raw`.
func (d *deployment) cpaAPI(t *testing.T, method, path string) string {
	t.Helper()
	raw := "/api/v1/namespaces/" + namespace + "/pods/" + d.autoscaler + ":5000/proxy" + path
	var out string
	var err error
	switch method {
	case "GET":
		out, err = d.c.kubectl("", "get", "--raw", raw)
	case "POST":
		out, err = d.c.kubectl("{}", "create", "--raw", raw, "-f", "-")
	default:
		t.Fatalf("method %s", method)
	}
	if err != nil {
		t.Fatalf("CPA API %s %s: %v", method, path, err)
	}
	return out
}

// roleGrants is what the applied Role grants, one grant per (group, resource, verb, name).
func (d *deployment) roleGrants(t *testing.T) map[grant]bool {
	t.Helper()
	var role rbacv1.Role
	if err := d.c.getJSON("/apis/rbac.authorization.k8s.io/v1/namespaces/"+namespace+"/roles/"+d.autoscaler, &role); err != nil {
		t.Fatal(err)
	}
	out, err := rbacgrant.Of(role.Rules)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// autoscalerCalls is every API call of the autoscaler's service account since the deployment began; it fails
// the test on any the API server refused (a missing grant).
func (d *deployment) autoscalerCalls(t *testing.T) []apiCall {
	t.Helper()
	calls, err := d.c.auditCalls("system:serviceaccount:"+namespace+":"+d.autoscaler, d.began)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		if c.Code == 403 {
			t.Errorf("the API server refused %s by %s (%s): the Role lacks it", c.grant(), c.program(), c.UserAgent)
		}
	}
	return calls
}

// checkLeastPrivilege fails unless every call the autoscaler made is allowed by a rule naming it (a list needs a
// rule without resourceNames) — so that the scenarios exercise what the Role grants — and returns what was used.
func (d *deployment) checkLeastPrivilege(t *testing.T) map[grant]bool {
	t.Helper()
	granted := d.roleGrants(t)
	used := map[grant]bool{}
	for _, c := range d.autoscalerCalls(t) {
		g := c.grant()
		if c.Verb == "list" || c.Verb == "create" || c.Verb == "watch" {
			g.Name = "" // RBAC matches these without a name
		}
		if any := (grant{Group: g.Group, Resource: g.Resource, Verb: g.Verb}); !granted[g] && granted[any] {
			g = any // a rule without resourceNames (pods patch, events: their names are not known in advance)
		}
		used[g] = true
		if !granted[g] {
			t.Errorf("%s by %s is not granted by any rule (got through another?)", g, c.program())
		}
	}
	t.Logf("the autoscaler's service account used: %s", strings.Join(sortedGrants(used), "; "))
	return used
}

func decodeJSON(r io.Reader, v any) error {
	return json.NewDecoder(io.LimitReader(r, 64<<20)).Decode(v)
}
