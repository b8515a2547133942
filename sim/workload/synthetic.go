package workload

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Burst is a rectangular surge: from At for Duration the rate rises by
// Amplitude × BaseRate.
type Burst struct {
	At, Duration time.Duration
	Amplitude    float64
}

// SyntheticOptions describe a generated workload: a sinusoidal daily cycle
// around a base rate, plus scheduled and Poisson-timed bursts.
//
//	rate(t) = BaseRate·(1 + DiurnalAmplitude·cos(2π(t−PeakAt)/DiurnalPeriod))
//	        + BaseRate·Σ{Amplitude of the bursts active at t}
type SyntheticOptions struct {
	// Duration of the workload (> 0).
	Duration time.Duration
	// BaseRate is the mean rate outside bursts, requests per second (>= 0).
	BaseRate float64
	// DiurnalAmplitude in [0, 1] is the cycle's swing relative to BaseRate.
	DiurnalAmplitude float64
	// DiurnalPeriod is the cycle's period; 0 means 24 h.
	DiurnalPeriod time.Duration
	// PeakAt is when the cycle peaks (the trough is half a period away).
	PeakAt time.Duration
	// Bursts are scheduled surges (the demo's "sharp burst").
	Bursts []Burst
	// BurstsPerHour starts random bursts as a Poisson process; each lasts
	// BurstDuration and adds BurstAmplitude × BaseRate. Random bursts may
	// overlap (their amplitudes add).
	BurstsPerHour  float64
	BurstAmplitude float64
	BurstDuration  time.Duration
	// Seed makes the workload deterministic.
	Seed int64
	// Input and Output are the token-length laws; zero values mean
	// AzureConversationInput/Output.
	Input, Output TokenLaw
}

// DemoOptions is the workload `make demo` replays: one hour that starts at
// the trough (16 req/s), rises to 64 req/s at 30 min and falls back, with
// a sharp 3-minute burst at 40 min that adds 50 req/s (about 102 req/s at
// its height), conversation-sized requests (≈1,155 tokens in, 211 out).
// Sized on the simulator's Llama-3.1-8B/H100 model (sim/engine), which
// serves roughly 9–10 such req/s per replica: the cheapest static fleet
// meeting a 2 s TTFT objective for 99 % of requests is 10 replicas, and
// the clairvoyant oracle averages about 5.5, from 2–3 at the trough.
func DemoOptions(seed int64) SyntheticOptions {
	return SyntheticOptions{
		Duration:         time.Hour,
		BaseRate:         40,
		DiurnalAmplitude: 0.6,
		DiurnalPeriod:    time.Hour,
		PeakAt:           30 * time.Minute,
		Bursts:           []Burst{{At: 40 * time.Minute, Duration: 3 * time.Minute, Amplitude: 1.25}},
		Seed:             seed,
	}
}

// Validate reports the first option out of range.
func (o SyntheticOptions) Validate() error {
	bad := func(name string, v any, want string) error {
		return fmt.Errorf("synthetic workload: %s = %v, want %s", name, v, want)
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case o.Duration <= 0:
		return bad("Duration", o.Duration, "> 0")
	case !finite(o.BaseRate) || o.BaseRate < 0:
		return bad("BaseRate", o.BaseRate, "a finite number >= 0")
	case !finite(o.DiurnalAmplitude) || o.DiurnalAmplitude < 0 || o.DiurnalAmplitude > 1:
		return bad("DiurnalAmplitude", o.DiurnalAmplitude, "in [0, 1]")
	case o.DiurnalPeriod < 0:
		return bad("DiurnalPeriod", o.DiurnalPeriod, ">= 0")
	case !finite(o.BurstsPerHour) || o.BurstsPerHour < 0:
		return bad("BurstsPerHour", o.BurstsPerHour, "a finite number >= 0")
	case !finite(o.BurstAmplitude) || o.BurstAmplitude < 0:
		return bad("BurstAmplitude", o.BurstAmplitude, "a finite number >= 0")
	case o.BurstsPerHour > 0 && o.BurstDuration <= 0:
		return bad("BurstDuration", o.BurstDuration, "> 0 when BurstsPerHour > 0")
	}
	for i, b := range o.Bursts {
		if b.Duration <= 0 || b.At < 0 || !finite(b.Amplitude) || b.Amplitude < 0 {
			return bad(fmt.Sprintf("Bursts[%d]", i), b, "At >= 0, Duration > 0, finite Amplitude >= 0")
		}
	}
	return nil
}

