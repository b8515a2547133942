package decide

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/cpa"
	"github.com/inferscale/inferscale/shared/decisionlog"
	"github.com/inferscale/inferscale/shared/kube"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state/store"
)

// fakeCluster records what evaluate asks of the API.
type fakeCluster struct {
	patches map[string]*string // pod -> last cost written (nil: removed)
	events  []kube.Event
	fail    bool
}

func (f *fakeCluster) PatchPodAnnotations(_ context.Context, ns, pod string, ann map[string]*string) error {
	if f.fail {
		return errors.New("apiserver unavailable")
	}
	if ns != "inference" {
		return fmt.Errorf("pod %s patched in namespace %q", pod, ns)
	}
	f.patches[pod] = ann[kube.DeletionCostAnnotation]
	return nil
}

func (f *fakeCluster) Record(_ context.Context, obj kube.ObjectRef, ev kube.Event, _ time.Time, mem *kube.EventMemory) (kube.RecordResult, error) {
	if f.fail {
		return kube.RecordResult{}, errors.New("apiserver unavailable")
	}
	if obj.Kind != "Deployment" || obj.Name != "vllm" || obj.Namespace != "inference" {
		return kube.RecordResult{}, fmt.Errorf("event on %+v", obj)
	}
	f.events = append(f.events, ev)
	if mem.Logged == nil {
		mem.Logged = map[string]*kube.LoggedEvent{}
	}
	mem.Logged[ev.Reason] = &kube.LoggedEvent{Count: 1}
	return kube.RecordResult{Action: kube.ActionCreated}, nil
}

// idleInput is CPA's evaluate stdin for n ready, nearly idle pods at now:
// the load of pod i is i running requests, counters growing slowly.
func idleInput(t *testing.T, n, replicas int, now time.Time, tick int) []byte {
	t.Helper()
	type metric struct {
		Resource string `json:"resource"`
		Value    string `json:"value"`
	}
	var ms []metric
	created := now.Add(-2 * time.Hour)
	ready := created.Add(70 * time.Second)
	for i := 0; i < n; i++ {
		total := float64(10*tick + i)
		h := &signal.Histogram{Buckets: []signal.Bucket{{UpperBound: 0.5, Count: total}, {UpperBound: 2.5, Count: total}}, Count: total, Sum: total * 0.1}
		p := signal.Pod{Name: fmt.Sprintf("vllm-%d", i), Namespace: "inference", Phase: "Running", Ready: true,
			CreatedAt: &created, ReadyAt: &ready, StartupSeconds: signal.F(70), ScrapeTime: now, Server: "vllm",
			Waiting: signal.F(0), Running: signal.F(float64(i)), KVCacheUsage: signal.F(0.01 * float64(i)),
			RequestsTotal: signal.F(total), TTFT: h, QueueTime: h}
		b, err := (&signal.Report{Version: signal.Version, ScrapeTime: now, Pods: []signal.Pod{p}}).Encode()
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, metric{p.Name, string(b)})
	}
	b, err := json.Marshal(map[string]any{"metrics": ms, "runType": "scaler", "resource": map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "vllm", "namespace": "inference"},
		"spec": map[string]any{"replicas": replicas}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runTicks runs evaluate for ticks 15 s apart on a 4-pod idle fleet and
// returns the outputs and the stderr of the last one.
func runTicks(t *testing.T, extra map[string]string, api *cluster, ticks int, dir string) ([]cpa.EvaluateOutput, string) {
	t.Helper()
	var outs []cpa.EvaluateOutput
	var stderr bytes.Buffer
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i := 0; i < ticks; i++ {
		now := t0.Add(time.Duration(i) * 15 * time.Second)
		m := map[string]string{"stateFile": filepath.Join(dir, "state.json"), "configPath": filepath.Join(dir, "none.yaml"),
			"INFERSCALE_NOW": now.Format(time.RFC3339)}
		for k, v := range extra {
			m[k] = v
		}
		var out bytes.Buffer
		stderr.Reset()
		if err := Run(context.Background(), Process{Stdin: bytes.NewReader(idleInput(t, 4, 4, now, i)), Stdout: &out, Stderr: &stderr,
			Lookup: env(m), Log: quietLog(), api: api}); err != nil {
			t.Fatalf("tick %d: %v", i, err)
		}
		var o cpa.EvaluateOutput
		if err := json.Unmarshal(out.Bytes(), &o); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, o)
	}
	return outs, stderr.String()
}

