package engine

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/internal/vllmexpo"
	"github.com/inferscale/inferscale/shared/signal"
)

func TestWriteOpenMetricsGroupsFamiliesAndStampsSamples(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	scrape := func(pod string, at time.Time, requests float64) *signal.Pod {
		h := newHistogram(vllmexpo.TokenBounds(1000))
		h.observeN(150, requests)
		return &signal.Pod{Name: pod, Namespace: Namespace, ScrapeTime: at, Waiting: signal.F(2), RequestsTotal: signal.F(requests),
			PromptLength: h.cumulative(), GPU: &signal.GPU{Utilization: signal.F(0.5)}}
	}
	var b bytes.Buffer
	err := WriteOpenMetrics(&b, []*signal.Pod{
		scrape("vllm-0", t0, 10), scrape("vllm-1", t0, 3),
		scrape("vllm-0", t0.Add(15*time.Second), 25), scrape("vllm-1", t0.Add(15*time.Second), 9),
	}, "m", map[string]string{"job": "vllm"})
	if err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, fam := range []string{"vllm:num_requests_waiting gauge", "vllm:request_success counter", "vllm:request_prompt_tokens histogram", "DCGM_FI_DEV_GPU_UTIL gauge"} {
		if n := strings.Count(s, "# TYPE "+fam+"\n"); n != 1 {
			t.Errorf("# TYPE %s appears %d times, want once", fam, n)
		}
	}
	for _, want := range []string{
		`vllm:request_success_total{engine="0",finished_reason="length",job="vllm",model_name="m",namespace="sim",pod="vllm-0"} 25.0 1.767571215e+09`,
		`vllm:request_prompt_tokens_bucket{engine="0",job="vllm",model_name="m",namespace="sim",pod="vllm-1",le="200.0"} 9 1.767571215e+09`,
		`DCGM_FI_DEV_GPU_UTIL{UUID="GPU-sim",container="vllm",gpu="0",job="vllm",namespace="sim",pod="vllm-1"} 50.0 1.7675712e+09`,
	} {
		if !strings.Contains(s, want+"\n") {
			t.Errorf("output lacks\n%s", want)
		}
	}
	if !strings.HasSuffix(s, "# EOF\n") {
		t.Error("no # EOF at the end")
	}
	if err := WriteOpenMetrics(&b, []*signal.Pod{{Name: "x"}}, "m", nil); err == nil {
		t.Error("a scrape without a time: accepted")
	}
}