// Synthetic generates a workload from opts as a non-homogeneous Poisson
// process (Lewis–Shedler thinning with a piecewise-constant bound that
// changes at burst edges), streaming and deterministic for a seed. Options
// out of range make Next fail (see Validate).
func Synthetic(opts SyntheticOptions) Source {
	g := &synthetic{opts: opts, err: opts.Validate()}
	if g.err != nil {
		return g
	}
	if g.opts.DiurnalPeriod == 0 {
		g.opts.DiurnalPeriod = 24 * time.Hour
	}
	inLaw, outLaw := opts.Input, opts.Output
	if inLaw == (TokenLaw{}) {
		inLaw = AzureConversationInput
	}
	if outLaw == (TokenLaw{}) {
		outLaw = AzureConversationOutput
	}
	g.in, g.out = inLaw.sampler(), outLaw.sampler()
	g.arrivals = newRand(opts.Seed, 1)
	g.burstRng = newRand(opts.Seed, 2)
	g.tokens = newRand(opts.Seed, 3)
	g.sched = slices.Clone(opts.Bursts)
	slices.SortStableFunc(g.sched, func(a, b Burst) int { return cmp.Compare(a.At, b.At) })
	g.end = opts.Duration.Seconds()
	g.omega = 2 * math.Pi / g.opts.DiurnalPeriod.Seconds()
	g.peak = opts.PeakAt.Seconds()
	g.nextRandom = math.Inf(1)
	if opts.BurstsPerHour > 0 && opts.BurstAmplitude > 0 {
		g.nextRandom = g.burstRng.ExpFloat64() * 3600 / opts.BurstsPerHour
	}
	return g
}

type activeBurst struct{ end, amp float64 }

type synthetic struct {
	opts                SyntheticOptions
	err                 error
	in, out             sampler
	arrivals, burstRng  *rand.Rand
	tokens              *rand.Rand
	sched               []Burst
	schedIdx            int
	active              []activeBurst
	nextRandom          float64
	t, end, omega, peak float64
	done                bool
}

func (g *synthetic) diurnal(t float64) float64 {
	return g.opts.BaseRate * (1 + g.opts.DiurnalAmplitude*math.Cos(g.omega*(t-g.peak)))
}

// nextEvent is the time of the next burst start or end.
func (g *synthetic) nextEvent() float64 {
	ev := g.nextRandom
	if g.schedIdx < len(g.sched) {
		ev = min(ev, g.sched[g.schedIdx].At.Seconds())
	}
	for _, a := range g.active {
		ev = min(ev, a.end)
	}
	return ev
}

// applyEvents starts and ends the bursts due at time ev.
func (g *synthetic) applyEvents(ev float64) {
	g.active = slices.DeleteFunc(g.active, func(a activeBurst) bool { return a.end <= ev })
	for g.schedIdx < len(g.sched) && g.sched[g.schedIdx].At.Seconds() <= ev {
		b := g.sched[g.schedIdx]
		g.active = append(g.active, activeBurst{end: (b.At + b.Duration).Seconds(), amp: b.Amplitude})
		g.schedIdx++
	}
	for g.nextRandom <= ev {
		g.active = append(g.active, activeBurst{end: g.nextRandom + g.opts.BurstDuration.Seconds(), amp: g.opts.BurstAmplitude})
		g.nextRandom += g.burstRng.ExpFloat64() * 3600 / g.opts.BurstsPerHour
	}
}

func (g *synthetic) burstRate() float64 {
	s := 0.0
	for _, a := range g.active {
		s += a.amp
	}
	return g.opts.BaseRate * s
}

func (g *synthetic) Next() (Request, bool, error) {
	if g.err != nil {
		return Request{}, false, g.err
	}
	for !g.done {
		bursts := g.burstRate()
		bound := g.opts.BaseRate*(1+g.opts.DiurnalAmplitude) + bursts
		ev := g.nextEvent()
		cand := math.Inf(1)
		if bound > 0 {
			cand = g.t + g.arrivals.ExpFloat64()/bound
		}
		if cand >= g.end && ev >= g.end {
			g.done = true
			break
		}
		if cand >= ev {
			g.t = ev
			g.applyEvents(ev)
			continue
		}
		g.t = cand
		if g.arrivals.Float64()*bound <= g.diurnal(cand)+bursts {
			return Request{
				Arrival:      time.Duration(cand * float64(time.Second)),
				InputTokens:  g.in.draw(g.tokens),
				OutputTokens: g.out.draw(g.tokens),
			}, true, nil
		}
	}
	return Request{}, false, nil
}

func (g *synthetic) Close() error { return nil }