func TestScaleDownMarksTheIdlestPodsAndRecordsAnEvent(t *testing.T) {
	dir := t.TempDir()
	f := &fakeCluster{patches: map[string]*string{}}
	outs, stderr := runTicks(t, nil, &cluster{pods: f, events: f, log: quietLog()}, 45, dir)
	var down *cpa.EvaluateOutput
	for i := range outs {
		if outs[i].TargetReplicas < 4 {
			down = &outs[i]
			break
		}
	}
	if down == nil {
		t.Fatalf("an idle fleet of 4 never scaled down: last reasons %q", outs[len(outs)-1].Reasons)
	}
	if len(down.Victims) != int(4-down.TargetReplicas) || down.Victims[0] != "vllm-0" {
		t.Fatalf("victims %v for 4 -> %d: want the idlest pods first (vllm-0 runs nothing)", down.Victims, down.TargetReplicas)
	}
	t.Logf("scaled 4 -> %d, victims %v, %d events", down.TargetReplicas, down.Victims, len(f.events))
	for _, v := range down.Victims {
		if c := f.patches[v]; c == nil || *c != "-1000" {
			t.Errorf("victim %s: cost %v, want -1000", v, c)
		}
	}
	var scaled bool
	for _, ev := range f.events {
		scaled = scaled || ev.Reason == kube.ReasonScaledDown && ev.Type == kube.EventNormal && strings.Contains(ev.Message, "New size")
	}
	if !scaled {
		t.Errorf("no ScaledDown event: %+v", f.events)
	}
	lines, errs := decisionlog.Parse(strings.NewReader(stderr))
	if len(lines) != 1 || len(errs) != 0 || lines[0].Mode != decisionlog.Active || lines[0].Target != int(outs[len(outs)-1].TargetReplicas) {
		t.Errorf("last tick's stderr: %d lines, errors %v: %q", len(lines), errs, stderr)
	}
	st, err := store.File{Path: filepath.Join(dir, "state.json")}.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if len(st.State().Events) == 0 {
		t.Error("the event recorder's memory was not kept in the state")
	}
}

func TestAdvisoryModeDecidesButLeavesTheReplicasAlone(t *testing.T) {
	dir := t.TempDir()
	f := &fakeCluster{patches: map[string]*string{}}
	outs, stderr := runTicks(t, map[string]string{"mode": "advisory"}, &cluster{pods: f, events: f, log: quietLog()}, 45, dir)
	would := false
	for _, o := range outs {
		if o.TargetReplicas != 4 {
			t.Fatalf("advisory mode returned %d, want the current 4", o.TargetReplicas)
		}
		var d struct {
			Target int `json:"target"`
		}
		b, _ := json.Marshal(o.Decision)
		_ = json.Unmarshal(b, &d)
		would = would || d.Target < 4
		// The output says it is advice: its mode, what it would have
		// asked for, and every reason marked.
		if o.Mode != decisionlog.Advisory || o.AdvisedReplicas == nil || int(*o.AdvisedReplicas) != d.Target {
			t.Fatalf("advisory output not marked as advice: mode %q advised %v, decided %d", o.Mode, o.AdvisedReplicas, d.Target)
		}
		for _, r := range o.Reasons {
			if !strings.HasPrefix(r, AdvicePrefix) {
				t.Fatalf("advisory reason not marked as advice: %q", r)
			}
		}
	}
	if active, _ := runTicks(t, nil, &cluster{pods: &fakeCluster{patches: map[string]*string{}}, log: quietLog()}, 1, t.TempDir()); active[0].Mode != decisionlog.Active || active[0].AdvisedReplicas != nil {
		t.Errorf("active output: mode %q advised %v", active[0].Mode, active[0].AdvisedReplicas)
	}
	if !would {
		t.Fatal("the advisory decisions never wanted fewer pods on an idle fleet")
	}
	if len(f.patches) != 0 {
		t.Errorf("advisory mode marked pods: %v", f.patches)
	}
	var advised bool
	for _, ev := range f.events {
		advised = advised || ev.Reason == ReasonAdvisoryScaleDown
		if ev.Reason == kube.ReasonScaledDown {
			t.Errorf("advisory mode recorded %s", ev.Reason)
		}
	}
	if !advised {
		t.Errorf("no AdvisoryScaleDown event: %+v", f.events)
	}
	if lines, _ := decisionlog.Parse(strings.NewReader(stderr)); len(lines) != 1 || lines[0].Mode != decisionlog.Advisory {
		t.Errorf("stderr line: %q", stderr)
	}
	txn, err := store.File{Path: filepath.Join(dir, "state.json")}.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	if h := txn.State().Advisory; len(h) != 45 || h[len(h)-1].Current != 4 {
		t.Errorf("advisory history %d ticks, want 45 with current 4", len(h))
	}
}

