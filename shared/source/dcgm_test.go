//go:build dcgm

package source_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/podinfo"
	"github.com/inferscale/inferscale/shared/source"
)

// libdcgmPresent reports whether libdcgm.so.4 is installed where the
// dynamic loader looks by default.
func libdcgmPresent() bool {
	for _, d := range []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib", "/usr/lib/aarch64-linux-gnu"} {
		if _, err := os.Stat(filepath.Join(d, "libdcgm.so.4")); err == nil {
			return true
		}
	}
	return false
}

func TestDCGMGracefulAbsence(t *testing.T) {
	if !source.DCGMAvailable {
		t.Fatal("built with -tags dcgm but DCGMAvailable is false")
	}
	if libdcgmPresent() {
		t.Skip("libdcgm.so.4 is installed here; this test covers its absence")
	}
	in, err := podinfo.Parse([]byte(`{"metadata":{"name":"p"}}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, d := range []*source.DCGM{{}, {Address: "127.0.0.1:5555"}} {
		g := (d).ReadGPU(ctx, in)
		if g.Source != "dcgm" || g.Utilization != nil || !strings.Contains(g.Error, "libdcgm.so.4") {
			t.Errorf("dcgm %q = %+v, want a libdcgm.so.4 error", d.Address, g)
		}
	}
}
