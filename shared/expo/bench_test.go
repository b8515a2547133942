package expo_test

import (
	"context"
	"strings"
	"testing"

	"github.com/inferscale/inferscale/internal/expotest"
	"github.com/inferscale/inferscale/shared/expo"
)

// BenchmarkParseVLLMV1 parses one full-size vLLM V1 page (one engine).
func BenchmarkParseVLLMV1(b *testing.B) {
	page := expotest.VLLMV1{Model: "meta-llama/Llama-3.1-8B-Instruct", Engines: 1, Waiting: 3, Running: 5, KV: 0.5, Requests: 40, HitBucket: 9}.Render()
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := expo.Parse(strings.NewReader(page), "text/plain; version=0.0.4"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseVLLMV1Wanted parses the same page keeping only the
// families the built-in presets read (what a scrape does).
func BenchmarkParseVLLMV1Wanted(b *testing.B) {
	page := []byte(expotest.VLLMV1{Model: "meta-llama/Llama-3.1-8B-Instruct", Engines: 1, Waiting: 3, Running: 5, KV: 0.5, Requests: 40, HitBucket: 9}.Render())
	want := expo.Wanted{"vllm:num_requests_waiting": true, "vllm:num_requests_running": true, "vllm:kv_cache_usage_perc": true,
		"vllm:time_to_first_token_seconds": true, "vllm:e2e_request_latency_seconds": true, "vllm:request_queue_time_seconds": true,
		"vllm:inter_token_latency_seconds": true, "vllm:request_success_total": true, "vllm:prompt_tokens_total": true,
		"vllm:generation_tokens_total": true, "vllm:num_preemptions_total": true}
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := expo.ParseWanted(context.Background(), page, "text/plain; version=0.0.4", want); err != nil {
			b.Fatal(err)
		}
	}
}