func TestAClusterThatFailsNeverFailsTheTick(t *testing.T) {
	dir := t.TempDir()
	f := &fakeCluster{patches: map[string]*string{}, fail: true}
	outs, _ := runTicks(t, nil, &cluster{pods: f, events: f, log: quietLog()}, 45, dir)
	if last := outs[len(outs)-1]; last.TargetReplicas >= 4 {
		t.Fatalf("with the API failing, the decision itself changed: %+v", last)
	}
}

func TestDryRunTouchesNothingInTheCluster(t *testing.T) {
	f := &fakeCluster{patches: map[string]*string{}}
	var out bytes.Buffer
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	in := bytes.Replace(idleInput(t, 4, 6, now, 1), []byte(`"scaler"`), []byte(`"api_dry_run"`), 1)
	dir := t.TempDir()
	m := map[string]string{"stateFile": filepath.Join(dir, "s.json"), "configPath": filepath.Join(dir, "none.yaml"), "INFERSCALE_NOW": now.Format(time.RFC3339)}
	if err := Run(context.Background(), Process{Stdin: bytes.NewReader(in), Stdout: &out, Lookup: env(m), Log: quietLog(),
		api: &cluster{pods: f, events: f, log: quietLog()}}); err != nil {
		t.Fatal(err)
	}
	if len(f.patches) != 0 || len(f.events) != 0 {
		t.Errorf("dry run acted: patches %v events %v", f.patches, f.events)
	}
}

// TestMarksAreClearedWhenMarkingStops: a switch to advisory mode (or
// deletionCost off) removes the marks the last scale-down left, so no pod
// keeps a stale -1000.
func TestMarksAreClearedWhenMarkingStops(t *testing.T) {
	dir := t.TempDir()
	f := &fakeCluster{patches: map[string]*string{}}
	api := &cluster{pods: f, events: f, log: quietLog()}
	outs, _ := runTicks(t, nil, api, 45, dir)
	victims := outs[len(outs)-1].Victims
	if len(victims) == 0 {
		t.Fatal("no victims marked on an idle fleet")
	}
	// One more tick, 15 s later, in advisory mode.
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC).Add(45 * 15 * time.Second)
	m := map[string]string{"stateFile": filepath.Join(dir, "state.json"), "configPath": filepath.Join(dir, "none.yaml"),
		"INFERSCALE_NOW": now.Format(time.RFC3339), "mode": "advisory"}
	var out bytes.Buffer
	if err := Run(context.Background(), Process{Stdin: bytes.NewReader(idleInput(t, 4, 4, now, 45)), Stdout: &out,
		Lookup: env(m), Log: quietLog(), api: api}); err != nil {
		t.Fatal(err)
	}
	for _, v := range victims {
		if c, ok := f.patches[v]; !ok || c != nil {
			t.Errorf("pod %s still marked (%v) after the switch to advisory mode", v, c)
		}
	}
}
