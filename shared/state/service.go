package state

import (
	"errors"
	"time"

	"github.com/inferscale/inferscale/shared/forecast"
	"github.com/inferscale/inferscale/shared/model"
)

// Service is what the service model, the demand forecast and the sizing
// remember between ticks (package sizing computes the next one; Record
// stores it). Every part is bounded: the fit is a fixed-size filter, the
// forecast keeps at most its MaxScores errors and one horizon of pending
// forecasts, the prompt lengths are the server's histogram buckets, Needs
// spans one hold.
type Service struct {
	Fit      model.Fit      `json:"fit"`
	Forecast forecast.State `json:"forecast"`
	// Beta is the learned square-root-staffing headroom.
	Beta float64 `json:"beta"`
	// Prompts are the prompt lengths seen, with exponential forgetting.
	Prompts model.Lengths `json:"prompts"`
	// Mix is the request mix seen, with exponential forgetting (Weight is
	// its pseudo-count of requests).
	Mix       model.Mix `json:"mix"`
	MixWeight float64   `json:"mixWeight,omitempty"`
	// Needs are the recent sizings, for the hold after a scale-up.
	Needs []Need `json:"needs,omitempty"`
	// Ticks counts the ticks with a demand reading.
	Ticks int `json:"ticks,omitempty"`
	// Planned is the fleet the last tick's plan asked for: while fewer
	// pods are ready, misses are the plan's delay, not its headroom.
	Planned int `json:"planned,omitempty"`
	// Unmoved is the share of requests that missed the objective beyond
	// waiting while the fleet had well more pods than planned: what more
	// pods did not fix.
	Unmoved float64 `json:"unmoved,omitempty"`
	// Dispersion is what the arrivals' peakedness is learned from (a
	// state without one starts from Poisson arrivals).
	Dispersion Dispersion `json:"dispersion,omitzero"`
	// Spent is how much of the miss budget the recent requests used.
	Spent Spent `json:"spent,omitzero"`
	// Floor is the fleet a reactive signal last scaled up to while the
	// fleet was at the plan, as it comes down (package sizing, floor.go).
	Floor Floor `json:"floor,omitzero"`
}

// Floor is the fleet a reactive scale-up asked for (Pods; 0: none) and
// the earliest time it may come down a pod (Next).
type Floor struct {
	Pods int       `json:"pods"`
	Next time.Time `json:"next,omitzero"`
	// At is what a state written before Next keeps instead: the time the
	// floor last rose or came down (a hold before its next step). Read
	// once (package sizing turns it into Next), never written again.
	At time.Time `json:"at,omitzero"`
}

// Spent counts the recent requests with a first token and those of them
// that missed the objective beyond the prompts no pod prefills in time,
// with exponential forgetting (package sizing, budget.go).
type Spent struct {
	Missed   float64 `json:"missed"`
	Requests float64 `json:"requests"`
	// Fleet is the ready pods the last tick was read at; FleetMissed and
	// FleetRequests count as Missed and Requests do, over the ticks since
	// the ready fleet last grew.
	Fleet         int     `json:"fleet,omitempty"`
	FleetMissed   float64 `json:"fleetMissed,omitempty"`
	FleetRequests float64 `json:"fleetRequests,omitempty"`
}

// Dispersion holds the arrival counts' dispersion at the tick and at
// two ticks (Pair), for the arrivals' peakedness; Pending is the first
// count of a pair not yet complete, Ticks the counts seen.
type Dispersion struct {
	Tick    DispersionScale `json:"tick"`
	Pair    DispersionScale `json:"pair"`
	Pending float64         `json:"pending,omitempty"`
	Ticks   int             `json:"ticks"`
}

