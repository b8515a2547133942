package baseline

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/inferscale/inferscale/sim/scaler"
)

// Seed000Config holds the constants of seed 000's multi-metric controller.
type Seed000Config struct {
	Name     string
	Period   time.Duration // sampling cycle (5 s in the article)
	Alpha    float64       // EWMA smoothing of GPU utilisation (0.3)
	UtilUpA  float64       // rule A: util > 0.80 ...
	QueueUpA float64       // ... and queue > 10 → +1
	KVUpB    float64       // rule B: KV > 0.90 ...
	UtilUpB  float64       // ... and util > 0.60 → +2
	// Rule C: P99 > P99Factor × P99Baseline → alert only (no scaling this tick).
	P99Baseline time.Duration // 500 ms
	P99Factor   float64       // 2
	UtilDownD   float64       // rule D: util < 0.20 and queue == 0 → −1
	// P99History is the window of P99 samples whose P99 rule C reads (60 s).
	P99History time.Duration
	// LatencyWindow is the range each P99 sample is computed over (60 s).
	LatencyWindow time.Duration
	// UseE2E reads the end-to-end histogram instead of TTFT.
	UseE2E       bool
	UpCooldown   time.Duration // 60 s
	DownCooldown time.Duration // 300 s
}

// Seed000 is the Rust InferenceHPA of seed 000, rule for rule, on fleet
// means (GPU utilisation, waiting requests, KV-cache usage) and a fleet
// P99 from the latency histograms. Like the original it keeps its own
// current_replicas (initialised from the first observed spec.replicas),
// separate up/down cooldowns, an "alert" (no action) when a scale-up would
// exceed max, and rule C returning before rule D can scale down.
type Seed000 struct {
	cfg       Seed000Config
	ewma      float64
	ewmaInit  bool
	p99s      []timedValue // ms
	win       *histogramWindow
	lastUp    time.Time
	lastDown  time.Time
	current   int
	started   bool
	lastAlert string
}

// NewSeed000 checks the constants.
func NewSeed000(cfg Seed000Config) (*Seed000, error) {
	if !(cfg.Alpha > 0) || cfg.Alpha > 1 {
		return nil, errors.New("seed000: alpha must be in (0, 1]")
	}
	if cfg.Period <= 0 || cfg.P99History <= 0 || cfg.LatencyWindow <= 0 || cfg.UpCooldown < 0 || cfg.DownCooldown < 0 {
		return nil, errors.New("seed000: period and windows must be positive, cooldowns not negative")
	}
	pick := pickTTFT
	if cfg.UseE2E {
		pick = pickE2E
	}
	return &Seed000{cfg: cfg, win: newHistogramWindow(cfg.LatencyWindow, pick)}, nil
}

// Name implements scaler.Autoscaler.
func (s *Seed000) Name() string { return s.cfg.Name }

// Period implements scaler.Autoscaler.
func (s *Seed000) Period() time.Duration { return s.cfg.Period }

// LastAlert is the message of the latest alert-only outcome ("" if none yet).
func (s *Seed000) LastAlert() string { return s.lastAlert }

// Recommend runs InferenceHPA.evaluate once.
func (s *Seed000) Recommend(obs scaler.Observation) (int, error) {
	if !s.started {
		s.current, s.started = obs.SpecReplicas, true
	}
	gpu, okG := fleetMean(obs, readGPUUtil)
	queue, okQ := fleetMean(obs, readWaiting)
	kv, okK := fleetMean(obs, readKV)
	if !okG || !okQ || !okK {
		return s.current, fmt.Errorf("seed000: no metrics snapshot (gpu %v, queue %v, kv %v)", okG, okQ, okK)
	}
	now := obs.Now
	// Step 1: smooth GPU utilisation.
	if !s.ewmaInit {
		s.ewma, s.ewmaInit = gpu, true
	} else {
		s.ewma = s.cfg.Alpha*gpu + (1-s.cfg.Alpha)*s.ewma
	}
	smoothed := s.ewma
	// Step 2: latency history and its P99. A window without finished
	// requests has no P99 sample (the original would have panicked on NaN).
	s.win.observe(obs)
	if q, err := s.win.fleetQuantile(0.99, now); err == nil {
		s.p99s = append(s.p99s, timedValue{now, q * 1000})
	} else if !errors.Is(err, errNoRequests) {
		return s.current, fmt.Errorf("seed000: %w", err)
	}
	cutoff := now.Add(-s.cfg.P99History)
	for len(s.p99s) > 0 && s.p99s[0].at.Before(cutoff) {
		s.p99s = s.p99s[1:]
	}
	p99 := computeP99(s.p99s)
	// Step 3: scale-up rules.
	if smoothed > s.cfg.UtilUpA && queue > s.cfg.QueueUpA {
		return s.tryScaleUp(obs, 1), nil // rule A
	}
	if kv > s.cfg.KVUpB && smoothed > s.cfg.UtilUpB {
		return s.tryScaleUp(obs, 2), nil // rule B
	}
	if p99 > s.cfg.P99Factor*float64(s.cfg.P99Baseline)/float64(time.Millisecond) {
		s.lastAlert = fmt.Sprintf("P99 latency %.0fms exceeds %gx baseline", p99, s.cfg.P99Factor)
		return s.current, nil // rule C: alert only
	}
	// Step 4: scale-down rule.
	if smoothed < s.cfg.UtilDownD && queue == 0 {
		return s.tryScaleDown(obs, 1), nil // rule D
	}
	return s.current, nil
}

