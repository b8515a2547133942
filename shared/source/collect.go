package source

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/inferscale/inferscale/shared/podinfo"
	"github.com/inferscale/inferscale/shared/signal"
)

// Collector turns pod objects into signal.Pods: lifecycle from the object,
// server signals from a direct scrape, GPU activity from a GPUReader.
type Collector struct {
	Direct *Direct
	// GPU is the GPU source; nil keeps whatever the server preset reports.
	GPU GPUReader
	// NoGPU drops GPU readings altogether (gpuSource=none).
	NoGPU bool
	// Timeout bounds the reads of one pod (server and GPU run in parallel).
	Timeout time.Duration
	// Parallel bounds concurrent pods in Pods (per-resource mode).
	Parallel int
}

// Pod reads one pod object. It fails only when the object itself is
// unusable (not JSON, no name); every read failure lands in the output.
func (c *Collector) Pod(ctx context.Context, raw []byte, now time.Time) (signal.Pod, error) {
	in, err := podinfo.Parse(raw)
	if err != nil {
		return signal.Pod{}, err
	}
	return c.read(ctx, in, now), nil
}

func (c *Collector) read(ctx context.Context, in *podinfo.Info, now time.Time) signal.Pod {
	pod := in.Lifecycle(now)
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	var gpu *signal.GPU
	var wg sync.WaitGroup
	if c.GPU != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gpu = c.GPU.ReadGPU(ctx, in)
		}()
	}
	if c.Direct != nil {
		c.Direct.Read(ctx, in, &pod)
	}
	wg.Wait()
	if gpu != nil {
		pod.GPU = gpu
	}
	if c.NoGPU {
		pod.GPU = nil
	}
	return sanitize(pod)
}

// sanitize keeps a pod whose readings fail the schema's checks (a server
// reporting a KV fraction of 1.5, a non-cumulative histogram) in the
// report with its lifecycle fields and the reason, so that one odd server
// never breaks the tick's output.
func sanitize(p signal.Pod) signal.Pod {
	err := (&signal.Report{Version: signal.Version, Pods: []signal.Pod{p}}).Validate()
	if err == nil {
		return p
	}
	clean := signal.Pod{
		Name: p.Name, Namespace: p.Namespace, Node: p.Node, Phase: p.Phase, Ready: p.Ready,
		Terminating: p.Terminating, CreatedAt: p.CreatedAt, StartedAt: p.StartedAt, ReadyAt: p.ReadyAt,
		StartupSeconds: p.StartupSeconds, AgeSeconds: p.AgeSeconds, ScrapeTime: p.ScrapeTime, Server: p.Server,
		Notes: p.Notes,
	}
	clean.Error = fmt.Sprintf("readings rejected: %v", err)
	return clean
}

// PodResult is one entry of Pods: a pod or why its object was unusable.
type PodResult struct {
	Pod signal.Pod
	Err error
}

// Pods reads many pod objects concurrently (at most Parallel at a time),
// returning results in input order.
func (c *Collector) Pods(ctx context.Context, raws [][]byte, now time.Time) []PodResult {
	out := make([]PodResult, len(raws))
	par := c.Parallel
	if par <= 0 {
		par = 1
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i, raw := range raws {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			p, err := c.Pod(ctx, raw, now)
			out[i] = PodResult{Pod: p, Err: err}
		}()
	}
	wg.Wait()
	return out
}
