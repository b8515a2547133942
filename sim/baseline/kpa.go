package baseline

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/inferscale/inferscale/sim/scaler"
)

// KPAConfig is a Knative revision's autoscaling settings.
type KPAConfig struct {
	Name string
	// ContainerConcurrency is the per-pod concurrency (vLLM max_num_seqs).
	ContainerConcurrency float64
	// TargetUtilization is container-concurrency-target-percentage / 100 (0.7).
	TargetUtilization float64
	StableWindow      time.Duration // 60 s
	// PanicWindowPercentage is the panic window as a percent of the stable window (10).
	PanicWindowPercentage float64
	// PanicThreshold is panic-threshold-percentage / 100 (2.0).
	PanicThreshold   float64
	MaxScaleUpRate   float64       // 1000
	MaxScaleDownRate float64       // 2
	ScaleDownDelay   time.Duration // 0
	// ScaleToZeroGrace is how long desired must stay 0 before a revision
	// allowed to scale to zero (min 0) does so (30 s).
	ScaleToZeroGrace time.Duration
	Tick             time.Duration // 2 s
}

type timedValue struct {
	at time.Time
	v  float64
}

// KPA is Knative's pod autoscaler for one revision: the stats scraper and
// the stable/panic window averages of its total concurrency (the metric
// collector), the decider (kpaDecider), and the scale-to-zero grace the
// KPA reconciler applies to the decider's 0.
type KPA struct {
	cfg       KPAConfig
	samples   []timedValue // total concurrency per tick
	decider   *kpaDecider  // created at the first tick
	zeroSince time.Time
}

// NewKPA checks the settings.
func NewKPA(cfg KPAConfig) (*KPA, error) {
	switch {
	case !(cfg.ContainerConcurrency > 0) || !(cfg.TargetUtilization > 0) || cfg.TargetUtilization > 1:
		return nil, errors.New("kpa: container concurrency must be positive and target utilisation in (0, 1]")
	case cfg.StableWindow <= 0 || !(cfg.PanicWindowPercentage > 0) || cfg.PanicWindowPercentage > 100:
		return nil, errors.New("kpa: stable window must be positive and panic window percentage in (0, 100]")
	case !(cfg.PanicThreshold > 1) || !(cfg.MaxScaleUpRate > 1) || !(cfg.MaxScaleDownRate > 1):
		return nil, errors.New("kpa: panic threshold and scale rates must be above 1")
	case cfg.ScaleDownDelay < 0 || cfg.ScaleToZeroGrace < 0:
		return nil, errors.New("kpa: negative delay")
	}
	if cfg.Tick <= 0 {
		cfg.Tick = 2 * time.Second
	}
	return &KPA{cfg: cfg}, nil
}

// Name implements scaler.Autoscaler.
func (k *KPA) Name() string { return k.cfg.Name }

// Period is the decider tick.
func (k *KPA) Period() time.Duration { return k.cfg.Tick }

func (k *KPA) panicWindow() time.Duration {
	return time.Duration(float64(k.cfg.StableWindow) * k.cfg.PanicWindowPercentage / 100)
}

