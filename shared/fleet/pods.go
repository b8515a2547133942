package fleet

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

// aggregation is one Aggregate call under way: the view being built,
// what the state will remember, and the running sums.
type aggregation struct {
	prev *state.State
	opt  Options
	now  time.Time

	v   View
	obs state.Observed

	seen     map[string]bool
	missing  []string
	startups []state.Startup // the startup history with this tick's additions

	kvSum, kvMax, kvN float64
	gpuSum, gpuN      float64
	ttft, e2e, itl    signal.Histogram
	rate, thr         float64
	rateN, thrN, estN int
	estThr            float64
	// complete counts the ready pods whose readings are in the sums.
	complete int
}

// pod adds one pod of a report; lifecycleOnly is a fleet report's pod,
// whose readings are in the fleet aggregates.
func (a *aggregation) pod(p *signal.Pod, lifecycleOnly bool) {
	if a.seen[p.Name] {
		return // the same pod reported twice: count it once
	}
	a.seen[p.Name] = true
	a.noteStartup(p)
	switch {
	case p.Terminating || p.Phase == "Succeeded" || p.Phase == "Failed":
		a.v.Terminating++
		return
	case !p.Ready:
		a.v.Pods = append(a.v.Pods, PodLoad{Name: p.Name, Outstanding: -1, KV: -1})
		switch {
		case a.prev.Pod(p.Name) != nil:
			// It served recently (its counters are kept): a pod that
			// turned not-ready is restarting or overloaded, not stuck,
			// and its load is unknown.
			a.v.Starting++
			a.missing = append(a.missing, p.Name+"(not ready after serving)")
		case a.opt.StuckAfter > 0 && p.AgeSeconds != nil && *p.AgeSeconds > a.opt.StuckAfter.Seconds():
			a.v.Stuck++
		default:
			a.v.Starting++
		}
		return
	}
	a.v.Ready++
	a.v.Pods = append(a.v.Pods, load(p))
	if lifecycleOnly && p.Waiting == nil {
		return
	}
	if p.Error != "" || p.Waiting == nil || stale(p, a.now, a.opt.StaleAfter) || ahead(p, a.now, a.opt.StaleAfter) {
		a.missing = append(a.missing, p.Name)
		if a.wasServing(p) {
			a.v.Unreported++
		}
		return
	}
	a.complete++
	a.v.Waiting += *p.Waiting
	inflight := *p.Waiting
	if p.Running != nil {
		a.v.Running += *p.Running
		inflight += *p.Running
	}
	if p.KVCacheUsage != nil {
		a.kvSum += *p.KVCacheUsage
		a.kvMax = math.Max(a.kvMax, *p.KVCacheUsage)
		a.kvN++
	}
	if p.GPU != nil && p.GPU.Error == "" && p.GPU.Utilization != nil {
		a.gpuSum += *p.GPU.Utilization
		a.gpuN++
	}
	a.counters(p, inflight)
}

// counters forms the pod's deltas since its stored counters (latency
// histograms, arrival and finish rates) and the counters to store.
func (a *aggregation) counters(p *signal.Pod, inflight float64) {
	prev := a.prev.Pod(p.Name)
	switch {
	case prev != nil && p.ScrapeTime.Equal(prev.ScrapeTime):
		// The same scrape again: no new deltas, keep the stored counters.
		a.obs.Refreshed = append(a.obs.Refreshed, p.Name)
		return
	case prev != nil && p.ScrapeTime.Before(prev.ScrapeTime):
		// A scrape older than the stored one: the clock stepped back, or
		// the state was written under a clock that ran ahead. The stored
		// counters are no baseline; this scrape starts a new one.
		prev = nil
	}
	if prev != nil && reset(p, prev) {
		// The server restarted since its last scrape: what it served
		// before the restart is lost, so its rate reads low. Unknown.
		a.missing = append(a.missing, p.Name+"(counter reset)")
	}
	a.latency(p, prev)
	a.service(p, prev)
	if arr, fin, ok := podRates(p, prev, inflight); ok {
		a.rate += arr
		a.thr += fin
		a.rateN++
		a.thrN++
		if prev != nil { // measured tick to tick, not from ReadyAt (still warming up)
			a.estThr += fin
			a.estN++
		}
	}
	pc := state.PodCounters{Name: p.Name, ScrapeTime: p.ScrapeTime, SeenAt: a.now,
		RequestsTotal: p.RequestsTotal, InFlight: &inflight, TTFT: state.HistOf(p.TTFT), Service: serviceCounters(p)}
	if a.opt.TrackE2E {
		pc.E2E = state.HistOf(p.E2E)
	}
	if a.opt.TrackITL {
		pc.ITL = state.HistOf(p.InterToken)
	}
	a.obs.Pods = append(a.obs.Pods, pc)
}

