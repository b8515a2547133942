package baseline

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/inferscale/inferscale/sim/scaler"
)

// APAConfig is an AIBrix PodAutoscaler with the APA strategy.
type APAConfig struct {
	Name string
	// Metric reads the per-pod value (averaged over pods that report it).
	Metric     podReading
	MetricName string
	Target     float64
	// UpTolerance and DownTolerance are the fluctuation tolerances (0.1 / 0.2).
	UpTolerance, DownTolerance float64
	// MaxScaleUpRate and MaxScaleDownRate bound one step (2 / 2).
	MaxScaleUpRate, MaxScaleDownRate float64
	// Window is the metric aggregation window (30 s in the APA samples).
	Window time.Duration
	// ScaleDownCooldown is the minimum time since the last scaling before a
	// scale-down (300 s).
	ScaleDownCooldown time.Duration
	Period            time.Duration // 10 s reconcile
}

// APA is AIBrix's tolerance-banded proportional autoscaler:
//
//	r = perPodValue / target
//	r > 1+up   → min(ceil(cur·r), ceil(upRate·cur))
//	r < 1−down → max(ceil(cur·r), floor(cur/downRate))
//	else       → cur
//
// followed by the scale-down cooldown.
type APA struct {
	cfg       APAConfig
	samples   []timedValue
	lastScale time.Time
}

// NewAPA checks the settings.
func NewAPA(cfg APAConfig) (*APA, error) {
	switch {
	case cfg.Metric == nil:
		return nil, errors.New("apa: no metric")
	case !(cfg.Target > 0):
		return nil, fmt.Errorf("apa %s: target must be positive", cfg.Name)
	case cfg.UpTolerance < 0 || cfg.DownTolerance < 0 || cfg.DownTolerance >= 1:
		return nil, fmt.Errorf("apa %s: tolerances must be ≥ 0 (down < 1)", cfg.Name)
	case !(cfg.MaxScaleUpRate > 1) || !(cfg.MaxScaleDownRate > 1):
		return nil, fmt.Errorf("apa %s: scale rates must be above 1", cfg.Name)
	case cfg.Window < 0 || cfg.ScaleDownCooldown < 0:
		return nil, fmt.Errorf("apa %s: negative window or cooldown", cfg.Name)
	}
	if cfg.Period <= 0 {
		cfg.Period = 10 * time.Second
	}
	return &APA{cfg: cfg}, nil
}

// Name implements scaler.Autoscaler.
func (a *APA) Name() string { return a.cfg.Name }

// Period implements scaler.Autoscaler.
func (a *APA) Period() time.Duration { return a.cfg.Period }

// Recommend runs one reconcile.
func (a *APA) Recommend(obs scaler.Observation) (int, error) {
	cur := obs.SpecReplicas
	if v, ok := fleetMean(obs, a.cfg.Metric); ok {
		a.samples = append(a.samples, timedValue{obs.Now, v})
	}
	cutoff := obs.Now.Add(-a.cfg.Window)
	for len(a.samples) > 1 && !a.samples[0].at.After(cutoff) {
		a.samples = a.samples[1:]
	}
	if len(a.samples) == 0 || a.samples[len(a.samples)-1].at.Before(cutoff) {
		return cur, fmt.Errorf("apa %s: no %s reading within the window", a.cfg.Name, a.cfg.MetricName)
	}
	sum := 0.0
	for _, s := range a.samples {
		sum += s.v
	}
	perPod := sum / float64(len(a.samples))
	r := perPod / a.cfg.Target
	c := float64(cur)
	desired := cur
	switch {
	case r > 1+a.cfg.UpTolerance:
		desired = int(math.Min(math.Ceil(c*r), math.Ceil(a.cfg.MaxScaleUpRate*c)))
	case r < 1-a.cfg.DownTolerance:
		desired = int(math.Max(math.Ceil(c*r), math.Floor(c/a.cfg.MaxScaleDownRate)))
	}
	desired = clamp(desired, obs.MinReplicas, obs.MaxReplicas)
	if desired < cur && !a.lastScale.IsZero() && obs.Now.Sub(a.lastScale) < a.cfg.ScaleDownCooldown {
		desired = cur
	}
	if desired != cur {
		a.lastScale = obs.Now
	}
	return desired, nil
}

type apaVariant int

const (
	apaKV apaVariant = iota
	apaWaiting
)

// aibrix-apa (KV-cache usage, target 0.5) and aibrix-apa-queue (waiting
// requests per pod, target 5).
func apaPreset(variant apaVariant) preset {
	name, metricName, read, def, hi := "aibrix-apa", "gpu_cache_usage_perc", podReading(readKV), 0.5, 1.0
	if variant == apaWaiting {
		name, metricName, read, def, hi = "aibrix-apa-queue", "num_requests_waiting", readWaiting, 5, 200
	}
	return preset{
		tunables: []Tunable{
			{Name: "target", Default: def, Min: 0.05, Max: hi, Doc: "per-pod target of " + metricName},
			{Name: "up_tolerance", Default: 0.1, Min: 0, Max: 1, Doc: "up fluctuation tolerance"},
			{Name: "down_tolerance", Default: 0.2, Min: 0, Max: 0.9, Doc: "down fluctuation tolerance"},
			{Name: "window_s", Default: 30, Min: 0, Max: 600, Doc: "metric averaging window, seconds"},
			{Name: "down_cooldown_s", Default: 300, Min: 0, Max: 3600, Doc: "scale-down cooldown, seconds"},
			{Name: "max_scale_up_rate", Default: 2, Min: 1.1, Max: 10, Doc: "max factor per step up"},
			{Name: "max_scale_down_rate", Default: 2, Min: 1.1, Max: 10, Doc: "max factor per step down"},
		},
		build: func(v Params) (scaler.Autoscaler, error) {
			return NewAPA(APAConfig{
				Name: name, Metric: read, MetricName: metricName, Target: v["target"],
				UpTolerance: v["up_tolerance"], DownTolerance: v["down_tolerance"],
				MaxScaleUpRate: v["max_scale_up_rate"], MaxScaleDownRate: v["max_scale_down_rate"],
				Window: secs(v["window_s"]), ScaleDownCooldown: secs(v["down_cooldown_s"]), Period: 10 * time.Second,
			})
		},
	}
}
