// Package state is what evaluate remembers between CPA ticks (CPA starts a
// fresh process on every tick): last scale times, recent recommendations,
// the GPU-utilisation EWMA, each pod's last counters and histograms,
// observed startup times, arrival-rate history and hourly demand peaks.
//
// This package is the model: the types, their bounds, the JSON encoding
// (a schema version, strict decoding, a size limit) and Record, the only
// function that changes a state. Where it is kept between ticks is package
// store's. Every slice is kept sorted so that a state that went through a
// file round-trips to exactly the same decisions as one kept in memory.
package state

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
)

// Version is the schema version written in every state document.
const Version = 1

// Bounds on what the state keeps, so that it stays far below the 1 MiB a
// ConfigMap holds: Record enforces them, Encode never writes more than
// MaxStateBytes and Decode refuses more.
const (
	MaxStateBytes      = 512 << 10
	MaxStartups        = 32
	MaxRecommendations = 1024
	MaxRates           = 64
	MaxHourlyPeaks     = 24 * 8
	// MaxPods bounds the per-pod counters, the part that grows with the
	// fleet: beyond it the least recently seen pods are not kept (they are
	// measured from their next scrape on). Record sheds what the next
	// scrapes rebuild until the whole state fits MaxStateBytes (see Trim).
	MaxPods = 512
	// MaxPodName is the longest pod name kept (Kubernetes names are at most 253 bytes).
	MaxPodName = 253
	// MaxHistogramBuckets is the most buckets a kept histogram has; a
	// larger one is not kept (the pod's latency is then unread).
	MaxHistogramBuckets = 128
	// MaxEventsBytes bounds the event recorder's memory; MaxAdvisory the
	// advisory history (three hours at CPA's 15 s interval).
	MaxEventsBytes = 32 << 10
	MaxAdvisory    = 720
	// PodForgetAfter drops a pod's counters when it has not been seen for this long.
	PodForgetAfter = 30 * time.Minute
)

// State is the persisted memory of the policy.
type State struct {
	Version int `json:"v"`
	// Target is the scale target the state was written for (nil: before
	// it was kept); a tick for another target does not use it (OwnedBy).
	Target *Target `json:"target,omitempty"`
	// LastTick is the time of the last evaluation that was saved.
	LastTick *time.Time `json:"lastTick,omitempty"`
	// LastScaleUp and LastScaleDown are when the observed replica count
	// last rose or fell, dated at the tick whose decision preceded the
	// change (see ScaleTimes): CPA may clamp or stabilise a target, so a
	// recommendation is not a scale.
	LastScaleUp   *time.Time `json:"lastScaleUp,omitempty"`
	LastScaleDown *time.Time `json:"lastScaleDown,omitempty"`
	// LastBreach is when a tick last read an objective breached (the
	// policy's breach rule): a scale-down waits a while after it.
	LastBreach *time.Time `json:"lastBreach,omitempty"`
	// LastScaleUpSignals is how many signals agreed at the last scale-up:
	// more agreeing inside the up-cooldown is an escalation it does not hold.
	LastScaleUpSignals int `json:"lastScaleUpSignals,omitempty"`
	// Replicas is the current replica count observed at LastTick (nil in
	// a state written before it was kept: no scale is inferred then).
	Replicas *int `json:"replicas,omitempty"`
	// Recommendations are the recent unstabilised recommendations, oldest first.
	Recommendations []Recommendation `json:"recommendations,omitempty"`
	// GPUUtilEWMA is the smoothed fleet GPU utilisation (0-1).
	GPUUtilEWMA *float64 `json:"gpuUtilEwma,omitempty"`
	// PodCapacityRPS is the learned throughput (finished requests/s) of one
	// pod while the fleet was saturated.
	PodCapacityRPS *float64 `json:"podCapacityRps,omitempty"`
	// LastQueue is the waiting requests per ready pod at the previous tick
	// (capacity is only learned when the fleet was saturated at both ends).
	LastQueue *float64 `json:"lastQueue,omitempty"`
	// Pods are the last counters seen per pod, sorted by name.
	Pods []PodCounters `json:"pods,omitempty"`
	// Startups are observed pod startup durations, oldest first.
	Startups []Startup `json:"startups,omitempty"`
	// Rates is the arrival-rate history, oldest first.
	Rates []RateSample `json:"rates,omitempty"`
	// HourlyPeaks is the peak reactive need per clock hour, oldest first.
	HourlyPeaks []HourlyPeak `json:"hourlyPeaks,omitempty"`
	// Service is policy v2's memory: the service model, the forecast and
	// the learned headroom (nil before the first v2 tick).
	Service *Service `json:"service,omitempty"`
	// Marked are the pods that may carry a pod-deletion cost (the victims
	// of the last scale-down asked for, and pods whose mark or clear
	// failed), sorted: a later tick clears the marks of those still there.
	Marked []string `json:"marked,omitempty"`
	// Events is the Kubernetes event recorder's memory (what it deduplicates
	// and rate-limits against), kept opaque here; at most MaxEventsBytes.
	Events json.RawMessage `json:"events,omitempty"`
	// Advisory is the decision history of advisory mode, oldest first, at
	// most MaxAdvisory ticks: what inferscale would have asked for.
	Advisory []AdvisoryTick `json:"advisory,omitempty"`
	// Last summarises the last saved tick's decision for the exporter
	// (nil in a state written before it was kept).
	Last *Last `json:"last,omitempty"`
	// Trimmed is true when the last Record had to shed detail to fit
	// MaxStateBytes (so the next one says so only when it begins again).
	Trimmed bool `json:"trimmed,omitempty"`
	// Repairs names the components Decode reset because they held a
	// number out of range (not persisted: the caller says so once).
	Repairs []string `json:"-"`
}

