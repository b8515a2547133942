package expo_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/inferscale/inferscale/internal/expotest"
	"github.com/inferscale/inferscale/shared/expo"
)

func parse(t *testing.T, body string) expo.Families {
	t.Helper()
	f, err := expo.Parse(strings.NewReader(body), "text/plain; version=0.0.4")
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return f
}

func TestEveryFixtureParses(t *testing.T) {
	for _, name := range []string{"vllm_v0_datadog_fixture.txt", "vllm_v1_early_fragment_production-stack-318.txt",
		"vllm_v1_dp_fragment_pr22227.txt", "sglang.txt", "sglang_v0.5_datadog_fixture.txt", "tgi.txt", "triton.txt",
		"dcgm_exporter_datadog_fixture.txt", "jetstream_doc_snippet.txt", "llamacpp_fragment_pr13196.txt"} {
		t.Run(name, func(t *testing.T) {
			b := expotest.Fixture(t, name)
			f, err := expo.Parse(bytes.NewReader(b), "text/plain")
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if len(f) == 0 {
				t.Fatal("no families")
			}
		})
	}
}

func TestQuirks(t *testing.T) {
	// Sum before buckets (SGLang multiprocess), le first, count after sum,
	// exponent numbers, blank lines, TYPE without HELP, empty HELP, NOTE comments,
	// _created series, a family with HELP/TYPE only, no trailing newline.
	body := `# HELP a:b_seconds x
# TYPE a:b_seconds histogram
a:b_seconds_sum{model_name="m"} 1.5e+00
a:b_seconds_bucket{le="0.00015000000000000001",model_name="m"} 1.0
a:b_seconds_bucket{model_name="m",le="1.0"} 2
a:b_seconds_bucket{model_name="m",le="+Inf"} 3
a:b_seconds_count{model_name="m"} 3

# NOTE free-form comment
# TYPE q gauge
q{engine="0"} 8.128902e+06
q{engine="1"} 2
# HELP empty
# TYPE empty gauge
# HELP r_total r
# TYPE r_total counter
r_total{finished_reason="stop"} 3
r_total{finished_reason="length"} 4
# TYPE r_created gauge
r_created{finished_reason="stop"} 1.7e9
# HELP dc
# TYPE dc gauge
dc 8.969000`
	f := parse(t, body)
	if f.Has("empty") {
		t.Error("HELP/TYPE-only family must be absent")
	}
	if v, ok := f.Value("q", nil, expo.Sum); !ok || v != 8128904 {
		t.Errorf("q sum = %v %v", v, ok)
	}
	if v, ok := f.Value("q", nil, expo.Mean); !ok || v != 4064452 {
		t.Errorf("q mean = %v %v", v, ok)
	}
	if v, ok := f.Value("q", nil, expo.Max); !ok || v != 8128902 {
		t.Errorf("q max = %v %v", v, ok)
	}
	if v, ok := f.Value("q", map[string]string{"engine": "1"}, expo.Sum); !ok || v != 2 {
		t.Errorf("q{engine=1} = %v %v", v, ok)
	}
	if _, ok := f.Value("q", map[string]string{"engine": "9"}, expo.Sum); ok {
		t.Error("no sample matches engine=9: want not ok")
	}
	if v, ok := f.Value("r_total", nil, expo.Sum); !ok || v != 7 {
		t.Errorf("r_total = %v %v (the _created series must not count)", v, ok)
	}
	if v, ok := f.Value("dc", nil, expo.Sum); !ok || v != 8.969 {
		t.Errorf("dc = %v", v)
	}
	h, skipped, ok := f.Histogram("a:b_seconds", nil, 1)
	if !ok || skipped != 0 {
		t.Fatalf("histogram ok=%v skipped=%d", ok, skipped)
	}
	if len(h.Buckets) != 2 || h.Buckets[0].UpperBound != 0.00015000000000000001 || h.Buckets[0].Count != 1 ||
		h.Buckets[1].Count != 2 || h.Count != 3 || h.Sum != 1.5 {
		t.Errorf("histogram = %+v", h)
	}
	if _, _, ok := f.Histogram("q", nil, 1); ok {
		t.Error("a gauge is not a histogram")
	}
}

