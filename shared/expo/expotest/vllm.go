package expotest

import (
	"fmt"
	"strings"
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

func latencyBuckets() []float64 {
	return []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
}

func ttftBuckets() []float64 {
	return []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
}

func itlBuckets() []float64 {
	return []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
}

func tokenBuckets() []float64 {
	return []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000}
}

// TTFTBuckets returns the TTFT bucket bounds the page uses.
func TTFTBuckets() []float64 { return ttftBuckets() }

// Render writes the exposition in the text format.
func (v VLLMV1) Render() string {
	var b strings.Builder
	b.Grow(256 << 10)
	for _, n := range []string{"python_gc_objects_collected_total", "process_virtual_memory_bytes", "process_resident_memory_bytes", "process_cpu_seconds_total"} {
		fmt.Fprintf(&b, "# HELP %s process stats\n# TYPE %s gauge\n%s 12345.0\n", n, n, n)
	}
	engines := v.Engines
	if engines < 1 {
		engines = 1
	}
	lbl := func(e int) string { return fmt.Sprintf(`engine="%d",model_name="%s"`, e, v.Model) }
	gauge := func(name, help string, val float64) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
		for e := 0; e < engines; e++ {
			fmt.Fprintf(&b, "%s{%s} %s\n", name, lbl(e), num(val))
		}
	}
	// counter writes one counter family; vals maps an extra label set
	// (e.g. `finished_reason="stop",`) to the per-engine value.
	counter := func(name, help string, extras []string, vals []float64) {
		base := strings.TrimSuffix(name, "_total")
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s counter\n", name, help, name)
		for i, extra := range extras {
			for e := 0; e < engines; e++ {
				fmt.Fprintf(&b, "%s{%s%s} %s\n", name, extra, lbl(e), num(vals[i]))
			}
		}
		fmt.Fprintf(&b, "# HELP %s_created %s\n# TYPE %s_created gauge\n", base, help, base)
		for _, extra := range extras {
			for e := 0; e < engines; e++ {
				fmt.Fprintf(&b, "%s_created{%s%s} 1.7426240055e+09\n", base, extra, lbl(e))
			}
		}
	}
	hist := func(name, help string, bounds []float64) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
		for e := 0; e < engines; e++ {
			sum := 0.0
			for i, ub := range bounds {
				c := 0
				if i >= v.HitBucket {
					c = v.Requests
				}
				fmt.Fprintf(&b, "%s_bucket{engine=\"%d\",le=\"%s\",model_name=\"%s\"} %d.0\n", name, e, num(ub), v.Model, c)
			}
			if v.HitBucket < len(bounds) {
				sum = float64(v.Requests) * bounds[v.HitBucket] * 0.9
			}
			fmt.Fprintf(&b, "%s_bucket{engine=\"%d\",le=\"+Inf\",model_name=\"%s\"} %d.0\n", name, e, v.Model, v.Requests)
			fmt.Fprintf(&b, "%s_count{%s} %d.0\n%s_sum{%s} %s\n", name, lbl(e), v.Requests, name, lbl(e), num(sum))
		}
		fmt.Fprintf(&b, "# HELP %s_created %s\n# TYPE %s_created gauge\n", name, help, name)
		for e := 0; e < engines; e++ {
			fmt.Fprintf(&b, "%s_created{%s} 1.7426240055e+09\n", name, lbl(e))
		}
	}
	fmt.Fprintf(&b, "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n# TYPE vllm:cache_config_info gauge\n")
	fmt.Fprintf(&b, "vllm:cache_config_info{block_size=\"16\",cache_dtype=\"auto\",enable_prefix_caching=\"True\",gpu_memory_utilization=\"0.9\",num_gpu_blocks=\"27000\"} 1.0\n")
	gauge("vllm:num_requests_running", "Number of requests in model execution batches.", v.Running)
	gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", v.Waiting)
	gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", v.KV)
	one := []string{""}
	counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", one, []float64{1e6})
	counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", one, []float64{4e5})
	counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", one, []float64{2})
	counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", one, []float64{float64(v.Requests) * 900})
	counter("vllm:generation_tokens_total", "Number of generation tokens processed.", one, []float64{float64(v.Requests) * 200})
	counter("vllm:request_success_total", "Count of successfully processed requests.",
		[]string{`finished_reason="abort",`, `finished_reason="length",`, `finished_reason="stop",`}, []float64{0, 0, float64(v.Requests)})
	hist("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", tokenBuckets())
	hist("vllm:request_prompt_tokens", "Number of prefill tokens processed.", tokenBuckets())
	hist("vllm:request_generation_tokens", "Number of generation tokens processed.", tokenBuckets())
	hist("vllm:request_max_num_generation_tokens", "Histogram of maximum number of requested generation tokens.", tokenBuckets())
	hist("vllm:request_params_n", "Histogram of the n request parameter.", []float64{1, 2, 5, 10, 20})
	hist("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", tokenBuckets())
	hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", ttftBuckets())
	hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", itlBuckets())
	hist("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", itlBuckets())
	for _, n := range []string{"e2e_request_latency_seconds", "request_queue_time_seconds", "request_inference_time_seconds", "request_prefill_time_seconds", "request_decode_time_seconds"} {
		hist("vllm:"+n, "Histogram of "+n+".", latencyBuckets())
	}
	return b.String()
}

func num(f float64) string {
	s := fmt.Sprintf("%g", f)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}
