package engine

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
)

// TTFTBounds are the bucket bounds of vLLM V1's TTFT histogram
// (vllm/v1/metrics/loggers.py).
func TTFTBounds() []float64 {
	return []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
}

// E2EBounds are the bucket bounds of vLLM V1's end-to-end and queue-time
// histograms.
func E2EBounds() []float64 {
	return []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
}

// InterTokenBounds are the bucket bounds of vLLM V1's inter-token latency
// histogram (vllm:inter_token_latency_seconds).
func InterTokenBounds() []float64 {
	return []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
}

// TokenBounds are the 1-2-5 bucket bounds vLLM uses for the per-request
// prompt and generation token histograms, up to maxModelLen.
func TokenBounds(maxModelLen int) []float64 {
	var out []float64
	for mag := 1.0; ; mag *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if mag*m > float64(maxModelLen) {
				return out
			}
			out = append(out, mag*m)
		}
	}
}

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
	s.pod = p
	return p
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
	bw := &errWriter{w: w}
	lbl := `model_name="` + model + `",engine="0"`
	gauge := func(name, help string, v *float64) {
		if v == nil {
			return
		}
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s gauge\n%s{%s} %s\n", name, help, name, name, lbl, num(*v))
	}
	counter := func(name, help string, v *float64) {
		if v == nil {
			return
		}
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s counter\n%s{%s} %s\n", name, help, name, name, lbl, num(*v))
	}
	hist := func(name, help string, h *signal.Histogram) {
		if h == nil {
			return
		}
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
		for _, b := range h.Buckets {
			fmt.Fprintf(bw, "%s_bucket{%s,le=\"%s\"} %s\n", name, lbl, num(b.UpperBound), num(b.Count))
		}
		fmt.Fprintf(bw, "%s_bucket{%s,le=\"+Inf\"} %s\n", name, lbl, num(h.Count))
		fmt.Fprintf(bw, "%s_sum{%s} %s\n%s_count{%s} %s\n", name, lbl, num(h.Sum), name, lbl, num(h.Count))
	}
	gauge("vllm:num_requests_running", "Number of requests in model execution batches.", p.Running)
	gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", p.Waiting)
	gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", p.KVCacheUsage)
	counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", p.PreemptionsTotal)
	counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", p.PromptTokensTotal)
	counter("vllm:generation_tokens_total", "Number of generation tokens processed.", p.GenerationTokensTotal)
	if p.RequestsTotal != nil {
		fmt.Fprintf(bw, "# HELP vllm:request_success_total Count of successfully processed requests.\n# TYPE vllm:request_success_total counter\n")
		fmt.Fprintf(bw, "vllm:request_success_total{%s,finished_reason=\"length\"} %s\n", lbl, num(*p.RequestsTotal))
	}
	hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", p.TTFT)
	hist("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", p.E2E)
	hist("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", p.QueueTime)
	hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", p.InterToken)
	hist("vllm:request_prompt_tokens", "Number of prefill tokens processed.", p.PromptLength)
	hist("vllm:request_generation_tokens", "Number of generation tokens processed.", p.GenerationLength)
	if p.GPU != nil && p.GPU.Utilization != nil {
		fmt.Fprintf(bw, "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %%).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n")
		fmt.Fprintf(bw, "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-sim\",pod=%q,namespace=%q,container=\"vllm\"} %s\n",
			p.Name, p.Namespace, num(math.Round(*p.GPU.Utilization*100*1e9)/1e9))
	}
	return bw.err
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	if err != nil {
		e.err = fmt.Errorf("writing metrics: %w", err)
	}
	return n, err
}
