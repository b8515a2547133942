package source

import (
	"context"

	"github.com/inferscale/inferscale/shared/podinfo"
	"github.com/inferscale/inferscale/shared/signal"
)

// GPU source names (config key gpuSource).
const (
	GPUServer       = "server"        // the server's own GPU gauge where its preset has one (Triton)
	GPUDCGMExporter = "dcgm-exporter" // dcgm-exporter on the pod's node
	GPUDCGM         = "dcgm"          // DCGM through go-dcgm (binary built with -tags dcgm)
	GPUNone         = "none"
)

// GPUReader reads a pod's GPU activity. It never fails: a failure is
// returned as a GPU with Error set, every other signal being intact.
type GPUReader interface {
	ReadGPU(ctx context.Context, in *podinfo.Info) *signal.GPU
}
