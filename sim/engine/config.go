package engine

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Startup is the distribution of a pod's time from creation to Ready:
// PendingSeconds fixed (scheduling), then a lognormal Starting phase (image
// pull, weight load, warm-up) with the given median and log-space sigma.
type Startup struct {
	PendingSeconds float64
	MedianSeconds  float64
	Sigma          float64 // 0 makes every start take exactly Pending+Median
}

// Quantile returns the q-quantile (0<q<1) of the total startup time.
func (s Startup) Quantile(q float64) float64 {
	if s.MedianSeconds <= 0 {
		return s.PendingSeconds
	}
	return s.PendingSeconds + s.MedianSeconds*math.Exp(s.Sigma*normQuantile(q))
}

// normQuantile is the standard normal quantile Φ⁻¹(p) = √2·erfinv(2p − 1).
func normQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// Config is one simulation's fleet, pipeline and SLO settings. Zero fields
// take the defaults of DefaultConfig when passed through WithDefaults.
type Config struct {
	Seed  uint64
	Model Model
	// Startup of every new pod. Pods present at t=0 are already Ready.
	Startup Startup
	// DrainGraceSeconds is terminationGracePeriodSeconds and PreStopSeconds
	// the pod's preStop sleep. A deleted pod leaves the load balancer at
	// once (its EndpointSlice entry turns not-ready at the deletion); vLLM
	// keeps serving what it holds through the preStop and, on SIGTERM after
	// it, drains (rejects new requests, finishes in-flight ones; vLLM
	// --shutdown-timeout). The pod ends when it is empty and the preStop
	// is over, or is killed with whatever it still holds when the grace
	// period (which the preStop counts against) runs out. A Starting pod
	// (container running, not Ready) lives out its preStop; a Pending one
	// (no node) goes at once.
	DrainGraceSeconds float64
	PreStopSeconds    float64
	// ScrapeIntervalSeconds is how often pods' metrics are sampled;
	// MetricLagSeconds is how old a sample must be before a controller can
	// see it (scrape + adapter + cache delay).
	ScrapeIntervalSeconds float64
	MetricLagSeconds      float64
	// Hidden names the signals (shared/preset names: interToken,
	// promptLength, ...) the pods do not export: the metric set of another
	// server preset, or of a Prometheus that keeps fewer series. The
	// engine itself is unchanged.
	Hidden []string
	// GPUDutySamples is how many 0/1 "kernel running?" samples the GPU
	// utilisation reading averages per scrape (seed 000's jitter).
	GPUDutySamples int

	MinReplicas, MaxReplicas, InitialReplicas int

	// TTFTSLOSeconds is the time-to-first-token objective; a request meets
	// the end-to-end objective when it finishes within
	// TTFTSLOSeconds + output_tokens × TPOTSLOSeconds.
	TTFTSLOSeconds float64
	TPOTSLOSeconds float64
	// HoldTimeoutSeconds bounds how long the load balancer holds a request
	// while no replica is Ready before rejecting it (503).
	HoldTimeoutSeconds float64
	// MaxTailSeconds stops the replay this long after the last arrival;
	// requests still in flight then are counted Unfinished.
	MaxTailSeconds float64
	// BinSeconds is the resolution of the time series in Result.
	BinSeconds float64
	// Base is the wall-clock time of trace offset 0 (what INFERSCALE_NOW
	// and the pods' timestamps are built from).
	Base time.Time
	// Progress, when set, is called now and then with the simulated
	// seconds reached (for progress bars).
	Progress func(simSeconds float64)
}

// Version names the engine's replay semantics. Bump it with any change
// that can alter a replay's outcome (time model, scheduler, lifecycle,
// metrics, defaults): caches of replay results (the bar matrix's oracle
// and static fleets) are keyed by it.
const Version = "2026-12-sim-v2.1"

// The drain defaults are those of the project's example vLLM Deployment:
// a 15 s preStop sleep (endpoint propagation to the load balancer) and
// vLLM --shutdown-timeout 600, so terminationGracePeriodSeconds 630.
const (
	DefaultPreStopSeconds = 15
	DefaultGraceSeconds   = 630
)

// DefaultConfig is the simulator's reference set-up.
func DefaultConfig() Config {
	return Config{
		Seed:                  1,
		Model:                 Llama31_8B_H100(),
		Startup:               Startup{PendingSeconds: 2, MedianSeconds: 58, Sigma: 0.25},
		DrainGraceSeconds:     DefaultGraceSeconds,
		PreStopSeconds:        DefaultPreStopSeconds,
		ScrapeIntervalSeconds: 5,
		MetricLagSeconds:      15,
		GPUDutySamples:        5,
		MinReplicas:           1,
		MaxReplicas:           64,
		InitialReplicas:       1,
		TTFTSLOSeconds:        2,
		TPOTSLOSeconds:        0.1,
		HoldTimeoutSeconds:    60,
		MaxTailSeconds:        3600,
		BinSeconds:            10,
		Base:                  time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC),
	}
}

// Validate rejects settings the engine cannot run with.
func (c Config) Validate() error {
	var errs []error
	if err := c.Model.Validate(); err != nil {
		errs = append(errs, err)
	}
	pos := func(name string, v float64, allowZero bool) {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || (!allowZero && v == 0) {
			errs = append(errs, fmt.Errorf("%s=%g: want a finite number %s", name, v, map[bool]string{true: "≥ 0", false: "> 0"}[allowZero]))
		}
	}
	for _, n := range c.Hidden {
		switch n {
		case "ttft", "e2e", "queueTime", "interToken", "promptLength", "generationLength", "promptTokensTotal",
			"generationTokensTotal", "preemptionsTotal", "kvCacheUsage", "gpuUtilization":
		default:
			errs = append(errs, fmt.Errorf("Hidden signal %q: not one the engine exports", n))
		}
	}
	pos("Startup.PendingSeconds", c.Startup.PendingSeconds, true)
	pos("Startup.MedianSeconds", c.Startup.MedianSeconds, true)
	pos("Startup.Sigma", c.Startup.Sigma, true)
	pos("DrainGraceSeconds", c.DrainGraceSeconds, true)
	pos("PreStopSeconds", c.PreStopSeconds, true)
	pos("ScrapeIntervalSeconds", c.ScrapeIntervalSeconds, false)
	pos("MetricLagSeconds", c.MetricLagSeconds, true)
	pos("TTFTSLOSeconds", c.TTFTSLOSeconds, false)
	pos("TPOTSLOSeconds", c.TPOTSLOSeconds, true)
	pos("HoldTimeoutSeconds", c.HoldTimeoutSeconds, true)
	pos("MaxTailSeconds", c.MaxTailSeconds, false)
	pos("BinSeconds", c.BinSeconds, false)
	if c.GPUDutySamples < 1 {
		errs = append(errs, fmt.Errorf("GPUDutySamples=%d: want ≥ 1", c.GPUDutySamples))
	}
	if c.MinReplicas < 0 || c.MaxReplicas < 1 || c.MinReplicas > c.MaxReplicas {
		errs = append(errs, fmt.Errorf("replica bounds [%d, %d]: want 0 ≤ min ≤ max, max ≥ 1", c.MinReplicas, c.MaxReplicas))
	}
	if c.InitialReplicas < 0 || c.InitialReplicas > c.MaxReplicas {
		errs = append(errs, fmt.Errorf("InitialReplicas=%d: want 0..MaxReplicas (%d)", c.InitialReplicas, c.MaxReplicas))
	}
	if c.Base.IsZero() {
		errs = append(errs, errors.New("Base time is zero"))
	}
	return errors.Join(errs...)
}
