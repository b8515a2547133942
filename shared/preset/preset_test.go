package preset_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/inferscale/inferscale/internal/expotest"
	"github.com/inferscale/inferscale/shared/expo"
	"github.com/inferscale/inferscale/shared/preset"
	"github.com/inferscale/inferscale/shared/signal"
)

func builtins(t *testing.T) []*preset.Preset {
	t.Helper()
	ps, err := preset.Builtins()
	if err != nil {
		t.Fatalf("builtins: %v", err)
	}
	return ps
}

// hist is an expected histogram: its count always, its sum and its number
// of buckets where not zero.
type hist struct {
	count, sum float64
	buckets    int
}

// mapCase is one exposition mapped by a preset, and what the pod must read.
type mapCase struct {
	name    string
	fixture string // a capture of internal/expotest, or
	body    string // an exposition written here
	mapping string // a custom preset document ("": the built-ins)
	find    string // the built-in to use ("": detect)
	err     error  // the error wanted instead of a pod
	server  string // the server the pod names ("": not checked)
	gauges  map[string]float64
	near    map[string]float64 // gauges within tol
	tol     float64
	hists   map[string]hist
	absent  []string // gauges, histograms or "gpu" that must be nil
	notes   []string // substrings of the pod's notes
	check   func(t *testing.T, pod *signal.Pod)
}

// Every server's capture maps to the signals it carries, and to nothing
// it lacks.
func TestPresetsMapExpositions(t *testing.T) {
	for _, c := range mapCases() {
		t.Run(c.name, func(t *testing.T) {
			pod, err := mapPod(t, c)
			if c.err != nil || err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err = %v, want %v", err, c.err)
				}
				return
			}
			if c.server != "" && pod.Server != c.server {
				t.Fatalf("server = %q, want %q", pod.Server, c.server)
			}
			checkPod(t, c, pod)
		})
	}
}

