// Package fleet aggregates the per-pod signal reports of one tick into a
// fleet view: ready versus starting pods, queue and KV sums and means, the
// EWMA-smoothed GPU utilisation, latency quantiles from histogram deltas
// merged across pods since the previous tick, the arrival rate and its
// trend, and the pods' observed startup times.
//
// Aggregate updates the persisted state it is given (last counters per pod,
// EWMA, rate history, startups, learned per-pod capacity); it does no I/O.
package fleet

import (
	"math"
	"sort"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

// Options tune the aggregation.
type Options struct {
	// EWMAAlpha smooths GPU utilisation (seed 000: 0.3).
	EWMAAlpha float64
	// StaleAfter marks a pod's scrape as missing when older than this.
	StaleAfter time.Duration
	// TrendWindow is how much rate history the trend is fitted on.
	TrendWindow time.Duration
	// PeakWindow is how far back RatePeak looks.
	PeakWindow time.Duration
	// DefaultStartup is used until a pod startup has been observed.
	DefaultStartup time.Duration
	// SaturationWaiting is the waiting requests per ready pod at which the
	// fleet counts as saturated: its throughput per pod is then learned as
	// the per-pod capacity.
	SaturationWaiting float64
	// StuckAfter is the age after which a pod that is still not ready is
	// stuck rather than starting (0: never).
	StuckAfter time.Duration
	// TrackE2E keeps end-to-end histograms in the state (only needed when
	// an e2e SLO is set; it doubles the state size).
	TrackE2E bool
}

// DefaultOptions are the seed-derived defaults.
func DefaultOptions() Options {
	return Options{EWMAAlpha: 0.3, StaleAfter: 90 * time.Second, TrendWindow: 3 * time.Minute, PeakWindow: 2 * time.Minute,
		DefaultStartup: 90 * time.Second, SaturationWaiting: 5, StuckAfter: 15 * time.Minute}
}

// Input is one tick's metric results.
type Input struct {
	// Reports are the decoded metric values.
	Reports []*signal.Report
	// Missing names the metric results that were empty or undecodable.
	Missing []string
}

// View is the fleet as one tick sees it. Optional readings are nil when no
// pod reported them.
type View struct {
	Ready    int `json:"ready"`
	Starting int `json:"starting"`
	// Stuck counts not-ready pods older than StuckAfter (crash loops, no
	// node): not capacity on its way, and no reason to hold a scale-down.
	Stuck       int `json:"stuck,omitempty"`
	Terminating int `json:"terminating,omitempty"`
	// Missing counts pods (or metric results) whose data is absent, failed,
	// stale or partial. The policy never scales down while it is non-zero.
	Missing      int      `json:"missing"`
	MissingNames []string `json:"missingNames,omitempty"`

	// Sums over the ready pods that reported.
	Waiting float64 `json:"waiting"`
	Running float64 `json:"running"`

	KVMean *float64 `json:"kvMean,omitempty"`
	KVMax  *float64 `json:"kvMax,omitempty"`
	// GPUUtil is this tick's mean; GPUUtilEWMA the smoothed value.
	GPUUtil     *float64 `json:"gpuUtil,omitempty"`
	GPUUtilEWMA *float64 `json:"gpuUtilEwma,omitempty"`

	// Latency quantiles (seconds) of requests finished since the previous tick.
	TTFTP95 *float64 `json:"ttftP95,omitempty"`
	TTFTP99 *float64 `json:"ttftP99,omitempty"`
	E2EP95  *float64 `json:"e2eP95,omitempty"`
	E2EP99  *float64 `json:"e2eP99,omitempty"`
	// LatencyRequests is how many requests the TTFT quantiles rest on.
	LatencyRequests float64 `json:"latencyRequests,omitempty"`

	// ArrivalRate (requests/s) ≈ Δfinished/Δt + Δin-flight/Δt.
	ArrivalRate *float64 `json:"arrivalRate,omitempty"`
	// Throughput is finished requests/s.
	Throughput *float64 `json:"throughput,omitempty"`
	// RateTrend is the least-squares slope of the arrival rate (requests/s per s).
	RateTrend *float64 `json:"rateTrend,omitempty"`
	// RateFitted is the least-squares arrival rate at now (less noisy than ArrivalRate).
	RateFitted *float64 `json:"rateFitted,omitempty"`
	// RatePeak is the highest arrival rate measured within the peak window.
	RatePeak *float64 `json:"ratePeak,omitempty"`
	// PodCapacityRPS is the learned throughput of one saturated pod.
	PodCapacityRPS *float64 `json:"podCapacityRps,omitempty"`

	// StartupSeconds is the p90 of observed startups, or the default.
	StartupSeconds  float64 `json:"startupSeconds"`
	StartupObserved int     `json:"startupObserved"`
}

// Queue is waiting requests per ready pod (0 with no ready pod).
func (v View) Queue() float64 {
	if v.Ready == 0 {
		return 0
	}
	return v.Waiting / float64(v.Ready)
}

// Aggregate builds the view for now and updates st.
func Aggregate(in Input, st *state.State, opt Options, now time.Time) View {
	var v View
	var (
		kvSum, kvMax, kvN    float64
		gpuSum, gpuN         float64
		ttft, e2e            signal.Histogram
		rate, thr            float64
		rateN, thrN, estN    int
		estThr               float64
		fleetQ               []*signal.Fleet
		readyWithCompleteSig int
	)
	missing := append([]string(nil), in.Missing...)
	seen := map[string]bool{}
	for _, r := range in.Reports {
		if r == nil {
			continue
		}
		if r.Fleet != nil {
			fleetQ = append(fleetQ, r.Fleet)
		}
		for i := range r.Pods {
			p := &r.Pods[i]
			if seen[p.Name] {
				continue // the same pod reported twice: count it once
			}
			seen[p.Name] = true
			noteStartup(st, p, now)
			switch {
			case p.Terminating || p.Phase == "Succeeded" || p.Phase == "Failed":
				v.Terminating++
				continue
			case !p.Ready:
				if opt.StuckAfter > 0 && p.AgeSeconds != nil && *p.AgeSeconds > opt.StuckAfter.Seconds() {
					v.Stuck++
				} else {
					v.Starting++
				}
				continue
			}
			v.Ready++
			if r.Fleet != nil && p.Waiting == nil {
				continue // lifecycle-only pod of a fleet report
			}
			if p.Error != "" || p.Waiting == nil || stale(p, now, opt.StaleAfter) {
				missing = append(missing, p.Name)
				continue
			}
			readyWithCompleteSig++
			v.Waiting += *p.Waiting
			inflight := *p.Waiting
			if p.Running != nil {
				v.Running += *p.Running
				inflight += *p.Running
			}
			if p.KVCacheUsage != nil {
				kvSum += *p.KVCacheUsage
				kvMax = math.Max(kvMax, *p.KVCacheUsage)
				kvN++
			}
			if p.GPU != nil && p.GPU.Error == "" && p.GPU.Utilization != nil {
				gpuSum += *p.GPU.Utilization
				gpuN++
			}
			prev := st.Pod(p.Name)
			if prev != nil && !p.ScrapeTime.After(prev.ScrapeTime) {
				// The same scrape again (or an older one): no new deltas, keep the stored counters.
				prev.SeenAt = now
				continue
			}
			// A pod seen for the first time only contributes its
			// cumulative histograms when they cover a short, recent span.
			if prev != nil || recentlyReady(p, 10*time.Minute) {
				if d, ok := histDelta(p.TTFT, prevHist(prev, true)); ok {
					merge(&ttft, d)
				}
				if opt.TrackE2E {
					if d, ok := histDelta(p.E2E, prevHist(prev, false)); ok {
						merge(&e2e, d)
					}
				}
			}
			if a, f, ok := podRates(p, prev, inflight); ok {
				rate += a
				thr += f
				rateN++
				thrN++
				if prev != nil { // measured tick to tick, not from ReadyAt (still warming up)
					estThr += f
					estN++
				}
			}
			pc := state.PodCounters{Name: p.Name, ScrapeTime: p.ScrapeTime, SeenAt: now,
				RequestsTotal: p.RequestsTotal, InFlight: &inflight, TTFT: state.HistOf(p.TTFT)}
			if opt.TrackE2E {
				pc.E2E = state.HistOf(p.E2E)
			}
			st.PutPod(pc)
		}
	}
	st.ForgetPods(now.Add(-state.PodForgetAfter))
	sort.Strings(missing)
	v.Missing, v.MissingNames = len(missing), missing
	if kvN > 0 {
		v.KVMean, v.KVMax = ptr(kvSum/kvN), ptr(kvMax)
	}
	if gpuN > 0 {
		g := gpuSum / gpuN
		v.GPUUtil = ptr(g)
		if st.GPUUtilEWMA == nil {
			st.GPUUtilEWMA = ptr(g)
		} else {
			st.GPUUtilEWMA = ptr(opt.EWMAAlpha*g + (1-opt.EWMAAlpha)*(*st.GPUUtilEWMA))
		}
	}
	if st.GPUUtilEWMA != nil && gpuN > 0 {
		v.GPUUtilEWMA = ptr(*st.GPUUtilEWMA)
	}
	if q := Quantile(ttft, 0.95); !math.IsNaN(q) {
		v.TTFTP95, v.TTFTP99, v.LatencyRequests = ptr(q), ptr(Quantile(ttft, 0.99)), ttft.Count
	}
	if q := Quantile(e2e, 0.95); !math.IsNaN(q) {
		v.E2EP95, v.E2EP99 = ptr(q), ptr(Quantile(e2e, 0.99))
	}
	// The rate is only trusted when every complete ready pod contributed.
	if rateN > 0 && rateN == readyWithCompleteSig {
		v.ArrivalRate = ptr(rate)
		st.AddRate(state.RateSample{At: now, RPS: rate}, max(opt.TrendWindow, opt.PeakWindow))
	}
	if thrN > 0 && thrN == readyWithCompleteSig {
		v.Throughput = ptr(thr)
	}
	// Capacity: the throughput of the pods measured tick to tick (pods that
	// just became ready are still warming up, and pods whose scrape lags
	// are left out) while the queue per reporting pod was at the
	// saturation level at both ends of the tick.
	var queue float64
	if readyWithCompleteSig > 0 {
		queue = v.Waiting / float64(readyWithCompleteSig)
	}
	if estN > 0 && estThr > 0 {
		perPod := estThr / float64(estN)
		saturatedBefore := st.LastQueue != nil && *st.LastQueue >= opt.SaturationWaiting
		switch {
		case queue >= opt.SaturationWaiting && saturatedBefore:
			learnCapacity(st, perPod)
		case estN == v.Ready && st.PodCapacityRPS != nil && perPod > *st.PodCapacityRPS:
			// Unsaturated pods served more than the estimate: it was low.
			st.PodCapacityRPS = ptr(perPod)
		}
	}
	if readyWithCompleteSig > 0 {
		st.LastQueue = ptr(queue)
	} else {
		st.LastQueue = nil
	}
	for _, f := range fleetQ {
		applyFleet(&v, f, opt.StaleAfter)
	}
	if len(fleetQ) > 0 && rateN == 0 && v.ArrivalRate != nil {
		// Per-resource mode: the source's own rate feeds the trend.
		st.AddRate(state.RateSample{At: now, RPS: *v.ArrivalRate}, max(opt.TrendWindow, opt.PeakWindow))
	}
	for _, r := range st.Rates {
		if age := now.Sub(r.At); age >= 0 && age <= opt.PeakWindow && (v.RatePeak == nil || r.RPS > *v.RatePeak) {
			v.RatePeak = ptr(r.RPS)
		}
	}
	if slope, level, ok := trend(st.Rates, now, opt.TrendWindow); ok {
		v.RateTrend, v.RateFitted = ptr(slope), ptr(math.Max(0, level))
	}
	if st.PodCapacityRPS != nil {
		v.PodCapacityRPS = ptr(*st.PodCapacityRPS)
	}

	v.StartupSeconds, v.StartupObserved = startupP90(st, opt.DefaultStartup)
	return v
}

func ptr(f float64) *float64 { return &f }

func stale(p *signal.Pod, now time.Time, after time.Duration) bool {
	if after <= 0 || p.ScrapeTime.IsZero() {
		return false
	}
	return now.Sub(p.ScrapeTime) > after
}

func recentlyReady(p *signal.Pod, within time.Duration) bool {
	return p.ReadyAt != nil && p.ScrapeTime.Sub(*p.ReadyAt) <= within
}

func prevHist(prev *state.PodCounters, ttft bool) *signal.Histogram {
	if prev == nil {
		return nil
	}
	if ttft {
		return prev.TTFT.Signal()
	}
	return prev.E2E.Signal()
}

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
		return (*p.RequestsTotal + inflight) / dt, *p.RequestsTotal / dt, true
	}
	dt := p.ScrapeTime.Sub(prev.ScrapeTime).Seconds()
	if dt <= 0 {
		return 0, 0, false
	}
	df := *p.RequestsTotal - *prev.RequestsTotal
	if df < 0 { // counter reset: the server restarted
		df = *p.RequestsTotal
	}
	a := (df + inflight - *prev.InFlight) / dt
	return math.Max(0, a), df / dt, true
}

