// Package expotest holds test helpers shared by the metric packages:
// locating the read-only reference data in ../shared and building
// exposition bodies.
package expotest

import (
	"os"
	"path/filepath"
	"testing"
)

// SharedDir returns the reference-data directory, ../shared relative to the
// module root (found by walking up to go.mod). When it is absent the test
// is skipped, unless CI=true, where it fails.
func SharedDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("getwd: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod above the test directory")
		}
		dir = parent
	}
	shared := filepath.Join(filepath.Dir(dir), "shared")
	if _, err := os.Stat(filepath.Join(shared, "fixtures", "metrics")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("reference data %s is missing (CI=true): %v", shared, err)
		}
		t.Skipf("reference data %s is absent; skipping", shared)
	}
	return shared
}

// Fixture reads ../shared/fixtures/metrics/name.
func Fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(SharedDir(t), "fixtures", "metrics", name))
	if err != nil {
		t.Fatalf("reading fixture: %v", err)
	}
	return b
}
