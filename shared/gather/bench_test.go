package gather

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/internal/podtest"
)

// BenchmarkGather1000Pods is one per-resource direct tick over 1,000 pods
// (eight loopback servers, each pod naming its server's port), with the
// default parallelism of 32.
func BenchmarkGather1000Pods(b *testing.B) {
	ports := make([]int, 8)
	for i := range ports {
		ports[i] = podtest.VLLMServer(b)
	}
	l := &fakeLister{}
	for i := 0; i < 1000; i++ {
		l.pods = append(l.pods, []byte(podtest.Pod(fmt.Sprintf("llm-%04d", i), "127.0.0.1", ports[i%len(ports)])))
	}
	target, err := os.ReadFile(filepath.Join("..", "..", "examples", "metric", "deployment.json"))
	if err != nil {
		b.Fatal(err)
	}
	failed := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var out bytes.Buffer
		err := Run(context.Background(), Process{Stdin: bytes.NewReader(target), Stdout: &out, Log: quiet,
			Lookup: lookup(map[string]string{"metricsPortName": "metrics"}),
			Lister: func(time.Duration) (PodLister, error) { return l, nil }})
		if err != nil {
			b.Fatal(err)
		}
		n := strings.Count(out.String(), `"server":"vllm"`)
		failed += 1000 - n
		if n < 900 {
			i := strings.Index(out.String(), `"error"`)
			b.Fatalf("%d pods mapped, want 1000; first error: %.300s", n, out.String()[max(i, 0):])
		}
	}
	b.ReportMetric(float64(failed)/float64(b.N), "failed-pods/op")
}
