package vllmexpo_test

import (
	"strings"
	"testing"

	"github.com/inferscale/inferscale/internal/vllmexpo"
	"github.com/inferscale/inferscale/shared/expo"
	"github.com/inferscale/inferscale/shared/signal"
)

// TestPageParsesBackExactly writes a page in both label orders and parses
// it with the gather stage's parser: every family is there, per engine,
// with its exact value; histograms keep their bounds, counts and sums.
func TestPageParsesBackExactly(t *testing.T) {
	ttft := &signal.Histogram{Sum: 12.375, Count: 40}
	for i, b := range vllmexpo.TTFTBounds() {
		ttft.Buckets = append(ttft.Buckets, signal.Bucket{UpperBound: b, Count: float64(min(40, 2*i))})
	}
	for _, sorted := range []bool{false, true} {
		page := &vllmexpo.Page{Model: `m"1`, Engines: 2, Sorted: sorted, Created: 1.7e9}
		page.Gauge("vllm:num_requests_waiting", "Waiting.", 3)
		page.Gauge("vllm:kv_cache_usage_perc", "KV.", 0.1+0.2)
		page.Counter("vllm:prompt_tokens_total", "Prompt tokens.", 123456789012)
		page.CounterSeries("vllm:request_success_total", "Finished.", vllmexpo.Series{Labels: `finished_reason="stop"`, Value: 7},
			vllmexpo.Series{Labels: `finished_reason="length"`, Value: 1})
		page.Histogram("vllm:time_to_first_token_seconds", "TTFT.", ttft)
		page.Family("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", "gauge", vllmexpo.Series{Labels: `gpu="0"`, Value: 60})
		text := page.String()
		fams, err := expo.Parse(strings.NewReader(text), "text/plain; version=0.0.4")
		if err != nil {
			t.Fatalf("sorted=%v: %v\n%s", sorted, err, text)
		}
		for _, c := range []struct {
			name string
			want map[string]string
			v    float64
		}{
			{"vllm:num_requests_waiting", map[string]string{"engine": "1", "model_name": `m"1`}, 3},
			{"vllm:num_requests_waiting", nil, 6},
			{"vllm:kv_cache_usage_perc", map[string]string{"engine": "0"}, 0.1 + 0.2},
			{"vllm:prompt_tokens_total", map[string]string{"engine": "0"}, 123456789012},
			{"vllm:request_success_total", map[string]string{"finished_reason": "stop"}, 14},
			{"vllm:prompt_tokens_created", map[string]string{"engine": "1"}, 1.7e9},
			{"DCGM_FI_DEV_GPU_UTIL", map[string]string{"gpu": "0"}, 60},
		} {
			if got, ok := fams.Value(c.name, c.want, expo.Sum); !ok || got != c.v {
				t.Errorf("sorted=%v: %s%v = %v (%v), want %v", sorted, c.name, c.want, got, ok, c.v)
			}
		}
		h, skipped, ok := fams.Histogram("vllm:time_to_first_token_seconds", map[string]string{"engine": "0"}, 1)
		if !ok || skipped != 0 || h.Count != 40 || h.Sum != 12.375 || len(h.Buckets) != len(ttft.Buckets) {
			t.Fatalf("sorted=%v: histogram %+v", sorted, h)
		}
		for i, b := range h.Buckets {
			if b != ttft.Buckets[i] {
				t.Errorf("sorted=%v: bucket %d = %+v, want %+v", sorted, i, b, ttft.Buckets[i])
			}
		}
		if sorted != strings.Contains(text, `{engine="0",le="0.001",model_name=`) {
			t.Errorf("sorted=%v: bucket label order wrong:\n%s", sorted, text[:min(len(text), 600)])
		}
	}
}

func TestNumWritesValuesAsPrometheusClientDoes(t *testing.T) {
	for v, want := range map[float64]string{1: "1.0", 12345678: "12345678.0", 0.25: "0.25", 2.5e-05: "2.5e-05", 1e20: "1e+20", -3: "-3.0"} {
		if got := vllmexpo.Num(v); got != want {
			t.Errorf("Num(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestTokenBoundsStopAtTheModelLength(t *testing.T) {
	got := vllmexpo.TokenBounds(2048)
	want := []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000}
	if len(got) != len(want) {
		t.Fatalf("TokenBounds(2048) = %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("TokenBounds(2048) = %v", got)
		}
	}
}