func windowAverage(samples []timedValue, now time.Time, w time.Duration) float64 {
	cutoff := now.Add(-w)
	sum, n := 0.0, 0
	for _, s := range samples {
		if s.at.After(cutoff) {
			sum += s.v
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// scrape is Knative's stats scraper: the mean in-flight requests of the
// ready pods that answered, times the ready pod count (one pod stands for
// the others). No ready pod, or none answering, is no sample.
func (k *KPA) scrape(obs scaler.Observation, readyRaw int) (float64, bool) {
	sum, n := 0.0, 0
	for _, p := range obs.Pods {
		if p.Phase != scaler.Ready || !usable(p) {
			continue
		}
		if v, ok := readConcurrency(p.Metrics); ok {
			sum += v
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n) * float64(readyRaw), true
}

// Recommend runs one decider tick.
func (k *KPA) Recommend(obs scaler.Observation) (int, error) {
	now := obs.Now
	readyRaw := obs.Ready()
	if k.decider == nil {
		// The decider is created with the revision's ready pods at hand.
		k.decider = newKPADecider(k.cfg, now, readyRaw)
	}
	if total, ok := k.scrape(obs, readyRaw); ok {
		k.samples = append(k.samples, timedValue{now, total})
	}
	cutoff := now.Add(-k.cfg.StableWindow)
	for len(k.samples) > 0 && !k.samples[0].at.After(cutoff) {
		k.samples = k.samples[1:]
	}
	if len(k.samples) == 0 {
		// "No data to scale on yet": the decider makes no recommendation.
		return clamp(obs.SpecReplicas, obs.MinReplicas, obs.MaxReplicas), nil
	}
	stable := windowAverage(k.samples, now, k.cfg.StableWindow)
	panicV := windowAverage(k.samples, now, k.panicWindow())
	desired := k.decider.scale(now, readyRaw, stable, panicV)
	if desired == 0 {
		if k.zeroSince.IsZero() {
			k.zeroSince = now
		}
		if now.Sub(k.zeroSince) < k.cfg.ScaleToZeroGrace {
			desired = min(obs.SpecReplicas, 1) // hold one pod through the grace period
		}
	} else {
		k.zeroSince = time.Time{}
	}
	return clamp(desired, obs.MinReplicas, obs.MaxReplicas), nil
}

// Panicking reports whether the decider is in panic mode.
func (k *KPA) Panicking() bool { return k.decider != nil && k.decider.panicking() }

// kpaDecider is Knative's autoscaler (pkg/autoscaler/scaling/autoscaler.go
// at knative/serving 98e5ef90): from the observed stable and panic values
// and the ready pod count to a desired pod count, with panic mode that never
// scales down, the rate limits and the scale-down delay window.
type kpaDecider struct {
	cfg          KPAConfig
	panicTime    time.Time
	maxPanicPods int
	delay        []timedValue // desired counts within the scale-down delay
}

// newKPADecider is newAutoscaler: a decider created with more than one
// ready pod starts in panic mode, holding that count until the stable
// window has data to decide on (a restarted autoscaler has lost its metric
// history and must not scale down on it).
func newKPADecider(cfg KPAConfig, now time.Time, readyPods int) *kpaDecider {
	d := &kpaDecider{cfg: cfg, maxPanicPods: readyPods}
	if readyPods > 1 {
		d.panicTime = now
	}
	return d
}

func (d *kpaDecider) panicking() bool { return !d.panicTime.IsZero() }

// scale is autoscaler.Scale for valid metrics: stable and panic are the
// window averages of the revision's total, readyRaw the ready pod count.
func (d *kpaDecider) scale(now time.Time, readyRaw int, stable, panicV float64) int {
	ready := math.Max(1, float64(readyRaw))
	target := d.cfg.ContainerConcurrency * d.cfg.TargetUtilization
	maxUp := math.Ceil(d.cfg.MaxScaleUpRate * ready)
	maxDown := math.Floor(ready / d.cfg.MaxScaleDownRate)
	dspc := math.Ceil(stable / target)
	dppc := math.Ceil(panicV / target)
	ds := int(math.Min(math.Max(dspc, maxDown), maxUp))
	dp := int(math.Min(math.Max(dppc, maxDown), maxUp))

	over := dppc/ready >= d.cfg.PanicThreshold
	switch {
	case over:
		d.panicTime = now // enter or extend panic
	case d.panicking() && now.After(d.panicTime.Add(d.cfg.StableWindow)):
		d.panicTime, d.maxPanicPods = time.Time{}, 0
	}
	desired := ds
	if d.panicking() {
		desired = max(ds, dp)
		// no scale-down while panicking
		d.maxPanicPods = max(d.maxPanicPods, desired)
		desired = d.maxPanicPods
	}
	if d.cfg.ScaleDownDelay > 0 {
		d.delay = append(d.delay, timedValue{now, float64(desired)})
		dc := now.Add(-d.cfg.ScaleDownDelay)
		for len(d.delay) > 0 && !d.delay[0].at.After(dc) {
			d.delay = d.delay[1:]
		}
		for _, v := range d.delay {
			desired = max(desired, int(v.v))
		}
	}
	return desired
}

// kpa: concurrency target 0.7 × max_num_seqs.
func kpaPreset() preset {
	return preset{
		tunables: []Tunable{
			{Name: "container_concurrency", Default: 256, Min: 1, Max: 4096, Doc: "per-pod concurrency (vLLM max_num_seqs)"},
			{Name: "target_utilization", Default: 0.7, Min: 0.1, Max: 1, Doc: "container-concurrency-target-percentage / 100"},
			{Name: "stable_window_s", Default: 60, Min: 6, Max: 3600, Doc: "stable window, seconds"},
			{Name: "panic_window_pct", Default: 10, Min: 1, Max: 100, Doc: "panic window, percent of the stable window"},
			{Name: "panic_threshold", Default: 2, Min: 1.1, Max: 10, Doc: "panic threshold (200 % = 2)"},
			{Name: "max_scale_up_rate", Default: 1000, Min: 1.1, Max: 1000, Doc: "max scale-up rate per tick"},
			{Name: "max_scale_down_rate", Default: 2, Min: 1.1, Max: 100, Doc: "max scale-down rate per tick"},
			{Name: "scale_down_delay_s", Default: 0, Min: 0, Max: 3600, Doc: "scale-down-delay, seconds"},
		},
		build: func(v Params) (scaler.Autoscaler, error) {
			k, err := NewKPA(KPAConfig{
				Name: "kpa", ContainerConcurrency: v["container_concurrency"], TargetUtilization: v["target_utilization"],
				StableWindow: secs(v["stable_window_s"]), PanicWindowPercentage: v["panic_window_pct"],
				PanicThreshold: v["panic_threshold"], MaxScaleUpRate: v["max_scale_up_rate"],
				MaxScaleDownRate: v["max_scale_down_rate"], ScaleDownDelay: secs(v["scale_down_delay_s"]),
				ScaleToZeroGrace: 30 * time.Second, Tick: 2 * time.Second,
			})
			if err != nil {
				return nil, fmt.Errorf("kpa preset: %w", err)
			}
			return k, nil
		},
	}
}
