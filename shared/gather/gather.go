// Package gather is inferscale's metric stage: it reads the CPA metric
// input (a pod in per-pod mode, the scale target in per-resource mode),
// reads the inference servers' signals (scraped directly or queried from
// Prometheus), GPU activity and pod lifecycle, maps them with the server's
// preset and prints one signal.Report. A pod that cannot be read is
// recorded in the report (the run still succeeds); only a malformed input
// or configuration is an error.
package gather

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/tidwall/gjson"

	"github.com/inferscale/inferscale/shared/clock"
	"github.com/inferscale/inferscale/shared/cpa"
	"github.com/inferscale/inferscale/shared/kube"
	"github.com/inferscale/inferscale/shared/settings"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/source"
)

// PodLister lists a target's pods (the in-cluster API in production).
type PodLister interface {
	ListPods(ctx context.Context, namespace, selector string) ([][]byte, error)
}

// ScaleReader reads another scale target's scale subresource (the ratio
// guard's peer); the in-cluster API's client is one.
type ScaleReader interface {
	ReadScale(ctx context.Context, namespace, apiVersion, kind, name string) (kube.Scale, error)
}

// Process is what a metric run gets from its process.
type Process struct {
	Stdin  io.Reader
	Stdout io.Writer
	// Lookup reads the environment (os.LookupEnv).
	Lookup settings.LookupFunc
	Log    *slog.Logger
	// Lister returns the pod lister, or kube.ErrNotInCluster when there
	// is none; nil means the in-cluster API.
	Lister func(timeout time.Duration) (PodLister, error)
}

// Run is the whole metric process: read stdin, gather, print one report
// line. On error nothing is written to stdout.
func Run(ctx context.Context, p Process) error {
	b, err := cpa.ReadAll(p.Stdin, cpa.MaxInputBytes)
	if err != nil {
		return err
	}
	in, err := cpa.ParseMetricInput(b)
	if err != nil {
		return err
	}
	src, err := settings.Load(p.Lookup)
	if err != nil {
		return err
	}
	knobs, err := ReadKnobs(src)
	if err != nil {
		return err
	}
	c, err := configure(knobs)
	if err != nil {
		return err
	}
	now, err := clock.Now(func(k string) string { v, _ := p.Lookup(k); return v })
	if err != nil {
		return err
	}
	// UTC: printing a time in the local zone would load /etc/localtime.
	now = now.UTC()
	if p.Lister == nil {
		p.Lister = inClusterLister(p.Lookup)
	}
	var rep *signal.Report
	switch kind := gjson.GetBytes(in.Resource, "kind").String(); kind {
	case "", "Pod":
		rep, err = perPod(ctx, c, in.Resource, now)
	default:
		rep, err = perResource(ctx, p, c, in.Resource, now)
	}
	if err != nil {
		return err
	}
	if c.RatioPeer != "" {
		rep.Peer = readPeer(ctx, p, c, in.Resource)
	}
	out, err := rep.Encode()
	if err != nil {
		return err
	}
	if _, err := p.Stdout.Write(out); err != nil {
		return fmt.Errorf("writing stdout: %w", err)
	}
	return nil
}

