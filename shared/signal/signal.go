// Package signal is the versioned schema that metric prints and evaluate
// reads: per-pod signals (queue, KV cache, GPU, latency histograms, counters,
// startup times) and a fleet-level form for per-resource mode.
//
// Every optional reading is a pointer: nil means "not available", which is
// never the same as zero. A pod whose scrape failed carries Error and is
// treated by evaluate as missing.
package signal

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// Version is the schema version written in every report ("v").
const Version = 1

// Report is one metric-stage stdout document.
//   - per-pod mode: Pods holds exactly one pod;
//   - per-resource direct mode: Pods holds every pod of the target;
//   - per-resource Prometheus mode: Fleet holds the aggregates, and Pods the
//     pod objects (lifecycle only) when the pod list was available.
type Report struct {
	Version    int       `json:"v"`
	ScrapeTime time.Time `json:"scrapeTime"`
	Pods       []Pod     `json:"pods,omitempty"`
	Fleet      *Fleet    `json:"fleet,omitempty"`
	// Peer is the other pool's scale target, read for the ratio guard
	// (ratioPeer).
	Peer *Peer `json:"peer,omitempty"`
}

// Peer is what the other pool's scale subresource said, or why it could
// not be read (Replicas nil, Error set).
type Peer struct {
	Name string `json:"name"`
	// Replicas is the replicas the other pool asks for (spec.replicas).
	Replicas *int   `json:"replicas,omitempty"`
	Error    string `json:"error,omitempty"`
}

// MaxPeerReplicas bounds a peer's replica count: more is no reading.
const MaxPeerReplicas = 1000000

func (p *Peer) validate() error {
	switch {
	case p.Name == "":
		return errors.New("peer has no name")
	case p.Replicas == nil && p.Error == "":
		return fmt.Errorf("peer %s has neither replicas nor an error", p.Name)
	case p.Replicas != nil && (*p.Replicas < 0 || *p.Replicas > MaxPeerReplicas):
		return fmt.Errorf("peer %s: replicas %d outside [0, %d]", p.Name, *p.Replicas, MaxPeerReplicas)
	}
	return nil
}

// Pod is what one pod tells us at one scrape.
type Pod struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	Node      string `json:"node,omitempty"`
	// Phase is the Kubernetes pod phase (Pending, Running, ...).
	Phase       string `json:"phase,omitempty"`
	Ready       bool   `json:"ready"`
	Terminating bool   `json:"terminating,omitempty"`

	CreatedAt *time.Time `json:"createdAt,omitempty"` // metadata.creationTimestamp
	StartedAt *time.Time `json:"startedAt,omitempty"` // status.startTime (scheduled and accepted by the kubelet)
	ReadyAt   *time.Time `json:"readyAt,omitempty"`   // Ready condition's lastTransitionTime, when Ready
	// StartupSeconds is ReadyAt-CreatedAt for pods that became ready.
	StartupSeconds *float64 `json:"startupSeconds,omitempty"`
	// AgeSeconds is scrape time minus CreatedAt.
	AgeSeconds *float64 `json:"ageSeconds,omitempty"`

	ScrapeTime time.Time `json:"scrapeTime"`
	// Server is the preset that mapped the metrics (vllm, sglang, tgi, ...).
	Server string `json:"server,omitempty"`
	// Error is set when the pod's metrics could not be read; then no
	// server reading below is trustworthy and evaluate treats the pod as missing.
	Error string `json:"error,omitempty"`

	Waiting      *float64 `json:"waiting,omitempty"`      // requests queued, not yet scheduled
	Running      *float64 `json:"running,omitempty"`      // requests in the running batch
	KVCacheUsage *float64 `json:"kvCacheUsage,omitempty"` // 0-1

	GPU *GPU `json:"gpu,omitempty"`

	TTFT       *Histogram `json:"ttft,omitempty"`       // time to first token, seconds
	E2E        *Histogram `json:"e2e,omitempty"`        // end-to-end request latency, seconds
	QueueTime  *Histogram `json:"queueTime,omitempty"`  // time waiting before scheduling, seconds
	InterToken *Histogram `json:"interToken,omitempty"` // inter-token latency, seconds
	// Per-request token counts of finished requests (vLLM
	// request_prompt_tokens / request_generation_tokens), in tokens.
	PromptLength     *Histogram `json:"promptLength,omitempty"`
	GenerationLength *Histogram `json:"generationLength,omitempty"`

	// Monotonic counters (cumulative since the server started).
	RequestsTotal         *float64 `json:"requestsTotal,omitempty"` // finished requests
	PromptTokensTotal     *float64 `json:"promptTokensTotal,omitempty"`
	GenerationTokensTotal *float64 `json:"generationTokensTotal,omitempty"`
	PreemptionsTotal      *float64 `json:"preemptionsTotal,omitempty"`

	// Notes says what this server cannot tell (e.g. llama.cpp has no KV metric).
	Notes []string `json:"notes,omitempty"`
}

