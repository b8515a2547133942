package history

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/inferscale/inferscale/sim/tune"
	"github.com/inferscale/inferscale/sim/workload"
)

var t0 = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

func opts() Options {
	return Options{URL: "http://prometheus:9090", Selector: `{namespace="inference",job="vllm"}`, Start: t0, End: t0.Add(3 * time.Minute), Step: time.Minute}
}

func TestOptionsValidate(t *testing.T) {
	o := opts()
	if err := o.Validate(); err != nil || o.Timeout != DefaultTimeout || o.MaxResponseBytes != DefaultMaxResponseBytes {
		t.Fatalf("good options: %v %+v", err, o)
	}
	o = opts()
	for _, empty := range []string{"", " ", "{}", "{ }"} {
		o.Selector = empty
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "no selector") {
			t.Errorf("empty selector %q: %v, want it refused", empty, err)
		}
	}
	for name, mutate := range map[string]func(*Options){
		"no URL":         func(o *Options) { o.URL = "" },
		"no braces":      func(o *Options) { o.Selector = `namespace="x"` },
		"bad matcher":    func(o *Options) { o.Selector = `{namespace=x}` },
		"injection":      func(o *Options) { o.Selector = `{a="b"}[5m]) or vector(1) or (x{}` },
		"end first":      func(o *Options) { o.End = o.Start.Add(-time.Hour) },
		"short step":     func(o *Options) { o.Step = 10 * time.Second },
		"many windows":   func(o *Options) { o.End = o.Start.Add(12000 * time.Minute) },
		"shorter period": func(o *Options) { o.End = o.Start.Add(30 * time.Second) },
	} {
		o := opts()
		mutate(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// fakeProm answers range queries from canned per-window values.
type fakeProm struct {
	queries []string
	answer  func(query string, r promv1.Range) (model.Value, error)
}

func (f *fakeProm) QueryRange(_ context.Context, q string, r promv1.Range, _ ...promv1.Option) (model.Value, promv1.Warnings, promv1.Infos, error) {
	f.queries = append(f.queries, q)
	v, err := f.answer(q, r)
	return v, nil, nil, err
}

func series(labels model.LabelSet, r promv1.Range, vals ...float64) *model.SampleStream {
	s := &model.SampleStream{Metric: model.Metric(labels)}
	for i, v := range vals {
		s.Values = append(s.Values, model.SamplePair{Timestamp: model.TimeFromUnixNano(r.Start.Add(time.Duration(i) * r.Step).UnixNano()), Value: model.SampleValue(v)})
	}
	return s
}

// A three-window history: 100, 200 and 50 finished; 10, 60, 20, 0 in flight.
func cannedHistory(q string, r promv1.Range) (model.Value, error) {
	switch {
	case strings.HasPrefix(q, "sum(increase(vllm:request_success_total"):
		return model.Matrix{series(nil, r, 100, 200, 50)}, nil
	case strings.Contains(q, "__name__"):
		return model.Matrix{series(nil, r, 10, 60, 20, 0)}, nil
	case strings.Contains(q, "_bucket"):
		// Prompt and output alike: 1-2-5 buckets up to 1000, most in (100, 200].
		return model.Matrix{
			series(model.LabelSet{"le": "100"}, r, 10, 20, 5),
			series(model.LabelSet{"le": "200"}, r, 90, 180, 45),
			series(model.LabelSet{"le": "1000"}, r, 100, 200, 50),
			series(model.LabelSet{"le": "+Inf"}, r, 100, 200, 50),
		}, nil
	case strings.Contains(q, "_sum"):
		return model.Matrix{series(nil, r, 16000, 32000, 8000)}, nil
	}
	return nil, errors.New("unexpected query " + q)
}

func TestFetchComputesArrivalsFromCompletionsAndInFlight(t *testing.T) {
	f := &fakeProm{answer: cannedHistory}
	rec, err := Fetch(context.Background(), f, opts())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`sum(increase(vllm:request_success_total{namespace="inference",job="vllm"}[1m]))`,
		`sum({__name__=~"vllm:num_requests_running|vllm:num_requests_waiting",namespace="inference",job="vllm"})`,
		`sum by (le) (increase(vllm:request_prompt_tokens_bucket{namespace="inference",job="vllm"}[1m]))`,
		`sum(increase(vllm:request_prompt_tokens_sum{namespace="inference",job="vllm"}[1m]))`,
		`sum by (le) (increase(vllm:request_generation_tokens_bucket{namespace="inference",job="vllm"}[1m]))`,
		`sum(increase(vllm:request_generation_tokens_sum{namespace="inference",job="vllm"}[1m]))`,
	}
	if strings.Join(f.queries, "\n") != strings.Join(want, "\n") {
		t.Errorf("queries:\n%s\nwant:\n%s", strings.Join(f.queries, "\n"), strings.Join(want, "\n"))
	}
	// arrivals = finished + Δ in flight: 100+50, 200-40, 50-20.
	if got := rec.Arrivals; len(got) != 3 || got[0] != 150 || got[1] != 160 || got[2] != 30 {
		t.Errorf("arrivals %v", got)
	}
	if b := rec.Prompt.Bounds; len(b) != 3 || b[0] != 100 || b[2] != 1000 {
		t.Errorf("bounds %v", b)
	}
	if c := rec.Prompt.Counts[1]; c[0] != 20 || c[1] != 160 || c[2] != 20 || c[3] != 0 {
		t.Errorf("window 1 buckets %v", c)
	}

	reqs, err := rec.Rebuild(3)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := rec.Rebuild(3)
	if len(reqs) != 340 || len(again) != len(reqs) || again[17] != reqs[17] {
		t.Fatalf("rebuild: %d requests (want 340), deterministic: %v", len(reqs), len(again) == len(reqs) && again[17] == reqs[17])
	}
	per := make([]int, 3)
	for i, r := range reqs {
		per[int(r.Arrival/time.Minute)]++
		if i > 0 && r.Arrival < reqs[i-1].Arrival {
			t.Fatal("rebuilt requests out of order")
		}
		if r.InputTokens < 1 || r.InputTokens > 1000 || r.OutputTokens < 1 || r.OutputTokens > 1000 {
			t.Fatalf("length outside the recorded buckets: %+v", r)
		}
	}
	if per[0] != 150 || per[1] != 160 || per[2] != 30 {
		t.Errorf("rebuilt per window %v", per)
	}
	fid := Compare(rec, reqs)
	if fid.RecordedRequests != 340 || fid.RebuiltRequests != 340 || fid.RateMaxError != 0 || fid.Prompt.Distance > 0.1 {
		t.Errorf("fidelity %+v", fid)
	}
	if !strings.Contains(fid.String(), "requests recorded 340, rebuilt 340") {
		t.Errorf("fidelity line %s", fid)
	}
}

func TestFetchReportsMissingDataClearly(t *testing.T) {
	empty := &fakeProm{answer: func(q string, r promv1.Range) (model.Value, error) { return model.Matrix{}, nil }}
	if _, err := Fetch(context.Background(), empty, opts()); err == nil || !strings.Contains(err.Error(), "+Inf") {
		t.Errorf("no series: %v", err)
	}
	noInf := &fakeProm{answer: func(q string, r promv1.Range) (model.Value, error) {
		if strings.Contains(q, "_bucket") {
			return model.Matrix{series(model.LabelSet{"le": "100"}, r, 1, 1, 1)}, nil
		}
		return cannedHistory(q, r)
	}}
	if _, err := Fetch(context.Background(), noInf, opts()); err == nil || !strings.Contains(err.Error(), `le="+Inf"`) {
		t.Errorf("no +Inf bucket: %v", err)
	}
	failing := &fakeProm{answer: func(string, promv1.Range) (model.Value, error) { return nil, errors.New("bad_data: parse error") }}
	if _, err := Fetch(context.Background(), failing, opts()); err == nil || !strings.Contains(err.Error(), "parse error") {
		t.Errorf("failing query: %v", err)
	}
	vector := &fakeProm{answer: func(string, promv1.Range) (model.Value, error) { return model.Vector{}, nil }}
	if _, err := Fetch(context.Background(), vector, opts()); err == nil || !strings.Contains(err.Error(), "want a matrix") {
		t.Errorf("a vector: %v", err)
	}
}

func TestResponsesAreBoundedInSize(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[` + strings.Repeat(`[1,"1"],`, 20000) + `[2,"1"]]}]}}`))
	}))
	defer srv.Close()
	o := opts()
	o.URL = srv.URL
	o.MaxResponseBytes = 64 << 10
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	api, err := NewAPI(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Fetch(context.Background(), api, o); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("a 160 kB answer under a 64 kB bound: %v", err)
	}
}

// N4 (issue 15): simulate history -bearer-token-file sent the token to
// wherever Prometheus redirected. No redirect is followed: the fetch
// fails naming it, and the other server sees nothing.
func TestRedirectIsNotFollowedWithTheToken(t *testing.T) {
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = append(leaked, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
	}))
	defer other.Close()
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+r.URL.RequestURI(), code)
		}))
		tok := filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(tok, []byte("s3cret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		o := opts()
		o.URL, o.BearerTokenFile = srv.URL, tok
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		api, err := NewAPI(o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Fetch(context.Background(), api, o); err == nil || !strings.Contains(err.Error(), "redirected") {
			t.Errorf("HTTP %d: %v, want the redirect refused", code, err)
		}
		srv.Close()
	}
	if len(leaked) > 0 {
		t.Fatalf("the redirect target got %q", leaked)
	}
}

func TestFitLogNormalRecoversTheLaw(t *testing.T) {
	mu, sigma := math.Log(1020), 0.5
	bounds := []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, math.Inf(1)}
	counts := make([]float64, len(bounds))
	prev := 0.0
	for i, b := range bounds {
		p := 1.0
		if !math.IsInf(b, 1) {
			p = 0.5 * math.Erfc(-(math.Log(b)-mu)/(sigma*math.Sqrt2))
		}
		counts[i] = 1e5 * (p - prev)
		prev = p
	}
	gm, gs := fitLogNormal(bounds, counts)
	if math.Abs(gm-mu) > 0.01 || math.Abs(gs-sigma) > 0.01 {
		t.Errorf("fit μ=%.3f σ=%.3f, want %.3f %.3f", gm, gs, mu, sigma)
	}
}

func TestWritePolicyAndWorkloadCSV(t *testing.T) {
	o := opts()
	_ = o.Validate()
	var b bytes.Buffer
	err := WritePolicy(&b, Tuned{Options: o, SLO: 2 * time.Second, Target: 0.99, Params: map[string]float64{"queueTarget": 2.5, "downStabilization": 120},
		Best: tune.Outcome{Attainment: 0.9931, GPUHours: 41.2}, Defaults: tune.Outcome{Attainment: 0.9952, GPUHours: 55.0}, Met: true, Trials: 31, Sim: "x"})
	if err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{"TTFT attainment 99.310% (target 99.00% within 2s: met), 41.20 GPU-hours, after 31 trials",
		"defaults: TTFT attainment 99.520%, 55.00 GPU-hours", "\nttftSLO: \"2s\"\ndownStabilization: 120\nqueueTarget: 2.5\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("policy lacks %q:\n%s", want, s)
		}
	}
	reqs := []workload.Request{{Arrival: 0, InputTokens: 10, OutputTokens: 3}, {Arrival: 1500 * time.Millisecond, InputTokens: 7, OutputTokens: 9}}
	path := filepath.Join(t.TempDir(), "w.csv")
	var csv bytes.Buffer
	if err := WriteAzureCSV(&csv, t0, reqs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, csv.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := workload.Open(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for i := range reqs {
		r, ok, err := src.Next()
		if err != nil || !ok || r != reqs[i] {
			t.Errorf("replayed request %d: %+v %v %v", i, r, ok, err)
		}
	}
}

// N13 (issue 15): a Prometheus value of 1e308 made "makeslice: len out of
// range" (a panic), and 1e7 requests per window ran out of memory. A
// value beyond MaxValue fails the fetch naming the query, and a rebuild of
// more than MaxRebuildRequests (or of a count that is no count) fails
// before it allocates.
func TestHugeRecordedCountsFailClearly(t *testing.T) {
	huge := &fakeProm{answer: func(q string, r promv1.Range) (model.Value, error) {
		if strings.HasPrefix(q, "sum(increase(vllm:request_success_total") {
			return model.Matrix{series(nil, r, 100, 1e308, 50)}, nil
		}
		return cannedHistory(q, r)
	}}
	if _, err := Fetch(context.Background(), huge, opts()); err == nil || !strings.Contains(err.Error(), "beyond") {
		t.Errorf("a value of 1e308: %v", err)
	}
	rec, err := Fetch(context.Background(), &fakeProm{answer: cannedHistory}, opts())
	if err != nil {
		t.Fatal(err)
	}
	for _, arrivals := range [][]float64{{1e308, 1, 1}, {math.Inf(1), 1, 1}, {1e7, 1e7, 1e7}, {MaxRebuildRequests, MaxRebuildRequests, 0}} {
		rec.Arrivals = arrivals
		if _, err := rec.Rebuild(1); err == nil {
			t.Errorf("arrivals %v: rebuilt", arrivals)
		}
	}
}
