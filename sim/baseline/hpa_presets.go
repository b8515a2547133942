package baseline

import (
	"time"

	"github.com/inferscale/inferscale/sim/scaler"
)

func secs(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }

func hpaCommonTunables() []Tunable {
	return []Tunable{
		{Name: "tolerance", Default: 0.1, Min: 0, Max: 0.5, Doc: "controller tolerance band (both directions)"},
		{Name: "sync_s", Default: 15, Min: 1, Max: 120, Doc: "controller sync period, seconds"},
		{Name: "down_window_s", Default: 300, Min: 0, Max: 3600, Doc: "downscale stabilisation window, seconds"},
		{Name: "api_behavior", Default: 0, Min: 0, Max: 1, Integer: true,
			Doc: "0: spec.behavior unset (legacy path); 1: behavior with the API defaults"},
	}
}

func hpaFromCommon(name string, v Params, metrics []HPAMetric) (*HPA, error) {
	cfg := HPAConfig{
		Name: name, Metrics: metrics, Tolerance: v["tolerance"],
		DownscaleStabilization: secs(v["down_window_s"]), SyncPeriod: secs(v["sync_s"]),
	}
	if v["api_behavior"] == 1 {
		cfg.Behavior = DefaultBehavior()
		cfg.Behavior.ScaleDown.StabilizationWindow = secs(v["down_window_s"])
	}
	return NewHPA(cfg)
}

// hpa-queue: Pods AverageValue on vllm:num_requests_waiting.
func hpaQueuePreset() preset {
	return preset{
		tunables: append(hpaCommonTunables(),
			Tunable{Name: "target", Default: 3, Min: 0.5, Max: 50, Doc: "AverageValue of waiting requests per pod"}),
		build: func(v Params) (scaler.Autoscaler, error) {
			return hpaFromCommon("hpa-queue", v, []HPAMetric{{
				Name: "vllm:num_requests_waiting", Source: PodsAverageValue, Target: v["target"],
				PodValue: fromMetrics(readWaiting),
			}})
		},
	}
}

// hpa-kv: Pods AverageValue on vllm:kv_cache_usage_perc.
func hpaKVPreset() preset {
	return preset{
		tunables: append(hpaCommonTunables(),
			Tunable{Name: "target", Default: 0.8, Min: 0.1, Max: 1, Doc: "AverageValue of KV-cache usage (0-1)"}),
		build: func(v Params) (scaler.Autoscaler, error) {
			return hpaFromCommon("hpa-kv", v, []HPAMetric{{
				Name: "vllm:kv_cache_usage_perc", Source: PodsAverageValue, Target: v["target"],
				PodValue: fromMetrics(readKV),
			}})
		},
	}
}

// hpa-external-value: External Value on the fleet's summed waiting
// requests — the llm-d overshoot case. by_spec=1 multiplies by
// spec.replicas as the llm-d write-up assumes; upstream uses ready pods.
func hpaExternalValuePreset() preset {
	return preset{
		tunables: append(hpaCommonTunables(),
			Tunable{Name: "target", Default: 10, Min: 1, Max: 500, Doc: "Value target for the summed waiting requests"},
			Tunable{Name: "by_spec", Default: 0, Min: 0, Max: 1, Integer: true,
				Doc: "1: multiply the ratio by spec.replicas (llm-d doc) instead of ready pods (upstream)"}),
		build: func(v Params) (scaler.Autoscaler, error) {
			h, err := hpaFromCommon("hpa-external-value", v, []HPAMetric{{
				Name: "sum(vllm:num_requests_waiting)", Source: ExternalValue, Target: v["target"],
				External: externalSum(readWaiting),
			}})
			if err != nil {
				return nil, err
			}
			h.cfg.ExternalValueBySpec = v["by_spec"] == 1
			return h, nil
		},
	}
}

// externalSum is an external series equal to the fleet sum of a reading
// (what sum(metric) in Prometheus returns; 0 with no series, as KEDA's
// ignoreNullValues does).
func externalSum(read podReading) func(obs scaler.Observation) (float64, error) {
	return func(obs scaler.Observation) (float64, error) {
		s, _ := fleetSum(obs, read)
		return s, nil
	}
}

// hpaWithLatency feeds a latency window before each HPA sync.
type hpaWithLatency struct {
	*HPA
	win *histogramWindow
}

func (h *hpaWithLatency) Recommend(obs scaler.Observation) (int, error) {
	h.win.observe(obs)
	return h.HPA.Recommend(obs)
}

// lastP99 is seed 002's per-pod P99 gauge: the service reports the P99 of
// its recent requests, so a pod that served none in the window keeps its
// last value; a pod that never served one has no sample (missing).
type lastP99 struct {
	win *histogramWindow
	ms  map[string]float64
}

func (l *lastP99) read(p scaler.PodView) (float64, bool) {
	if q, err := l.win.podQuantile(p.Name, 0.99, l.win.now); err == nil {
		l.ms[p.Name] = q * 1000
	}
	v, ok := l.ms[p.Name]
	return v, ok
}

// hpa-seed002: seed 002's HPA — queue depth (waiting + running) 5 per pod,
// CPU 70 % (modelled as GPU utilisation of a 1-GPU request), per-pod P99
// latency 10 s (E2E, over 60 s), and its behavior block.
func hpaSeed002Preset() preset {
	return preset{
		tunables: []Tunable{
			{Name: "tolerance", Default: 0.1, Min: 0, Max: 0.5, Doc: "controller tolerance band"},
			{Name: "queue_target", Default: 5, Min: 1, Max: 100, Doc: "AverageValue of waiting+running per pod"},
			{Name: "util_target", Default: 70, Min: 10, Max: 100, Doc: "averageUtilization (%) of the GPU"},
			{Name: "p99_target_ms", Default: 10000, Min: 100, Max: 120000, Doc: "AverageValue of per-pod P99 E2E latency, ms"},
			{Name: "up_window_s", Default: 30, Min: 0, Max: 600, Doc: "scaleUp stabilisation window"},
			{Name: "down_window_s", Default: 600, Min: 0, Max: 3600, Doc: "scaleDown stabilisation window"},
		},
		build: func(v Params) (scaler.Autoscaler, error) {
			win := newHistogramWindow(time.Minute, pickE2E)
			last := &lastP99{win: win, ms: map[string]float64{}}
			b := Seed002Behavior()
			b.ScaleUp.StabilizationWindow = secs(v["up_window_s"])
			b.ScaleDown.StabilizationWindow = secs(v["down_window_s"])
			h, err := NewHPA(HPAConfig{
				Name: "hpa-seed002", Tolerance: v["tolerance"], Behavior: b,
				DownscaleStabilization: 300 * time.Second, SyncPeriod: 15 * time.Second,
				Metrics: []HPAMetric{
					{Name: "inference_queue_depth_per_pod", Source: PodsAverageValue, Target: v["queue_target"],
						PodValue: fromMetrics(readConcurrency)},
					{Name: "cpu (gpu utilisation)", Source: ResourceUtilization, Target: v["util_target"],
						PodValue: fromMetrics(readGPUUtil), Request: 1},
					{Name: "inference_latency_p99_ms", Source: PodsAverageValue, Target: v["p99_target_ms"],
						PodValue: last.read},
				},
			})
			if err != nil {
				return nil, err
			}
			return &hpaWithLatency{HPA: h, win: win}, nil
		},
	}
}