// GPU is the pod's accelerator activity, averaged over its GPUs.
type GPU struct {
	Utilization *float64 `json:"utilization,omitempty"` // 0-1 (duty cycle or engine activity)
	SMActive    *float64 `json:"smActive,omitempty"`    // 0-1 where known
	// Field names the source reading: DCGM_FI_PROF_SM_ACTIVE, DCGM_FI_PROF_GR_ENGINE_ACTIVE, DCGM_FI_DEV_GPU_UTIL, nv_gpu_utilization, ...
	Field  string `json:"field,omitempty"`
	Source string `json:"source,omitempty"` // dcgm-exporter | dcgm | server
	Count  int    `json:"count,omitempty"`  // GPUs seen
	Error  string `json:"error,omitempty"`  // the GPU source failed; other signals are intact
}

// Bucket is one cumulative histogram bucket. The +Inf bucket is not listed:
// its count is Histogram.Count.
type Bucket struct {
	UpperBound float64 `json:"le"`
	Count      float64 `json:"c"`
}

// Histogram is a raw cumulative Prometheus histogram, units normalised to seconds.
type Histogram struct {
	Buckets []Bucket `json:"b"`
	Sum     float64  `json:"sum"`
	Count   float64  `json:"count"`
}

// Fleet is the per-resource form: aggregates over the target's pods,
// typically from Prometheus.
type Fleet struct {
	Source string `json:"source"` // prometheus | direct
	// Pods counted by the source (may differ from len(Report.Pods)).
	ReadyPods    *int `json:"readyPods,omitempty"`
	StartingPods *int `json:"startingPods,omitempty"`
	// ServingPods is how many pods Prometheus holds a live series of the
	// waiting gauge for: the fleet's size as Prometheus sees it, read
	// without the pod list (the ready count when the list is refused).
	ServingPods *int `json:"servingPods,omitempty"`

	Waiting     *float64 `json:"waiting,omitempty"` // sum over pods
	Running     *float64 `json:"running,omitempty"` // sum over pods
	KVCacheMean *float64 `json:"kvCacheMean,omitempty"`
	KVCacheMax  *float64 `json:"kvCacheMax,omitempty"`
	GPUUtilMean *float64 `json:"gpuUtilMean,omitempty"`

	// Latency quantiles in seconds over Window, e.g. {"0.95": 1.2}.
	TTFTQuantiles map[string]float64 `json:"ttftQuantiles,omitempty"`
	E2EQuantiles  map[string]float64 `json:"e2eQuantiles,omitempty"`
	ITLQuantiles  map[string]float64 `json:"itlQuantiles,omitempty"` // inter-token gaps
	// TTFTRequests is how many requests the TTFT quantiles rest on: the
	// increase of the TTFT histogram's count over Window (optional).
	TTFTRequests *float64 `json:"ttftRequests,omitempty"`
	// ArrivalRate is requests per second over Window.
	ArrivalRate   *float64 `json:"arrivalRate,omitempty"`
	WindowSeconds float64  `json:"windowSeconds,omitempty"`
	// StalenessSeconds is the age of the newest sample behind these values.
	StalenessSeconds *float64 `json:"stalenessSeconds,omitempty"`
	// Errors lists queries that failed; the matching fields are nil.
	Errors []string `json:"errors,omitempty"`
}

// F returns a pointer to v (for building reports).
func F(v float64) *float64 { return &v }

// Encode validates the report and writes it as one compact JSON line.
func (r *Report) Encode() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encoding report: %w", err)
	}
	return append(b, '\n'), nil
}

