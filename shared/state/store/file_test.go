package store

import (
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
