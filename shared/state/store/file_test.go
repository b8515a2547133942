package store

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/inferscale/inferscale/internal/statetest"
)

func TestFileSavesAndRecoversFromCorruption(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.json")
	fs := File{Path: path}
	txn, err := fs.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if txn.Warning() != nil || len(txn.State().Pods) != 0 {
		t.Fatal("a missing file must give a fresh state without warning")
	}
	if err := txn.Save(ctx, statetest.Sample(t0)); err != nil {
		t.Fatal(err)
	}
	if err := txn.Save(ctx, statetest.Sample(t0)); err == nil {
		t.Error("second Save in one transaction accepted")
	}
	txn.Close()
	txn, err = fs.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(txn.State(), statetest.Sample(t0)) {
		t.Fatal("saved state not read back")
	}
	txn.Close()
	if err := os.WriteFile(path, []byte("{garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	txn, err = fs.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	if txn.Warning() == nil || len(txn.State().Recommendations) != 0 {
		t.Fatal("corrupt file must give a warning and a fresh state")
	}
	left, _ := filepath.Glob(path + ".tmp-*")
	if len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestFileLockExcludes(t *testing.T) {
	ctx := context.Background()
	fs := File{Path: filepath.Join(t.TempDir(), "state.json")}
	first, err := fs.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := fs.Begin(short); err == nil {
		t.Fatal("second transaction opened while the first holds the lock")
	}
	first.Close()
	second, err := fs.Begin(ctx)
	if err != nil {
		t.Fatalf("lock not released: %v", err)
	}
	second.Close()
}

// Defect 8: the temporary files a process killed between writing and
// renaming leaves behind are removed by the next transaction: only files
// named as Save names them, only regular files, only once a minute old.
func TestOrphanedTempFilesAreRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	old := time.Now().Add(-2 * time.Minute)
	files := map[string]bool{ // name: removed
		"state.json.tmp-123456":  true,
		"state.json.tmp-789":     false, // too recent: a Save may be under way elsewhere
		"state.json.tmp-abc":     false, // not a name Save makes
		"other.json.tmp-123":     false,
		"state.json.tmp-":        false,
		"state.json.lock.tmp-42": false,
	}
	for name, removed := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
		if removed || name != "state.json.tmp-789" {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "state.json.tmp-555"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(dir, "state.json.tmp-555"), old, old)
	txn, err := File{Path: path}.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	txn.Close()
	for name, removed := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if gone := os.IsNotExist(err); gone != removed {
			t.Errorf("%s: removed %v, want %v", name, gone, removed)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "state.json.tmp-555")); err != nil {
		t.Error("a directory named like a temporary file was removed")
	}
}

// Defects 1 and 4: a state file that is deeply nested, or far larger than
// a state can be, gives a warning and a fresh state.
func TestUnusableStateFileStartsFresh(t *testing.T) {
	for name, doc := range map[string][]byte{
		"nested":    bytes.Repeat([]byte("["), 100_000),
		"oversized": append([]byte(`{"v":1,"pods":[`), bytes.Repeat([]byte(" "), 2<<20)...),
	} {
		path := filepath.Join(t.TempDir(), "state.json")
		if err := os.WriteFile(path, doc, 0o600); err != nil {
			t.Fatal(err)
		}
		txn, err := File{Path: path}.Begin(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if txn.Warning() == nil || txn.State().LastTick != nil || len(txn.State().Pods) != 0 {
			t.Errorf("%s: warning %v, state %+v: want a warning and a fresh state", name, txn.Warning(), txn.State())
		}
		txn.Close()
	}
}
