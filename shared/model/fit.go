package model

import (
	"cmp"
	"math"
)

// Fit is the persisted state of the service model: the iteration-time
// coefficients θ = α, β, γs, γkv as a Kalman filter.
type Fit struct {
	Step Kalman `json:"step"`
	// Decode and Prefill count the samples accepted from each series (the
	// inter-token gaps; TTFT − queue time): which parts of the model the
	// server's own readings have fitted.
	Decode  int `json:"decode,omitempty"`
	Prefill int `json:"prefill,omitempty"`
	// PrefillRejected counts the consecutive prefill samples the innovation
	// gate refused (the inter-token gaps' count is Step.Rejected): each
	// series has its own, so accepted decode samples do not keep a prefill
	// cost far off the prior from ever being learned.
	PrefillRejected int `json:"prefillRejected,omitempty"`
	// PrefillSeries names what the last accepted prefill sample was read
	// from (PrefillSample.Series; empty: SeriesPrefill).
	PrefillSeries string `json:"prefillSeries,omitempty"`
}

// A run of refusals re-widens the fit (Kalman.Update): resetAfter of them
// for a series that has fitted the model before (the server changed), and
// resetAfterUnfitted for one that never has, whose only estimate is the
// prior — a guess from another server, worth less than five ticks in a
// row that disagree with it.
const (
	resetAfter         = 20
	resetAfterUnfitted = 5
)

// resetLimit is the run of refusals after which a series that has
// accepted samples re-widens the fit.
func resetLimit(accepted int) int {
	if accepted == 0 {
		return resetAfterUnfitted
	}
	return resetAfter
}

// Series names of the fit's inputs, as Source reports them.
const (
	SeriesDecode  = "inter-token latency"
	SeriesPrefill = "TTFT − queue time"
)

// Source says where the model stands: "prior" before any sample,
// "partly fitted" when only one series has fitted it (a server that
// exports no inter-token histogram, or no queue time), "fitted" with
// both; and the series that did.
func (f *Fit) Source() (string, []string) {
	var series []string
	if f.Decode > 0 {
		series = append(series, SeriesDecode)
	}
	if f.Prefill > 0 {
		series = append(series, cmp.Or(f.PrefillSeries, SeriesPrefill))
	}
	switch {
	case f.StepSamples() == 0:
		return "prior", nil
	case len(series) == 1:
		return "partly fitted", series
	}
	return "fitted", series // both, or a state from before the counts
}

// StepSample is one pod's tick, as its counters and gauges show it.
type StepSample struct {
	// ITL is the mean inter-token gap over the tick (Δsum/Δcount of the
	// inter-token histogram): the mean step time seen by decoding requests.
	ITL float64
	// PromptRate is prompt tokens prefilled per second over the tick.
	PromptRate float64
	// Running and KV are the tick's mean running sequences and KV usage.
	Running, KV float64
}

// Noise levels of the step fit: an interval mean of the inter-token gap is
// precise, the model around it is not (gauges are point samples, steps
// without decodes are not seen), so the observation noise is 10 % of the
// value; each parameter may drift 0.3 % of the prior per sample.
const (
	stepNoise    = 0.10
	stepNoiseAbs = 2e-4
	stepDrift    = 0.003
	// The fit ranges over 1/30 to 30 times the prior (γs and γkv down
	// to 0: stepBounds): a GPU 30 times
	// faster or slower than the prior is another model entirely.
	stepRange = 30.0
)

func (f *Fit) stepFilter(prior Params) *Kalman {
	if !f.Step.Valid(4) {
		pv := prior.vec()
		f.Step = NewKalman(pv, pv) // 100 % prior uncertainty
	}
	return &f.Step
}

// ObserveStep folds one pod's tick into the iteration-time fit. It reports
// whether the sample was used (the innovation gate drops outliers).
func (f *Fit) ObserveStep(prior Params, s StepSample) bool {
	if !(s.ITL > 0) || !finite(s.ITL) || s.PromptRate < 0 || s.Running < 0 || s.KV < 0 {
		return false
	}
	k := f.stepFilter(prior)
	pv := prior.vec()
	q, lo, hi := stepBounds(pv)
	x := []float64{1, s.PromptRate * s.ITL, s.Running, s.KV}
	r := math.Pow(stepNoise*s.ITL, 2) + stepNoiseAbs*stepNoiseAbs
	ok := k.Update(x, s.ITL, r, q, lo, hi, resetFloor(pv), &k.Rejected, resetLimit(f.Decode))
	if ok {
		f.Decode++
	}
	return ok
}

