package baseline

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/inferscale/inferscale/sim/scaler"
)

// Seed004Config holds the constants of seed 004's evaluate.py.
type Seed004Config struct {
	Name     string
	Interval time.Duration // CPA interval (10 s in the article's config.yaml)
	// CPUHeadroomTarget applies to "avgcpu_utilization", modelled as the
	// fleet's mean GPU utilisation × 100 (0.75).
	CPUHeadroomTarget float64
	// LatencySLO is LATENCY_SLO_MS; here a p95 TTFT SLO (2 s).
	LatencySLO      time.Duration
	LatencyQuantile float64       // 0.95
	LatencyWindow   time.Duration // range of the p95 (60 s)
	ScaleUpFactor   float64       // 1.3
	MaxScaleUpStep  int           // 4
	ScaleDownFactor float64       // 0.8
	PodStartup      time.Duration // POD_STARTUP_SECONDS (10 s); only its sign matters
	ScaleCooldown   time.Duration // SCALE_COOLDOWN (15 s)
}

// Seed004 is seed 004's evaluate.py as written. CPA runs evaluate.py as a
// fresh process on every tick, so its module-level last_scale_time is 0 at
// every call: the cooldown compares time.time() − 0 against 15 s and never
// holds (except within 15 s of the Unix epoch). Recommend reproduces that
// by starting each call with lastScaleTime = 0 and dropping what it sets.
// The only state kept between ticks is the latency histogram history,
// which in the real deployment lives in Prometheus, not in the script.
type Seed004 struct {
	cfg Seed004Config
	win *histogramWindow
}

// NewSeed004 checks the constants.
func NewSeed004(cfg Seed004Config) (*Seed004, error) {
	if cfg.Interval <= 0 || cfg.LatencyWindow <= 0 || !(cfg.CPUHeadroomTarget > 0) || cfg.LatencySLO <= 0 {
		return nil, errors.New("seed004: interval, window, headroom and SLO must be positive")
	}
	if !(cfg.LatencyQuantile > 0) || cfg.LatencyQuantile >= 1 || !(cfg.ScaleUpFactor >= 1) ||
		cfg.MaxScaleUpStep < 1 || !(cfg.ScaleDownFactor > 0) || cfg.ScaleDownFactor > 1 {
		return nil, errors.New("seed004: quantile in (0,1), up factor ≥ 1, step ≥ 1, down factor in (0,1]")
	}
	return &Seed004{cfg: cfg, win: newHistogramWindow(cfg.LatencyWindow, pickTTFT)}, nil
}

// Name implements scaler.Autoscaler.
func (s *Seed004) Name() string { return s.cfg.Name }

// Period implements scaler.Autoscaler.
func (s *Seed004) Period() time.Duration { return s.cfg.Interval }

// Recommend is one CPA tick: metric.py's readings, then evaluate.py.
func (s *Seed004) Recommend(obs scaler.Observation) (int, error) {
	s.win.observe(obs)
	util, ok := fleetMean(obs, readGPUUtil)
	if !ok {
		return obs.SpecReplicas, errors.New("seed004: metric.py has no utilisation reading")
	}
	var p95 *float64
	if q, err := s.win.fleetQuantile(s.cfg.LatencyQuantile, obs.Now); err == nil {
		ms := q * 1000
		p95 = &ms
	} else if !errors.Is(err, errNoRequests) {
		return obs.SpecReplicas, fmt.Errorf("seed004: %w", err)
	}
	target := s.evaluate(obs.SpecReplicas, util*100, p95, obs.Now)
	return clamp(target, obs.MinReplicas, obs.MaxReplicas), nil // CPA applies min/max
}

