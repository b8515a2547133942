package engine

import (
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	"github.com/inferscale/inferscale/internal/vllmexpo"
	"github.com/inferscale/inferscale/shared/signal"
)

// histogram is a Prometheus histogram: per-bucket (not cumulative) counts,
// the last slot being +Inf.
type histogram struct {
	bounds []float64
	counts []float64
	sum    float64
	count  float64
}

func newHistogram(bounds []float64) histogram {
	return histogram{bounds: bounds, counts: make([]float64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) { h.observeN(v, 1) }

// observeN records n observations of v.
func (h *histogram) observeN(v, n float64) {
	i := sort.SearchFloat64s(h.bounds, v) // first bound ≥ v: le is inclusive
	h.counts[i] += n
	h.sum += v * n
	h.count += n
}

// cumulative returns the signal form (cumulative buckets, +Inf as Count).
func (h *histogram) cumulative() *signal.Histogram {
	out := &signal.Histogram{Buckets: make([]signal.Bucket, len(h.bounds)), Sum: h.sum, Count: h.count}
	c := 0.0
	for i, b := range h.bounds {
		c += h.counts[i]
		out.Buckets[i] = signal.Bucket{UpperBound: b, Count: c}
	}
	return out
}

// snapshot is one scrape of one pod.
type snapshot struct {
	t           float64
	waiting     int
	running     int
	kvUsage     float64
	gpuUtil     float64
	requests    float64
	prompt      float64
	generation  float64
	preemptions float64
	ttft        *signal.Histogram
	e2e         *signal.Histogram
	queue       *signal.Histogram
	itl         *signal.Histogram
	promptLen   *signal.Histogram
	genLen      *signal.Histogram
	pod         *signal.Pod // built on first use
}

// PodMetrics is what a scrape of a simulated pod shows, in the schema the
// metric binary prints. The engine shares the value between readers: do
// not modify it.
func (e *Engine) podSignal(r *replica, s *snapshot) *signal.Pod {
	if s.pod != nil {
		return s.pod
	}
	at := e.wall(s.t)
	created := e.wall(r.created)
	started := e.wall(r.started)
	ready := e.wall(r.readyAt)
	p := &signal.Pod{
		Name:                  r.name,
		Namespace:             Namespace,
		Phase:                 "Running",
		Ready:                 r.readyAt <= s.t && !(r.drainStart <= s.t),
		Terminating:           r.drainStart <= s.t,
		CreatedAt:             &created,
		StartedAt:             &started,
		ReadyAt:               &ready,
		StartupSeconds:        signal.F(r.readyAt - r.created),
		AgeSeconds:            signal.F(s.t - r.created),
		ScrapeTime:            at,
		Server:                "vllm",
		Waiting:               signal.F(float64(s.waiting)),
		Running:               signal.F(float64(s.running)),
		KVCacheUsage:          signal.F(s.kvUsage),
		GPU:                   &signal.GPU{Utilization: signal.F(s.gpuUtil), Field: "DCGM_FI_DEV_GPU_UTIL", Source: "dcgm-exporter", Count: 1},
		TTFT:                  s.ttft,
		E2E:                   s.e2e,
		QueueTime:             s.queue,
		InterToken:            s.itl,
		PromptLength:          s.promptLen,
		GenerationLength:      s.genLen,
		RequestsTotal:         signal.F(s.requests),
		PromptTokensTotal:     signal.F(s.prompt),
		GenerationTokensTotal: signal.F(s.generation),
		PreemptionsTotal:      signal.F(s.preemptions),
	}
	hide(p, e.cfg.Hidden)
	s.pod = p
	return p
}

// hide drops the named signals from a scrape (shared/preset names).
func hide(p *signal.Pod, names []string) {
	for _, n := range names {
		switch n {
		case "ttft":
			p.TTFT = nil
		case "e2e":
			p.E2E = nil
		case "queueTime":
			p.QueueTime = nil
		case "interToken":
			p.InterToken = nil
		case "promptLength":
			p.PromptLength = nil
		case "generationLength":
			p.GenerationLength = nil
		case "promptTokensTotal":
			p.PromptTokensTotal = nil
		case "generationTokensTotal":
			p.GenerationTokensTotal = nil
		case "preemptionsTotal":
			p.PreemptionsTotal = nil
		case "kvCacheUsage":
			p.KVCacheUsage = nil
		case "gpuUtilization":
			p.GPU = nil
		}
	}
}

func (e *Engine) wall(t float64) time.Time {
	return e.cfg.Base.Add(time.Duration(t * float64(time.Second)))
}

// Namespace is the namespace every simulated pod lives in.
const Namespace = "sim"

// WritePrometheus writes a scrape in the Prometheus text format with vLLM
// V1 metric names (and DCGM's GPU utilisation as a percentage), as a
// vLLM server plus a dcgm-exporter would show it.
func WritePrometheus(w io.Writer, p *signal.Pod, model string) error {
	page := &vllmexpo.Page{Model: model}
	gauge := func(name, help string, v *float64) {
		if v != nil {
			page.Gauge(name, help, *v)
		}
	}
	counter := func(name, help string, v *float64) {
		if v != nil {
			page.Counter(name, help, *v)
		}
	}
	gauge("vllm:num_requests_running", "Number of requests in model execution batches.", p.Running)
	gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", p.Waiting)
	gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", p.KVCacheUsage)
	counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", p.PreemptionsTotal)
	counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", p.PromptTokensTotal)
	counter("vllm:generation_tokens_total", "Number of generation tokens processed.", p.GenerationTokensTotal)
	if p.RequestsTotal != nil {
		page.CounterSeries("vllm:request_success_total", "Count of successfully processed requests.",
			vllmexpo.Series{Labels: `finished_reason="length"`, Value: *p.RequestsTotal})
	}
	page.Histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", p.TTFT)
	page.Histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", p.E2E)
	page.Histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", p.QueueTime)
	page.Histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", p.InterToken)
	page.Histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.", p.PromptLength)
	page.Histogram("vllm:request_generation_tokens", "Number of generation tokens processed.", p.GenerationLength)
	if p.GPU != nil && p.GPU.Utilization != nil {
		page.Family("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", "gauge", vllmexpo.Series{
			Labels: fmt.Sprintf(`gpu="0",UUID="GPU-sim",pod=%q,namespace=%q,container="vllm"`, p.Name, p.Namespace),
			Value:  math.Round(*p.GPU.Utilization*100*1e9) / 1e9})
	}
	_, err := page.WriteTo(w)
	return err
}