// AdvisoryTick is one advisory decision: the replicas there were and the
// target inferscale would have returned.
type AdvisoryTick struct {
	At      time.Time `json:"at"`
	Current int       `json:"current"`
	Target  int       `json:"target"`
}

// Recommendation is one tick's recommendation before stabilisation.
type Recommendation struct {
	At       time.Time `json:"at"`
	Replicas int       `json:"replicas"`
}

// PodCounters are one pod's cumulative readings at its last scrape.
type PodCounters struct {
	Name          string    `json:"name"`
	ScrapeTime    time.Time `json:"scrapeTime"`
	SeenAt        time.Time `json:"seenAt"`
	RequestsTotal *float64  `json:"requestsTotal,omitempty"`
	InFlight      *float64  `json:"inFlight,omitempty"`
	TTFT          *Hist     `json:"ttft,omitempty"`
	E2E           *Hist     `json:"e2e,omitempty"`
	// ITL is the inter-token histogram, kept only for an inter-token
	// objective (its buckets, for a quantile; Service keeps the sum and
	// count the model needs).
	ITL *Hist `json:"itl,omitempty"`
	// Service are the readings the service model is fitted from (nil in
	// a state written before they were kept: the pod is measured from its
	// next scrape on).
	Service *ServiceCounters `json:"service,omitempty"`
}

// ServiceCounters are one pod's cumulative readings for the service
// model: the inter-token histogram's sum and count, the token counters,
// the running and KV gauges, and the queue-time and request-length
// histograms.
type ServiceCounters struct {
	ITLSum       float64  `json:"itlSum,omitempty"`
	ITLCount     float64  `json:"itlCount,omitempty"`
	PromptTokens *float64 `json:"promptTokens,omitempty"`
	OutputTokens *float64 `json:"outputTokens,omitempty"`
	Running      float64  `json:"running,omitempty"`
	KV           float64  `json:"kv,omitempty"`
	Queue        *Hist    `json:"queue,omitempty"`
	Prompts      *Hist    `json:"prompts,omitempty"`
	Outputs      *Hist    `json:"outputs,omitempty"`
	// E2ESum and E2ECount are the end-to-end histogram's sum and count,
	// and Waiting the waiting gauge (nil: none read): where a server
	// exports no TTFT (TGI) or no queue time (Triton; llm-d's emulator
	// before a request has queued), they are what the prefill is read
	// from (fleet.prefill).
	E2ESum   float64  `json:"e2eSum,omitempty"`
	E2ECount float64  `json:"e2eCount,omitempty"`
	Waiting  *float64 `json:"waiting,omitempty"`
}

