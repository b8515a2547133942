package decide

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/cpa"
	"github.com/inferscale/inferscale/shared/state/store"
)

// N12 (issue 15): every CPA of a namespace shared the default state
// ConfigMap, so a state written for Deployment vllm was used by Deployment
// other: its tick cleared vllm's marks and decided from vllm's memory. The
// state is keyed by the target: one written for another object is not
// used (a fresh state decides, which never scales down nor marks), a
// StateReset warning says so, and it is not overwritten; one written for
// an object of the same name but another UID (deleted and created again)
// is taken over.
func TestAStateOfAnotherTargetIsNeverUsed(t *testing.T) {
	dir := t.TempDir()
	f := &fakeCluster{patches: map[string]*string{}}
	api := &cluster{pods: f, log: quietLog()}
	outs, _ := runTicks(t, nil, api, 45, dir)
	if len(outs[len(outs)-1].Victims) == 0 {
		t.Fatal("no victims marked on vllm's idle fleet")
	}
	path := filepath.Join(dir, "state.json")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC).Add(45 * 15 * time.Second)
	tickAs := func(in []byte) (alerts string, down bool) {
		t.Helper()
		f.patches = map[string]*string{}
		m := map[string]string{"stateFile": path, "configPath": filepath.Join(dir, "none.yaml"), "INFERSCALE_NOW": now.Format(time.RFC3339)}
		var out bytes.Buffer
		if err := Run(context.Background(), Process{Stdin: bytes.NewReader(in), Stdout: &out, Lookup: env(m), Log: quietLog(), api: api}); err != nil {
			t.Fatal(err)
		}
		o := decodeOutput(t, out.Bytes())
		return strings.Join(o.Alerts, "\n"), o.TargetReplicas < o.CurrentReplicas
	}
	other := bytes.Replace(idleInput(t, 4, 4, now, 45), []byte(`"name":"vllm"`), []byte(`"name":"other"`), 1)
	alerts, down := tickAs(other)
	if !strings.Contains(alerts, "belongs to Deployment inference/vllm") {
		t.Errorf("no alert naming the owner: %q", alerts)
	}
	if down {
		t.Error("other scaled down on vllm's memory")
	}
	if len(f.patches) != 0 {
		t.Errorf("a tick for other patched vllm's pods: %v", f.patches)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Error("vllm's state was overwritten by other's tick")
	}
	// The same object: used as it is (the UID was not known before).
	uid := bytes.Replace(idleInput(t, 4, 4, now, 45), []byte(`"name":"vllm"`), []byte(`"name":"vllm","uid":"u-2"`), 1)
	if alerts, _ := tickAs(uid); strings.Contains(alerts, "belongs to") {
		t.Errorf("vllm's own state refused: %q", alerts)
	}
	// Deleted and created again: another UID takes the state over, fresh.
	now = now.Add(15 * time.Second)
	again := bytes.Replace(idleInput(t, 4, 4, now, 46), []byte(`"name":"vllm"`), []byte(`"name":"vllm","uid":"u-3"`), 1)
	if alerts, _ := tickAs(again); !strings.Contains(alerts, "replaced") {
		t.Errorf("a recreated vllm: %q", alerts)
	}
	txn, err := store.File{Path: path}.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	if tg := txn.State().Target; tg == nil || tg.UID != "u-3" || tg.Name != "vllm" {
		t.Errorf("state target %+v, want vllm u-3", tg)
	}
}

func decodeOutput(t *testing.T, b []byte) cpa.EvaluateOutput {
	t.Helper()
	var o cpa.EvaluateOutput
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatalf("%v: %q", err, b)
	}
	return o
}
