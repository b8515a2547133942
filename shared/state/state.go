// Package state is what evaluate remembers between CPA ticks (CPA starts a
// fresh process on every tick): last scale times, recent recommendations,
// the GPU-utilisation EWMA, each pod's last counters and histograms,
// observed startup times, arrival-rate history and hourly demand peaks.
//
// The state is plain JSON with a schema version. Every slice is kept sorted
// so that a state that went through a file round-trips to exactly the same
// decisions as one kept in memory.
package state

import (
	"sort"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
)

// Version is the schema version written in every state document.
const Version = 1

// Bounds on what the state keeps, so that its size stays constant.
const (
	MaxStartups        = 32
	MaxRecommendations = 1024
	MaxRates           = 64
	MaxHourlyPeaks     = 24 * 8
	// PodForgetAfter drops a pod's counters when it has not been seen for this long.
	PodForgetAfter = 30 * time.Minute
)

// State is the persisted memory of the policy.
type State struct {
	Version int `json:"v"`
	// LastTick is the time of the last evaluation that was saved.
	LastTick *time.Time `json:"lastTick,omitempty"`
	// LastScaleUp and LastScaleDown are when the observed replica count
	// last rose or fell, dated at the tick whose decision preceded the
	// change (see ScaleTimes): CPA may clamp or stabilise a target, so a
	// recommendation is not a scale.
	LastScaleUp   *time.Time `json:"lastScaleUp,omitempty"`
	LastScaleDown *time.Time `json:"lastScaleDown,omitempty"`
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

// HistOf converts a signal histogram (nil for nil).
func HistOf(h *signal.Histogram) *Hist {
	if h == nil {
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

// PutPod stores c, replacing the pod of the same name, keeping Pods sorted.
func (s *State) PutPod(c PodCounters) {
	i := sort.Search(len(s.Pods), func(i int) bool { return s.Pods[i].Name >= c.Name })
	if i < len(s.Pods) && s.Pods[i].Name == c.Name {
		s.Pods[i] = c
		return
	}
	s.Pods = append(s.Pods, PodCounters{})
	copy(s.Pods[i+1:], s.Pods[i:])
	s.Pods[i] = c
}

// ForgetPods drops pods not seen since before cutoff.
func (s *State) ForgetPods(cutoff time.Time) {
	kept := s.Pods[:0]
	for _, p := range s.Pods {
		if !p.SeenAt.Before(cutoff) {
			kept = append(kept, p)
		}
	}
	s.Pods = kept
}

// HasStartup reports whether pod's startup was already recorded.
func (s *State) HasStartup(pod string) bool {
	for _, st := range s.Startups {
		if st.Pod == pod {
			return true
		}
	}
	return false
}

// AddStartup records a pod's startup, keeping the newest MaxStartups.
func (s *State) AddStartup(st Startup) {
	s.Startups = append(s.Startups, st)
	if n := len(s.Startups) - MaxStartups; n > 0 {
		s.Startups = append(s.Startups[:0], s.Startups[n:]...)
	}
}

// AddRate appends a rate sample and drops samples older than keep.
func (s *State) AddRate(r RateSample, keep time.Duration) {
	s.Rates = append(s.Rates, r)
	cut := 0
	for cut < len(s.Rates) && r.At.Sub(s.Rates[cut].At) > keep {
		cut++
	}
	if n := len(s.Rates) - MaxRates; n > cut {
		cut = n
	}
	if cut > 0 {
		s.Rates = append(s.Rates[:0], s.Rates[cut:]...)
	}
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

// ObserveReplicas stores the scale times implied by the replica count
// observed now (ScaleTimes) and remembers the count for the next tick.
// Call it before moving LastTick to now.
func (s *State) ObserveReplicas(current int) {
	s.LastScaleUp, s.LastScaleDown = s.ScaleTimes(current)
	s.Replicas = &current
}

// AddRecommendation appends a recommendation and drops those older than keep.
func (s *State) AddRecommendation(r Recommendation, keep time.Duration) {
	s.Recommendations = append(s.Recommendations, r)
	cut := 0
	for cut < len(s.Recommendations) && r.At.Sub(s.Recommendations[cut].At) > keep {
		cut++
	}
	if n := len(s.Recommendations) - MaxRecommendations; n > cut {
		cut = n
	}
	if cut > 0 {
		s.Recommendations = append(s.Recommendations[:0], s.Recommendations[cut:]...)
	}
}

// NotePeak raises the peak of the hour containing at to replicas.
func (s *State) NotePeak(at time.Time, replicas int) {
	hour := at.UTC().Truncate(time.Hour)
	if n := len(s.HourlyPeaks); n > 0 && s.HourlyPeaks[n-1].Hour.Equal(hour) {
		if replicas > s.HourlyPeaks[n-1].Replicas {
			s.HourlyPeaks[n-1].Replicas = replicas
		}
		return
	}
	if n := len(s.HourlyPeaks); n > 0 && hour.Before(s.HourlyPeaks[n-1].Hour) {
		return // clock went backwards; keep history ordered
	}
	s.HourlyPeaks = append(s.HourlyPeaks, HourlyPeak{Hour: hour, Replicas: replicas})
	if n := len(s.HourlyPeaks) - MaxHourlyPeaks; n > 0 {
		s.HourlyPeaks = append(s.HourlyPeaks[:0], s.HourlyPeaks[n:]...)
	}
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
