package source_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/internal/expotest"
	"github.com/inferscale/inferscale/shared/expo"
	"github.com/inferscale/inferscale/shared/podinfo"
	"github.com/inferscale/inferscale/shared/preset"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/source"
)

var now = time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)

// serve starts a loopback server answering path with body and returns its port.
func serve(t *testing.T, path, contentType string, body []byte) int {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return portOf(t, srv.URL)
}

func portOf(t *testing.T, u string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(strings.TrimPrefix(u, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return n
}

func podJSON(ip string) []byte {
	status := `"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-29T20:03:00Z"}]`
	if ip != "" {
		status += `,"podIP":"` + ip + `","hostIP":"` + ip + `"`
	}
	return []byte(`{"metadata":{"name":"p-1","namespace":"ns","creationTimestamp":"2026-11-29T20:00:00Z"},
		"spec":{"containers":[{"ports":[{"name":"metrics","containerPort":1}]}]},"status":{` + status + `}}`)
}

func collector(t *testing.T, port int, path string) *source.Collector {
	t.Helper()
	ps, err := preset.Builtins()
	if err != nil {
		t.Fatal(err)
	}
	return &source.Collector{
		Direct:   &source.Direct{Scraper: source.NewScraper(time.Second, 1<<20, 4), Port: port, Path: path, Presets: ps},
		Timeout:  time.Second,
		Parallel: 4,
	}
}

func TestEveryPresetOverHTTP(t *testing.T) {
	cases := []struct {
		fixture, server, path string
		check                 func(*testing.T, signal.Pod)
	}{
		{"vllm_v0_datadog_fixture.txt", "vllm", "/metrics", func(t *testing.T, p signal.Pod) {
			if p.TTFT == nil || p.TTFT.Count != 1 || p.RequestsTotal == nil || *p.RequestsTotal != 1 {
				t.Errorf("vllm = %+v", p)
			}
		}},
		{"sglang.txt", "sglang", "/metrics", func(t *testing.T, p signal.Pod) {
			if p.Waiting == nil || *p.Waiting != 2826 || p.KVCacheUsage == nil || *p.KVCacheUsage != 0.28 {
				t.Errorf("sglang = %+v", p)
			}
		}},
		{"tgi.txt", "tgi", "/metrics", func(t *testing.T, p signal.Pod) {
			if p.E2E == nil || p.E2E.Count != 109 || p.KVCacheUsage != nil {
				t.Errorf("tgi = %+v", p)
			}
		}},
		{"triton.txt", "triton", "/metrics", func(t *testing.T, p signal.Pod) {
			if p.GPU == nil || p.GPU.Source != "server" || p.RequestsTotal == nil || *p.RequestsTotal != 3 {
				t.Errorf("triton = %+v", p)
			}
		}},
		{"jetstream_doc_snippet.txt", "jetstream", "/", func(t *testing.T, p signal.Pod) {
			if p.Waiting == nil || *p.Waiting != 0 {
				t.Errorf("jetstream = %+v", p)
			}
		}},
		{"llamacpp_fragment_pr13196.txt", "llamacpp", "/metrics", func(t *testing.T, p signal.Pod) {
			if p.PromptTokensTotal == nil || *p.PromptTokensTotal != 143 || p.KVCacheUsage != nil {
				t.Errorf("llamacpp = %+v", p)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.server, func(t *testing.T) {
			port := serve(t, tc.path, "text/plain; version=0.0.4; charset=utf-8", expotest.Fixture(t, tc.fixture))
			p, err := collector(t, port, tc.path).Pod(context.Background(), podJSON("127.0.0.1"), now)
			if err != nil {
				t.Fatal(err)
			}
			if p.Error != "" || p.Server != tc.server {
				t.Fatalf("server %q error %q", p.Server, p.Error)
			}
			if p.StartupSeconds == nil || *p.StartupSeconds != 180 || !p.Ready {
				t.Errorf("lifecycle lost: %+v", p)
			}
			tc.check(t, p)
		})
	}
}

func TestFullVLLMV1Page(t *testing.T) {
	page := expotest.VLLMV1{Model: "meta-llama/Llama-3.1-8B-Instruct", Engines: 2, Waiting: 3, Running: 5, KV: 0.5, Requests: 40, HitBucket: 9}
	port := serve(t, "/metrics", "text/plain; version=0.0.4", []byte(page.Render()))
	p, err := collector(t, port, "/metrics").Pod(context.Background(), podJSON("127.0.0.1"), now)
	if err != nil {
		t.Fatal(err)
	}
	if p.Error != "" || p.Server != "vllm" {
		t.Fatalf("server %q error %q", p.Server, p.Error)
	}
	if *p.Waiting != 6 || *p.Running != 10 || *p.KVCacheUsage != 0.5 || *p.RequestsTotal != 80 || *p.PreemptionsTotal != 4 ||
		*p.PromptTokensTotal != 72000 || *p.GenerationTokensTotal != 16000 {
		t.Errorf("values: w %v r %v kv %v req %v pre %v", *p.Waiting, *p.Running, *p.KVCacheUsage, *p.RequestsTotal, *p.PreemptionsTotal)
	}
	if p.TTFT == nil || len(p.TTFT.Buckets) != len(expotest.TTFTBuckets()) || p.TTFT.Count != 80 ||
		p.TTFT.Buckets[8].Count != 0 || p.TTFT.Buckets[9].Count != 80 || p.TTFT.Buckets[9].UpperBound != 0.5 {
		t.Errorf("ttft = %+v", p.TTFT)
	}
	for name, h := range map[string]*signal.Histogram{"e2e": p.E2E, "queue": p.QueueTime, "itl": p.InterToken} {
		if h == nil || h.Count != 80 {
			t.Errorf("%s = %+v", name, h)
		}
	}
}

func TestOpenMetricsOverHTTP(t *testing.T) {
	body := "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name=\"m\"} 4.0\n" +
		"# TYPE vllm:request_success counter\nvllm:request_success_total{finished_reason=\"stop\",model_name=\"m\"} 9.0\n" +
		"vllm:request_success_created{finished_reason=\"stop\",model_name=\"m\"} 1.7e+09\n# EOF\n"
	port := serve(t, "/metrics", "application/openmetrics-text; version=1.0.0; charset=utf-8", []byte(body))
	p, err := collector(t, port, "/metrics").Pod(context.Background(), podJSON("127.0.0.1"), now)
	if err != nil {
		t.Fatal(err)
	}
	if p.Error != "" || p.Server != "vllm" || *p.Waiting != 4 || p.RequestsTotal == nil || *p.RequestsTotal != 9 {
		t.Errorf("pod = %+v", p)
	}
}

func TestFailuresAreRecordedNotFatal(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	}))
	defer slow.Close()
	huge := strings.Repeat("vllm:num_requests_waiting 1\n", 50000)
	redirect := httptest.NewServer(http.RedirectHandler("http://10.0.0.1/metrics", http.StatusFound))
	defer redirect.Close()
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedPort := refused.Addr().(*net.TCPAddr).Port
	refused.Close()

	cases := []struct {
		name string
		port int
		want string
	}{
		{"garbage", serve(t, "/metrics", "text/html", []byte("<html><body>502 Bad Gateway</body></html>")), "parsing"},
		{"status", serve(t, "/other", "", nil), "HTTP 404"},
		{"too large", serve(t, "/metrics", "text/plain", []byte(huge)), "larger than"},
		{"timeout", portOf(t, slow.URL), "timed out"},
		{"refused", refusedPort, "refused"},
		{"redirect not followed", portOf(t, redirect.URL), "HTTP 302"},
		{"unknown server", serve(t, "/metrics", "text/plain", []byte("foo_bar 1\n")), "no known inference-server"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := collector(t, tc.port, "/metrics")
			c.Timeout = 300 * time.Millisecond
			p, err := c.Pod(context.Background(), podJSON("127.0.0.1"), now)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(p.Error, tc.want) {
				t.Errorf("error = %q, want it to mention %q", p.Error, tc.want)
			}
			if p.Waiting != nil || p.Name != "p-1" || !p.Ready {
				t.Errorf("pod = %+v", p)
			}
		})
	}
}

