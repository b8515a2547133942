package source

import (
	"context"
	"fmt"

	"github.com/inferscale/inferscale/shared/expo"
	"github.com/inferscale/inferscale/shared/podinfo"
	"github.com/inferscale/inferscale/shared/signal"
)

type dcgmField struct {
	name  string
	scale float64
}

// dcgmExporterFields lists the DCGM fields read from dcgm-exporter, in
// order of preference, with the factor that brings each to 0-1.
func dcgmExporterFields() [3]dcgmField {
	return [3]dcgmField{
		{"DCGM_FI_PROF_SM_ACTIVE", 1},
		{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", 1},
		{"DCGM_FI_DEV_GPU_UTIL", 0.01},
	}
}

// DCGMExporter reads GPU activity from dcgm-exporter on the pod's node
// (http://<hostIP>:<Port><Path>), keeping the samples whose pod and
// namespace labels name the pod (dcgm-exporter's Kubernetes mapping).
type DCGMExporter struct {
	Scraper *Scraper
	Port    int
	Path    string
}

// ReadGPU implements GPUReader.
func (d *DCGMExporter) ReadGPU(ctx context.Context, in *podinfo.Info) *signal.GPU {
	g := &signal.GPU{Source: GPUDCGMExporter}
	if !in.HostIP.IsValid() {
		g.Error = "no host IP: the pod is not scheduled yet"
		return g
	}
	u, err := URL(in.HostIP, d.Port, d.Path)
	if err != nil {
		g.Error = fmt.Sprintf("dcgm-exporter URL: %v", err)
		return g
	}
	want := expo.Wanted{}
	for _, f := range dcgmExporterFields() {
		want[f.name] = true
	}
	fams, err := d.Scraper.Fetch(ctx, u, want)
	if err != nil {
		g.Error = fmt.Sprintf("dcgm-exporter: %v", err)
		return g
	}
	return GPUFromDCGMExporter(fams, in.Name, in.Namespace)
}

// GPUFromDCGMExporter picks the pod's GPU samples from a dcgm-exporter
// exposition: DCGM_FI_PROF_SM_ACTIVE when present, else
// DCGM_FI_PROF_GR_ENGINE_ACTIVE, else DCGM_FI_DEV_GPU_UTIL (0-100 scaled to
// 0-1), averaged over the pod's GPUs.
func GPUFromDCGMExporter(fams expo.Families, pod, namespace string) *signal.GPU {
	g := &signal.GPU{Source: GPUDCGMExporter}
	want := map[string]string{"pod": pod}
	if namespace != "" {
		want["namespace"] = namespace
	}
	for _, f := range dcgmExporterFields() {
		mf := fams.Family(f.name)
		if mf == nil {
			continue
		}
		n := 0
		for _, m := range mf.GetMetric() {
			if expo.Matches(m, want) {
				n++
			}
		}
		if n == 0 {
			continue
		}
		v, ok := fams.Value(f.name, want, expo.Mean)
		if !ok {
			continue
		}
		v *= f.scale
		g.Utilization, g.Field, g.Count = signal.F(v), f.name, n
		if f.name == "DCGM_FI_PROF_SM_ACTIVE" {
			g.SMActive = signal.F(v)
		}
		return g
	}
	g.Error = fmt.Sprintf("dcgm-exporter has no GPU activity sample labelled pod=%q namespace=%q (is the Kubernetes pod mapping on?)", pod, namespace)
	return g
}