func mapCases() []mapCase {
	return []mapCase{{
		name: "vllm v0", fixture: "vllm_v0_datadog_fixture.txt", server: "vllm",
		// kv: the gpu_cache_usage_perc fallback; interToken: the time_per_output_token fallback
		gauges: map[string]float64{"waiting": 0, "running": 0, "kv": 0, "requestsTotal": 1, "promptTokens": 5,
			"generationTokens": 7, "preemptions": 0},
		hists: map[string]hist{"ttft": {1, 0.31326723098754883, 16}, "e2e": {1, 0.5034303665161133, 10},
			"interToken": {6, 0.19016313552856445, 13}},
		absent: []string{"queueTime", "gpu"}, // no queue-time histogram in V0; vLLM exports no GPU metric
		check: func(t *testing.T, pod *signal.Pod) {
			if pod.TTFT != nil && (pod.TTFT.Buckets[9].UpperBound != 0.5 || pod.TTFT.Buckets[9].Count != 1 || pod.TTFT.Buckets[8].Count != 0) {
				t.Errorf("ttft buckets 8,9 = %+v %+v", pod.TTFT.Buckets[8], pod.TTFT.Buckets[9])
			}
		},
	}, {
		name: "vllm v1 early fragment", fixture: "vllm_v1_early_fragment_production-stack-318.txt", server: "vllm",
		gauges: map[string]float64{"waiting": 0, "running": 0, "kv": 0},
		absent: []string{"requestsTotal"},
	}, {
		// Bucket lines without HELP/TYPE parse as untyped families named
		// *_bucket: nothing to detect.
		name: "vllm v1 data-parallel fragment", fixture: "vllm_v1_dp_fragment_pr22227.txt", err: preset.ErrNotDetected,
	}, {
		// Engines summed (waiting) or averaged (kv, of the new name); the
		// histograms merged, the new name first.
		name: "vllm v1 data parallel", body: dataParallelBody, find: "vllm", server: "vllm",
		gauges: map[string]float64{"waiting": 7},
		near:   map[string]float64{"kv": 0.4}, tol: 1e-4,
		hists:  map[string]hist{"interToken": {7, 0.75, 1}},
		absent: []string{"running"}, // HELP/TYPE absent
		check: func(t *testing.T, pod *signal.Pod) {
			if pod.InterToken != nil && pod.InterToken.Buckets[0].Count != 6 {
				t.Errorf("merged bucket = %+v", pod.InterToken.Buckets)
			}
		},
	}, {
		name: "sglang", fixture: "sglang.txt", server: "sglang",
		gauges: map[string]float64{"waiting": 2826, "running": 162, "kv": 0.28, "promptTokens": 8.128902e+06,
			"generationTokens": 7.557572e+06},
		// interToken: the old time_per_output_token
		hists:  map[string]hist{"ttft": {count: 11008, sum: 2.3518979474117756e+06}, "e2e": {count: 11228}, "interToken": {count: 7.400757e+06}},
		absent: []string{"requestsTotal"}, // an old build
	}, {
		name: "sglang v0.5", fixture: "sglang_v0.5_datadog_fixture.txt", server: "sglang",
		gauges: map[string]float64{"waiting": 0, "kv": 0.25, "requestsTotal": 1, "generationTokens": 32},
		hists:  map[string]hist{"interToken": {count: 31, sum: 0.05}, "queueTime": {count: 1}},
		absent: []string{"gpu"}, // sglang:utilization is not a GPU metric
	}, {
		// SGLang v0.5 with --collect-tokens-histogram (the family names of
		// fixtures/metrics/name_lists/llmkube_sglang-metric-names.txt).
		name: "sglang length histograms", body: sglangLengthsBody(), find: "sglang", server: "sglang",
		hists: map[string]hist{"promptLength": {count: 5, sum: 6000, buckets: 2}, "generationLength": {count: 5, sum: 900, buckets: 2}},
	}, {
		name: "tgi", fixture: "tgi.txt", server: "tgi",
		gauges: map[string]float64{"waiting": 0, "running": 0, "requestsTotal": 109},
		hists:  map[string]hist{"e2e": {count: 109, sum: 541.2140316159999}, "queueTime": {count: 109}},
		absent: []string{"kv", "ttft"},
		notes:  []string{"no TTFT", "no KV"},
		check: func(t *testing.T, pod *signal.Pod) {
			if pod.E2E != nil && (len(pod.E2E.Buckets) == 0 || pod.E2E.Buckets[0].UpperBound != 0.00015000000000000001) {
				t.Errorf("e2e first bound = %+v, want 0.0001*1.5 (seconds, no unit suffix)", pod.E2E.Buckets[:1])
			}
		},
	}, {
		// The length histograms as TGI's router registers them (router/src/
		// server.rs: linear buckets of max_input_tokens/100 and
		// max_total_tokens/100 tokens), written here: the captured fixture
		// above is a subset that leaves its 100-bucket input-length
		// histogram out (fixtures/metrics/ORIGINS.md).
		name: "tgi length histograms", body: tgiLengthsBody(), find: "tgi", server: "tgi",
		hists:  map[string]hist{"promptLength": {count: 4, sum: 9100, buckets: 3}, "generationLength": {count: 3, sum: 700, buckets: 2}},
		absent: []string{"promptTokens", "generationTokens"},
		notes:  []string{"token rates come from the sums of the length histograms"},
	}, {
		name: "triton", fixture: "triton.txt", server: "triton",
		gauges: map[string]float64{"waiting": 0, "requestsTotal": 3},
		// running and kv: no TRT-LLM backend; the default latency is
		// counters, not histograms
		absent: []string{"running", "kv", "ttft", "e2e"},
		notes:  []string{"microsecond counters"},
		check: func(t *testing.T, pod *signal.Pod) {
			if pod.GPU == nil || pod.GPU.Utilization == nil || *pod.GPU.Utilization != 0 || pod.GPU.Field != "nv_gpu_utilization" || pod.GPU.Source != "server" {
				t.Errorf("gpu = %+v", pod.GPU)
			}
		},
	}, {
		name: "triton trt-llm and a ms histogram", body: trtLLMBody, server: "triton",
		gauges: map[string]float64{"waiting": 4, "running": 6, "kv": 0.75}, // running: active only; kv: the fraction
		hists:  map[string]hist{"ttft": {count: 10, sum: 2.5}},
		check: func(t *testing.T, pod *signal.Pod) {
			if pod.TTFT != nil && (pod.TTFT.Buckets[0].UpperBound != 0.1 || pod.TTFT.Buckets[1].UpperBound != 0.5) {
				t.Errorf("ttft (ms to s) = %+v", pod.TTFT)
			}
		},
	}, {
		// running carries the fraction of decode slots in use (1 of 24
		// here): with maxNumSeqs 1 the batch rule reads it as the batch
		// fraction.
		name: "jetstream", fixture: "jetstream_doc_snippet.txt", server: "jetstream",
		gauges: map[string]float64{"waiting": 0},
		near:   map[string]float64{"running": 1.0 / 24}, tol: 1e-12,
	}, {
		name: "llamacpp", fixture: "llamacpp_fragment_pr13196.txt", server: "llamacpp",
		gauges: map[string]float64{"promptTokens": 143, "generationTokens": 673},
		absent: []string{"kv"},
		notes:  []string{"no KV-cache metric"},
	}, {
		name: "dcgm-exporter is not a server", fixture: "dcgm_exporter_datadog_fixture.txt", err: preset.ErrNotDetected,
	}, {
		name: "custom mapping", server: "myserver",
		mapping: `
name: myserver
signals:
  waiting: {families: [my_queue]}
  kvCacheUsage: {families: [my_kv_percent], scale: 0.01, agg: max}
  e2e: {families: [my_latency_ms], scale: 0.001}
notes: ["myserver: hand-written"]
`,
		body:   "my_queue{a=\"1\"} 2\nmy_queue{a=\"2\"} 3\nmy_kv_percent{a=\"1\"} 40\nmy_kv_percent{a=\"2\"} 90\n",
		gauges: map[string]float64{"waiting": 5, "kv": 0.9}, // kv: the max, in 0-1
		absent: []string{"e2e"},                             // an absent family gives nil
		check: func(t *testing.T, pod *signal.Pod) {
			if len(pod.Notes) != 1 {
				t.Errorf("notes %q", pod.Notes)
			}
		},
	}}
}