// learnCapacity keeps a slowly decaying maximum of the saturated
// throughput-per-pod samples: a saturated tick can only under-state the
// capacity (preemptions, a pod that just joined), while a lasting change
// of the request mix still pulls the estimate down over a few dozen ticks.
func learnCapacity(st *state.State, perPod float64) {
	if st.PodCapacityRPS == nil || perPod >= *st.PodCapacityRPS {
		st.PodCapacityRPS = ptr(perPod)
		return
	}
	st.PodCapacityRPS = ptr(0.95*(*st.PodCapacityRPS) + 0.05*perPod)
}

// noteStartup records a ready pod's startup once. Once the history is
// full, only pods that became ready in the last ten minutes are added, so
// a large fleet does not churn the history with old startups.
func noteStartup(st *state.State, p *signal.Pod, now time.Time) {
	if !p.Ready || p.StartupSeconds == nil {
		return
	}
	if len(st.Startups) >= state.MaxStartups && (p.ReadyAt == nil || now.Sub(*p.ReadyAt) > 10*time.Minute) {
		return
	}
	if st.HasStartup(p.Name) {
		return
	}
	at := now
	if p.ReadyAt != nil {
		at = *p.ReadyAt
	}
	st.AddStartup(state.Startup{Pod: p.Name, Seconds: *p.StartupSeconds, At: at})
}