func TestPendingPodIsNotScraped(t *testing.T) {
	c := collector(t, 1, "/metrics")
	p, err := c.Pod(context.Background(), podJSON(""), now)
	if err != nil {
		t.Fatal(err)
	}
	if p.Error != "" || p.Server != "" || len(p.Notes) != 1 {
		t.Errorf("pending pod = %+v", p)
	}
}

func TestInvalidReadingsAreRejectedPerPod(t *testing.T) {
	port := serve(t, "/metrics", "text/plain", []byte("# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc 1.7\n# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting 2\n"))
	p, err := collector(t, port, "/metrics").Pod(context.Background(), podJSON("127.0.0.1"), now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Error, "kvCacheUsage") || p.KVCacheUsage != nil || p.Waiting != nil || p.StartupSeconds == nil {
		t.Errorf("pod = %+v", p)
	}
}

// N2 (issue 15): a page reporting a huge but finite value (waiting 1e308,
// a prompt-length sum of 1e19 over ten requests) poisoned the fleet's sums
// or sent it to maxReplicas. Such a reading is out of the schema's range:
// the pod's readings are rejected (it counts as missing, never as low).
func TestHugeFiniteReadingsAreRejectedPerPod(t *testing.T) {
	for name, page := range map[string]string{
		"waiting 1e308": "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting 1e308\n",
		"prompt sum 1e19": "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting 2\n" +
			"# TYPE vllm:request_prompt_tokens histogram\nvllm:request_prompt_tokens_bucket{le=\"1024\"} 10\n" +
			"vllm:request_prompt_tokens_bucket{le=\"+Inf\"} 10\nvllm:request_prompt_tokens_sum 1e19\nvllm:request_prompt_tokens_count 10\n",
		"requests 1e300": "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting 2\n" +
			"# TYPE vllm:request_success counter\nvllm:request_success_total{finished_reason=\"stop\"} 1e300\n",
	} {
		port := serve(t, "/metrics", "text/plain", []byte(page))
		p, err := collector(t, port, "/metrics").Pod(context.Background(), podJSON("127.0.0.1"), now)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(p.Error, "readings rejected") || p.Waiting != nil || p.PromptLength != nil || p.RequestsTotal != nil {
			t.Errorf("%s: pod = %+v, want its readings rejected", name, p)
		}
	}
}

