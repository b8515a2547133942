package expo_test

import (
	"context"
	"strings"
	"testing"

	"github.com/inferscale/inferscale/internal/expotest"
	"github.com/inferscale/inferscale/shared/expo"
)

func TestParseWantedMatchesFullParse(t *testing.T) {
	page := []byte(expotest.VLLMV1{Model: "m", Engines: 2, Waiting: 3, Running: 5, KV: 0.5, Requests: 7, HitBucket: 3}.Render())
	full, err := expo.ParseWanted(context.Background(), page, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := expo.Wanted{"vllm:num_requests_waiting": true, "vllm:time_to_first_token_seconds": true, "vllm:request_success_total": true}
	part, err := expo.ParseWanted(context.Background(), page, "text/plain", want)
	if err != nil {
		t.Fatal(err)
	}
	if len(part) != 3 || len(full) < 20 {
		t.Fatalf("kept %v of %d", part.Names(), len(full))
	}
	for n := range want {
		a, _ := full.Value(n, nil, expo.Sum)
		b, _ := part.Value(n, nil, expo.Sum)
		if a != b {
			t.Errorf("%s: %g vs %g", n, a, b)
		}
	}
	hf, _, _ := full.Histogram("vllm:time_to_first_token_seconds", nil, 1)
	hp, _, _ := part.Histogram("vllm:time_to_first_token_seconds", nil, 1)
	if hf == nil || hp == nil || hf.Count != hp.Count || len(hf.Buckets) != len(hp.Buckets) || hp.Count != 14 {
		t.Errorf("histograms differ: %+v %+v", hf, hp)
	}
}

func TestParseWantedStillRejectsGarbage(t *testing.T) {
	want := expo.Wanted{"a": true}
	for _, body := range []string{"<html>oops</html>\n", "a{le=\"1\" 3\n", "a 1 2 3 4\n", "{\"json\": true}\n"} {
		if _, err := expo.ParseWanted(context.Background(), []byte(body), "text/plain", want); err == nil {
			t.Errorf("%q: want error", body)
		}
	}
	// Lines of other families are not even looked at.
	f, err := expo.ParseWanted(context.Background(), []byte("b{x=\"unterminated} 1\na 2\n# NOTE x\n#TYPE odd\n  \n"), "text/plain", want)
	if err != nil || !f.Has("a") || f.Has("b") {
		t.Errorf("f = %v, err %v", f.Names(), err)
	}
}

func TestParseWantedOpenMetrics(t *testing.T) {
	body := "# TYPE c counter\nc_total 3\n# TYPE g gauge\ng 1\n# EOF\n"
	f, err := expo.ParseWanted(context.Background(), []byte(body), "application/openmetrics-text; version=1.0.0", expo.Wanted{"c_total": true})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := f.Value("c_total", nil, expo.Sum); !ok || v != 3 || f.Has("g") {
		t.Errorf("c_total = %v %v; names %v", v, ok, f.Names())
	}
	if !strings.Contains(strings.Join(f.Names(), ","), "c") {
		t.Errorf("names %v", f.Names())
	}
}

// Names in the quoted and braced forms the text parser accepts are read
// by the pre-filter: wanted families are kept, others are not (the fuzz
// corpus entries 4d01219f3c50fbe7 and 0e810d19aa2b907c).
func TestParseWantedQuotedAndBracedNames(t *testing.T) {
	want := expo.Wanted{"a": true}
	body := "# TYPE \"a\" gauge\n\"a\"{x=\"1\"} 2\n{\"a\", x=\"2\"} 3\n# TYPE \"b\" gauge\n\"b\" 1\n{\"b\"} 4\n{B} 5\n"
	f, err := expo.ParseWanted(context.Background(), []byte(body), "text/plain", want)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := f.Value("a", nil, expo.Sum); !ok || v != 5 || len(f) != 1 {
		t.Errorf("a = %v %v; kept %v", v, ok, f.Names())
	}
	// its quoted TYPE line was kept with it
	if typ := f["a"].GetType().String(); typ != "GAUGE" {
		t.Errorf("a is %s, want GAUGE", typ)
	}
}
