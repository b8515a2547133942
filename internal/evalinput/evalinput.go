// Package evalinput builds CPA evaluate inputs for tests and benchmarks.
package evalinput

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/inferscale/inferscale/internal/vllmexpo"
	"github.com/inferscale/inferscale/shared/signal"
)

// Synthetic is a CPA evaluate stdin for n ready vLLM pods scraped at at,
// with latency histograms on vLLM's TTFT buckets as metric prints them.
func Synthetic(n int, at time.Time) []byte {
	bounds := vllmexpo.TTFTBounds()
	type metric struct {
		Resource string `json:"resource"`
		Value    string `json:"value"`
	}
	var ms []metric
	for i := 0; i < n; i++ {
		created := at.Add(-time.Hour)
		readyAt := created.Add(70 * time.Second)
		h := &signal.Histogram{Count: 10000, Sum: 3000}
		for j, b := range bounds {
			h.Buckets = append(h.Buckets, signal.Bucket{UpperBound: b, Count: float64(10000 * (j + 1) / len(bounds))})
		}
		p := signal.Pod{Name: fmt.Sprintf("vllm-%03d", i), Namespace: "default", Phase: "Running", Ready: true,
			CreatedAt: &created, ReadyAt: &readyAt, StartupSeconds: signal.F(70), AgeSeconds: signal.F(3600),
			ScrapeTime: at, Server: "vllm", Waiting: signal.F(float64(i % 3)), Running: signal.F(40),
			KVCacheUsage: signal.F(0.6), GPU: &signal.GPU{Utilization: signal.F(0.7), Source: "dcgm-exporter", Count: 1},
			TTFT: h, E2E: h, RequestsTotal: signal.F(10000), PromptTokensTotal: signal.F(5e6), GenerationTokensTotal: signal.F(2e6)}
		b, err := (&signal.Report{Version: signal.Version, ScrapeTime: at, Pods: []signal.Pod{p}}).Encode()
		if err != nil {
			panic(err)
		}
		ms = append(ms, metric{Resource: p.Name, Value: string(b)})
	}
	doc := map[string]any{"metrics": ms, "runType": "scaler",
		"resource": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "vllm"},
			"spec": map[string]any{"replicas": n}}}
	b, _ := json.Marshal(doc)
	return b
}