func TestNamedPortAndMalformedPod(t *testing.T) {
	port := serve(t, "/metrics", "text/plain", []byte("llamacpp:requests_processing 2\n"))
	c := collector(t, 1, "/metrics")
	c.Direct.PortName = "metrics"
	raw := strings.Replace(string(podJSON("127.0.0.1")), `"containerPort":1`, `"containerPort":`+strconv.Itoa(port), 1)
	p, err := c.Pod(context.Background(), []byte(raw), now)
	if err != nil {
		t.Fatal(err)
	}
	if p.Error != "" || p.Running == nil || *p.Running != 2 {
		t.Errorf("named port: %+v", p)
	}
	if _, err := c.Pod(context.Background(), []byte(`{"metadata":{}}`), now); err == nil {
		t.Error("pod without name: want error")
	}
}

func TestPodsKeepsOrderAndBoundsParallelism(t *testing.T) {
	page := []byte("vllm:num_requests_waiting 1\n")
	port := serve(t, "/metrics", "text/plain", page)
	c := collector(t, port, "/metrics")
	raws := [][]byte{podJSON("127.0.0.1"), []byte(`not json`), podJSON("127.0.0.1")}
	res := c.Pods(context.Background(), raws, now)
	if len(res) != 3 || res[0].Err != nil || res[1].Err == nil || res[2].Err != nil || res[2].Pod.Waiting == nil {
		t.Errorf("results = %+v", res)
	}
}

func TestURLOnlyFromAddresses(t *testing.T) {
	ip := netip.MustParseAddr("10.1.2.3")
	if u, err := source.URL(ip, 8000, "/metrics?model=a"); err != nil || u != "http://10.1.2.3:8000/metrics?model=a" {
		t.Errorf("url = %q %v", u, err)
	}
	if u, err := source.URL(netip.MustParseAddr("fd00::1"), 9400, "/metrics"); err != nil || u != "http://[fd00::1]:9400/metrics" {
		t.Errorf("v6 url = %q %v", u, err)
	}
	for _, p := range []string{"metrics", "//evil.example/x", "http://evil/x", "/m#frag", ""} {
		if _, err := source.URL(ip, 8000, p); err == nil {
			t.Errorf("path %q: want error", p)
		}
	}
	if _, err := source.URL(netip.Addr{}, 8000, "/metrics"); err == nil {
		t.Error("no IP: want error")
	}
	if _, err := source.URL(ip, 0, "/metrics"); err == nil {
		t.Error("port 0: want error")
	}
}