// stepBounds are the step fit's process noise (each coefficient drifts by
// stepDrift of its prior per tick) and the box it is kept in (stepRange
// either side of the prior; γs and γkv down to 0). What a running
// sequence and the KV cache add to a step is the engine's design more than
// its GPU: BLIS's published step model for Llama-3.1-8B on an H100
// charges 6 µs a decoding sequence and nothing for KV, 48 times below the
// prior's γs, and a box at 1/30 left the fit unable to describe it: its
// refusals re-widened the fit again and again.
func stepBounds(prior []float64) (q, lo, hi []float64) {
	q, lo, hi = make([]float64, len(prior)), make([]float64, len(prior)), make([]float64, len(prior))
	for i, v := range prior {
		q[i] = (stepDrift * v) * (stepDrift * v)
		lo[i], hi[i] = v/stepRange, v*stepRange
		if i >= 2 { // γs and γkv, in Params.vec's order
			lo[i] = 0
		}
	}
	return q, lo, hi
}

// resetFloor is the least deviation a re-widening gives each coefficient
// (the prior over stepRange); above it each keeps its own size
// (Kalman.rewiden). Re-widened to the prior's deviations, a γs fitted 48
// times below the prior could take most of the next innovation at 50
// running sequences, and the work per request swung to 5-20 times the
// engine's for minutes: on BLIS's engine the demo scaled 3 → 44 pods with
// nothing waiting.
func resetFloor(prior []float64) []float64 {
	f := make([]float64, len(prior))
	for i, v := range prior {
		f[i] = v / stepRange
	}
	return f
}

// Params is the fitted iteration-time model (the prior before any sample).
func (f *Fit) Params(prior Params) Params {
	if !f.Step.Valid(4) {
		return prior
	}
	return paramsOf(f.Step.Theta)
}

// StepSamples is how many samples the step fit has accepted.
func (f *Fit) StepSamples() int {
	if !f.Step.Valid(4) {
		return 0
	}
	return f.Step.Samples
}

// PrefillSample is one pod's tick of prefills: the mean time from
// scheduling to first token (mean TTFT minus mean queue time), the mean
// prompt and the mean number of chunks per prompt, and the running
// sequences and KV usage the chunks' steps carried.
type PrefillSample struct {
	Mean, Prompt, Chunks, Running, KV float64
	Requests                          float64
	// Shared is the other prompts' tokens each of the chunks' steps
	// prefilled too (tokens per step): a step's budget is shared, and a
	// prefill takes the whole step.
	Shared float64
	// Spread is the mean's noise beyond the requests' own (seconds: a mean
	// read from the end-to-end latency less the decode carries the
	// decode's error), and Series names what it was read from (empty:
	// SeriesPrefill).
	Spread float64
	Series string
}

// prefillNoise is the relative noise of a tick's mean prefill time: it
// mixes requests of different lengths and ignores other prompts sharing a
// step's budget.
const prefillNoise = 0.2

// ObservePrefill folds one pod's prefill times into the step fit: each
// chunk is one step, so the mean prefill is α·c + β·(i + c·s) + γs·c·n +
// γkv·c·k, s the other prompts' tokens each step carried (Shared). This is
// what pins β: decode-time steps rarely carry long prompts.
func (f *Fit) ObservePrefill(prior Params, s PrefillSample) bool {
	if !(s.Mean > 0) || !finite(s.Mean) || !(s.Prompt > 0) || !(s.Chunks >= 1) || s.Running < 0 || s.KV < 0 || !(s.Requests > 0) || !(s.Spread >= 0) || math.IsInf(s.Spread, 0) || !(s.Shared >= 0) || math.IsInf(s.Shared, 0) {
		return false
	}
	k := f.stepFilter(prior)
	pv := prior.vec()
	q, lo, hi := stepBounds(pv)
	x := []float64{s.Chunks, s.Prompt + s.Chunks*s.Shared, s.Chunks * s.Running, s.Chunks * s.KV}
	rel := prefillNoise * math.Sqrt(math.Max(1, 10/s.Requests))
	r := math.Pow(rel*s.Mean, 2) + stepNoiseAbs*stepNoiseAbs + math.Pow(math.Max(s.Spread, 0), 2)
	ok := k.Update(x, s.Mean, r, q, lo, hi, resetFloor(pv), &f.PrefillRejected, resetLimit(f.Prefill))
	if ok {
		f.Prefill++
		f.PrefillSeries = s.Series
	}
	return ok
}

// Clone is a deep copy.
func (f Fit) Clone() Fit {
	c := f
	c.Step = f.Step.Clone()
	return c
}
