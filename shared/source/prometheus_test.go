package source_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferscale/inferscale/internal/expotest"
	"github.com/inferscale/inferscale/internal/testenv"
	"github.com/inferscale/inferscale/shared/preset"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/source"
)

// prometheusBinary finds the prometheus server, skipping the test when it
// is absent (failing under CI=true, where .ci/run installs it).
func prometheusBinary(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("prometheus is not installed (CI=true): %v", err)
		}
		t.Skip("prometheus is not installed (Debian package prometheus); skipping the PromQL source test")
	}
	return p
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// emulatedVLLM serves a vLLM V1 page whose request counters and
// histograms grow by perSecond requests per second.
func emulatedVLLM(t *testing.T, kv float64, perSecond float64) string {
	t.Helper()
	start := time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(time.Since(start).Seconds()*perSecond) + 1
		page := expotest.VLLMV1{Model: "m", Engines: 1, Waiting: 3, Running: 5, KV: kv, Requests: n, HitBucket: 9}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = io.WriteString(w, page.Render())
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func startPrometheus(t *testing.T, targets map[string]string) string {
	t.Helper()
	bin := prometheusBinary(t)
	dir := t.TempDir()
	var sc strings.Builder
	sc.WriteString("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: vllm\n    static_configs:\n")
	for pod, addr := range targets {
		fmt.Fprintf(&sc, "      - targets: [%q]\n        labels: {namespace: inference, pod: %q}\n", addr, pod)
	}
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(sc.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting prometheus: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	})
	return "http://" + addr
}

