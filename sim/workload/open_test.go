package workload

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOpenPicksLoader(t *testing.T) {
	dir := t.TempDir()
	gz := filepath.Join(dir, "azure.csv.gz")
	f, err := os.Create(gz)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	_, _ = zw.Write([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,4808,10\n2023-11-16 18:17:04.0319600,3180,8\n"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		spec  string
		n     int
		first Request
	}{
		{gz, 2, Request{0, 4808, 10, false}},
		{burstGPTSample, 12, Request{5 * time.Second, 472, 18, false}},
		{writeTemp(t, "m.jsonl", `{"timestamp": 250, "input_length": 3, "output_length": 4, "hash_ids": []}`+"\n"), 1, Request{250 * time.Millisecond, 3, 4, false}},
	}
	for _, c := range cases {
		src, err := Open(c.spec, 1)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		reqs := drain(t, src)
		if len(reqs) != c.n || reqs[0] != c.first {
			t.Errorf("%s: %d requests, first %+v; want %d, %+v", c.spec, len(reqs), reqs[0], c.n, c.first)
		}
	}
	// ServeGen directory and single client file, seeded like OpenServeGen.
	for _, spec := range []string{serveGenFixture, filepath.Join(serveGenFixture, "data/language/m-test/chunk-2-trace.csv")} {
		src, err := Open(spec, 3)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		got := drain(t, src)
		want := openServeGen(t, spec, ServeGenOptions{Seed: 3})
		if len(got) == 0 || len(got) != len(want) || got[0] != want[0] {
			t.Errorf("%s: Open gave %d requests, OpenServeGen %d", spec, len(got), len(want))
		}
	}
	for _, spec := range []string{"synthetic", "synthetic:demo"} {
		src, err := Open(spec, 2)
		if err != nil {
			t.Fatal(err)
		}
		a := drain(t, src)
		b := drain(t, Synthetic(DemoOptions(2)))
		if len(a) != len(b) || a[len(a)-1] != b[len(b)-1] {
			t.Errorf("%s is not the seeded demo workload", spec)
		}
	}
}

func TestOpenRealTraces(t *testing.T) {
	for rel, n := range map[string]int{
		"azure_llm_2023/AzureLLMInferenceTrace_code.csv": 8819,
		"mooncake_fast25/conversation_trace.jsonl":       12031,
	} {
		src, err := Open(tracePath(t, rel), 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(drain(t, src)); got != n {
			t.Errorf("%s: %d requests, want %d", rel, got, n)
		}
	}
	src, err := Open(tracePath(t, "servegen/servegen_trace_csvs_m-large.tar.gz"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, ok, err := src.Next(); !ok || err != nil {
		t.Errorf("servegen tar.gz: ok=%v err=%v", ok, err)
	}
}

func TestOpenErrors(t *testing.T) {
	cases := map[string]string{
		"synthetic:nope":                        "unknown synthetic preset",
		filepath.Join(t.TempDir(), "none.csv"):  "no such file",
		writeTemp(t, "x.csv", "a,b,c\n1,2,3\n"): "neither Azure",
		writeTemp(t, "x.parquet", "PAR1"):       "unknown kind",
		writeTemp(t, "empty.csv", ""):           "read header",
	}
	for spec, frag := range cases {
		_, err := Open(spec, 0)
		if err == nil || !strings.Contains(err.Error(), frag) {
			t.Errorf("Open(%q) = %v, want an error containing %q", spec, err, frag)
		}
	}
}

func TestIsServeGen(t *testing.T) {
	for spec, want := range map[string]bool{
		serveGenFixture:                        true,
		"x/servegen_trace_csvs_m-large.tar.gz": true,
		"a.tgz":                                true,
		"data/language/m/chunk-12-trace.csv":   true,
		burstGPTSample:                         false,
		"synthetic:demo":                       false,
		"trace.jsonl":                          false,
	} {
		if got := IsServeGen(spec); got != want {
			t.Errorf("IsServeGen(%q) = %v, want %v", spec, got, want)
		}
	}
}
