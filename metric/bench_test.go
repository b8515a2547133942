package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// metricBinary returns ../bin/metric when it exists (make bench builds
// it), else builds a static copy into a temporary directory.
func metricBinary(b *testing.B) string {
	b.Helper()
	if p, err := filepath.Abs(filepath.Join("..", "bin", "metric")); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	out := filepath.Join(b.TempDir(), "metric")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building metric: %v\n%s", err, msg)
	}
	return out
}

// BenchmarkMetricProcessPerPod runs the metric binary as CPA does in
// per-pod mode (a fresh process per pod) against a loopback server that
// serves a full-size vLLM V1 exposition, and reports the median wall time.
func BenchmarkMetricProcessPerPod(b *testing.B) {
	bin := metricBinary(b)
	port := vllmServer(b)
	stdin := []byte(`{"resource":` + podItem("llm-a", "127.0.0.1", port) + `,"runType":"scaler"}`)
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
	b.ReportMetric(median(durs), "median-ms")
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	b.ReportMetric(float64(durs[len(durs)*9/10].Microseconds())/1000, "p90-ms")
	// The floors on this machine at this moment: starting /bin/true and a
	// Go program that does nothing the same way (interleaved, 50 each).
	trivial := trivialGoBinary(b)
	if truePath, err := exec.LookPath("true"); err == nil {
		base := make([]time.Duration, 0, 50)
		goBase := make([]time.Duration, 0, 50)
		for i := 0; i < 50; i++ {
			start := time.Now()
			if err := exec.Command(truePath).Run(); err != nil {
				b.Fatal(err)
			}
			base = append(base, time.Since(start))
			start = time.Now()
			if err := exec.Command(trivial).Run(); err != nil {
				b.Fatal(err)
			}
			goBase = append(goBase, time.Since(start))
		}
		b.ReportMetric(median(base), "bin-true-median-ms")
		b.ReportMetric(median(goBase), "go-trivial-median-ms")
		b.ReportMetric(median(durs)/median(goBase), "x-go-trivial")
	}
}

// trivialGoBinary builds a Go program that does nothing, the floor any Go
// process pays on this machine (runtime start-up, no package inits).
func trivialGoBinary(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	files := map[string]string{"go.mod": "module trivial\n\ngo 1.26\n", "main.go": "package main\n\nfunc main() {}\n"}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	out := filepath.Join(dir, "trivial")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building the trivial Go binary: %v\n%s", err, msg)
	}
	return out
}

func median(d []time.Duration) float64 {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[len(s)/2].Microseconds()) / 1000
}

// BenchmarkGather1000Pods is one per-resource direct tick over 1,000 pods
// (eight loopback servers, each pod naming its server's port), with the
// default parallelism of 32.
func BenchmarkGather1000Pods(b *testing.B) {
	ports := make([]int, 8)
	for i := range ports {
		ports[i] = vllmServer(b)
	}
	l := &fakeLister{}
	for i := 0; i < 1000; i++ {
		l.pods = append(l.pods, []byte(podItem(fmt.Sprintf("llm-%04d", i), "127.0.0.1", ports[i%len(ports)])))
	}
	target, err := os.ReadFile(filepath.Join("..", "examples", "metric", "deployment.json"))
	if err != nil {
		b.Fatal(err)
	}
	e := env{lookup: lookup(map[string]string{"metricsPortName": "metrics"}),
		lister: func(time.Duration) (podLister, error) { return l, nil }}
	failed := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := e.run(context.Background(), bytes.NewReader(target), quiet)
		if err != nil {
			b.Fatal(err)
		}
		n := strings.Count(string(out), `"server":"vllm"`)
		failed += 1000 - n
		if n < 900 {
			i := strings.Index(string(out), `"error"`)
			b.Fatalf("%d pods mapped, want 1000; first error: %.300s", n, string(out)[max(i, 0):])
		}
	}
	b.ReportMetric(float64(failed)/float64(b.N), "failed-pods/op")
}

// BenchmarkPerPodInProcess is the work of one per-pod run without the
// process start: read stdin, scrape the full vLLM page, map, encode.
func BenchmarkPerPodInProcess(b *testing.B) {
	port := vllmServer(b)
	stdin := []byte(`{"resource":` + podItem("llm-a", "127.0.0.1", port) + `,"runType":"scaler"}`)
	e := env{lookup: lookup(map[string]string{"metricsPort": strconv.Itoa(port)}),
		lister: func(time.Duration) (podLister, error) { return nil, nil }}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		out, err := e.run(context.Background(), bytes.NewReader(stdin), quiet)
		if err != nil || !bytes.Contains(out, []byte(`"server":"vllm"`)) {
			b.Fatalf("%v %s", err, out)
		}
	}
}