// waitFor polls PromQL q until it returns want series with a positive value.
func waitFor(t *testing.T, url, q string, want int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url + "/api/v1/query?query=" + strings.ReplaceAll(q, " ", "%20"))
		if err == nil {
			var body struct {
				Data struct {
					Result []struct {
						Value [2]any `json:"value"`
					} `json:"result"`
				} `json:"data"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			ok := len(body.Data.Result) == want
			for _, r := range body.Data.Result {
				if s, _ := r.Value[1].(string); s == "0" || s == "NaN" {
					ok = false
				}
			}
			if ok {
				return
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("prometheus never answered %s with %d positive series", q, want)
}

func TestPrometheusSourceAgainstRealServer(t *testing.T) {
	prometheusBinary(t)
	url := startPrometheus(t, map[string]string{"llm-0": emulatedVLLM(t, 0.2, 10), "llm-1": emulatedVLLM(t, 0.6, 10)})
	// Wait until the rate window is full, so that rate() needs no extrapolation.
	waitFor(t, url, `count_over_time(vllm:num_requests_waiting[4s]) >= 4`, 2)

	api, err := source.NewPrometheusAPI(source.PrometheusOptions{URL: url, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := preset.Builtins()
	if err != nil {
		t.Fatal(err)
	}
	p := &source.Prometheus{API: api, Presets: ps, Matchers: source.RenderMatchers(`namespace="{namespace}",pod=~"{name}-.*"`, "inference", "llm"),
		Window: 4 * time.Second, Quantiles: []float64{0.5, 0.99}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f := p.Fleet(ctx, time.Now())
	if len(f.Errors) != 0 {
		t.Fatalf("errors: %v", f.Errors)
	}
	if f.Source != "prometheus" || f.WindowSeconds != 4 {
		t.Errorf("fleet header = %+v", f)
	}
	if f.Waiting == nil || *f.Waiting != 6 || f.Running == nil || *f.Running != 10 {
		t.Errorf("waiting %v running %v, want 6 and 10", f.Waiting, f.Running)
	}
	if f.KVCacheMean == nil || *f.KVCacheMean < 0.3999 || *f.KVCacheMean > 0.4001 || f.KVCacheMax == nil || *f.KVCacheMax != 0.6 {
		t.Errorf("kv mean %v max %v", f.KVCacheMean, f.KVCacheMax)
	}
	if f.ArrivalRate == nil || *f.ArrivalRate < 12 || *f.ArrivalRate > 30 {
		t.Errorf("arrival rate %v, want about 20/s", deref(f.ArrivalRate))
	}
	// Every observation lies in (0.25, 0.5]: histogram_quantile interpolates inside it.
	for q, v := range f.TTFTQuantiles {
		if v <= 0.25 || v > 0.5 {
			t.Errorf("ttft q%s = %g, want in (0.25, 0.5]", q, v)
		}
	}
	// 0.5 and 0.99 as configured, 0.95 because the latency rule reads it.
	if len(f.TTFTQuantiles) != 3 || len(f.E2EQuantiles) != 3 || f.TTFTQuantiles["0.95"] == 0 {
		t.Errorf("quantiles ttft %v e2e %v", f.TTFTQuantiles, f.E2EQuantiles)
	}
	// 2 pods × 10 requests/s over the 4 s window (increase extrapolates).
	if f.TTFTRequests == nil || *f.TTFTRequests < 40 || *f.TTFTRequests > 120 {
		t.Errorf("ttft requests %v, want about 80", deref(f.TTFTRequests))
	}
	if f.StalenessSeconds == nil || *f.StalenessSeconds > 5 {
		t.Errorf("staleness %v", f.StalenessSeconds)
	}
	if f.GPUUtilMean != nil {
		t.Error("vLLM has no GPU gauge")
	}

	// Matchers that select nothing: the fleet says why, fields stay nil.
	p.Matchers = `namespace="elsewhere"`
	f = p.Fleet(ctx, time.Now())
	if f.Waiting != nil || len(f.Errors) != 1 || !strings.Contains(f.Errors[0], "no known inference-server") {
		t.Errorf("no series: %+v", f)
	}
	// A fixed preset whose families are all absent: no readings, and the
	// fleet says why (a fleet with neither reads as an idle one).
	tgi, _ := preset.Find(ps, "tgi")
	p.Preset, p.Matchers = tgi, `namespace="inference"`
	f = p.Fleet(ctx, time.Now())
	if f.Waiting != nil || len(f.Errors) != 1 || !strings.Contains(f.Errors[0], "no series of preset tgi") {
		t.Errorf("absent families: %+v", f)
	}
}

func TestPrometheusUnreachableAndAuth(t *testing.T) {
	var sawAuth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawAuth.Store(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
	}))
	defer srv.Close()
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	api, err := source.NewPrometheusAPI(source.PrometheusOptions{URL: srv.URL, BearerTokenFile: tok, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := preset.Builtins()
	f := (&source.Prometheus{API: api, Presets: ps, Window: time.Minute}).Fleet(context.Background(), time.Now())
	if sawAuth.Load() != "Bearer s3cret" {
		t.Errorf("authorization = %v", sawAuth.Load())
	}
	if len(f.Errors) != 1 {
		t.Errorf("empty Prometheus: %+v", f)
	}

	api, err = source.NewPrometheusAPI(source.PrometheusOptions{URL: fmt.Sprintf("http://127.0.0.1:%d", freePort(t)), Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	f = (&source.Prometheus{API: api, Presets: ps, Window: time.Minute}).Fleet(context.Background(), time.Now())
	if len(f.Errors) != 1 || !strings.Contains(f.Errors[0], "refused") {
		t.Errorf("unreachable: %+v", f.Errors)
	}
	if _, err := source.NewPrometheusAPI(source.PrometheusOptions{URL: srv.URL, CAFile: tok}); err == nil {
		t.Error("CA file without a certificate: want error")
	}
	if _, err := source.NewPrometheusAPI(source.PrometheusOptions{URL: srv.URL, BearerTokenFile: "/nonexistent"}); err == nil {
		t.Error("missing token file: want error")
	}
}

func TestMatchers(t *testing.T) {
	if got := source.RenderMatchers(`namespace="{namespace}",pod=~"{name}-.*"`, "ns", "llm.v2"); got != `namespace="ns",pod=~"llm\\.v2-.*"` {
		t.Errorf("rendered = %s", got)
	}
	for _, ok := range []string{`a="b"`, `namespace="x", pod=~"y-.*",`, `a!="\"q\""`} {
		if err := source.ValidateMatchers(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{``, `a=b`, `a="b"} or vector(1)`, `{a="b"}`, `a="b" b="c"`} {
		if err := source.ValidateMatchers(bad); err == nil {
			t.Errorf("%s: want error", bad)
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestPrometheusRedirectIsNotFollowed: a Prometheus URL that redirects to
// another host neither hands that host the bearer token nor yields a fleet
// without readings and without error (the redirected POST would lose its
// query).
func TestPrometheusRedirectIsNotFollowed(t *testing.T) {
	var elsewhere atomic.Int32
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		leaked.Store(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
	}))
	defer other.Close()
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	}))
	defer redirecting.Close()
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	api, err := source.NewPrometheusAPI(source.PrometheusOptions{URL: redirecting.URL, BearerTokenFile: tok, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := preset.Builtins()
	vllm, _ := preset.Find(ps, "vllm")
	for name, pr := range map[string]*preset.Preset{"detected preset": nil, "fixed preset": vllm} {
		f := (&source.Prometheus{API: api, Preset: pr, Presets: ps, Window: time.Minute}).Fleet(context.Background(), time.Now())
		if len(f.Errors) != 1 || !strings.Contains(f.Errors[0], "redirected") || !strings.Contains(f.Errors[0], other.URL) {
			t.Errorf("%s: errors %q, want the redirect named", name, f.Errors)
		}
		if f.Waiting != nil {
			t.Errorf("%s: readings from a redirect: %+v", name, f)
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the other host got %d requests (authorization %v)", n, leaked.Load())
	}
}

// TestPrometheusAnswerIsBounded: an answer over the size cap, and one that
// trickles past the timeout, are errors the fleet carries.
func TestPrometheusAnswerIsBounded(t *testing.T) {
	ps, _ := preset.Builtins()
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[`)
		row := strings.Repeat(`{"metric":{"__name__":"vllm:num_requests_waiting"},"value":[1700000000,"2"]},`, 1000)
		for i := 0; i < 1000; i++ { // about 80 MB if read whole
			if _, err := io.WriteString(w, row); err != nil {
				return
			}
		}
	}))
	defer huge.Close()
	api, err := source.NewPrometheusAPI(source.PrometheusOptions{URL: huge.URL, Timeout: 10 * time.Second, MaxResponseBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	f := (&source.Prometheus{API: api, Presets: ps, Window: time.Minute}).Fleet(context.Background(), time.Now())
	if len(f.Errors) != 1 || !strings.Contains(f.Errors[0], "exceeds 1048576 bytes") {
		t.Errorf("oversized answer: errors %q", f.Errors)
	}

	// Headers at once, then a byte every 50 ms for far longer than the timeout.
	stop := make(chan struct{})
	defer close(stop)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		for i := 0; i < 2000; i++ {
			if _, err := io.WriteString(w, " "); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-stop:
				return
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}))
	defer slow.Close()
	api, err = source.NewPrometheusAPI(source.PrometheusOptions{URL: slow.URL, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f = (&source.Prometheus{API: api, Presets: ps, Window: time.Minute}).Fleet(context.Background(), time.Now())
	// The client's Timeout or the request context may fire first,
	// depending on the machine's load: both are the deadline.
	if len(f.Errors) != 1 || !(strings.Contains(f.Errors[0], "Timeout") || strings.Contains(f.Errors[0], "deadline exceeded")) {
		t.Errorf("answer trickling past the timeout: errors %q", f.Errors)
	}
}

// TestPrometheusLatencyRuleScalesUp: with the default quantiles, a TTFT of
// about 3 s (vLLM's (2.5 s, 5 s] bucket) against the default 2 s SLO,
// read through a real Prometheus and decided by bin/evaluate, scales up:
// the fleet report carries p95 and the request count it rests on.
func TestPrometheusLatencyRuleScalesUp(t *testing.T) {
	prometheusBinary(t)
	bin := testenv.BuildBinaries(t)
	// One request waiting per pod: load, but below the queue target, so the
	// latency rule is the one that fires.
	page := func() string {
		start := time.Now()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := int(time.Since(start).Seconds()*10) + 1
			p := expotest.VLLMV1{Model: "m", Engines: 1, Waiting: 1, Running: 5, KV: 0.3, Requests: n, HitBucket: 13}
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			_, _ = io.WriteString(w, p.Render())
		}))
		t.Cleanup(srv.Close)
		return strings.TrimPrefix(srv.URL, "http://")
	}
	url := startPrometheus(t, map[string]string{"llm-0": page(), "llm-1": page()})
	waitFor(t, url, `count_over_time(vllm:num_requests_waiting[4s]) >= 4`, 2)

	api, err := source.NewPrometheusAPI(source.PrometheusOptions{URL: url, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := preset.Builtins()
	now := time.Now().UTC().Truncate(time.Second)
	f := (&source.Prometheus{API: api, Presets: ps, Window: 4 * time.Second,
		Matchers: `namespace="inference",pod=~"llm-.*"`}).Fleet(context.Background(), now)
	if len(f.Errors) != 0 || f.TTFTQuantiles["0.95"] <= 2.5 || f.TTFTRequests == nil || *f.TTFTRequests < 5 {
		t.Fatalf("fleet: %+v (ttft requests %v)", f, deref(f.TTFTRequests))
	}
	ready, starting := 2, 0
	f.ReadyPods, f.StartingPods = &ready, &starting
	rep := &signal.Report{Version: signal.Version, ScrapeTime: now, Fleet: f}
	for _, name := range []string{"llm-0", "llm-1"} {
		created, readyAt := now.Add(-time.Hour), now.Add(-59*time.Minute)
		rep.Pods = append(rep.Pods, signal.Pod{Name: name, Namespace: "inference", Phase: "Running", Ready: true,
			CreatedAt: &created, ReadyAt: &readyAt, ScrapeTime: now})
	}
	value, err := rep.Encode()
	if err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]any{
		"metrics": []map[string]string{{"resource": "llm", "value": string(value)}}, "runType": "scaler",
		"resource": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "llm", "namespace": "inference"},
			"spec": map[string]any{"replicas": 2}},
	})
	cmd := exec.Command(filepath.Join(bin, "evaluate"))
	cmd.Stdin = strings.NewReader(string(in))
	cmd.Env = []string{"configPath=/nonexistent/config.yaml", "stateFile=" + filepath.Join(t.TempDir(), "state.json"),
		"INFERSCALE_NOW=" + now.Format(time.RFC3339)}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("evaluate: %v\n%s", err, stderr.String())
	}
	var o struct {
		TargetReplicas int      `json:"targetReplicas"`
		Reasons        []string `json:"reasons"`
	}
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("evaluate output %s: %v", out, err)
	}
	t.Logf("TTFT p95 %.3gs over %.0f requests: 2 -> %d (%s)", f.TTFTQuantiles["0.95"], *f.TTFTRequests, o.TargetReplicas, strings.Join(o.Reasons, "; "))
	if o.TargetReplicas <= 2 || !strings.Contains(strings.Join(o.Reasons, "; "), "latency") {
		t.Errorf("TTFT p95 %.2gs against a 2 s SLO: target %d, reasons %q; want a latency scale-up", f.TTFTQuantiles["0.95"], o.TargetReplicas, o.Reasons)
	}
}