// Decode parses one metric-stage value (a single JSON document, surrounding
// whitespace allowed) and validates it. A report of another version is
// named as such, not by the first field this build does not know. Unknown
// fields are ignored: a newer metric may add readings an older evaluate
// does not use.
func Decode(value string) (*Report, error) {
	var r Report
	if err := json.Unmarshal([]byte(value), &r); err != nil || r.Version != Version {
		if verr := checkVersion(value); verr != nil {
			return nil, verr
		}
		return nil, fmt.Errorf("signal report: %w", err)
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("invalid signal report: %w", err)
	}
	return &r, nil
}

// checkVersion explains why a value is no report of this version: not
// JSON, no "v", or another "v".
func checkVersion(value string) error {
	var probe struct {
		Version json.RawMessage `json:"v"`
	}
	if err := json.Unmarshal([]byte(value), &probe); err != nil {
		return fmt.Errorf("signal report is not valid JSON: %w", err)
	}
	switch v := string(probe.Version); {
	case v == "" || v == "null":
		return errors.New("signal report has no version field \"v\"")
	case v != fmt.Sprint(Version):
		return fmt.Errorf("signal report version %s is not supported (this build reads %d)", v, Version)
	}
	return nil
}

// Validate rejects reports no honest source produces: NaN or infinite
// values, values beyond the ranges below (MaxCount, MaxRequests, ...),
// negative gauges or counters, fractions above 1 (with a little slack for
// rounding), and histograms that are not cumulative.
func (r *Report) Validate() error {
	if r.Version != Version {
		return fmt.Errorf("signal report version %d is not supported (this build reads %d)", r.Version, Version)
	}
	if len(r.Pods) == 0 && r.Fleet == nil {
		return errors.New("signal report has neither pods nor fleet")
	}
	for i := range r.Pods {
		if err := r.Pods[i].validate(); err != nil {
			return fmt.Errorf("pods[%d] (%s): %w", i, r.Pods[i].Name, err)
		}
	}
	if r.Fleet != nil {
		if err := r.Fleet.validate(); err != nil {
			return fmt.Errorf("fleet: %w", err)
		}
	}
	if r.Peer != nil {
		if err := r.Peer.validate(); err != nil {
			return err
		}
	}
	return nil
}

const fractionSlack = 1.0001

// The ranges an honest server stays in: a finite value beyond them (a
// waiting count of 1e308, a prompt-length sum of 1e19) would overflow the
// fleet's sums or size the fleet on its own, so it is no reading.
const (
	// MaxCount bounds every counter, histogram count and sum, and time.
	MaxCount = 1e15
	// MaxRequests bounds a pod's waiting and running requests.
	MaxRequests = 1e6
	// MaxFleetRequests bounds the fleet's waiting and running sums and
	// its arrival rate (requests/s).
	MaxFleetRequests = 1e9
	// MaxFleetPods bounds a fleet's pod counts (CPA allows no more replicas).
	MaxFleetPods = 1_000_000
	// MaxPerObservation bounds a histogram's mean observation: 1e7 tokens
	// (the longest context windows) or seconds (115 days).
	MaxPerObservation = 1e7
)

func checkCount(name string, v *float64) error { return checkRange(name, v, MaxCount) }

// checkRange rejects a value that is not finite, negative or above limit.
func checkRange(name string, v *float64, limit float64) error {
	if v == nil {
		return nil
	}
	if math.IsNaN(*v) || math.IsInf(*v, 0) {
		return fmt.Errorf("%s is not a finite number", name)
	}
	if *v < 0 {
		return fmt.Errorf("%s is negative (%g)", name, *v)
	}
	if *v > limit {
		return fmt.Errorf("%s is %g, above the %g an honest source reports", name, *v, limit)
	}
	return nil
}

func checkFraction(name string, v *float64) error {
	if err := checkCount(name, v); err != nil {
		return err
	}
	if v != nil && *v > fractionSlack {
		return fmt.Errorf("%s is %g, above 1 (fractions are 0-1)", name, *v)
	}
	return nil
}

