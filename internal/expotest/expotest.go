// Package expotest holds test helpers shared by the metric packages:
// locating the read-only reference data in ../shared and building
// exposition bodies.
package expotest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/inferscale/inferscale/internal/testenv"
)

// SharedDir returns the reference-data directory (../shared relative to
// the module root); skipped when absent, failed under CI=true.
func SharedDir(t testing.TB) string {
	t.Helper()
	return testenv.SharedDir(t, filepath.Join("fixtures", "metrics"))
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