// Hist is a cumulative histogram stored as parallel arrays (bounds and
// counts): a third of the size of the signal form and much faster to
// decode, which matters at 64 pods per tick.
type Hist struct {
	LE    []float64 `json:"le"`
	C     []float64 `json:"c"`
	Sum   float64   `json:"sum"`
	Count float64   `json:"count"`
}

// HistOf converts a signal histogram (nil for nil, and for one with more
// than MaxHistogramBuckets buckets).
func HistOf(h *signal.Histogram) *Hist {
	if h == nil || len(h.Buckets) > MaxHistogramBuckets {
		return nil
	}
	out := &Hist{LE: make([]float64, len(h.Buckets)), C: make([]float64, len(h.Buckets)), Sum: h.Sum, Count: h.Count}
	for i, b := range h.Buckets {
		out.LE[i], out.C[i] = b.UpperBound, b.Count
	}
	return out
}

// Signal converts back to the signal form (nil for nil or a malformed one).
func (h *Hist) Signal() *signal.Histogram {
	if h == nil || len(h.LE) != len(h.C) {
		return nil
	}
	out := &signal.Histogram{Buckets: make([]signal.Bucket, len(h.LE)), Sum: h.Sum, Count: h.Count}
	for i := range h.LE {
		out.Buckets[i] = signal.Bucket{UpperBound: h.LE[i], Count: h.C[i]}
	}
	return out
}

// Startup is one observed pod startup (creation to ready).
type Startup struct {
	Pod     string    `json:"pod"`
	Seconds float64   `json:"seconds"`
	At      time.Time `json:"at"`
}

// RateSample is the fleet arrival rate (requests/s) measured at At.
type RateSample struct {
	At  time.Time `json:"at"`
	RPS float64   `json:"rps"`
}

// HourlyPeak is the highest reactive replica need seen in the clock hour
// starting at Hour (UTC).
type HourlyPeak struct {
	Hour     time.Time `json:"hour"`
	Replicas int       `json:"replicas"`
}

// New returns an empty state of the current schema version.
func New() *State { return &State{Version: Version} }

// Pod returns the stored counters of the named pod, or nil.
func (s *State) Pod(name string) *PodCounters {
	i := sort.Search(len(s.Pods), func(i int) bool { return s.Pods[i].Name >= name })
	if i < len(s.Pods) && s.Pods[i].Name == name {
		return &s.Pods[i]
	}
	return nil
}

// ScaleTimes returns the last scale-up and scale-down times given the
// replica count observed now. A count that differs from the one observed at
// LastTick is a scale that was applied after that tick, dated at it (the
// tick that asked for it); otherwise the stored times stand. It does not
// change s.
func (s *State) ScaleTimes(current int) (up, down *time.Time) {
	up, down = s.LastScaleUp, s.LastScaleDown
	if s.Replicas == nil || s.LastTick == nil {
		return up, down
	}
	at := *s.LastTick
	switch {
	case current > *s.Replicas:
		up = &at
	case current < *s.Replicas:
		down = &at
	}
	return up, down
}

// PeakAt returns the recorded peak of the hour containing t.
func (s *State) PeakAt(t time.Time) (int, bool) {
	hour := t.UTC().Truncate(time.Hour)
	i := sort.Search(len(s.HourlyPeaks), func(i int) bool { return !s.HourlyPeaks[i].Hour.Before(hour) })
	if i < len(s.HourlyPeaks) && s.HourlyPeaks[i].Hour.Equal(hour) {
		return s.HourlyPeaks[i].Replicas, true
	}
	return 0, false
}

// WithStartups returns the startup history after adding ss: a new slice
// holding the newest MaxStartups (prev is not changed).
func WithStartups(prev []Startup, ss ...Startup) []Startup {
	out := append(append(make([]Startup, 0, len(prev)+len(ss)), prev...), ss...)
	if n := len(out) - MaxStartups; n > 0 {
		out = out[n:]
	}
	return out
}

// WithRate returns the rate history after adding r: a new slice without
// the samples older than keep before r, and at most MaxRates long (prev is
// not changed).
func WithRate(prev []RateSample, r RateSample, keep time.Duration) []RateSample {
	out := append(append(make([]RateSample, 0, len(prev)+1), prev...), r)
	cut := 0
	for cut < len(out) && r.At.Sub(out[cut].At) > keep {
		cut++
	}
	return out[max(cut, len(out)-MaxRates):]
}