const dataParallelBody = `# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} 3.0
vllm:num_requests_waiting{engine="1",model_name="m"} 4.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.2
vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.6
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{engine="0",model_name="m"} 0.99
# TYPE vllm:inter_token_latency_seconds histogram
vllm:inter_token_latency_seconds_bucket{engine="0",le="0.1",model_name="m"} 1.0
vllm:inter_token_latency_seconds_bucket{engine="0",le="+Inf",model_name="m"} 2.0
vllm:inter_token_latency_seconds_count{engine="0",model_name="m"} 2.0
vllm:inter_token_latency_seconds_sum{engine="0",model_name="m"} 0.5
vllm:inter_token_latency_seconds_bucket{engine="1",le="0.1",model_name="m"} 5.0
vllm:inter_token_latency_seconds_bucket{engine="1",le="+Inf",model_name="m"} 5.0
vllm:inter_token_latency_seconds_count{engine="1",model_name="m"} 5.0
vllm:inter_token_latency_seconds_sum{engine="1",model_name="m"} 0.25
# TYPE vllm:time_per_output_token_seconds histogram
vllm:time_per_output_token_seconds_bucket{engine="0",le="+Inf",model_name="m"} 100.0
vllm:time_per_output_token_seconds_count{engine="0",model_name="m"} 100.0
vllm:time_per_output_token_seconds_sum{engine="0",model_name="m"} 100
`

