//go:build !dcgm

package source_test

import (
	"context"
	"strings"
	"testing"

	"github.com/inferscale/inferscale/shared/podinfo"
	"github.com/inferscale/inferscale/shared/source"
)

func TestDCGMStubSaysWhy(t *testing.T) {
	if source.DCGMAvailable {
		t.Fatal("pure-Go build claims DCGM support")
	}
	in, _ := podinfo.Parse([]byte(`{"metadata":{"name":"p"}}`))
	g := (&source.DCGM{}).ReadGPU(context.Background(), in)
	if g.Utilization != nil || !strings.Contains(g.Error, "metric-dcgm") {
		t.Errorf("stub = %+v", g)
	}
}