func (s *Seed000) tryScaleUp(obs scaler.Observation, count int) int {
	if !s.lastUp.IsZero() && obs.Now.Sub(s.lastUp) < s.cfg.UpCooldown {
		return s.current
	}
	target := s.current + count
	if target > obs.MaxReplicas {
		s.lastAlert = fmt.Sprintf("need %d replicas but max is %d", target, obs.MaxReplicas)
		return s.current
	}
	s.current, s.lastUp = target, obs.Now
	return s.current
}

func (s *Seed000) tryScaleDown(obs scaler.Observation, count int) int {
	if !s.lastDown.IsZero() && obs.Now.Sub(s.lastDown) < s.cfg.DownCooldown {
		return s.current
	}
	target := max(0, s.current-count) // saturating_sub
	if target < obs.MinReplicas {
		return s.current
	}
	s.current, s.lastDown = target, obs.Now
	return s.current
}

// computeP99 is the original's nearest-rank P99 of the samples (0 if none).
func computeP99(samples []timedValue) float64 {
	if len(samples) == 0 {
		return 0
	}
	v := make([]float64, len(samples))
	for i, s := range samples {
		v[i] = s.v
	}
	sort.Float64s(v)
	idx := int(math.Ceil(float64(len(v))*0.99)) - 1
	return v[max(0, min(idx, len(v)-1))]
}

// seed000: rules A–D of seed 000.
func seed000Preset() preset {
	return preset{
		tunables: []Tunable{
			{Name: "period_s", Default: 5, Min: 1, Max: 60, Doc: "sampling/evaluation cycle, seconds"},
			{Name: "alpha", Default: 0.3, Min: 0.05, Max: 1, Doc: "EWMA smoothing of GPU utilisation"},
			{Name: "queue_up", Default: 10, Min: 0, Max: 200, Doc: "rule A queue threshold (mean waiting per pod)"},
			{Name: "util_up", Default: 0.8, Min: 0.1, Max: 1, Doc: "rule A GPU utilisation threshold"},
			{Name: "kv_up", Default: 0.9, Min: 0.1, Max: 1, Doc: "rule B KV-cache threshold"},
			{Name: "util_down", Default: 0.2, Min: 0, Max: 0.9, Doc: "rule D GPU utilisation threshold"},
			{Name: "p99_baseline_ms", Default: 500, Min: 10, Max: 60000, Doc: "rule C baseline (alert at 2×)"},
			{Name: "use_e2e", Default: 0, Min: 0, Max: 1, Integer: true, Doc: "1: rule C reads E2E latency instead of TTFT"},
			{Name: "up_cooldown_s", Default: 60, Min: 0, Max: 3600, Doc: "scale-up cooldown"},
			{Name: "down_cooldown_s", Default: 300, Min: 0, Max: 3600, Doc: "scale-down cooldown"},
		},
		build: func(v Params) (scaler.Autoscaler, error) {
			return NewSeed000(Seed000Config{
				Name: "seed000", Period: secs(v["period_s"]), Alpha: v["alpha"],
				UtilUpA: v["util_up"], QueueUpA: v["queue_up"], KVUpB: v["kv_up"], UtilUpB: 0.6,
				P99Baseline: time.Duration(v["p99_baseline_ms"] * float64(time.Millisecond)), P99Factor: 2,
				UtilDownD: v["util_down"], P99History: time.Minute, LatencyWindow: time.Minute,
				UseE2E: v["use_e2e"] == 1, UpCooldown: secs(v["up_cooldown_s"]), DownCooldown: secs(v["down_cooldown_s"]),
			})
		},
	}
}