// latency merges the pod's latency histograms since its stored ones into
// the tick's. A pod seen for the first time only contributes its
// cumulative histograms when they cover a short, recent span. A histogram
// the pod reports but that gives no delta (no baseline, a new bucket
// layout, more buckets than the state keeps) leaves the pod's latency
// unread this tick: not low, so it holds a scale-down like any missing
// signal.
func (a *aggregation) latency(p *signal.Pod, prev *state.PodCounters) {
	usable := prev != nil || recentlyReady(p, 10*time.Minute)
	add := func(acc *signal.Histogram, cur, before *signal.Histogram) bool {
		if !usable || len(cur.Buckets) > state.MaxHistogramBuckets || (prev != nil && before == nil) {
			// No baseline (not kept, or not reported at the last scrape),
			// or too many buckets to keep one.
			return false
		}
		d, ok := histDelta(cur, before)
		if ok {
			merge(acc, d)
		}
		return ok
	}
	unread := false
	if p.TTFT != nil && !add(&a.ttft, p.TTFT, prevHist(prev, ttftOf)) {
		unread = true
	}
	if a.opt.TrackE2E && p.E2E != nil && !add(&a.e2e, p.E2E, prevHist(prev, e2eOf)) {
		unread = true
	}
	if a.opt.TrackITL && p.InterToken != nil && !add(&a.itl, p.InterToken, prevHist(prev, itlOf)) {
		unread = true
	}
	if unread {
		a.v.LatencyUnread = append(a.v.LatencyUnread, p.Name)
	}
}

// finishPods turns the per-pod sums into the view's readings.
func (a *aggregation) finishPods() {
	v := &a.v
	sort.Strings(a.missing)
	v.Missing, v.MissingNames = len(a.missing), a.missing
	if a.kvN > 0 {
		v.KVMean, v.KVMax = new(a.kvSum/a.kvN), new(a.kvMax)
	}
	if a.gpuN > 0 {
		g := a.gpuSum / a.gpuN
		v.GPUUtil = new(g)
		ewma := g
		if prev := a.prev.GPUUtilEWMA; prev != nil {
			ewma = a.opt.EWMAAlpha*g + (1-a.opt.EWMAAlpha)*(*prev)
		}
		a.obs.GPUUtilEWMA, v.GPUUtilEWMA = new(ewma), new(ewma)
	}
	if q := signal.Quantile(a.ttft, 0.95); !math.IsNaN(q) {
		v.TTFTP95, v.TTFTP99, v.LatencyRequests = new(q), new(signal.Quantile(a.ttft, 0.99)), a.ttft.Count
	}
	if q := signal.Quantile(a.e2e, 0.95); !math.IsNaN(q) {
		v.E2EP95, v.E2EP99 = new(q), new(signal.Quantile(a.e2e, 0.99))
	}
	if q := signal.Quantile(a.itl, 0.95); !math.IsNaN(q) {
		v.ITLP95 = new(q)
	}
	// The rate is only trusted when every complete ready pod contributed.
	if a.rateN > 0 && a.rateN == a.complete {
		v.ArrivalRate = new(a.rate)
		a.addRate(a.rate)
	}
	if a.thrN > 0 && a.thrN == a.complete {
		v.Throughput = new(a.thr)
	}
	a.learnCapacity()
}

// wasServing tells a ready pod whose readings are missing because it
// fails (it reported before, or has been ready for longer than a scrape
// may lag) from one that just became ready and has not been scraped yet.
// The first is likely the busiest (an overloaded server answers /metrics
// slowly); the second has hardly any load yet.
func (a *aggregation) wasServing(p *signal.Pod) bool {
	if a.prev.Pod(p.Name) != nil {
		return true
	}
	return a.opt.StaleAfter > 0 && p.ReadyAt != nil && a.now.Sub(*p.ReadyAt) > a.opt.StaleAfter
}

