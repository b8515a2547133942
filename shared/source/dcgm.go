//go:build dcgm

package source

import (
	"context"
	"fmt"

	"github.com/NVIDIA/go-dcgm/pkg/dcgm"

	"github.com/inferscale/inferscale/shared/podinfo"
	"github.com/inferscale/inferscale/shared/signal"
)

// DCGMAvailable reports whether this build can talk to DCGM.
const DCGMAvailable = true

// DCGM reads GPU utilisation through go-dcgm: an embedded host engine, or
// a standalone nv-hostengine at Address. libdcgm.so.4 is loaded at run
// time; where it is absent ReadGPU reports why and nothing else fails.
type DCGM struct {
	// Address of a standalone nv-hostengine (host:port or a unix socket
	// path); empty starts an embedded engine.
	Address string
	// GPUs restricts the reading to these DCGM GPU ids; empty means all.
	GPUs []uint
}

// ReadGPU implements GPUReader. The pod is not used: on an edge node the
// pod owns the node's GPUs (or the configured subset).
func (d *DCGM) ReadGPU(ctx context.Context, _ *podinfo.Info) *signal.GPU {
	g := &signal.GPU{Source: GPUDCGM, Field: "DCGM_FI_DEV_GPU_UTIL"}
	type result struct {
		util  float64
		count int
		err   error
	}
	done := make(chan result, 1)
	go func() {
		u, n, err := d.read()
		done <- result{u, n, err}
	}()
	select {
	case <-ctx.Done():
		g.Error = fmt.Sprintf("dcgm: %v", ctx.Err())
	case r := <-done:
		if r.err != nil {
			g.Error = fmt.Sprintf("dcgm: %v", r.err)
			break
		}
		g.Utilization, g.Count = signal.F(r.util), r.count
	}
	return g
}

func (d *DCGM) read() (util float64, count int, err error) {
	var cleanup func()
	if d.Address == "" {
		cleanup, err = dcgm.Init(dcgm.Embedded)
	} else {
		cleanup, err = dcgm.Init(dcgm.Standalone, d.Address, "0")
	}
	if err != nil {
		return 0, 0, fmt.Errorf("init: %w", err)
	}
	defer cleanup()
	ids := d.GPUs
	if len(ids) == 0 {
		if ids, err = dcgm.GetSupportedDevices(); err != nil {
			return 0, 0, fmt.Errorf("listing GPUs: %w", err)
		}
	}
	if len(ids) == 0 {
		return 0, 0, fmt.Errorf("no supported GPU")
	}
	sum := 0.0
	for _, id := range ids {
		st, err := dcgm.GetDeviceStatus(id)
		if err != nil {
			return 0, 0, fmt.Errorf("GPU %d status: %w", id, err)
		}
		sum += float64(st.Utilization.GPU) / 100
	}
	return sum / float64(len(ids)), len(ids), nil
}