func TestDCGMExporter(t *testing.T) {
	fixture := expotest.Fixture(t, "dcgm_exporter_datadog_fixture.txt")
	port := serve(t, "/metrics", "text/plain", fixture)
	in, err := podinfo.Parse([]byte(`{"metadata":{"name":"ray-1111111","namespace":"ray-llm"},"status":{"hostIP":"127.0.0.1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	g := (&source.DCGMExporter{Scraper: source.NewScraper(time.Second, 1<<20, 1), Port: port, Path: "/metrics"}).ReadGPU(context.Background(), in)
	// In this real fixture only the dummy DCGM_FI_PROF_DRAM_ACTIVE row
	// carries the k8s pod labels: none of the activity fields does, so the
	// pod has no GPU reading (and the unlabelled rows are not borrowed).
	if g.Error == "" || g.Utilization != nil || g.Source != "dcgm-exporter" {
		t.Errorf("gpu = %+v", g)
	}
	if got := source.GPUFromDCGMExporter(mustParse(t, fixture), "", ""); got.Error == "" {
		t.Errorf("empty pod name must not match unlabelled rows: %+v", got)
	}

	other, _ := podinfo.Parse([]byte(`{"metadata":{"name":"nobody","namespace":"x"},"status":{"hostIP":"127.0.0.1"}}`))
	g = (&source.DCGMExporter{Scraper: source.NewScraper(time.Second, 1<<20, 1), Port: port, Path: "/metrics"}).ReadGPU(context.Background(), other)
	if g.Error == "" || g.Utilization != nil {
		t.Errorf("pod without GPU samples: %+v", g)
	}
	pending, _ := podinfo.Parse([]byte(`{"metadata":{"name":"p"}}`))
	if g := (&source.DCGMExporter{Scraper: source.NewScraper(time.Second, 1<<20, 1), Port: port, Path: "/metrics"}).ReadGPU(context.Background(), pending); g.Error == "" {
		t.Error("no host IP: want error")
	}
}

func mustParse(t *testing.T, b []byte) expo.Families {
	t.Helper()
	f, err := expo.Parse(bytes.NewReader(b), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestDCGMExporterFieldPreference(t *testing.T) {
	body := `# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",pod="p",namespace="n"} 80
DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-b",pod="p",namespace="n"} 40
DCGM_FI_DEV_GPU_UTIL{gpu="2",UUID="GPU-c",pod="q",namespace="n"} 100
# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-a",pod="p",namespace="n"} 0.7
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="1",UUID="GPU-b",pod="p",namespace="n"} 0.5
`
	in, _ := podinfo.Parse([]byte(`{"metadata":{"name":"p","namespace":"n"},"status":{"hostIP":"127.0.0.1"}}`))
	port := serve(t, "/metrics", "text/plain", []byte(body))
	r := &source.DCGMExporter{Scraper: source.NewScraper(time.Second, 1<<20, 1), Port: port, Path: "/metrics"}
	g := r.ReadGPU(context.Background(), in)
	if g.Field != "DCGM_FI_PROF_GR_ENGINE_ACTIVE" || g.Count != 2 || g.Utilization == nil || *g.Utilization != 0.6 || g.SMActive != nil {
		t.Errorf("engine active preferred over GPU_UTIL: %+v", g)
	}
	body = strings.Split(body, "# TYPE DCGM_FI_PROF")[0]
	port = serve(t, "/metrics", "text/plain", []byte(body))
	r.Port = port
	g = r.ReadGPU(context.Background(), in)
	if g.Field != "DCGM_FI_DEV_GPU_UTIL" || g.Utilization == nil || *g.Utilization < 0.5999 || *g.Utilization > 0.6001 {
		t.Errorf("GPU_UTIL scaled 0-100 to 0-1: %+v", g)
	}
}