func stale(p *signal.Pod, now time.Time, after time.Duration) bool {
	if after <= 0 || p.ScrapeTime.IsZero() {
		return false
	}
	return now.Sub(p.ScrapeTime) > after
}

// ahead reports a scrape dated further in the future than a scrape may
// lag (the metric pod's clock, or a forged report): no reading of now.
func ahead(p *signal.Pod, now time.Time, after time.Duration) bool {
	return after > 0 && !p.ScrapeTime.IsZero() && p.ScrapeTime.Sub(now) > after
}

func recentlyReady(p *signal.Pod, within time.Duration) bool {
	return p.ReadyAt != nil && p.ScrapeTime.Sub(*p.ReadyAt) <= within
}

// prevHist is the stored histogram of picks of the pod's counters (nil
// without them).
func prevHist(prev *state.PodCounters, of func(*state.PodCounters) *state.Hist) *signal.Histogram {
	if prev == nil {
		return nil
	}
	return of(prev).Signal()
}

func ttftOf(p *state.PodCounters) *state.Hist { return p.TTFT }
func e2eOf(p *state.PodCounters) *state.Hist  { return p.E2E }
func itlOf(p *state.PodCounters) *state.Hist  { return p.ITL }

// podRates returns one pod's arrival and finish rates since its previous
// scrape. A pod seen for the first time is measured from its ReadyAt.
func podRates(p *signal.Pod, prev *state.PodCounters, inflight float64) (arrival, finished float64, ok bool) {
	if p.RequestsTotal == nil {
		return 0, 0, false
	}
	if prev == nil || prev.RequestsTotal == nil || prev.InFlight == nil {
		if p.ReadyAt == nil {
			return 0, 0, false
		}
		dt := p.ScrapeTime.Sub(*p.ReadyAt).Seconds()
		if dt < 5 || dt > 600 {
			return 0, 0, false
		}
		a, f := (*p.RequestsTotal+inflight)/dt, *p.RequestsTotal/dt
		return a, f, plausibleRate(a, maxPodRPS)
	}
	dt := p.ScrapeTime.Sub(prev.ScrapeTime).Seconds()
	if dt <= 0 {
		return 0, 0, false
	}
	df := *p.RequestsTotal - *prev.RequestsTotal
	if df < 0 { // counter reset: the server restarted
		df = *p.RequestsTotal
	}
	a := math.Max(0, (df+inflight-*prev.InFlight)/dt)
	if !plausibleRate(a, maxPodRPS) || !plausibleRate(df/dt, maxPodRPS) {
		return 0, 0, false // a counter jump no server makes: the rate is unknown
	}
	return a, df / dt, true
}

// load is a ready pod's load as it reported it.
func load(p *signal.Pod) PodLoad {
	l := PodLoad{Name: p.Name, Ready: true, Outstanding: -1, KV: -1}
	if p.Error == "" && p.Waiting != nil {
		l.Outstanding = *p.Waiting
		if p.Running != nil {
			l.Outstanding += *p.Running
		}
	}
	if p.Error == "" && p.KVCacheUsage != nil {
		l.KV = *p.KVCacheUsage
	}
	return l
}

// reset reports whether a counter of p went down since prev.
func reset(p *signal.Pod, prev *state.PodCounters) bool {
	down := func(cur, before *float64) bool { return cur != nil && before != nil && *cur < *before }
	if down(p.RequestsTotal, prev.RequestsTotal) {
		return true
	}
	if p.TTFT != nil && prev.TTFT != nil && p.TTFT.Count < prev.TTFT.Count {
		return true
	}
	if c := prev.Service; c != nil {
		return down(p.PromptTokensTotal, c.PromptTokens) || down(p.GenerationTokensTotal, c.OutputTokens)
	}
	return false
}

// unaccounted counts as missing the pods spec.replicas says the target
// has that no metric result accounts for (a fleet report without its pod
// list is accounted for by its own counts).
func (a *aggregation) unaccounted(in Input, fleetReport bool) {
	accounted := len(a.seen) + len(in.Missing)
	if in.Replicas <= accounted || fleetReport && len(a.seen) == 0 {
		return
	}
	n := in.Replicas - accounted
	a.v.Missing += n
	a.v.MissingNames = append(a.v.MissingNames, fmt.Sprintf("%d pod(s) absent from metrics[]", n))
}
