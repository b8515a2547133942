package workload

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferscale/inferscale/internal/testenv"
)

// sharedDir returns ../shared, skipping the test when its traces are absent
// (failing under CI=true).
func sharedDir(t testing.TB) string {
	t.Helper()
	return testenv.SharedDir(t, "traces")
}

func tracePath(t testing.TB, rel string) string {
	return filepath.Join(sharedDir(t), "traces", rel)
}

// drain reads src to the end, failing the test on an error, and closes it.
func drain(t testing.TB, src Source) []Request {
	t.Helper()
	out, err := All(src)
	if err != nil {
		t.Fatalf("after %d requests: %v", len(out), err)
	}
	return out
}

func writeTemp(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantErr checks err is a malformed-input error whose text contains every
// fragment (typically "file:line").
func wantErr(t *testing.T, err error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", fragments)
	}
	if !errors.Is(err, ErrMalformed) {
		t.Errorf("error %q does not wrap ErrMalformed", err)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not contain %q", err, f)
		}
	}
}

func checkOrdered(t testing.TB, reqs []Request) {
	t.Helper()
	for i := 1; i < len(reqs); i++ {
		if reqs[i].Arrival < reqs[i-1].Arrival {
			t.Fatalf("request %d at %v before request %d at %v", i, reqs[i].Arrival, i-1, reqs[i-1].Arrival)
		}
	}
}
