//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/inferscale/inferscale/shared/decisionlog"
	"github.com/inferscale/inferscale/shared/state/store"
)

// victimCost is the pod-deletion cost evaluate gives the pods a scale-down is to remove (policy.VictimDeletionCost).
const victimCost = "-1000"

// drainAwareScaleDown: four pods, two of them busy with generations in flight (running requests, KV cache) and two
// idle. When policy v2 scales down, the pods it marked with controller.kubernetes.io/pod-deletion-cost "-1000"
// just before the scale are exactly the ones the real ReplicaSet controller deletes, and the busy ones survive —
// although by its own order (newest and least long ready first) the ReplicaSet would delete the newer, busy pods.
//
// So that a mark can also be seen cleared from a pod that survives, CPA's own downscaleStabilization (shipped 0;
// in CPA's memory) holds the scale for a while after evaluate first answered it: evaluate marks the two idle
// pods every tick, the test then moves the sessions from one busy pod to one of the marked ones, and evaluate moves
// the mark — clearing it from the pod that became busy — before CPA applies the scale-down. minReplicas 2 keeps
// the target at the two busy pods whatever the plan's need for their small load.
func drainAwareScaleDown(t *testing.T, e *environment) *deployment {
	// 45 s: from the first marks, time for the load to move (about 7 s until the pod given it holds more than the
	// one it left) and for evaluate to mark again, with room for a loaded machine.
	const cpaHold = 45 * time.Second
	d := e.deploy(t, "edge", tuning(map[string]string{"minReplicas": "2",
		"downscaleStabilization": strconv.Itoa(int(cpaHold.Seconds()))}))
	d.fleet.set(load{Demand: idleDemand})
	d.expectReplicas(t, 8*tick, "minReplicas 2", func(r int) bool { return r == 2 })
	if err := waitFor(time.Minute, "the plan warm", func() error {
		if st := d.state(t); st.Service == nil || time.Duration(st.Service.Ticks)*tick < hold {
			return errNotYet
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Scrapes fail while two more pods come: a pod with missing data holds every scale-down, so nothing moves
	// before the test has chosen which pods are busy.
	d.fleet.set(load{Fail: fail500})
	if _, err := d.c.kubectl("", "scale", "deployment", target, "-n", namespace, "--replicas=4"); err != nil {
		t.Fatal(err)
	}
	watch := d.watchTargetPods(t)
	defer watch.close()
	var pods []podRecord
	if err := waitFor(time.Minute, "four Running pods", func() error {
		running, err := d.targetPods()
		if err != nil || len(running) != 4 {
			return fmt.Errorf("%d Running (%v): %w", len(running), err, errNotYet)
		}
		pods = watch.snapshot()
		if len(pods) != 4 {
			return fmt.Errorf("the watch saw %d pods: %w", len(pods), errNotYet)
		}
		for _, p := range pods {
			if p.ip == "" {
				return fmt.Errorf("pod %s has no IP yet: %w", p.name, errNotYet)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Oldest first: p0 and p1 came with minReplicas, p2 and p3 with the scale.
	p0, p1, p2, p3 := pods[0], pods[1], pods[2], pods[3]
	t.Logf("pods oldest first: %s %s %s %s", p0.name, p1.name, p2.name, p3.name)
	const demand = 0.5 // 2 req/s: about 10 generations in flight on each busy pod
	d.fleet.set(load{Demand: demand, Busy: []string{p2.ip, p3.ip}})
	marked := func(names ...string) func() error {
		return func() error {
			got := map[string]bool{}
			for _, p := range watch.snapshot() {
				if len(p.costs) > 0 && p.costs[len(p.costs)-1] == victimCost {
					got[p.name] = true
				}
			}
			for _, n := range names {
				if !got[n] {
					return fmt.Errorf("marked %v: %w", got, errNotYet)
				}
			}
			if len(got) != len(names) {
				return fmt.Errorf("marked %v, want %v", got, names)
			}
			return nil
		}
	}
	if err := waitFor(cpaHold, "evaluate marking the idle pods", marked(p0.name, p1.name)); err != nil {
		t.Fatal(err)
	}
	if r := d.replicas(t); r != 4 {
		t.Fatalf("replicas %d when the first marks appeared; CPA's downscaleStabilization should still hold 4", r)
	}
	// The sessions of p2 move to p1: p1 fills, p2 drains, and evaluate moves the mark from p1 to p2.
	d.fleet.set(load{Demand: demand, Busy: []string{p1.ip, p3.ip}})
	if err := waitFor(cpaHold, "evaluate moving the mark from "+p1.name+" to "+p2.name, marked(p0.name, p2.name)); err != nil {
		t.Fatal(err)
	}
	d.expectReplicas(t, cpaHold+10*tick, "scale-down once CPA's stabilization lets it", func(r int) bool { return r == 2 })
	if err := waitFor(30*time.Second, "the ReplicaSet deleting two pods", func() error {
		n := 0
		for _, p := range watch.snapshot() {
			if p.deleted {
				n++
			}
		}
		if n < 2 {
			return fmt.Errorf("%d deleted: %w", n, errNotYet)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var deleted, survivors []string
	for _, p := range watch.snapshot() {
		switch {
		case p.deleted && p.costAtDeletion != victimCost:
			t.Errorf("the ReplicaSet deleted %s, which carried deletion cost %q, not the victim's %s", p.name, p.costAtDeletion, victimCost)
		case p.deleted:
			deleted = append(deleted, p.name)
		default:
			survivors = append(survivors, p.name)
		}
	}
	sort.Strings(deleted)
	want := []string{p0.name, p2.name}
	sort.Strings(want)
	if strings.Join(deleted, ",") != strings.Join(want, ",") {
		t.Errorf("the ReplicaSet deleted %v; evaluate's victims were %v (the idle pods)", deleted, want)
	}
	if err := watch.failed(); err != nil {
		t.Fatalf("the pod watch failed, so its record may be short: %v", err)
	}
	// The survivors carry no mark: p1's was cleared when it became busy, and evaluate forgets the victims it
	// marked once they are gone.
	for _, p := range d.targetPodObjects(t) {
		if v, ok := p.Annotations[deletionCostAnnotation]; ok && p.DeletionTimestamp == nil {
			t.Errorf("surviving pod %s still carries deletion cost %q", p.Name, v)
		}
	}
	for _, p := range watch.snapshot() {
		if p.name == p1.name && (!p.marked(victimCost) || p.costs[len(p.costs)-1] != "") {
			t.Errorf("%s: deletion costs %q over time; want it marked, then cleared", p.name, p.costs)
		}
		if p.name == p3.name && p.marked(victimCost) {
			t.Errorf("%s was busy all along but was marked", p.name)
		}
	}
	if err := waitFor(5*tick, "evaluate forgetting its marks", func() error {
		if m := d.state(t).Marked; len(m) > 0 {
			return fmt.Errorf("state marks %v: %w", m, errNotYet)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	t.Logf("deleted %v (marked), survivors %v (busy); %s was marked and cleared before the scale", deleted, survivors, p1.name)
	return d
}

// eventsOnTheDeployment: evaluate's Events on the scale target, read back through the API as `kubectl describe
// deployment` shows them. A scale-up records a Normal ScaledUp Event in the HPA's words ("New size: N (from M);
// reason: ..."), from component inferscale and the CPA pod. A repeat of one Event bumps its count on the same
// object instead of creating another — here even after the recorder lost its memory: the state ConfigMap is
// overwritten twice with the same garbage, each time evaluate discards it (a StateReset Warning with the same
// message), and the second time its create answers AlreadyExists, so it reads the Event and patches its count.
func eventsOnTheDeployment(t *testing.T, e *environment) *deployment {
	d := e.deploy(t, "edge", tuning(nil))
	d.fleet.set(load{Demand: busyDemand})
	r, _ := d.expectReplicas(t, 8*tick, "busy fleet", func(r int) bool { return r > 1 })
	var up corev1.Event
	if err := waitFor(5*tick, "a ScaledUp Event", func() error {
		for _, ev := range d.deploymentEvents(t) {
			if ev.Reason == "ScaledUp" && ev.Source.Component == "inferscale" {
				up = ev
				return nil
			}
		}
		return errNotYet
	}); err != nil {
		t.Fatal(err)
	}
	msg := regexp.MustCompile(`^New size: (\d+) \(from 1\); reason: \S`)
	if m := msg.FindStringSubmatch(up.Message); up.Type != corev1.EventTypeNormal || m == nil || m[1] != strconv.Itoa(r) {
		t.Errorf("ScaledUp Event %s %q; want Normal, %q with the new size %d", up.Type, up.Message, msg, r)
	}
	if up.ReportingInstance != autoscaler || up.ReportingController != "inferscale" || up.InvolvedObject.Name != target || up.Count != 1 {
		t.Errorf("ScaledUp Event from %s/%s about %s %s, count %d; want from inferscale/%s about Deployment %s, count 1",
			up.ReportingController, up.ReportingInstance, up.InvolvedObject.Kind, up.InvolvedObject.Name, up.Count, autoscaler, target)
	}
	if out, err := d.c.kubectl("", "describe", "deployment", target, "-n", namespace); err != nil || !strings.Contains(out, "ScaledUp") {
		t.Errorf("kubectl describe deployment shows no ScaledUp Event (%v):\n%s", err, out)
	}
	t.Logf("ScaledUp: %s", up.Message)

	resets := func(want int32) func() error {
		return func() error {
			var got []corev1.Event
			for _, ev := range d.deploymentEvents(t) {
				if ev.Reason == "StateReset" {
					got = append(got, ev)
				}
			}
			if len(got) > 1 {
				return fmt.Errorf("%d StateReset Event objects, want one whose count grows", len(got))
			}
			if len(got) == 0 || got[0].Count < want {
				return fmt.Errorf("StateReset Events %+v: %w", got, errNotYet)
			}
			if got[0].Type != corev1.EventTypeWarning || got[0].Count != want {
				return fmt.Errorf("StateReset Event %s count %d, want Warning count %d", got[0].Type, got[0].Count, want)
			}
			return nil
		}
	}
	corrupt := func() {
		patch := fmt.Sprintf(`{"data":{%q:"not a state"}}`, store.ConfigMapKey)
		if _, err := d.c.kubectl("", "patch", "configmap", stateCM, "-n", namespace, "--type", "merge", "-p", patch); err != nil {
			t.Fatal(err)
		}
	}
	corrupt()
	if err := waitFor(10*tick, "a StateReset Event", resets(1)); err != nil {
		t.Fatal(err)
	}
	from := time.Now()
	corrupt()
	if err := waitFor(10*tick, "the StateReset Event's count at 2", resets(2)); err != nil {
		t.Fatal(err)
	}
	calls := d.autoscalerCalls(t)
	var gets int
	for _, c := range calls {
		if c.program() == "inferscale" && c.Resource == "events" && c.Verb == "get" && !c.At.Before(from) {
			gets++
		}
	}
	if gets == 0 {
		t.Error("the repeat after the lost memory was recorded without reading the existing Event (no get on events)")
	}
	return d
}

// advisoryMode: mode=advisory (docs/sre.md "Run it in advisory mode first"). Load that scales an active fleet
// leaves spec.replicas alone; evaluate records an AdvisoryScaleUp Event, marks no pod, and its decision lines in
// `kubectl logs` say "mode":"advisory" with the target it would have set. Then docs/sre.md's recipe on that log:
//
//	kubectl -n inference logs inferscale-vllm --timestamps > decisions.log
//	bin/simulate decisions -log decisions.log -png decisions.png
//
// whose summary reports advisory mode, target changes and no change of the current replicas.
func advisoryMode(t *testing.T, e *environment) *deployment {
	d := e.deploy(t, "edge", tuning(map[string]string{"mode": "advisory"}))
	d.fleet.set(load{Demand: busyDemand})
	from := time.Now()
	var advice corev1.Event
	if err := waitFor(10*tick, "an AdvisoryScaleUp Event", func() error {
		for _, ev := range d.deploymentEvents(t) {
			if ev.Reason == "AdvisoryScaleUp" {
				advice = ev
				return nil
			}
		}
		return errNotYet
	}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(advice.Message, "New size: ") || advice.Type != corev1.EventTypeNormal {
		t.Errorf("AdvisoryScaleUp Event %s %q", advice.Type, advice.Message)
	}
	d.heldBetween(t, 1, from, time.Now().Add(5*tick), "advisory mode under load")

	log, err := d.c.kubectl("", "-n", namespace, "logs", autoscaler, "--timestamps")
	if err != nil {
		t.Fatal(err)
	}
	lines, bad := decisionlog.Parse(strings.NewReader(log))
	if len(bad) > 0 || len(lines) == 0 {
		t.Fatalf("kubectl logs: %d decision lines, malformed %v", len(lines), bad)
	}
	would := 0
	for _, l := range lines {
		if l.Mode != decisionlog.Advisory || l.Current != 1 {
			t.Errorf("decision line in mode %q with current %d; want advisory, 1", l.Mode, l.Current)
		}
		if l.Target > l.Current {
			would++
		}
	}
	if would == 0 || !strings.Contains(log, `"mode":"advisory"`) {
		t.Errorf("no advisory decision line would have scaled up (%d lines)", len(lines))
	}
	for _, p := range d.targetPodObjects(t) {
		if v, ok := p.Annotations[deletionCostAnnotation]; ok {
			t.Errorf("advisory mode marked pod %s (deletion cost %q)", p.Name, v)
		}
	}
	if n := countCalls(d.autoscalerCalls(t), "inferscale", "patch", "pods"); n != 0 {
		t.Errorf("advisory mode patched pods %d times", n)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "decisions.log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(simulateBinary(t, e.repo), "decisions", "-log", "decisions.log", "-png", "decisions.png")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bin/simulate decisions: %v\n%s", err, out)
	}
	summary := string(out)
	t.Logf("bin/simulate decisions:\n%s", summary)
	ups := regexp.MustCompile(`scale events \(target\): \d+ \((\d+) up`).FindStringSubmatch(summary)
	if !strings.Contains(summary, "mode advisory") || ups == nil || ups[1] == "0" ||
		!strings.Contains(summary, "scale events (current replicas): 0 (0 up, 0 down)") {
		t.Errorf("the summary does not report advisory mode with target changes and the current replicas unchanged")
	}
	if fi, err := os.Stat(filepath.Join(dir, "decisions.png")); err != nil || fi.Size() == 0 {
		t.Errorf("no decisions.png: %v", err)
	}
	return d
}

// simulateBinary builds bin/simulate (the simulator CLI, `make simulate`) into a temporary folder, static and pure
// Go as the Makefile builds it.
func simulateBinary(t *testing.T, repo string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "simulate")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./sim/cmd/simulate")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building bin/simulate: %v\n%s", err, out)
	}
	return bin
}