func TestHistogramMergeAndScale(t *testing.T) {
	body := `# TYPE h_ms histogram
h_ms_bucket{engine="0",le="10"} 1
h_ms_bucket{engine="0",le="100"} 2
h_ms_bucket{engine="0",le="+Inf"} 2
h_ms_sum{engine="0"} 60
h_ms_count{engine="0"} 2
h_ms_bucket{engine="1",le="10"} 3
h_ms_bucket{engine="1",le="100"} 3
h_ms_bucket{engine="1",le="+Inf"} 4
h_ms_sum{engine="1"} 1000
h_ms_count{engine="1"} 4
h_ms_bucket{engine="2",le="5"} 3
h_ms_bucket{engine="2",le="+Inf"} 4
h_ms_sum{engine="2"} 1000
h_ms_count{engine="2"} 4
`
	f := parse(t, body)
	h, skipped, ok := f.Histogram("h_ms", nil, 0.001)
	if !ok {
		t.Fatal("not ok")
	}
	if skipped != 1 {
		t.Errorf("skipped = %d, want 1 (engine 2 has other bounds)", skipped)
	}
	if len(h.Buckets) != 2 || h.Buckets[0].UpperBound != 0.01 || h.Buckets[1].UpperBound != 0.1 ||
		h.Buckets[0].Count != 4 || h.Buckets[1].Count != 5 || h.Count != 6 || h.Sum != 1.06 {
		t.Errorf("merged = %+v", h)
	}
}

func TestOpenMetrics(t *testing.T) {
	body := `# TYPE vllm:request_success counter
# HELP vllm:request_success done
vllm:request_success_total{model_name="m"} 5.0
vllm:request_success_created{model_name="m"} 1.7e9
# TYPE g gauge
g 0.5
# EOF
`
	f, err := expo.Parse(strings.NewReader(body), "application/openmetrics-text; version=1.0.0; charset=utf-8")
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if v, ok := f.Value("vllm:request_success_total", nil, expo.Sum); !ok || v != 5 {
		t.Errorf("counter through the _total spelling = %v %v", v, ok)
	}
	if v, ok := f.Value("g", nil, expo.Sum); !ok || v != 0.5 {
		t.Errorf("g = %v %v", v, ok)
	}
}

func TestParseRejectsGarbage(t *testing.T) {
	for _, body := range []string{"<html>oops</html>", "metric{le=\"1\" 3", "# TYPE x histogram\nx_bucket{le=\"a\"} 1\n", "x 1 2 3 4\n"} {
		if _, err := expo.Parse(strings.NewReader(body), "text/plain"); err == nil {
			t.Errorf("%q: want error", body)
		}
	}
	if _, err := expo.Parse(strings.NewReader("g 1\n"), "application/openmetrics-text; version=9"); err == nil {
		t.Error("unknown OpenMetrics version: want error")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("# TYPE a histogram\na_bucket{le=\"1\"} 1\na_bucket{le=\"+Inf\"} 2\na_sum 3\na_count 2\n"))
	f.Add([]byte("vllm:num_requests_waiting{model_name=\"x\"} 3\n"))
	f.Add([]byte("# HELP x\n# TYPE x gauge\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		// The filtered parse must never panic and never keep an unwanted family.
		if part, err := expo.ParseWanted(context.Background(), b, "text/plain", expo.Wanted{"a": true, "vllm:num_requests_waiting": true}); err == nil {
			for n := range part {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
				if base != "a" && base != "vllm:num_requests_waiting" {
					t.Fatalf("kept unwanted family %q", n)
				}
			}
		}
		fams, err := expo.Parse(bytes.NewReader(b), "text/plain")
		if err != nil {
			return
		}
		for _, n := range fams.Names() {
			fams.Value(n, nil, expo.Mean)
			if h, _, ok := fams.Histogram(n, nil, 1); ok {
				for i := 1; i < len(h.Buckets); i++ {
					if h.Buckets[i].UpperBound <= h.Buckets[i-1].UpperBound {
						t.Fatalf("bounds not increasing: %+v", h.Buckets)
					}
				}
			}
		}
	})
}