// histText is the exposition of one histogram family: cumulative counts
// at bounds (the last, +Inf, is the count), its sum, each series with
// labels.
func histText(name, labels string, bounds, counts []float64, sum float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# TYPE %s histogram\n", name)
	sep := ""
	if labels != "" {
		sep = ","
	}
	for i, le := range bounds {
		fmt.Fprintf(&b, "%s_bucket{le=\"%g\"%s%s} %g\n", name, le, sep, labels, counts[i])
	}
	n := counts[len(counts)-1]
	fmt.Fprintf(&b, "%s_bucket{le=\"+Inf\"%s%s} %g\n%s_sum{%s} %g\n%s_count{%s} %g\n", name, sep, labels, n, name, labels, sum, name, labels, n)
	return b.String()
}

// sglangLengthsBody is SGLang's pair of length histograms.
func sglangLengthsBody() string {
	const labels = `model_name="m",tp_rank="0"`
	return histText("sglang:prompt_tokens_histogram", labels, []float64{1000, 2000}, []float64{2, 5}, 6000) +
		histText("sglang:generation_tokens_histogram", labels, []float64{100, 500}, []float64{1, 5}, 900)
}

// tgiLengthsBody is TGI's pair, beside a gauge of its own.
func tgiLengthsBody() string {
	return "# TYPE tgi_queue_size gauge\ntgi_queue_size 0\n" +
		histText("tgi_request_input_length", "", []float64{1024, 2048, 4096}, []float64{1, 2, 4}, 9100) +
		histText("tgi_request_generated_tokens", "", []float64{256, 512}, []float64{2, 3}, 700)
}

const trtLLMBody = `# TYPE nv_inference_request_success counter
nv_inference_request_success{model="ensemble",version="1"} 10
# TYPE nv_inference_pending_request_count gauge
nv_inference_pending_request_count{model="ensemble",version="1"} 4
# TYPE nv_trt_llm_request_metrics gauge
nv_trt_llm_request_metrics{model="tensorrt_llm",request_type="active",version="1"} 6
nv_trt_llm_request_metrics{model="tensorrt_llm",request_type="scheduled",version="1"} 9
nv_trt_llm_request_metrics{model="tensorrt_llm",request_type="max",version="1"} 64
# TYPE nv_trt_llm_kv_cache_block_metrics gauge
nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="fraction",model="tensorrt_llm",version="1"} 0.75
nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="used",model="tensorrt_llm",version="1"} 300
# TYPE nv_inference_first_response_histogram_ms histogram
nv_inference_first_response_histogram_ms_bucket{model="ensemble",version="1",le="100"} 3
nv_inference_first_response_histogram_ms_bucket{model="ensemble",version="1",le="500"} 9
nv_inference_first_response_histogram_ms_bucket{model="ensemble",version="1",le="+Inf"} 10
nv_inference_first_response_histogram_ms_sum{model="ensemble",version="1"} 2500
nv_inference_first_response_histogram_ms_count{model="ensemble",version="1"} 10
`

// mapPod parses c's exposition and applies c's preset to a pod.
func mapPod(t *testing.T, c mapCase) (*signal.Pod, error) {
	t.Helper()
	raw := []byte(c.body)
	if c.fixture != "" {
		raw = expotest.Fixture(t, c.fixture)
	}
	fams, err := expo.Parse(bytes.NewReader(raw), "text/plain")
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	var p *preset.Preset
	switch {
	case c.mapping != "":
		if p, err = preset.Parse([]byte(c.mapping)); err != nil {
			t.Fatal(err)
		}
	case c.find != "":
		if p, err = preset.Find(builtins(t), c.find); err != nil {
			t.Fatal(err)
		}
	default:
		if p, err = preset.Detect(builtins(t), fams.Has); err != nil {
			return nil, err
		}
	}
	pod := &signal.Pod{Name: "p"}
	p.Apply(fams, pod)
	return pod, nil
}

