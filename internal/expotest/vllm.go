package expotest

import (
	"github.com/inferscale/inferscale/internal/vllmexpo"
	"github.com/inferscale/inferscale/shared/signal"
)

// VLLMV1 describes a synthetic vLLM V1 /metrics page: the families, label
// sets, bucket layouts and _created series of vllm/v1/metrics/loggers.py,
// with known values so that tests can assert what a mapping reads.
type VLLMV1 struct {
	Model   string
	Engines int // data-parallel engines (label engine="0".."n-1")
	Waiting float64
	Running float64
	KV      float64 // kv_cache_usage_perc per engine
	// Requests is the finished-request count per engine; every latency
	// histogram holds that many observations, all in the bucket at
	// index HitBucket and above.
	Requests  int
	HitBucket int
}

// TTFTBuckets returns the TTFT bucket bounds the page uses.
func TTFTBuckets() []float64 { return vllmexpo.TTFTBounds() }

// tokenBuckets are the per-request token bounds of a 100k-token model.
func tokenBuckets() []float64 { return vllmexpo.TokenBounds(100000) }

// Render writes the exposition in the text format (multiprocess label
// order, _created series), through the one vLLM writer.
func (v VLLMV1) Render() string {
	page := &vllmexpo.Page{Model: v.Model, Engines: v.Engines, Sorted: true, Created: 1.7426240055e+09}
	for _, n := range []string{"python_gc_objects_collected_total", "process_virtual_memory_bytes", "process_resident_memory_bytes", "process_cpu_seconds_total"} {
		page.Family(n, "process stats", "gauge", vllmexpo.Series{Value: 12345})
	}
	hist := func(name, help string, bounds []float64) {
		h := &signal.Histogram{Count: float64(v.Requests)}
		for i, ub := range bounds {
			c := 0.0
			if i >= v.HitBucket {
				c = float64(v.Requests)
			}
			h.Buckets = append(h.Buckets, signal.Bucket{UpperBound: ub, Count: c})
		}
		if v.HitBucket < len(bounds) {
			h.Sum = float64(v.Requests) * bounds[v.HitBucket] * 0.9
		}
		page.Histogram(name, help, h)
	}
	page.Family("vllm:cache_config_info", "Information of the LLMEngine CacheConfig", "gauge", vllmexpo.Series{
		Labels: `block_size="16",cache_dtype="auto",enable_prefix_caching="True",gpu_memory_utilization="0.9",num_gpu_blocks="27000"`, Value: 1})
	page.Gauge("vllm:num_requests_running", "Number of requests in model execution batches.", v.Running)
	page.Gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", v.Waiting)
	page.Gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", v.KV)
	page.Counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", 1e6)
	page.Counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", 4e5)
	page.Counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", 2)
	page.Counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", float64(v.Requests)*900)
	page.Counter("vllm:generation_tokens_total", "Number of generation tokens processed.", float64(v.Requests)*200)
	page.CounterSeries("vllm:request_success_total", "Count of successfully processed requests.",
		vllmexpo.Series{Labels: `finished_reason="abort"`}, vllmexpo.Series{Labels: `finished_reason="length"`},
		vllmexpo.Series{Labels: `finished_reason="stop"`, Value: float64(v.Requests)})
	hist("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", tokenBuckets())
	hist("vllm:request_prompt_tokens", "Number of prefill tokens processed.", tokenBuckets())
	hist("vllm:request_generation_tokens", "Number of generation tokens processed.", tokenBuckets())
	hist("vllm:request_max_num_generation_tokens", "Histogram of maximum number of requested generation tokens.", tokenBuckets())
	hist("vllm:request_params_n", "Histogram of the n request parameter.", []float64{1, 2, 5, 10, 20})
	hist("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", tokenBuckets())
	hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", vllmexpo.TTFTBounds())
	hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", vllmexpo.InterTokenBounds())
	hist("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", vllmexpo.InterTokenBounds())
	for _, n := range []string{"e2e_request_latency_seconds", "request_queue_time_seconds", "request_inference_time_seconds", "request_prefill_time_seconds", "request_decode_time_seconds"} {
		hist("vllm:"+n, "Histogram of "+n+".", vllmexpo.LatencyBounds())
	}
	return page.String()
}