// evaluate is evaluate.py's evaluate(), line for line.
func (s *Seed004) evaluate(currentReplicas int, avgCPU float64, p95LatencyMs *float64, t time.Time) int {
	// last_scale_time is a module-level global of a process that CPA starts
	// afresh for every evaluation: it is always 0 here.
	const lastScaleTime = 0.0
	now := float64(t.UnixNano()) / 1e9
	if now-lastScaleTime < s.cfg.ScaleCooldown.Seconds() {
		return currentReplicas
	}
	c := float64(currentReplicas)
	sloMs := float64(s.cfg.LatencySLO) / float64(time.Millisecond)
	targetReplicas := currentReplicas
	// CPU HEADROOM LOGIC
	cpuRatio := avgCPU / 100
	if cpuRatio > s.cfg.CPUHeadroomTarget {
		mult := math.Min(cpuRatio/s.cfg.CPUHeadroomTarget, s.cfg.ScaleUpFactor)
		proposed := int(math.Ceil(c * mult))
		step := min(proposed-currentReplicas, s.cfg.MaxScaleUpStep)
		targetReplicas = currentReplicas + max(step, 1)
	}
	// LATENCY SLO LOGIC ("if p95_latency and ...": None and 0 are falsy)
	latencyTruthy := p95LatencyMs != nil && *p95LatencyMs != 0
	if latencyTruthy && *p95LatencyMs > sloMs {
		violation := *p95LatencyMs / sloMs
		proposed := int(math.Ceil(c * violation))
		step := min(proposed-currentReplicas, s.cfg.MaxScaleUpStep)
		targetReplicas = max(targetReplicas, currentReplicas+step)
	}
	// POD STARTUP COMPENSATION
	if avgCPU > 90 && s.cfg.PodStartup > 0 {
		predicted := int(math.Ceil(c * (avgCPU / 50)))
		step := min(predicted-currentReplicas, s.cfg.MaxScaleUpStep)
		targetReplicas = max(targetReplicas, currentReplicas+max(step, 1))
	}
	// SCALE DOWN SAFELY
	if cpuRatio < 0.40 && (!latencyTruthy || *p95LatencyMs < sloMs*0.7) {
		targetReplicas = max(1, int(math.Floor(c*s.cfg.ScaleDownFactor)))
	}
	// "if target_replicas != current_replicas: last_scale_time = now" sets
	// a global that dies with the process: nothing to keep.
	return targetReplicas
}

// seed004: evaluate.py of seed 004 on GPU utilisation and p95 TTFT.
func seed004Preset() preset {
	return preset{
		tunables: []Tunable{
			{Name: "interval_s", Default: 10, Min: 1, Max: 120, Doc: "CPA interval, seconds"},
			{Name: "headroom", Default: 0.75, Min: 0.1, Max: 1, Doc: "CPU_HEADROOM_TARGET on GPU utilisation"},
			{Name: "slo_ms", Default: 2000, Min: 10, Max: 120000, Doc: "LATENCY_SLO_MS on p95 TTFT"},
			{Name: "latency_window_s", Default: 60, Min: 5, Max: 600, Doc: "range of the p95, seconds"},
			{Name: "up_factor", Default: 1.3, Min: 1, Max: 4, Doc: "SCALE_UP_FACTOR"},
			{Name: "max_step", Default: 4, Min: 1, Max: 64, Integer: true, Doc: "MAX_SCALE_UP_STEP"},
			{Name: "down_factor", Default: 0.8, Min: 0.1, Max: 1, Doc: "SCALE_DOWN_FACTOR"},
		},
		build: func(v Params) (scaler.Autoscaler, error) {
			return NewSeed004(Seed004Config{
				Name: "seed004", Interval: secs(v["interval_s"]), CPUHeadroomTarget: v["headroom"],
				LatencySLO: time.Duration(v["slo_ms"] * float64(time.Millisecond)), LatencyQuantile: 0.95,
				LatencyWindow: secs(v["latency_window_s"]), ScaleUpFactor: v["up_factor"],
				MaxScaleUpStep: int(v["max_step"]), ScaleDownFactor: v["down_factor"],
				PodStartup: 10 * time.Second, ScaleCooldown: 15 * time.Second,
			})
		},
	}
}
