package source

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscale/inferscale/shared/preset"
	"github.com/inferscale/inferscale/shared/signal"
)

// Fleet runs the queries. Failed queries are listed in Fleet.Errors and
// leave their fields nil; the function itself does not fail.
func (p *Prometheus) Fleet(ctx context.Context, now time.Time) *signal.Fleet {
	f := &signal.Fleet{Source: "prometheus", WindowSeconds: p.Window.Seconds()}
	fq, err := p.fleetQueries(ctx, now)
	if err != nil {
		f.Errors = append(f.Errors, err.Error())
		return f
	}
	// Queries are collected first and run concurrently (at most
	// maxConcurrentQueries at a time) so that the round fits scrapeTimeout.
	jobs := fq.gauges(f, nil)
	jobs = fq.histograms(f, jobs)
	jobs = fq.arrivals(f, jobs)
	p.run(ctx, now, jobs)
	for _, j := range jobs {
		switch {
		case j.err != nil:
			f.Errors = append(f.Errors, fmt.Sprintf("%s: %v", j.label, j.err))
		case j.val != nil:
			j.set(*j.val * j.scale)
		}
	}
	return f
}

// fleetQueries is what one Fleet round queries: the preset's families that
// have series under the matchers, over the rate window.
type fleetQueries struct {
	pr        *preset.Preset
	present   map[string]bool
	matchers  string
	window    string
	quantiles []float64
}

// fleetQueries finds the families with series and the preset that reads
// them (the configured one, or the one they match).
func (p *Prometheus) fleetQueries(ctx context.Context, now time.Time) (fleetQueries, error) {
	present, err := p.presentFamilies(ctx, now)
	if err != nil {
		return fleetQueries{}, err
	}
	pr := p.Preset
	if pr == nil {
		if pr, err = preset.Detect(p.Presets, func(n string) bool { return present[n] }); err != nil {
			return fleetQueries{}, fmt.Errorf("%w (no series match {%s})", err, p.Matchers)
		}
	} else if !anyMapped(pr, present) {
		// A fleet with no reading must say why, or it reads as an idle one.
		return fleetQueries{}, fmt.Errorf("no series of preset %s's families match {%s}", pr.Name, p.Matchers)
	}
	return fleetQueries{pr: pr, present: present, matchers: p.Matchers,
		window: model.Duration(p.Window).String(), quantiles: p.quantiles()}, nil
}

// fam is the first of the families the preset reads sig from that has
// series, and how it reads it.
func (q fleetQueries) fam(sig string) (string, preset.Reading, bool) {
	r, ok := q.pr.Signals[sig]
	if !ok {
		return "", r, false
	}
	for _, n := range r.Families {
		if q.present[n] {
			return n, r, true
		}
	}
	return "", r, false
}

// sel is the series selector of family name under the matchers and the
// reading's labels.
func (q fleetQueries) sel(name string, r preset.Reading) string {
	parts := []string{}
	if strings.TrimSpace(q.matchers) != "" {
		parts = append(parts, strings.TrimSuffix(strings.TrimSpace(q.matchers), ","))
	}
	keys := make([]string, 0, len(r.Labels))
	for k := range r.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+"="+strconv.Quote(r.Labels[k]))
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

func job(label, q string, scale float64, set func(float64)) queryJob {
	return queryJob{label: label, q: q, scale: scale, set: set}
}

// gauges are the queries of the fleet's gauges: waiting (with its
// staleness and the pods serving), running, KV cache and GPU utilisation.
func (q fleetQueries) gauges(f *signal.Fleet, jobs []queryJob) []queryJob {
	if n, r, ok := q.fam(preset.Waiting); ok {
		jobs = append(jobs,
			job("waiting", "sum("+q.sel(n, r)+")", r.Factor(), func(v float64) { f.Waiting = signal.F(v) }),
			job("staleness", "time() - max(timestamp("+q.sel(n, r)+"))", 1, func(v float64) { f.StalenessSeconds = signal.F(v) }),
			job("servingPods", "count("+q.sel(n, r)+")", 1, func(v float64) {
				if v >= 0 && v <= signal.MaxFleetPods {
					n := int(v)
					f.ServingPods = &n
				}
			}))
	}
	if n, r, ok := q.fam(preset.Running); ok {
		jobs = append(jobs, job("running", "sum("+q.sel(n, r)+")", r.Factor(), func(v float64) { f.Running = signal.F(v) }))
	}
	if n, r, ok := q.fam(preset.KVCacheUsage); ok {
		jobs = append(jobs,
			job("kvCacheMean", "avg("+q.sel(n, r)+")", r.Factor(), func(v float64) { f.KVCacheMean = signal.F(v) }),
			job("kvCacheMax", "max("+q.sel(n, r)+")", r.Factor(), func(v float64) { f.KVCacheMax = signal.F(v) }))
	}
	if n, r, ok := q.fam(preset.GPUUtilization); ok {
		jobs = append(jobs, job("gpuUtilMean", "avg("+q.sel(n, r)+")", r.Factor(), func(v float64) { f.GPUUtilMean = signal.F(v) }))
	}
	return jobs
}

// histograms are the latency quantiles over the window (TTFT with the
// requests they rest on, end-to-end, inter-token).
func (q fleetQueries) histograms(f *signal.Fleet, jobs []queryJob) []queryJob {
	jobs = q.quantileJobs("ttft", preset.TTFT, &f.TTFTQuantiles, jobs)
	if n, r, ok := q.fam(preset.TTFT); ok {
		// How many requests the TTFT quantiles rest on: the decide stage
		// ignores quantiles of fewer than latencyMinRequests.
		jobs = append(jobs, job("ttftRequests", "sum(increase("+q.sel(n+"_count", r)+"["+q.window+"]))", 1, func(v float64) { f.TTFTRequests = signal.F(v) }))
	}
	jobs = q.quantileJobs("e2e", preset.E2E, &f.E2EQuantiles, jobs)
	return q.quantileJobs("itl", preset.InterToken, &f.ITLQuantiles, jobs)
}

// quantileJobs are the configured quantiles of signal sig's histogram,
// into dst.
func (q fleetQueries) quantileJobs(label, sig string, dst *map[string]float64, jobs []queryJob) []queryJob {
	n, r, ok := q.fam(sig)
	if !ok {
		return jobs
	}
	for _, quantile := range q.quantiles {
		qs := strconv.FormatFloat(quantile, 'f', -1, 64)
		jobs = append(jobs, job(label+"["+qs+"]", "histogram_quantile("+qs+", sum by (le) (rate("+q.sel(n+"_bucket", r)+"["+q.window+"])))", r.Factor(),
			func(v float64) {
				if *dst == nil {
					*dst = map[string]float64{}
				}
				(*dst)[qs] = v
			}))
	}
	return jobs
}

// arrivals is the arrival rate: the request counter's, or the end-to-end
// histogram's count where the preset has no counter.
func (q fleetQueries) arrivals(f *signal.Fleet, jobs []queryJob) []queryJob {
	set := func(v float64) { f.ArrivalRate = signal.F(v) }
	if n, r, ok := q.fam(preset.RequestsTotal); ok {
		return append(jobs, job("arrivalRate", "sum(rate("+q.sel(n, r)+"["+q.window+"]))", 1, set))
	}
	if n, r, ok := q.fam(preset.E2E); ok {
		return append(jobs, job("arrivalRate", "sum(rate("+q.sel(n+"_count", r)+"["+q.window+"]))", 1, set))
	}
	return jobs
}