// DispersionScale is one time scale's memory, with exponential
// forgetting: Last is the last count, Diff the weighted mean of the
// halved squared differences of consecutive counts, Mean that of their
// means, Weight their pseudo-count.
type DispersionScale struct {
	Last   float64 `json:"last"`
	Diff   float64 `json:"diff"`
	Mean   float64 `json:"mean"`
	Weight float64 `json:"weight"`
	Seen   bool    `json:"seen,omitempty"`
}

// Need is one tick's sizing.
type Need struct {
	At   time.Time `json:"at"`
	Pods int       `json:"pods"`
}

// Clone is a deep copy (the sizing builds the next state from it without
// touching the stored one).
func (s Service) Clone() Service {
	c := s
	c.Fit = s.Fit.Clone()
	c.Forecast = s.Forecast.Clone()
	c.Prompts = s.Prompts.Clone()
	c.Needs = append([]Need(nil), s.Needs...)
	return c
}

// Bounds of the service memory (a state holding more is refused). At
// these limits it encodes to well under the 128 KiB the state keeps for
// everything but the pods (TestServiceAtItsLimitsFitsTheBudget).
const (
	MaxForecastScores  = 512
	MaxForecastPending = 512
	MaxServiceNeeds    = 256
	MaxLengthBuckets   = MaxHistogramBuckets
)

// Check rejects a service memory that is out of bounds or holds a number
// that is not finite or beyond MaxValue (JSON has no NaN but holds 1e308,
// and a state may be damaged).
func (s *Service) Check() error {
	switch {
	case len(s.Forecast.Scores) > MaxForecastScores || len(s.Forecast.Pending) > MaxForecastPending ||
		len(s.Needs) > MaxServiceNeeds || len(s.Prompts.LE) > MaxLengthBuckets:
		return errors.New("state service memory is longer than this build keeps")
	case len(s.Prompts.LE) != len(s.Prompts.C):
		return errors.New("state prompt lengths have unequal bounds and counts")
	case !s.finite():
		return errors.New("state service memory holds a number that is not finite or out of range")
	case s.Spent.Missed < 0 || s.Spent.Missed > s.Spent.Requests ||
		s.Spent.FleetMissed < 0 || s.Spent.FleetMissed > s.Spent.FleetRequests:
		return errors.New("state miss budget counts more misses than requests, or fewer than none")
	}
	if s.Floor.Pods < 0 || s.Floor.Pods > MaxReplicas || s.Spent.Fleet < 0 || s.Spent.Fleet > MaxReplicas {
		return errors.New("state service memory holds a floor or a budget fleet out of range")
	}
	for _, n := range s.Needs {
		if n.Pods < 0 || n.Pods > MaxReplicas {
			return errors.New("state service memory holds a need out of range")
		}
	}
	return nil
}

// finite reports whether every number is finite and within MaxValue.
func (s *Service) finite() bool {
	vals := []float64{s.Forecast.Level, s.Forecast.Trend, s.Forecast.Alpha, s.Mix.PromptTokens, s.Mix.OutputTokens,
		s.Mix.KVPerSeq, s.MixWeight, s.Prompts.Count, s.Beta, s.Unmoved, s.Spent.Missed, s.Spent.Requests, s.Spent.FleetMissed, s.Spent.FleetRequests,
		s.Dispersion.Pending,
		s.Dispersion.Tick.Last, s.Dispersion.Tick.Diff, s.Dispersion.Tick.Mean, s.Dispersion.Tick.Weight,
		s.Dispersion.Pair.Last, s.Dispersion.Pair.Diff, s.Dispersion.Pair.Mean, s.Dispersion.Pair.Weight}
	vals = append(vals, s.Forecast.Scores...)
	vals = append(vals, s.Prompts.C...)
	vals = append(vals, s.Prompts.LE...)
	vals = append(vals, s.Fit.Step.Theta...)
	for _, row := range s.Fit.Step.Cov {
		vals = append(vals, row...)
	}
	for _, p := range s.Forecast.Pending {
		vals = append(vals, p.Forecast, p.Upper, p.Peak)
	}
	return inRange(vals...)
}
