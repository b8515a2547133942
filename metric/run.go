package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/tidwall/gjson"

	"github.com/inferscale/inferscale/shared/clock"
	"github.com/inferscale/inferscale/shared/config"
	"github.com/inferscale/inferscale/shared/cpa"
	"github.com/inferscale/inferscale/shared/kube"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/source"
)

// podLister lists a target's pods (the in-cluster API in production).
type podLister interface {
	ListPods(ctx context.Context, namespace, selector string) ([][]byte, error)
}

// env is what run needs from the process: stdin aside, settings and the
// cluster connection (replaced in tests and benchmarks).
type env struct {
	lookup config.LookupFunc
	// lister returns the pod lister; kube.ErrNotInCluster when there is none.
	lister func(timeout time.Duration) (podLister, error)
}

func run(ctx context.Context, stdin io.Reader, lookup config.LookupFunc, log *slog.Logger) ([]byte, error) {
	return env{lookup: lookup, lister: inClusterLister}.run(ctx, stdin, log)
}

func inClusterLister(timeout time.Duration) (podLister, error) {
	c, err := kube.InCluster(os.Getenv, "", timeout)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (e env) run(ctx context.Context, stdin io.Reader, log *slog.Logger) ([]byte, error) {
	b, err := cpa.ReadAll(stdin, cpa.MaxInputBytes)
	if err != nil {
		return nil, err
	}
	in, err := cpa.ParseMetricInput(b)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(e.lookup)
	if err != nil {
		return nil, err
	}
	s, err := loadSettings(cfg)
	if err != nil {
		return nil, err
	}
	now, err := clock.Now(func(k string) string { v, _ := e.lookup(k); return v })
	if err != nil {
		return nil, err
	}
	// UTC: printing a time in the local zone would load /etc/localtime.
	now = now.UTC()
	var rep *signal.Report
	switch kind := gjson.GetBytes(in.Resource, "kind").String(); kind {
	case "", "Pod":
		rep, err = e.perPod(ctx, s, in.Resource, now)
	default:
		rep, err = e.perResource(ctx, s, in.Resource, now, log)
	}
	if err != nil {
		return nil, err
	}
	return rep.Encode()
}

func (s *settings) collector() *source.Collector {
	scraper := source.NewScraper(s.timeout, s.maxBytes, s.concurrency)
	return &source.Collector{
		Direct: &source.Direct{Scraper: scraper, Port: s.port, PortName: s.portName, Path: s.path,
			Preset: s.fixed, Presets: s.presets},
		GPU:      s.gpuReader(scraper),
		NoGPU:    s.gpuSource == source.GPUNone,
		Timeout:  s.timeout,
		Parallel: s.concurrency,
	}
}

func (e env) perPod(ctx context.Context, s *settings, pod []byte, now time.Time) (*signal.Report, error) {
	if s.source == sourcePrometheus {
		return nil, errors.New("config key source=prometheus works in per-resource mode only (the resource is a pod)")
	}
	p, err := s.collector().Pod(ctx, pod, now)
	if err != nil {
		return nil, fmt.Errorf("metric input resource: %w", err)
	}
	return &signal.Report{Version: signal.Version, ScrapeTime: now, Pods: []signal.Pod{p}}, nil
}

func (e env) perResource(ctx context.Context, s *settings, target []byte, now time.Time, log *slog.Logger) (*signal.Report, error) {
	name := gjson.GetBytes(target, "metadata.name").String()
	ns := gjson.GetBytes(target, "metadata.namespace").String()
	if name == "" {
		return nil, errors.New("metric input resource: scale target has no metadata.name")
	}
	rep := &signal.Report{Version: signal.Version, ScrapeTime: now}
	selector, selErr := kube.SelectorFromTarget(target)
	listPods := func() ([][]byte, error) {
		if selErr != nil {
			return nil, selErr
		}
		l, err := e.lister(s.timeout)
		if err != nil {
			return nil, err
		}
		lctx, cancel := context.WithTimeout(ctx, s.timeout)
		defer cancel()
		return l.ListPods(lctx, ns, selector)
	}
	if s.source == sourcePrometheus {
		api, err := source.NewPrometheusAPI(s.prom)
		if err != nil {
			return nil, fmt.Errorf("config key %s: %w", keyPromURL, err)
		}
		qctx, cancel := context.WithTimeout(ctx, s.timeout)
		defer cancel()
		prom := &source.Prometheus{API: api, Preset: s.fixed, Presets: s.presets,
			Matchers: source.RenderMatchers(s.promMatchers, ns, name), Window: s.promWindow, Quantiles: s.promQ}
		rep.Fleet = prom.Fleet(qctx, now)
		raws, err := listPods()
		switch {
		case errors.Is(err, kube.ErrNotInCluster):
			log.Debug("not in a cluster; fleet without pod lifecycle")
		case err != nil:
			rep.Fleet.Errors = append(rep.Fleet.Errors, "pod list: "+err.Error())
		default:
			lifecycleOnly(rep, raws, now, log)
		}
		sanitizeFleet(rep.Fleet)
		return rep, nil
	}
	raws, err := listPods()
	if err != nil {
		rep.Fleet = &signal.Fleet{Source: sourceDirect, Errors: []string{"pod list: " + err.Error()}}
		return rep, nil
	}
	gather(ctx, s.collector(), rep, raws, now, log)
	return rep, nil
}

// gather scrapes every pod concurrently and appends them to rep; pod items
// that are not usable objects are logged and left out.
func gather(ctx context.Context, c *source.Collector, rep *signal.Report, raws [][]byte, now time.Time, log *slog.Logger) {
	for i, r := range c.Pods(ctx, raws, now) {
		if r.Err != nil {
			log.Warn("skipping pod list item", "index", i, "err", r.Err)
			continue
		}
		rep.Pods = append(rep.Pods, r.Pod)
	}
	if len(rep.Pods) == 0 {
		zero := 0
		rep.Fleet = &signal.Fleet{Source: sourceDirect, ReadyPods: &zero, StartingPods: &zero}
	}
}

// lifecycleOnly adds the pods' lifecycle fields (no scrape) and the
// ready/starting counts to a Prometheus report.
func lifecycleOnly(rep *signal.Report, raws [][]byte, now time.Time, log *slog.Logger) {
	c := &source.Collector{}
	ready, starting := 0, 0
	for i, r := range c.Pods(context.Background(), raws, now) {
		if r.Err != nil {
			log.Warn("skipping pod list item", "index", i, "err", r.Err)
			continue
		}
		switch {
		case r.Pod.Terminating:
		case r.Pod.Ready:
			ready++
		default:
			starting++
		}
		rep.Pods = append(rep.Pods, r.Pod)
	}
	rep.Fleet.ReadyPods, rep.Fleet.StartingPods = &ready, &starting
}

// sanitizeFleet drops a fleet's readings when they fail the schema, keeping
// the reason, so the report still encodes.
func sanitizeFleet(f *signal.Fleet) {
	err := (&signal.Report{Version: signal.Version, Fleet: f}).Validate()
	if err == nil {
		return
	}
	*f = signal.Fleet{Source: f.Source, ReadyPods: f.ReadyPods, StartingPods: f.StartingPods,
		WindowSeconds: f.WindowSeconds, Errors: append(f.Errors, "readings rejected: "+err.Error())}
}
