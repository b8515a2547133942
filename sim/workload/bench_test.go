package workload

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// benchSource drains the source open returns, b.N times, and reports
// requests/s (the figure that matters for the simulator's replay budget).
func benchSource(b *testing.B, open func() (Source, error)) {
	b.Helper()
	total := 0
	b.ResetTimer()
	for range b.N {
		src, err := open()
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, ok, err := src.Next()
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
			total++
		}
		_ = src.Close()
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(total), "ns/req")
}

func BenchmarkAzure(b *testing.B) {
	p := tracePath(b, "azure_llm_2023/AzureLLMInferenceTrace_code.csv")
	benchSource(b, func() (Source, error) { return OpenAzure(p) })
}

func BenchmarkMooncake(b *testing.B) {
	p := tracePath(b, "mooncake_fast25/conversation_trace.jsonl")
	benchSource(b, func() (Source, error) { return OpenMooncake(p) })
}

func BenchmarkBurstGPT(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(strings.Join(burstGPTHeader, ",") + "\n")
	for i := range 100000 {
		fmt.Fprintf(&sb, "%d,ChatGPT,%d,%d,%d,Conversation log\n", i/3, 100+i%900, 1+i%300, 101+i%900+i%300)
	}
	p := filepath.Join(b.TempDir(), "burst.csv")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	benchSource(b, func() (Source, error) { return OpenBurstGPT(p, BurstGPTOptions{}) })
}

// BenchmarkServeGenHour replays one busy hour (day 3, noon) of the m-large
// release at full rate, loading the tar.gz each time.
func BenchmarkServeGenHour(b *testing.B) {
	p := tracePath(b, "servegen/servegen_trace_csvs_m-large.tar.gz")
	opts := ServeGenOptions{Seed: 1, Start: 84 * time.Hour, Duration: time.Hour}
	benchSource(b, func() (Source, error) { return OpenServeGen(p, opts) })
}

// BenchmarkServeGen14Days streams the whole 14-day release with every
// client's rate scaled by 0.05 (≈11.8 M requests), the shape of a 14-day
// simulator run.
func BenchmarkServeGen14Days(b *testing.B) {
	p := tracePath(b, "servegen/servegen_trace_csvs_m-large.tar.gz")
	opts := ServeGenOptions{Seed: 1, RateFactor: 0.05}
	benchSource(b, func() (Source, error) { return OpenServeGen(p, opts) })
}

func BenchmarkSyntheticDemo(b *testing.B) {
	benchSource(b, func() (Source, error) { return Synthetic(DemoOptions(1)), nil })
}

func BenchmarkScaleDouble(b *testing.B) {
	benchSource(b, func() (Source, error) { return Scale(Synthetic(DemoOptions(1)), 0.5, 2), nil })
}

// BenchmarkServeGenLoad is the fixed cost of a ServeGen replay: reading
// and parsing the 162 rate CSVs from the tar.gz (one second replayed).
func BenchmarkServeGenLoad(b *testing.B) {
	p := tracePath(b, "servegen/servegen_trace_csvs_m-large.tar.gz")
	for range b.N {
		src, err := OpenServeGen(p, ServeGenOptions{Seed: 1, Duration: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		_ = src.Close()
	}
}
