package preset_test

import (
	"bytes"
	"errors"
	"math"
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

func mapFixture(t *testing.T, name string) (*signal.Pod, error) {
	t.Helper()
	fams, err := expo.Parse(bytes.NewReader(expotest.Fixture(t, name)), "text/plain")
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	p, err := preset.Detect(builtins(t), fams.Has)
	if err != nil {
		return nil, err
	}
	pod := &signal.Pod{Name: "p"}
	p.Apply(fams, pod)
	return pod, nil
}

func eq(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s = nil, want %g", what, want)
		return
	}
	if *got != want {
		t.Errorf("%s = %g, want %g", what, *got, want)
	}
}

func isNil(t *testing.T, what string, got *float64) {
	t.Helper()
	if got != nil {
		t.Errorf("%s = %g, want nil (not available)", what, *got)
	}
}

func hist(t *testing.T, what string, h *signal.Histogram, buckets int, count, sum float64) {
	t.Helper()
	if h == nil {
		t.Errorf("%s histogram is nil", what)
		return
	}
	if len(h.Buckets) != buckets || h.Count != count || h.Sum != sum {
		t.Errorf("%s: %d buckets count %g sum %g; want %d, %g, %g", what, len(h.Buckets), h.Count, h.Sum, buckets, count, sum)
	}
}

func hasNote(t *testing.T, pod *signal.Pod, sub string) {
	t.Helper()
	for _, n := range pod.Notes {
		if strings.Contains(n, sub) {
			return
		}
	}
	t.Errorf("no note containing %q in %q", sub, pod.Notes)
}

func TestVLLMV0(t *testing.T) {
	pod, err := mapFixture(t, "vllm_v0_datadog_fixture.txt")
	if err != nil {
		t.Fatal(err)
	}
	if pod.Server != "vllm" {
		t.Fatalf("server = %q", pod.Server)
	}
	eq(t, "waiting", pod.Waiting, 0)
	eq(t, "running", pod.Running, 0)
	eq(t, "kv (gpu_cache_usage_perc fallback)", pod.KVCacheUsage, 0)
	eq(t, "requestsTotal", pod.RequestsTotal, 1)
	eq(t, "promptTokens", pod.PromptTokensTotal, 5)
	eq(t, "generationTokens", pod.GenerationTokensTotal, 7)
	eq(t, "preemptions", pod.PreemptionsTotal, 0)
	hist(t, "ttft", pod.TTFT, 16, 1, 0.31326723098754883)
	if pod.TTFT != nil && (pod.TTFT.Buckets[9].UpperBound != 0.5 || pod.TTFT.Buckets[9].Count != 1 || pod.TTFT.Buckets[8].Count != 0) {
		t.Errorf("ttft buckets 8,9 = %+v %+v", pod.TTFT.Buckets[8], pod.TTFT.Buckets[9])
	}
	hist(t, "e2e", pod.E2E, 10, 1, 0.5034303665161133)
	hist(t, "interToken (time_per_output_token fallback)", pod.InterToken, 13, 6, 0.19016313552856445)
	if pod.QueueTime != nil {
		t.Error("V0 capture has no queue-time histogram")
	}
	if pod.GPU != nil {
		t.Error("vLLM exports no GPU metric")
	}
}

func TestVLLMV1Fragments(t *testing.T) {
	pod, err := mapFixture(t, "vllm_v1_early_fragment_production-stack-318.txt")
	if err != nil {
		t.Fatal(err)
	}
	if pod.Server != "vllm" {
		t.Fatalf("server = %q", pod.Server)
	}
	eq(t, "waiting", pod.Waiting, 0)
	eq(t, "running", pod.Running, 0)
	eq(t, "kv", pod.KVCacheUsage, 0)
	isNil(t, "requestsTotal", pod.RequestsTotal)

	// Bucket lines without HELP/TYPE parse as untyped families named
	// *_bucket: nothing to detect.
	if _, err := mapFixture(t, "vllm_v1_dp_fragment_pr22227.txt"); !errors.Is(err, preset.ErrNotDetected) {
		t.Errorf("dp fragment: err = %v, want ErrNotDetected", err)
	}
}

