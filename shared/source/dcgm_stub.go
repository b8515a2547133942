//go:build !dcgm

package source

import (
	"context"

	"github.com/inferscale/inferscale/shared/podinfo"
	"github.com/inferscale/inferscale/shared/signal"
)

// DCGMAvailable reports whether this build can talk to DCGM.
const DCGMAvailable = false

// DCGM is the stand-in of builds without the dcgm tag (the default, pure
// Go, static metric binary): it reports that DCGM needs bin/metric-dcgm.
type DCGM struct {
	Address string
	GPUs    []uint
}

// ReadGPU implements GPUReader.
func (d *DCGM) ReadGPU(context.Context, *podinfo.Info) *signal.GPU {
	return &signal.GPU{Source: GPUDCGM, Error: "this metric binary was built without DCGM support; use bin/metric-dcgm (go build -tags dcgm, glibc image) or gpuSource=dcgm-exporter"}
}