func (p *Pod) validate() error {
	if p.Name == "" {
		return errors.New("missing name")
	}
	if err := checkRange("waiting", p.Waiting, MaxRequests); err != nil {
		return err
	}
	if err := checkRange("running", p.Running, MaxRequests); err != nil {
		return err
	}
	for _, c := range []struct {
		n string
		v *float64
	}{{"startupSeconds", p.StartupSeconds},
		{"ageSeconds", p.AgeSeconds}, {"requestsTotal", p.RequestsTotal},
		{"promptTokensTotal", p.PromptTokensTotal}, {"generationTokensTotal", p.GenerationTokensTotal},
		{"preemptionsTotal", p.PreemptionsTotal}} {
		if err := checkCount(c.n, c.v); err != nil {
			return err
		}
	}
	if err := checkFraction("kvCacheUsage", p.KVCacheUsage); err != nil {
		return err
	}
	if p.GPU != nil {
		if err := checkFraction("gpu.utilization", p.GPU.Utilization); err != nil {
			return err
		}
		if err := checkFraction("gpu.smActive", p.GPU.SMActive); err != nil {
			return err
		}
	}
	for _, h := range []struct {
		n string
		h *Histogram
	}{{"ttft", p.TTFT}, {"e2e", p.E2E}, {"queueTime", p.QueueTime}, {"interToken", p.InterToken},
		{"promptLength", p.PromptLength}, {"generationLength", p.GenerationLength}} {
		if err := h.h.validate(); err != nil {
			return fmt.Errorf("%s: %w", h.n, err)
		}
	}
	return nil
}

// Validate checks one histogram as Validate checks a report's.
func (h *Histogram) Validate() error { return h.validate() }

func (h *Histogram) validate() error {
	if h == nil {
		return nil
	}
	if err := checkCount("count", &h.Count); err != nil {
		return err
	}
	if math.IsNaN(h.Sum) || math.IsInf(h.Sum, 0) {
		return errors.New("sum is not a finite number")
	}
	if math.Abs(h.Sum) > MaxPerObservation*math.Max(h.Count, 1) {
		return fmt.Errorf("sum %g over %g observations is above %g each", h.Sum, h.Count, MaxPerObservation)
	}
	prevLe, prevC := math.Inf(-1), 0.0
	for i, b := range h.Buckets {
		if math.IsNaN(b.UpperBound) || math.IsInf(b.UpperBound, 0) || math.Abs(b.UpperBound) > MaxCount {
			return fmt.Errorf("bucket %d: bound is not finite or out of range (the +Inf bucket is Count)", i)
		}
		if err := checkCount("bucket count", &b.Count); err != nil {
			return fmt.Errorf("bucket %d: %w", i, err)
		}
		if b.UpperBound <= prevLe {
			return fmt.Errorf("bucket %d: bounds not increasing", i)
		}
		if b.Count < prevC {
			return fmt.Errorf("bucket %d: counts not cumulative", i)
		}
		prevLe, prevC = b.UpperBound, b.Count
	}
	if h.Count < prevC {
		return errors.New("count is below the last bucket")
	}
	return nil
}

func (f *Fleet) validate() error {
	for _, c := range []struct {
		n string
		v *float64
	}{{"waiting", f.Waiting}, {"running", f.Running}, {"arrivalRate", f.ArrivalRate}} {
		if err := checkRange(c.n, c.v, MaxFleetRequests); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		n string
		v *float64
	}{{"stalenessSeconds", f.StalenessSeconds}, {"ttftRequests", f.TTFTRequests}} {
		if err := checkCount(c.n, c.v); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		n string
		v *float64
	}{{"kvCacheMean", f.KVCacheMean}, {"kvCacheMax", f.KVCacheMax}, {"gpuUtilMean", f.GPUUtilMean}} {
		if err := checkFraction(c.n, c.v); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		n string
		v *int
	}{{"readyPods", f.ReadyPods}, {"startingPods", f.StartingPods}, {"servingPods", f.ServingPods}} {
		if c.v != nil && (*c.v < 0 || *c.v > MaxFleetPods) {
			return fmt.Errorf("%s is %d, outside [0, %d]", c.n, *c.v, MaxFleetPods)
		}
	}
	for name, m := range map[string]map[string]float64{"ttftQuantiles": f.TTFTQuantiles, "e2eQuantiles": f.E2EQuantiles, "itlQuantiles": f.ITLQuantiles} {
		for q, v := range m {
			v := v
			if err := checkRange(name+"["+q+"]", &v, MaxPerObservation); err != nil {
				return err
			}
		}
	}
	return nil
}