// checkPod runs c's assertions on pod.
func checkPod(t *testing.T, c mapCase, pod *signal.Pod) {
	t.Helper()
	for name, want := range c.gauges {
		if got := gauge(pod, name); got == nil || *got != want {
			t.Errorf("%s = %v, want %g", name, deref(got), want)
		}
	}
	for name, want := range c.near {
		if got := gauge(pod, name); got == nil || math.Abs(*got-want) > c.tol {
			t.Errorf("%s = %v, want %g within %g", name, deref(got), want, c.tol)
		}
	}
	for name, want := range c.hists {
		h := histogram(pod, name)
		if h == nil || h.Count != want.count || (want.sum != 0 && h.Sum != want.sum) || (want.buckets != 0 && len(h.Buckets) != want.buckets) {
			t.Errorf("%s histogram = %+v, want %+v", name, h, want)
		}
	}
	for _, name := range c.absent {
		if present(pod, name) {
			t.Errorf("%s is present, want nil (not available)", name)
		}
	}
	for _, sub := range c.notes {
		if !slices.ContainsFunc(pod.Notes, func(n string) bool { return strings.Contains(n, sub) }) {
			t.Errorf("no note containing %q in %q", sub, pod.Notes)
		}
	}
	if c.check != nil {
		c.check(t, pod)
	}
}

func gauge(pod *signal.Pod, name string) *float64 {
	switch name {
	case "waiting":
		return pod.Waiting
	case "running":
		return pod.Running
	case "kv":
		return pod.KVCacheUsage
	case "requestsTotal":
		return pod.RequestsTotal
	case "promptTokens":
		return pod.PromptTokensTotal
	case "generationTokens":
		return pod.GenerationTokensTotal
	case "preemptions":
		return pod.PreemptionsTotal
	}
	panic("no gauge " + name)
}

func histogram(pod *signal.Pod, name string) *signal.Histogram {
	switch name {
	case "ttft":
		return pod.TTFT
	case "e2e":
		return pod.E2E
	case "queueTime":
		return pod.QueueTime
	case "interToken":
		return pod.InterToken
	case "promptLength":
		return pod.PromptLength
	case "generationLength":
		return pod.GenerationLength
	}
	panic("no histogram " + name)
}

// present says whether the gauge, histogram or "gpu" called name is set.
func present(pod *signal.Pod, name string) bool {
	switch name {
	case "gpu":
		return pod.GPU != nil
	case "ttft", "e2e", "queueTime", "interToken", "promptLength", "generationLength":
		return histogram(pod, name) != nil
	}
	return gauge(pod, name) != nil
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestParseRejectsBadMappings(t *testing.T) {
	for _, doc := range []string{
		``,
		`name: x`,
		`name: x
signals: {queue: {families: [a]}}`,
		`name: x
signals: {waiting: {families: []}}`,
		`name: x
signals: {waiting: {families: [a], agg: median}}`,
		`name: x
signals: {waiting: {families: [a], scale: -1}}`,
		`name: x
signals: {ttft: {families: [a], agg: sum}}`,
		`name: x
signals: {waiting: {families: [a], unknownKey: 1}}`,
		`{not yaml`,
	} {
		if _, err := preset.Parse([]byte(doc)); err == nil {
			t.Errorf("%q: want error", doc)
		}
	}
}

func TestBuiltinsAndFind(t *testing.T) {
	ps := builtins(t)
	want := "jetstream,llamacpp,sglang,tgi,triton,vllm"
	if got := strings.Join(preset.Names(ps), ","); got != want {
		t.Errorf("names = %s, want %s", got, want)
	}
	if _, err := preset.Find(ps, "ollama"); err == nil || !strings.Contains(err.Error(), "vllm") {
		t.Errorf("Find(ollama) = %v", err)
	}
}
