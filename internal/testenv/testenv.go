// Package testenv locates the module root and the read-only reference data
// (../shared) for tests, and applies the project's rule for missing data:
// skip with a clear message on a user's fresh clone, fail when CI=true.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ModuleRoot walks up from the test's directory to the folder holding go.mod.
func ModuleRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatalf("getwd: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// SkipUnlessCI skips the test with the reason, or fails it when CI=true,
// where everything a test needs must be present.
func SkipUnlessCI(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s (CI=true: required)", msg)
	}
	tb.Skip(msg + "; skipping")
}

// SharedDir returns ../shared relative to the module root after checking
// that sub (e.g. "traces" or "fixtures/metrics") exists in it.
func SharedDir(tb testing.TB, sub string) string {
	tb.Helper()
	shared := filepath.Join(filepath.Dir(ModuleRoot(tb)), "shared")
	if _, err := os.Stat(filepath.Join(shared, sub)); err != nil {
		SkipUnlessCI(tb, "reference data %s is absent", filepath.Join(shared, sub))
	}
	return shared
}

// BuildBinaries compiles metric and evaluate (static, pure Go) into a
// temporary directory (from the build cache when nothing changed) and
// returns it.
func BuildBinaries(tb testing.TB) string {
	tb.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		SkipUnlessCI(tb, "go toolchain not on PATH (%v); cannot build bin/metric and bin/evaluate", err)
	}
	dir := tb.TempDir()
	cmd := exec.Command(gobin, "build", "-o", dir+string(os.PathSeparator), "./metric", "./evaluate")
	cmd.Dir = ModuleRoot(tb)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("building the binaries: %v\n%s", err, out)
	}
	return dir
}

// ForbidDeps fails the test for each package that pkg (a `go list`
// pattern, from the module root) links whose import path is one of
// forbidden or lies under one.
func ForbidDeps(tb testing.TB, pkg string, forbidden ...string) {
	tb.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		SkipUnlessCI(tb, "go toolchain not on PATH (%v)", err)
	}
	cmd := exec.Command(gobin, "list", "-deps", pkg)
	cmd.Dir = ModuleRoot(tb)
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		tb.Fatalf("go list -deps %s: %v\n%s", pkg, err, exit.Stderr)
	}
	if err != nil {
		tb.Fatalf("go list -deps %s: %v", pkg, err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				tb.Errorf("%s links %s", pkg, dep)
			}
		}
	}
}