func TestVLLMV1DataParallel(t *testing.T) {
	body := `# TYPE vllm:num_requests_waiting gauge
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
	fams, err := expo.Parse(strings.NewReader(body), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	p, err := preset.Find(builtins(t), "vllm")
	if err != nil {
		t.Fatal(err)
	}
	pod := &signal.Pod{Name: "p"}
	p.Apply(fams, pod)
	eq(t, "waiting summed over engines", pod.Waiting, 7)
	if pod.KVCacheUsage == nil || *pod.KVCacheUsage < 0.3999 || *pod.KVCacheUsage > 0.4001 {
		t.Errorf("kv = %v, want mean 0.4 of the new name", pod.KVCacheUsage)
	}
	isNil(t, "running (HELP/TYPE absent)", pod.Running)
	hist(t, "interToken merged, new name first", pod.InterToken, 1, 7, 0.75)
	if pod.InterToken != nil && pod.InterToken.Buckets[0].Count != 6 {
		t.Errorf("merged bucket = %+v", pod.InterToken.Buckets)
	}
}

func TestSGLang(t *testing.T) {
	pod, err := mapFixture(t, "sglang.txt")
	if err != nil {
		t.Fatal(err)
	}
	if pod.Server != "sglang" {
		t.Fatalf("server = %q", pod.Server)
	}
	eq(t, "waiting", pod.Waiting, 2826)
	eq(t, "running", pod.Running, 162)
	eq(t, "kv", pod.KVCacheUsage, 0.28)
	eq(t, "prompt", pod.PromptTokensTotal, 8.128902e+06)
	eq(t, "generation", pod.GenerationTokensTotal, 7.557572e+06)
	if pod.TTFT == nil || pod.TTFT.Count != 11008 || pod.TTFT.Sum != 2.3518979474117756e+06 {
		t.Errorf("ttft = %+v", pod.TTFT)
	}
	if pod.E2E == nil || pod.E2E.Count != 11228 {
		t.Errorf("e2e = %+v", pod.E2E)
	}
	if pod.InterToken == nil || pod.InterToken.Count != 7.400757e+06 {
		t.Errorf("interToken (old time_per_output_token) = %+v", pod.InterToken)
	}
	isNil(t, "requestsTotal (old build)", pod.RequestsTotal)

	pod, err = mapFixture(t, "sglang_v0.5_datadog_fixture.txt")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "v0.5 waiting", pod.Waiting, 0)
	eq(t, "v0.5 kv", pod.KVCacheUsage, 0.25)
	eq(t, "v0.5 requestsTotal", pod.RequestsTotal, 1)
	eq(t, "v0.5 generation", pod.GenerationTokensTotal, 32)
	if pod.InterToken == nil || pod.InterToken.Count != 31 || pod.InterToken.Sum != 0.05 {
		t.Errorf("v0.5 interToken = %+v", pod.InterToken)
	}
	if pod.QueueTime == nil || pod.QueueTime.Count != 1 {
		t.Errorf("v0.5 queueTime = %+v", pod.QueueTime)
	}
	if pod.GPU != nil {
		t.Error("sglang:utilization is not a GPU metric")
	}
}

func TestTGI(t *testing.T) {
	pod, err := mapFixture(t, "tgi.txt")
	if err != nil {
		t.Fatal(err)
	}
	if pod.Server != "tgi" {
		t.Fatalf("server = %q", pod.Server)
	}
	eq(t, "waiting", pod.Waiting, 0)
	eq(t, "running", pod.Running, 0)
	eq(t, "requestsTotal", pod.RequestsTotal, 109)
	isNil(t, "kv", pod.KVCacheUsage)
	if pod.TTFT != nil {
		t.Error("TGI has no TTFT histogram")
	}
	if pod.E2E == nil || pod.E2E.Count != 109 || pod.E2E.Sum != 541.2140316159999 {
		t.Errorf("e2e = %+v", pod.E2E)
	}
	if pod.E2E != nil && (len(pod.E2E.Buckets) == 0 || pod.E2E.Buckets[0].UpperBound != 0.00015000000000000001) {
		t.Errorf("e2e first bound = %+v, want 0.0001*1.5 (seconds, no unit suffix)", pod.E2E.Buckets[:1])
	}
	if pod.QueueTime == nil || pod.QueueTime.Count != 109 {
		t.Errorf("queueTime = %+v", pod.QueueTime)
	}
	hasNote(t, pod, "no TTFT")
	hasNote(t, pod, "no KV")
}

func TestTriton(t *testing.T) {
	pod, err := mapFixture(t, "triton.txt")
	if err != nil {
		t.Fatal(err)
	}
	if pod.Server != "triton" {
		t.Fatalf("server = %q", pod.Server)
	}
	eq(t, "waiting", pod.Waiting, 0)
	eq(t, "requestsTotal", pod.RequestsTotal, 3)
	isNil(t, "running (no TRT-LLM backend)", pod.Running)
	isNil(t, "kv (no TRT-LLM backend)", pod.KVCacheUsage)
	if pod.GPU == nil || pod.GPU.Utilization == nil || *pod.GPU.Utilization != 0 || pod.GPU.Field != "nv_gpu_utilization" || pod.GPU.Source != "server" {
		t.Errorf("gpu = %+v", pod.GPU)
	}
	if pod.TTFT != nil || pod.E2E != nil {
		t.Error("default Triton latency is counters, not histograms")
	}
	hasNote(t, pod, "microsecond counters")
}

func TestTritonTRTLLMAndMsHistogram(t *testing.T) {
	body := `# TYPE nv_inference_request_success counter
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
	fams, err := expo.Parse(strings.NewReader(body), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	p, err := preset.Detect(builtins(t), fams.Has)
	if err != nil || p.Name != "triton" {
		t.Fatalf("detect = %v %v", p, err)
	}
	pod := &signal.Pod{Name: "p"}
	p.Apply(fams, pod)
	eq(t, "waiting", pod.Waiting, 4)
	eq(t, "running (active only)", pod.Running, 6)
	eq(t, "kv fraction", pod.KVCacheUsage, 0.75)
	if pod.TTFT == nil || pod.TTFT.Buckets[0].UpperBound != 0.1 || pod.TTFT.Buckets[1].UpperBound != 0.5 || pod.TTFT.Sum != 2.5 {
		t.Errorf("ttft (ms to s) = %+v", pod.TTFT)
	}
}

func TestJetStreamAndLlamaCpp(t *testing.T) {
	pod, err := mapFixture(t, "jetstream_doc_snippet.txt")
	if err != nil {
		t.Fatal(err)
	}
	if pod.Server != "jetstream" {
		t.Fatalf("server = %q", pod.Server)
	}
	eq(t, "jetstream waiting", pod.Waiting, 0)
	// running carries the fraction of decode slots in use (1 of 24 here):
	// with maxNumSeqs 1 the batch rule reads it as the batch fraction
	if pod.Running == nil || math.Abs(*pod.Running-1.0/24) > 1e-12 {
		t.Errorf("jetstream running = %v, want the slots-used fraction 1/24", pod.Running)
	}

	pod, err = mapFixture(t, "llamacpp_fragment_pr13196.txt")
	if err != nil {
		t.Fatal(err)
	}
	if pod.Server != "llamacpp" {
		t.Fatalf("server = %q", pod.Server)
	}
	eq(t, "llamacpp prompt", pod.PromptTokensTotal, 143)
	eq(t, "llamacpp generation", pod.GenerationTokensTotal, 673)
	isNil(t, "llamacpp kv", pod.KVCacheUsage)
	hasNote(t, pod, "no KV-cache metric")
}

func TestDCGMIsNotAServer(t *testing.T) {
	if _, err := mapFixture(t, "dcgm_exporter_datadog_fixture.txt"); !errors.Is(err, preset.ErrNotDetected) {
		t.Errorf("err = %v, want ErrNotDetected", err)
	}
}

func TestCustomMapping(t *testing.T) {
	p, err := preset.Parse([]byte(`
name: myserver
signals:
  waiting: {families: [my_queue]}
  kvCacheUsage: {families: [my_kv_percent], scale: 0.01, agg: max}
  e2e: {families: [my_latency_ms], scale: 0.001}
notes: ["myserver: hand-written"]
`))
	if err != nil {
		t.Fatal(err)
	}
	fams, err := expo.Parse(strings.NewReader("my_queue{a=\"1\"} 2\nmy_queue{a=\"2\"} 3\nmy_kv_percent{a=\"1\"} 40\nmy_kv_percent{a=\"2\"} 90\n"), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	pod := &signal.Pod{Name: "p"}
	p.Apply(fams, pod)
	eq(t, "waiting", pod.Waiting, 5)
	eq(t, "kv max in 0-1", pod.KVCacheUsage, 0.9)
	if pod.E2E != nil {
		t.Error("absent family must give nil")
	}
	if pod.Server != "myserver" || len(pod.Notes) != 1 {
		t.Errorf("server %q notes %q", pod.Server, pod.Notes)
	}
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
