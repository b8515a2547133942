package decide

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/kube"
	"github.com/inferscale/inferscale/shared/state"
	"github.com/inferscale/inferscale/shared/state/store"
)

// tickWith runs tick i (15 s apart from runTicks' start) on the 4-pod idle
// fleet with the given settings, API and store (nil: the file in dir).
func tickWith(t *testing.T, dir string, i int, extra map[string]string, api *cluster, st store.Store) error {
	t.Helper()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC).Add(time.Duration(i) * 15 * time.Second)
	m := map[string]string{"stateFile": filepath.Join(dir, "state.json"), "configPath": filepath.Join(dir, "none.yaml"),
		"INFERSCALE_NOW": now.Format(time.RFC3339)}
	for k, v := range extra {
		m[k] = v
	}
	var out bytes.Buffer
	return Run(context.Background(), Process{Stdin: bytes.NewReader(idleInput(t, 4, 4, now, i)), Stdout: &out,
		Lookup: env(m), Log: quietLog(), api: api, store: st})
}

// N5 (issue 15): a tick whose clearing PATCHes failed dropped every mark
// from the state with no retry (also on a switch to advisory mode), so the
// pods kept -1000 for good. A failed clear stays in the state and a later
// tick clears it.
func TestAFailedClearIsRetriedOnALaterTick(t *testing.T) {
	dir := t.TempDir()
	f := &fakeCluster{patches: map[string]*string{}}
	api := &cluster{pods: f, log: quietLog()}
	outs, _ := runTicks(t, nil, api, 45, dir)
	victims := outs[len(outs)-1].Victims
	if len(victims) == 0 {
		t.Fatal("no victims marked on an idle fleet")
	}
	f.fail = true
	if err := tickWith(t, dir, 45, map[string]string{"mode": "advisory"}, api, nil); err != nil {
		t.Fatal(err)
	}
	f.fail = false
	if err := tickWith(t, dir, 46, map[string]string{"mode": "advisory"}, api, nil); err != nil {
		t.Fatal(err)
	}
	for _, v := range victims {
		if c, ok := f.patches[v]; !ok || c != nil {
			t.Errorf("pod %s still marked (%v): the failed clear was not retried", v, c)
		}
	}
}

// conflicting is a file store whose Save fails with a 409 when the state
// holds marks (another writer saved first).
type conflicting struct{ store.File }

type conflictTxn struct{ store.Txn }

func (c conflicting) Begin(ctx context.Context) (store.Txn, error) {
	t, err := c.File.Begin(ctx)
	return conflictTxn{t}, err
}

func (t conflictTxn) Save(ctx context.Context, st *state.State) error {
	if len(st.Marked) > 0 {
		return &kube.StatusError{Code: 409, Message: "Conflict"}
	}
	return t.Txn.Save(ctx, st)
}

// N5 (issue 15): a ConfigMap save failing with 409 after the victims were
// marked exited 1 with the marks left and no state knowing of them. The
// tick fails as before, but first clears the marks it set.
func TestAStateNotSavedLeavesNoMarks(t *testing.T) {
	dir := t.TempDir()
	f := &fakeCluster{patches: map[string]*string{}}
	api := &cluster{pods: f, log: quietLog()}
	st := conflicting{store.File{Path: filepath.Join(dir, "state.json")}}
	failed := 0
	for i := 0; i < 60; i++ {
		if err := tickWith(t, dir, i, nil, api, st); err != nil {
			failed++
		}
	}
	if failed == 0 {
		t.Fatal("no tick marked a victim on an idle fleet")
	}
	for pod, c := range f.patches {
		if c != nil {
			t.Errorf("pod %s keeps the mark %s of a tick whose state was not saved", pod, *c)
		}
	}
}
