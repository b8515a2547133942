package state

import (
	"encoding/json"
	"slices"
	"sort"
	"time"
)

// Tick is what one evaluation learned: fleet.Aggregate fills Observed and
// policy.Decision.Memory fills Decided. Record stores it.
type Tick struct {
	At time.Time
	// Target is the scale target of the tick (nil: unknown, the stored
	// one stays).
	Target *Target
	Observed
	Decided
}

// Observed is what the aggregation of one tick's reports learned.
type Observed struct {
	// Pods are the counters of the pods scraped anew; they replace the
	// stored ones.
	Pods []PodCounters
	// Refreshed are pods seen again with the scrape already stored: only
	// their SeenAt moves.
	Refreshed []string
	// Startups are pod startups observed for the first time.
	Startups []Startup
	// GPUUtilEWMA and PodCapacityRPS are the smoothed utilisation and the
	// learned per-pod capacity after this tick (nil: unchanged).
	GPUUtilEWMA, PodCapacityRPS *float64
	// Queue is the waiting requests per ready pod that reported (nil: none
	// did).
	Queue *float64
	// Rate is the arrival rate measured this tick (nil: none), kept in the
	// history for RateKeep.
	Rate     *RateSample
	RateKeep time.Duration
}

// Decided is what the state remembers of one decision.
type Decided struct {
	// Replicas is the replica count observed this tick; a change from the
	// previous tick's is a scale that was applied (see ScaleTimes).
	Replicas int
	// Recommendation is kept for the stabilisation windows, for
	// RecommendationKeep.
	Recommendation     int
	RecommendationKeep time.Duration
	// ScaleUp is true when the target is above Replicas; Signals is how
	// many signals agreed (an escalation inside the up-cooldown needs more).
	ScaleUp bool
	Signals int
	// Breached is true when the tick read an objective breached
	// (LastBreach).
	Breached bool
	// Need is the reactive replica need, kept as the hour's peak for the
	// predictive floor.
	Need int
	// Service is policy v2's next memory (nil: unchanged). One that fails
	// Check is not stored, and the service memory starts fresh (the one
	// it was computed from gave a number out of range); so it does with
	// ResetService.
	Service      *Service
	ResetService bool
	// Marked are the pods that may carry a deletion cost after this tick:
	// those marked, and those whose mark or clear failed (a later tick
	// clears them). Empty: none.
	Marked []string
	// Events is the event recorder's memory after this tick (nil:
	// unchanged; one above MaxEventsBytes is not kept).
	Events json.RawMessage
	// Advisory is this tick's advisory decision (nil: active mode).
	Advisory *AdvisoryTick
	// Last summarises the decision for the exporter (nil: none kept).
	Last *Last
}

// Record stores one tick in s. It is the only function that changes a
// state. The state it leaves always encodes within MaxStateBytes: what
// it had to shed for that is returned (see Trim).
func (s *State) Record(t Tick) Trim {
	s.Version = Version
	if t.Target != nil && t.Target.valid() {
		tt := *t.Target
		s.Target = &tt
	}
	s.recordObserved(t.At, t.Observed)
	s.recordDecided(t.At, t.Decided)
	return s.fit()
}

func (s *State) recordObserved(at time.Time, o Observed) {
	for _, name := range o.Refreshed {
		if p := s.Pod(name); p != nil {
			p.SeenAt = at
		}
	}
	for _, c := range o.Pods {
		if len(c.Name) <= MaxPodName && c.valid() {
			s.putPod(c)
		}
	}
	s.forgetPods(at.Add(-PodForgetAfter))
	if len(o.Startups) > 0 {
		s.Startups = WithStartups(s.Startups, o.Startups...)
	}
	// A number out of range is not kept (the value before it stays, or
	// none): it would make every later tick's arithmetic non-finite.
	if o.GPUUtilEWMA != nil && inRangePtr(o.GPUUtilEWMA) {
		s.GPUUtilEWMA = new(*o.GPUUtilEWMA)
	}
	if o.PodCapacityRPS != nil && inRangePtr(o.PodCapacityRPS) {
		s.PodCapacityRPS = new(*o.PodCapacityRPS)
	}
	s.LastQueue = nil
	if o.Queue != nil && inRangePtr(o.Queue) {
		s.LastQueue = new(*o.Queue)
	}
	if o.Rate != nil && inRange(o.Rate.RPS) && o.Rate.RPS >= 0 {
		s.Rates = WithRate(s.Rates, *o.Rate, o.RateKeep)
	}
}

func (s *State) recordDecided(at time.Time, d Decided) {
	s.addRecommendation(Recommendation{At: at, Replicas: d.Recommendation}, d.RecommendationKeep)
	// The scale times follow from the count observed now against the one
	// of the previous tick: before LastTick moves.
	s.LastScaleUp, s.LastScaleDown = s.ScaleTimes(d.Replicas)
	s.Replicas = &d.Replicas
	if d.ScaleUp {
		s.LastScaleUpSignals = d.Signals
	}
	s.LastTick = &at
	if d.Breached {
		s.LastBreach = &at
	}
	s.recordLast(d.Last)
	s.notePeak(at, d.Need)
	if d.Events != nil {
		s.Events = nil
		if len(d.Events) <= MaxEventsBytes && json.Valid(d.Events) {
			s.Events = append(json.RawMessage(nil), d.Events...)
		}
	}
	if d.Advisory != nil {
		s.Advisory = append(s.Advisory, *d.Advisory)
		if n := len(s.Advisory) - MaxAdvisory; n > 0 {
			s.Advisory = append(s.Advisory[:0], s.Advisory[n:]...)
		}
	}
	s.Marked = nil
	if len(d.Marked) > 0 {
		s.Marked = append([]string(nil), d.Marked...)
		sort.Strings(s.Marked)
		s.Marked = slices.Compact(s.Marked)
		s.Marked = s.Marked[:min(len(s.Marked), MaxPods)]
	}
	switch {
	case d.ResetService:
		s.Service = nil
	case d.Service != nil && d.Service.Check() == nil:
		next := d.Service.Clone()
		s.Service = &next
	case d.Service != nil:
		// The next memory holds a number out of range: what it was
		// computed from is no base either, start fresh.
		s.Service = nil
	}
}

// putPod stores c, replacing the pod of the same name, keeping Pods sorted.
func (s *State) putPod(c PodCounters) {
	i := sort.Search(len(s.Pods), func(i int) bool { return s.Pods[i].Name >= c.Name })
	if i < len(s.Pods) && s.Pods[i].Name == c.Name {
		s.Pods[i] = c
		return
	}
	s.Pods = append(s.Pods, PodCounters{})
	copy(s.Pods[i+1:], s.Pods[i:])
	s.Pods[i] = c
}

// forgetPods drops pods not seen since before cutoff.
func (s *State) forgetPods(cutoff time.Time) {
	kept := s.Pods[:0]
	for _, p := range s.Pods {
		if !p.SeenAt.Before(cutoff) {
			kept = append(kept, p)
		}
	}
	s.Pods = kept
}

// addRecommendation appends a recommendation and drops those older than
// keep, keeping at most MaxRecommendations.
func (s *State) addRecommendation(r Recommendation, keep time.Duration) {
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

// notePeak raises the peak of the hour containing at to replicas.
func (s *State) notePeak(at time.Time, replicas int) {
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
