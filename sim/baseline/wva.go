package baseline

import (
	"errors"
	"time"

	"github.com/inferscale/inferscale/sim/scaler"
)

// WVAConfig holds the llm-d WVA saturation analyzer's thresholds.
type WVAConfig struct {
	Name                 string
	KVCacheThreshold     float64 // 0.80
	QueueLengthThreshold float64 // 5
	KVSpareTrigger       float64 // 0.10
	QueueSpareTrigger    float64 // 3
	// PeakWindow is the max_over_time range of the metric queries (1 m).
	PeakWindow time.Duration
	// Interval is the reconcile loop (60 s).
	Interval time.Duration
	// Scrape is how often metrics are sampled into the peak window (15 s).
	Scrape time.Duration
}

type podPeak struct {
	kv, queue []timedValue
}

// WVA is the saturation analyzer of llm-d's workload-variant autoscaler
// for one variant: ±1 replica per reconcile, scale-up when the
// non-saturated replicas' average spare KV or queue capacity falls below
// its trigger (held while earlier replicas are still pending), scale-down
// only when the load of the remaining replicas after a simulated removal
// still leaves both spares above their triggers.
type WVA struct {
	cfg        WVAConfig
	peaks      map[string]*podPeak
	lastDecide time.Time
}

// NewWVA checks the thresholds.
func NewWVA(cfg WVAConfig) (*WVA, error) {
	if !(cfg.KVCacheThreshold > 0) || cfg.KVCacheThreshold > 1 || !(cfg.QueueLengthThreshold > 0) ||
		cfg.KVSpareTrigger < 0 || cfg.QueueSpareTrigger < 0 {
		return nil, errors.New("wva: thresholds must be positive (KV threshold ≤ 1) and triggers not negative")
	}
	if cfg.PeakWindow < 0 || cfg.Interval <= 0 || cfg.Scrape <= 0 || cfg.Scrape > cfg.Interval {
		return nil, errors.New("wva: interval and scrape must be positive, scrape ≤ interval, peak window ≥ 0")
	}
	return &WVA{cfg: cfg, peaks: map[string]*podPeak{}}, nil
}

// Name implements scaler.Autoscaler.
func (w *WVA) Name() string { return w.cfg.Name }

// Period is the scrape interval; decisions happen every Interval.
func (w *WVA) Period() time.Duration { return w.cfg.Scrape }

func peakOf(s []timedValue) float64 {
	m := 0.0
	for _, v := range s {
		m = max(m, v.v)
	}
	return m
}

func trimBefore(s []timedValue, cutoff time.Time) []timedValue {
	for len(s) > 1 && s[0].at.Before(cutoff) {
		s = s[1:]
	}
	return s
}

func (w *WVA) sample(obs scaler.Observation) {
	cutoff := obs.Now.Add(-w.cfg.PeakWindow)
	seen := map[string]bool{}
	for _, p := range obs.Pods {
		if p.Phase != scaler.Ready || !usable(p) {
			continue
		}
		seen[p.Name] = true
		pp := w.peaks[p.Name]
		if pp == nil {
			pp = &podPeak{}
			w.peaks[p.Name] = pp
		}
		if v, ok := readKV(p.Metrics); ok {
			pp.kv = trimBefore(append(pp.kv, timedValue{obs.Now, v}), cutoff)
		}
		if v, ok := readWaiting(p.Metrics); ok {
			pp.queue = trimBefore(append(pp.queue, timedValue{obs.Now, v}), cutoff)
		}
	}
	for n := range w.peaks {
		if !seen[n] {
			delete(w.peaks, n)
		}
	}
}

// Recommend samples the metrics and, every Interval, analyses saturation.
func (w *WVA) Recommend(obs scaler.Observation) (int, error) {
	cur := obs.SpecReplicas
	w.sample(obs)
	if !w.lastDecide.IsZero() && obs.Now.Sub(w.lastDecide) < w.cfg.Interval {
		return clamp(cur, obs.MinReplicas, obs.MaxReplicas), nil
	}
	w.lastDecide = obs.Now
	if len(w.peaks) == 0 {
		return clamp(cur, obs.MinReplicas, obs.MaxReplicas), errors.New("wva: no ready replica reports metrics")
	}
	var nonSat int
	var sumKV, sumQ, spareKV, spareQ float64
	for _, pp := range w.peaks {
		kv, q := peakOf(pp.kv), peakOf(pp.queue)
		if kv >= w.cfg.KVCacheThreshold || q >= w.cfg.QueueLengthThreshold {
			continue // saturated
		}
		nonSat++
		sumKV += kv
		sumQ += q
		spareKV += w.cfg.KVCacheThreshold - kv
		spareQ += w.cfg.QueueLengthThreshold - q
	}
	scaleUp := nonSat == 0
	if nonSat > 0 {
		n := float64(nonSat)
		scaleUp = spareKV/n < w.cfg.KVSpareTrigger || spareQ/n < w.cfg.QueueSpareTrigger
	}
	desired := cur
	switch {
	case scaleUp:
		if notYetReady(obs) == 0 { // pending replicas already add capacity: no cascade
			desired = cur + 1
		}
	case nonSat >= 2:
		n := float64(nonSat - 1)
		if w.cfg.KVCacheThreshold-sumKV/n >= w.cfg.KVSpareTrigger &&
			w.cfg.QueueLengthThreshold-sumQ/n >= w.cfg.QueueSpareTrigger {
			desired = cur - 1
		}
	}
	return clamp(desired, obs.MinReplicas, obs.MaxReplicas), nil
}

// wva: saturation analyzer 0.80 / 5 / 0.10 / 3, 60 s loop, 1 m peaks.
func wvaPreset() preset {
	return preset{
		tunables: []Tunable{
			{Name: "kv_threshold", Default: 0.8, Min: 0.1, Max: 1, Doc: "kvCacheThreshold: a replica is saturated at or above it"},
			{Name: "queue_threshold", Default: 5, Min: 1, Max: 100, Doc: "queueLengthThreshold"},
			{Name: "kv_spare_trigger", Default: 0.1, Min: 0, Max: 0.9, Doc: "kvSpareTrigger"},
			{Name: "queue_spare_trigger", Default: 3, Min: 0, Max: 100, Doc: "queueSpareTrigger"},
			{Name: "interval_s", Default: 60, Min: 15, Max: 600, Doc: "reconcile interval, seconds"},
			{Name: "peak_window_s", Default: 60, Min: 0, Max: 600, Doc: "max_over_time window, seconds"},
		},
		build: func(v Params) (scaler.Autoscaler, error) {
			return NewWVA(WVAConfig{
				Name: "wva", KVCacheThreshold: v["kv_threshold"], QueueLengthThreshold: v["queue_threshold"],
				KVSpareTrigger: v["kv_spare_trigger"], QueueSpareTrigger: v["queue_spare_trigger"],
				PeakWindow: secs(v["peak_window_s"]), Interval: secs(v["interval_s"]), Scrape: 15 * time.Second,
			})
		},
	}
}