func inClusterLister(lookup settings.LookupFunc) func(time.Duration) (PodLister, error) {
	return func(timeout time.Duration) (PodLister, error) {
		c, err := kube.InCluster(func(k string) string { v, _ := lookup(k); return v }, "", timeout)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// perPod reads the one pod CPA passes in per-pod mode.
func perPod(ctx context.Context, c *config, pod []byte, now time.Time) (*signal.Report, error) {
	if c.Source == sourcePrometheus {
		return nil, errors.New("config key source=prometheus works in per-resource mode only (the resource is a pod)")
	}
	p, err := c.collector().Pod(ctx, pod, now)
	if err != nil {
		return nil, fmt.Errorf("metric input resource: %w", err)
	}
	return &signal.Report{Version: signal.Version, ScrapeTime: now, Pods: []signal.Pod{p}}, nil
}

// perResource reads every pod of the scale target, or queries
// Prometheus for the fleet and lists the pods for their lifecycle only.
func perResource(ctx context.Context, p Process, c *config, target []byte, now time.Time) (*signal.Report, error) {
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
		l, err := p.Lister(c.ScrapeTimeout)
		if err != nil {
			return nil, err
		}
		lctx, cancel := context.WithTimeout(ctx, c.ScrapeTimeout)
		defer cancel()
		return l.ListPods(lctx, ns, selector)
	}
	if c.Source == sourcePrometheus {
		return prometheusFleet(ctx, p.Log, c, rep, ns, name, now, listPods)
	}
	raws, err := listPods()
	if err != nil {
		rep.Fleet = &signal.Fleet{Source: sourceDirect, Errors: []string{"pod list: " + err.Error()}}
		return rep, nil
	}
	scrapeAll(ctx, p.Log, c.collector(), rep, raws, now)
	return rep, nil
}

// readPeer reads the replicas the ratio guard's other pool asks for: the
// scale target named ratioPeer, of this pool's scale target's apiVersion
// and kind, in its namespace. Per-resource mode reads them from the
// resource; per-pod mode (one run per pod, each reading the peer) from
// the scaleTargetRef the operator sets in the CPA pod's environment, and
// the pod's namespace. A failure is the peer's error in the report
// (evaluate then applies no ratio floor), not the run's.
func readPeer(ctx context.Context, p Process, c *config, resource []byte) *signal.Peer {
	peer := &signal.Peer{Name: c.RatioPeer}
	apiVersion, kind := gjson.GetBytes(resource, "apiVersion").String(), gjson.GetBytes(resource, "kind").String()
	ns := gjson.GetBytes(resource, "metadata.namespace").String()
	if kind == "" || kind == "Pod" {
		ref, _ := p.Lookup("scaleTargetRef")
		apiVersion, kind = gjson.Get(ref, "apiVersion").String(), gjson.Get(ref, "kind").String()
		if kind == "" {
			apiVersion, kind = "apps/v1", "Deployment"
		}
	}
	s, err := func() (kube.Scale, error) {
		l, err := p.Lister(c.ScrapeTimeout)
		if err != nil {
			return kube.Scale{}, err
		}
		r, ok := l.(ScaleReader)
		if !ok {
			return kube.Scale{}, errors.New("this build's API client reads no scale subresource")
		}
		rctx, cancel := context.WithTimeout(ctx, c.ScrapeTimeout)
		defer cancel()
		return r.ReadScale(rctx, ns, apiVersion, kind, c.RatioPeer)
	}()
	if err != nil {
		peer.Error = err.Error()
		if p.Log != nil {
			p.Log.Warn("ratio guard: the other pool is unread", "ratioPeer", c.RatioPeer, "err", err)
		}
		return peer
	}
	peer.Replicas = &s.Replicas
	return peer
}

// prometheusFleet queries the fleet aggregates and adds the pods'
// lifecycle from the pod list when it is available.
func prometheusFleet(ctx context.Context, log *slog.Logger, c *config, rep *signal.Report, ns, name string, now time.Time,
	listPods func() ([][]byte, error)) (*signal.Report, error) {
	api, err := source.NewPrometheusAPI(c.prom)
	if err != nil {
		return nil, fmt.Errorf("config key prometheusURL: %w", err)
	}
	qctx, cancel := context.WithTimeout(ctx, c.ScrapeTimeout)
	defer cancel()
	prom := &source.Prometheus{API: api, Preset: c.fixed, Presets: c.presets,
		Matchers: source.RenderMatchers(c.PrometheusMatchers, ns, name), Window: c.PrometheusWindow, Quantiles: c.PrometheusQuantiles}
	rep.Fleet = prom.Fleet(qctx, now)
	raws, err := listPods()
	switch {
	case errors.Is(err, kube.ErrNotInCluster):
		log.Debug("not in a cluster; fleet without pod lifecycle")
	case err != nil:
		rep.Fleet.Errors = append(rep.Fleet.Errors, "pod list: "+err.Error())
	default:
		lifecycleOnly(log, rep, raws, now)
	}
	sanitizeFleet(rep.Fleet)
	return rep, nil
}

// scrapeAll scrapes every pod concurrently and appends them to rep; pod
// items that are not usable objects are logged and left out.
func scrapeAll(ctx context.Context, log *slog.Logger, c *source.Collector, rep *signal.Report, raws [][]byte, now time.Time) {
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
func lifecycleOnly(log *slog.Logger, rep *signal.Report, raws [][]byte, now time.Time) {
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
