package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/inferscale/inferscale/internal/podtest"
)

// BenchmarkMetricProcessPerPod runs the metric binary as CPA does in
// per-pod mode (a fresh process per pod, every 15 s) against a loopback
// server that serves a full-size vLLM V1 exposition, and reports the
// median wall time of a run.
func BenchmarkMetricProcessPerPod(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "metric")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building metric: %v\n%s", err, msg)
	}
	port := podtest.VLLMServer(b)
	stdin := []byte(`{"resource":` + podtest.Pod("llm-a", "127.0.0.1", port) + `,"runType":"scaler"}`)
	env := append(os.Environ(), "metricsPort="+strconv.Itoa(port))
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin)
		cmd.Env = env
		cmd.Stdin = bytes.NewReader(stdin)
		var out bytes.Buffer
		cmd.Stdout = &out
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("metric: %v", err)
		}
		durs = append(durs, time.Since(start))
		if !bytes.Contains(out.Bytes(), []byte(`"server":"vllm"`)) || bytes.Contains(out.Bytes(), []byte(`"error"`)) {
			b.Fatalf("unexpected output: %s", out.Bytes())
		}
	}
	b.StopTimer()
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "median-ms")
}