func startupP90(st *state.State, def time.Duration) (float64, int) {
	n := len(st.Startups)
	if n == 0 {
		return def.Seconds(), 0
	}
	xs := make([]float64, n)
	for i, s := range st.Startups {
		xs[i] = s.Seconds
	}
	sort.Float64s(xs)
	idx := int(math.Ceil(0.9*float64(n))) - 1
	return xs[max(0, idx)], n
}

// trend fits a least-squares line to the rate samples within window and
// returns its slope and its value at now.
func trend(rs []state.RateSample, now time.Time, window time.Duration) (slope, level float64, ok bool) {
	var n, sx, sy, sxx, sxy float64
	for _, r := range rs {
		age := now.Sub(r.At)
		if age > window || age < 0 {
			continue
		}
		x := -age.Seconds()
		n++
		sx += x
		sy += r.RPS
		sxx += x * x
		sxy += x * r.RPS
	}
	if n < 3 {
		return 0, 0, false
	}
	den := n*sxx - sx*sx
	if den <= 0 {
		return 0, 0, false
	}
	slope = (n*sxy - sx*sy) / den
	return slope, (sy - slope*sx) / n, true
}

// applyFleet fills the view from a per-resource fleet report where the
// per-pod readings did not.
func applyFleet(v *View, f *signal.Fleet, staleAfter time.Duration) {
	if f.ReadyPods != nil && v.Ready == 0 {
		v.Ready = *f.ReadyPods
	}
	if f.StartingPods != nil && v.Starting == 0 {
		v.Starting = *f.StartingPods
	}
	if f.Waiting != nil {
		v.Waiting = *f.Waiting
	}
	if f.Running != nil {
		v.Running = *f.Running
	}
	if f.KVCacheMean != nil {
		v.KVMean = ptr(*f.KVCacheMean)
	}
	if f.KVCacheMax != nil {
		v.KVMax = ptr(*f.KVCacheMax)
	}
	if f.GPUUtilMean != nil && v.GPUUtil == nil {
		v.GPUUtil = ptr(*f.GPUUtilMean)
		v.GPUUtilEWMA = ptr(*f.GPUUtilMean)
	}
	if q, ok := f.TTFTQuantiles["0.95"]; ok {
		v.TTFTP95 = ptr(q)
	}
	if q, ok := f.TTFTQuantiles["0.99"]; ok {
		v.TTFTP99 = ptr(q)
	}
	// The requests the fleet's TTFT quantiles rest on, for latencyMinRequests.
	if f.TTFTRequests != nil {
		v.LatencyRequests = *f.TTFTRequests
	}
	if q, ok := f.E2EQuantiles["0.95"]; ok {
		v.E2EP95 = ptr(q)
	}
	if q, ok := f.E2EQuantiles["0.99"]; ok {
		v.E2EP99 = ptr(q)
	}
	if f.ArrivalRate != nil {
		v.ArrivalRate = ptr(*f.ArrivalRate)
	}
	if f.Waiting == nil || len(f.Errors) > 0 {
		v.Missing++
		v.MissingNames = append(v.MissingNames, "fleet")
	}
	if f.StalenessSeconds != nil && staleAfter > 0 && *f.StalenessSeconds > staleAfter.Seconds() {
		v.Missing++
		v.MissingNames = append(v.MissingNames, "fleet(stale)")
	}
}
