// Package fleet aggregates the per-pod signal reports of one tick into a
// fleet view: ready versus starting pods, queue and KV sums and means, the
// EWMA-smoothed GPU utilisation, latency quantiles from histogram deltas
// merged across pods since the previous tick, the arrival rate and its
// trend, and the pods' observed startup times.
//
// Aggregate is pure: it reads the previous state and returns the view
// together with what the state must remember of the tick
// (state.Observed); state.Record stores that. It does no I/O.
package fleet

import (
	"fmt"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

// Options tune the aggregation. They are knobs of the policy
// configuration (policy.Config embeds them); the tags declare them.
type Options struct {
	EWMAAlpha   float64       `setting:"ewmaAlpha" default:"0.3" min:"0.001" max:"1" doc:"the smoothing factor of the GPU-utilisation EWMA (seed 000)"`
	StaleAfter  time.Duration `setting:"staleAfter" default:"90s" min:"0" max:"24h" doc:"a pod scrape older than this is missing (0: never stale)"`
	TrendWindow time.Duration `setting:"trendWindow" default:"3m" min:"10s" max:"1h" doc:"the arrival-rate history the trend is fitted on"`
	PeakWindow  time.Duration `setting:"peakWindow" default:"2m" min:"0" max:"15m" doc:"removals must fit the peak arrival rate of this window"`
	// DefaultStartup is used until a pod startup has been observed.
	DefaultStartup time.Duration `setting:"defaultStartup" default:"90s" min:"0" max:"2h" doc:"the startup time assumed until pod startups have been observed"`
	// SaturationWaiting is the waiting requests per ready pod at which the
	// fleet counts as saturated: its throughput per pod is then learned as
	// the per-pod capacity.
	SaturationWaiting float64 `setting:"saturationWaiting" default:"5" min:"0.01" max:"1e6" doc:"waiting requests per ready pod at which the fleet counts as saturated and its throughput per pod is learned as the capacity"`
	// StuckAfter is the age after which a pod that is still not ready is
	// stuck rather than starting (0: never).
	StuckAfter time.Duration `setting:"stuckAfter" default:"15m" min:"0" max:"24h" doc:"a pod not ready after this is stuck (no capacity on its way), not starting"`
	// TrackE2E keeps end-to-end histograms in the state: only needed for
	// an e2e SLO (settings sets it then), and it doubles the state size.
	TrackE2E bool `setting:"-"`
	// TrackITL keeps inter-token histograms in the state: only needed for
	// an inter-token objective (settings sets it then).
	TrackITL bool `setting:"-"`
}

// Input is one tick's metric results.
type Input struct {
	// Reports are the decoded metric values.
	Reports []*signal.Report
	// Missing names the metric results that were empty or undecodable.
	Missing []string
	// Replicas is the target's spec.replicas (0: unknown). Pods it
	// should have that no report accounts for are missing: CPA left
	// them out of metrics[], so their load is unknown.
	Replicas int
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
	// Unreported counts the ready pods among Missing that were serving
	// (they reported before, or became ready longer than staleAfter ago)
	// and now fail, go stale or report partly: their load is not in the
	// sums below, so per-pod loads are taken over the Ready-Unreported
	// pods that reported. A pod that just became ready and has not been
	// scraped yet still counts as a ready pod with no load.
	Unreported int `json:"unreported,omitempty"`

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
	// ITLP95 is the inter-token gaps' p95 (seconds), read only for an
	// inter-token objective (TrackITL) or from Prometheus.
	ITLP95 *float64 `json:"itlP95,omitempty"`
	// LatencyRequests is how many requests the TTFT quantiles rest on.
	LatencyRequests float64 `json:"latencyRequests,omitempty"`
	// LatencyUnread names the ready pods whose latency histograms gave no
	// delta this tick (no baseline yet, a changed bucket layout): their
	// latency is unknown, which is never the same as low.
	LatencyUnread []string `json:"latencyUnread,omitempty"`

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
	// Peer is the ratio guard's other pool as metric read it (nil: not
	// asked for, ratioPeer unset).
	Peer *signal.Peer `json:"peer,omitempty"`

	// StartupSeconds is the p90 of observed startups, or the default.
	StartupSeconds  float64 `json:"startupSeconds"`
	StartupObserved int     `json:"startupObserved"`

	// Service is what the tick shows of the pods' service, for the
	// service model (policy v2); the decision reports what it learned.
	Service Service `json:"-"`
	// Pods are the pods that count toward the replicas (not terminating),
	// with their load, for choosing which to remove.
	Pods []PodLoad `json:"-"`
}

// PodLoad is one pod's lifecycle and load at this tick.
type PodLoad struct {
	Name  string
	Ready bool
	// Outstanding is waiting + running (-1: not reported).
	Outstanding float64
	// KV is the KV-cache usage (-1: not reported).
	KV float64
}

// Reporting is the ready pods whose readings are in the sums.
func (v View) Reporting() int { return max(0, v.Ready-v.Unreported) }

// Queue is waiting requests per ready pod that reported (0 with none).
func (v View) Queue() float64 {
	if v.Reporting() == 0 {
		return 0
	}
	return v.Waiting / float64(v.Reporting())
}

// Aggregate builds the view of one tick from its reports and the
// previous state, and returns what the state must remember of the tick
// (the pods' counters, the EWMA, the rate, new startups, the learned
// capacity) for state.Record. prev is only read.
func Aggregate(in Input, prev *state.State, opt Options, now time.Time) (View, state.Observed) {
	a := aggregation{prev: prev, opt: opt, now: now, seen: map[string]bool{},
		startups: prev.Startups, missing: append([]string(nil), in.Missing...)}
	var fleets []*signal.Fleet
	for _, r := range in.Reports {
		if r == nil {
			continue
		}
		if r.Fleet != nil {
			fleets = append(fleets, r.Fleet)
		}
		if r.Peer != nil && a.v.Peer == nil {
			a.v.Peer = r.Peer
		}
		for i := range r.Pods {
			a.pod(&r.Pods[i], r.Fleet != nil)
		}
	}
	a.finishPods()
	for _, f := range fleets {
		applyFleet(&a.v, f, opt.StaleAfter)
	}
	a.unaccounted(in, len(fleets) > 0)
	if len(fleets) > 0 && a.rateN == 0 && a.v.ArrivalRate != nil {
		// Per-resource mode: the source's own rate feeds the trend.
		a.addRate(*a.v.ArrivalRate)
	}
	a.finishHistory()
	return a.v, a.obs
}

// applyFleet fills the view from a per-resource fleet report where the
// per-pod readings did not.
func applyFleet(v *View, f *signal.Fleet, staleAfter time.Duration) {
	if f.ReadyPods != nil && v.Ready == 0 {
		v.Ready = *f.ReadyPods
	}
	if f.ReadyPods == nil && f.ServingPods != nil && v.Ready == 0 {
		// No pod list (refused, failed): the pods Prometheus holds series
		// for stand in for the ready ones, so a queue or latency over its
		// target still scales up; the gap below holds any scale-down.
		v.Ready = *f.ServingPods
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
		v.KVMean = new(*f.KVCacheMean)
	}
	if f.KVCacheMax != nil {
		v.KVMax = new(*f.KVCacheMax)
	}
	if f.GPUUtilMean != nil && v.GPUUtil == nil {
		v.GPUUtil = new(*f.GPUUtilMean)
		v.GPUUtilEWMA = new(*f.GPUUtilMean)
	}
	if q, ok := f.TTFTQuantiles["0.95"]; ok {
		v.TTFTP95 = new(q)
	}
	if q, ok := f.TTFTQuantiles["0.99"]; ok {
		v.TTFTP99 = new(q)
	}
	// The requests the fleet's TTFT quantiles rest on, for latencyMinRequests.
	if f.TTFTRequests != nil {
		v.LatencyRequests = *f.TTFTRequests
	}
	if q, ok := f.ITLQuantiles["0.95"]; ok {
		v.ITLP95 = new(q)
	}
	if q, ok := f.E2EQuantiles["0.95"]; ok {
		v.E2EP95 = new(q)
	}
	if q, ok := f.E2EQuantiles["0.99"]; ok {
		v.E2EP99 = new(q)
	}
	if f.ArrivalRate != nil {
		v.ArrivalRate = new(*f.ArrivalRate)
	}
	if f.Waiting == nil || len(f.Errors) > 0 {
		v.Missing++
		v.MissingNames = append(v.MissingNames, "fleet")
	}
	if f.StalenessSeconds != nil && staleAfter > 0 && *f.StalenessSeconds > staleAfter.Seconds() {
		v.Missing++
		v.MissingNames = append(v.MissingNames, "fleet(stale)")
	}
	for _, gap := range fleetGaps(f) {
		v.Missing++
		v.MissingNames = append(v.MissingNames, "fleet("+gap+")")
	}
}

// fleetGaps names the readings a Prometheus fleet report left out without
// an error: a freshness that cannot be told, no KV cache reading, no TTFT
// quantiles although requests finished (or without saying how many did).
// Each is unknown, never low.
func fleetGaps(f *signal.Fleet) []string {
	if f.Source != "prometheus" {
		return nil
	}
	var gaps []string
	switch {
	case f.ReadyPods == nil && f.ServingPods != nil:
		gaps = append(gaps, fmt.Sprintf("no pod list: ready pods unknown, %d counted from Prometheus series", *f.ServingPods))
	case f.ReadyPods == nil:
		gaps = append(gaps, "no pod list: ready pods unknown")
	}
	if f.StalenessSeconds == nil {
		gaps = append(gaps, "staleness unknown")
	}
	if f.KVCacheMean == nil {
		gaps = append(gaps, "no KV reading")
	}
	if len(f.TTFTQuantiles) == 0 && (f.TTFTRequests == nil || *f.TTFTRequests > 0) {
		gaps = append(gaps, "no TTFT reading")
	}
	return gaps
}
