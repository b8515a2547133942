package gather

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/internal/podtest"
	"github.com/inferscale/inferscale/shared/kube"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/source"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func lookup(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

type fakeLister struct {
	pods [][]byte
	err  error
	ns   string
	sel  string
}

func (f *fakeLister) ListPods(_ context.Context, ns, sel string) ([][]byte, error) {
	f.ns, f.sel = ns, sel
	return f.pods, f.err
}

func runWith(t testing.TB, stdin string, cfg map[string]string, l *fakeLister) (*signal.Report, error) {
	t.Helper()
	var stdout bytes.Buffer
	err := Run(context.Background(), Process{Stdin: strings.NewReader(stdin), Stdout: &stdout, Lookup: lookup(cfg), Log: quiet,
		Lister: func(time.Duration) (PodLister, error) {
			if l == nil {
				return nil, kube.ErrNotInCluster
			}
			return l, nil
		}})
	if err != nil {
		return nil, err
	}
	out := stdout.Bytes()
	if !strings.HasSuffix(string(out), "\n") || strings.Count(string(out), "\n") != 1 {
		t.Fatalf("output is not one JSON line: %q", out)
	}
	rep, err := signal.Decode(string(out))
	if err != nil {
		t.Fatalf("output does not decode: %v\n%s", err, out)
	}
	return rep, nil
}

func TestPerPodVLLM(t *testing.T) {
	port := podtest.VLLMServer(t)
	in := `{"resource":` + podtest.Pod("llm-a", "127.0.0.1", 1) + `,"runType":"scaler"}`
	rep, err := runWith(t, in, map[string]string{"metricsPort": strconv.Itoa(port), "INFERSCALE_NOW": "2026-11-29T21:00:00Z"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Pods[0]
	if p.Error != "" || p.Server != "vllm" || *p.Waiting != 3 || *p.Running != 5 || *p.KVCacheUsage != 0.5 || p.TTFT == nil || p.TTFT.Count != 40 {
		t.Fatalf("pod = %+v", p)
	}
	if *p.StartupSeconds != 120 || *p.AgeSeconds != 3600 || !rep.ScrapeTime.Equal(time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)) {
		t.Errorf("lifecycle = startup %v age %v time %v", *p.StartupSeconds, *p.AgeSeconds, rep.ScrapeTime)
	}
	// The named container port wins over metricsPort.
	in = `{"resource":` + podtest.Pod("llm-a", "127.0.0.1", port) + `,"runType":"api_dry_run"}`
	rep, err = runWith(t, in, map[string]string{"metricsPort": "1", "metricsPortName": "metrics", "server": "vllm"}, nil)
	if err != nil || rep.Pods[0].Error != "" || rep.Pods[0].Waiting == nil {
		t.Errorf("named port: %v %+v", err, rep)
	}
}

func TestPerPodFailureStillExitsZero(t *testing.T) {
	in := `{"resource":` + podtest.Pod("llm-a", "127.0.0.1", 1) + `,"runType":"scaler"}`
	rep, err := runWith(t, in, map[string]string{"metricsPort": "1", "scrapeTimeout": "200ms", "gpuSource": "dcgm-exporter", "dcgmExporterPort": "1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Pods[0]
	if p.Error == "" || p.GPU == nil || p.GPU.Error == "" || p.StartupSeconds == nil {
		t.Errorf("pod = %+v", p)
	}
}

func TestPerPodExamples(t *testing.T) {
	for _, name := range []string{"pod-ready.json", "pod-pending.json", "pod-terminating.json"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "metric", name))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := runWith(t, string(b), map[string]string{"metricsPort": "1", "scrapeTimeout": "200ms", "INFERSCALE_NOW": "2026-11-29T21:00:00Z"}, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p := rep.Pods[0]
		switch name {
		case "pod-pending.json":
			if p.Error != "" || p.Phase != "Pending" || *p.AgeSeconds != 30 {
				t.Errorf("%s: %+v", name, p)
			}
		case "pod-terminating.json":
			if !p.Terminating || p.Error == "" {
				t.Errorf("%s: %+v", name, p)
			}
		}
	}
}

func TestBadInputExitsNonZero(t *testing.T) {
	good := `{"resource":` + podtest.Pod("a", "", 1) + `,"runType":"scaler"}`
	cases := []struct {
		name, stdin string
		cfg         map[string]string
		want        string
	}{
		{"empty", ``, nil, "not valid JSON"},
		{"garbage", `{{{`, nil, "not valid JSON"},
		{"no resource", `{"runType":"scaler"}`, nil, "resource"},
		{"bad runType", `{"resource":{"metadata":{"name":"a"}},"runType":"x"}`, nil, "runType"},
		{"pod without name", `{"resource":{"metadata":{}},"runType":"scaler"}`, nil, "metadata.name"},
		{"target without name", `{"resource":{"kind":"Deployment","metadata":{}},"runType":"scaler"}`, nil, "metadata.name"},
		{"bad port", good, map[string]string{"metricsPort": "70000"}, "metricsPort"},
		{"bad path", good, map[string]string{"metricsPath": "http://evil/"}, "metricsPath"},
		{"bad server", good, map[string]string{"server": "ollama"}, "server"},
		{"custom without mapping", good, map[string]string{"server": "custom"}, "customMapping"},
		{"bad mapping", good, map[string]string{"customMapping": "name: x\nsignals: {queue: {families: [a]}}"}, "customMapping"},
		{"bad gpu source", good, map[string]string{"gpuSource": "nvml"}, "gpuSource"},
		{"bad timeout", good, map[string]string{"scrapeTimeout": "forever"}, "scrapeTimeout"},
		{"prometheus without URL", good, map[string]string{"source": "prometheus"}, "prometheusURL"},
		{"prometheus per pod", good, map[string]string{"source": "prometheus", "prometheusURL": "http://127.0.0.1:1"}, "per-resource"},
		{"bad matchers", good, map[string]string{"prometheusMatchers": `pod=~llm`}, "prometheusMatchers"},
		{"bad quantiles", good, map[string]string{"prometheusQuantiles": "0.5,95"}, "prometheusQuantiles"},
		{"bad clock", good, map[string]string{"INFERSCALE_NOW": "noon"}, "INFERSCALE_NOW"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runWith(t, tc.stdin, tc.cfg, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want mention of %q", err, tc.want)
			}
		})
	}
}

func TestCustomMappingByConfig(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "# TYPE q gauge\nq 4\n# TYPE kv_pct gauge\nkv_pct 25\n")
	}))
	defer srv.Close()
	_, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
	in := `{"resource":` + podtest.Pod("a", "127.0.0.1", 1) + `,"runType":"scaler"}`
	rep, err := runWith(t, in, map[string]string{"metricsPort": p, "server": "custom",
		"customMapping": "name: mine\nsignals:\n  waiting: {families: [q]}\n  kvCacheUsage: {families: [kv_pct], scale: 0.01}\n"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pod := rep.Pods[0]; pod.Server != "mine" || *pod.Waiting != 4 || *pod.KVCacheUsage != 0.25 {
		t.Errorf("pod = %+v", pod)
	}
}

func TestPerResourceDirect(t *testing.T) {
	port := podtest.VLLMServer(t)
	target, err := os.ReadFile(filepath.Join("..", "..", "examples", "metric", "deployment.json"))
	if err != nil {
		t.Fatal(err)
	}
	l := &fakeLister{pods: [][]byte{
		[]byte(podtest.Pod("llm-a", "127.0.0.1", port)),
		[]byte(`{"metadata":{}}`),
		[]byte(podtest.Pod("llm-b", "", port)),
		[]byte(podtest.Pod("llm-c", "127.0.0.1", port)),
	}}
	rep, err := runWith(t, string(target), map[string]string{"metricsPortName": "metrics", "scrapeConcurrency": "2"}, l)
	if err != nil {
		t.Fatal(err)
	}
	if l.ns != "inference" || l.sel != "app=llm,tier in (gpu,edge),!canary" {
		t.Errorf("listed %q %q", l.ns, l.sel)
	}
	if len(rep.Pods) != 3 || rep.Pods[0].Name != "llm-a" || rep.Pods[1].Name != "llm-b" || rep.Pods[2].Name != "llm-c" {
		t.Fatalf("pods = %+v", rep.Pods)
	}
	if *rep.Pods[0].Waiting != 3 || rep.Pods[1].Waiting != nil || *rep.Pods[2].Running != 5 {
		t.Errorf("readings = %+v", rep.Pods)
	}

	l = &fakeLister{err: errors.New("forbidden")}
	rep, err = runWith(t, string(target), nil, l)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Fleet == nil || len(rep.Fleet.Errors) != 1 || !strings.Contains(rep.Fleet.Errors[0], "forbidden") {
		t.Errorf("list failure = %+v", rep.Fleet)
	}
	rep, err = runWith(t, string(target), nil, nil)
	if err != nil || rep.Fleet == nil || !strings.Contains(rep.Fleet.Errors[0], "not running in a cluster") {
		t.Errorf("outside a cluster = %v %+v", err, rep)
	}
	rep, err = runWith(t, string(target), nil, &fakeLister{})
	if err != nil || rep.Fleet == nil || *rep.Fleet.ReadyPods != 0 {
		t.Errorf("no pods = %v %+v", err, rep)
	}
}

// scaleLister is a pod lister that also reads scale subresources, as the
// in-cluster client does.
type scaleLister struct {
	fakeLister
	scales map[string]kube.Scale
	err    error
	asked  []string
}

func (s *scaleLister) ReadScale(_ context.Context, ns, apiVersion, kind, name string) (kube.Scale, error) {
	s.asked = append(s.asked, ns+" "+apiVersion+" "+kind+" "+name)
	if s.err != nil {
		return kube.Scale{}, s.err
	}
	sc, ok := s.scales[name]
	if !ok {
		return kube.Scale{}, &kube.StatusError{Code: 404, Message: "not found"}
	}
	return sc, nil
}

func TestRatioPeerIsReadFromItsScaleSubresource(t *testing.T) {
	target, err := os.ReadFile(filepath.Join("..", "..", "examples", "metric", "deployment.json"))
	if err != nil {
		t.Fatal(err)
	}
	l := &scaleLister{scales: map[string]kube.Scale{"llm-prefill": {Replicas: 3}}}
	run := func(cfg map[string]string) (*signal.Report, error) {
		var stdout bytes.Buffer
		err := Run(context.Background(), Process{Stdin: bytes.NewReader(target), Stdout: &stdout, Lookup: lookup(cfg), Log: quiet,
			Lister: func(time.Duration) (PodLister, error) { return l, nil }})
		if err != nil {
			return nil, err
		}
		return signal.Decode(stdout.String())
	}
	rep, err := run(map[string]string{"ratioPeer": "llm-prefill"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Peer == nil || rep.Peer.Name != "llm-prefill" || rep.Peer.Replicas == nil || *rep.Peer.Replicas != 3 || rep.Peer.Error != "" {
		t.Errorf("peer %+v, want llm-prefill asking for 3", rep.Peer)
	}
	if len(l.asked) != 1 || l.asked[0] != "inference apps/v1 Deployment llm-prefill" {
		t.Errorf("asked %q, want the peer of the target's own kind in its namespace", l.asked)
	}

	// Off: no peer read, none reported.
	l.asked = nil
	if rep, err := run(nil); err != nil || rep.Peer != nil || len(l.asked) != 0 {
		t.Errorf("without ratioPeer: peer %+v, asked %q, err %v", rep.Peer, l.asked, err)
	}
	// A peer that cannot be read is recorded, and the run still succeeds.
	for name, c := range map[string]struct {
		ratioPeer string
		err       error
		want      string
	}{
		"absent":    {"llm-gone", nil, "HTTP 404"},
		"forbidden": {"llm-prefill", &kube.StatusError{Code: 403, Message: "deployments.apps \"llm-prefill\" is forbidden"}, "forbidden"},
	} {
		l.err = c.err
		rep, err := run(map[string]string{"ratioPeer": c.ratioPeer})
		if err != nil || rep.Peer == nil || rep.Peer.Replicas != nil || !strings.Contains(rep.Peer.Error, c.want) {
			t.Errorf("%s: peer %+v, err %v; want an unread peer saying %q", name, rep.Peer, err, c.want)
		}
	}
	l.err = nil
	// A lister that reads no scales (another build's client).
	var stdout bytes.Buffer
	err = Run(context.Background(), Process{Stdin: bytes.NewReader(target), Stdout: &stdout, Lookup: lookup(map[string]string{"ratioPeer": "llm-prefill"}), Log: quiet,
		Lister: func(time.Duration) (PodLister, error) { return &fakeLister{}, nil }})
	if rep, derr := signal.Decode(stdout.String()); err != nil || derr != nil || rep.Peer == nil || !strings.Contains(rep.Peer.Error, "reads no scale subresource") {
		t.Errorf("no scale reader: %v %v %+v", err, derr, rep)
	}
	// Bad input: not an object name, or per-pod mode.
	if _, err := run(map[string]string{"ratioPeer": "LLM_Prefill"}); err == nil || !strings.Contains(err.Error(), "config key ratioPeer") {
		t.Errorf("bad name: %v, want a config error naming the key", err)
	}
}

// In per-pod mode each pod's run reads the peer, of the kind the
// operator's scaleTargetRef names (a Deployment when it names none).
func TestRatioPeerIsReadInPerPodModeToo(t *testing.T) {
	pod := []byte(`{"resource":` + podtest.Pod("llm-a", "", 1) + `,"runType":"scaler"}`)
	for _, c := range []struct {
		ref, want string
	}{
		{`{"kind":"StatefulSet","name":"llm-decode","apiVersion":"apps/v1"}`, "apps/v1 StatefulSet"},
		{"", "apps/v1 Deployment"},
	} {
		l := &scaleLister{scales: map[string]kube.Scale{"llm-prefill": {Replicas: 4}}}
		cfg := map[string]string{"ratioPeer": "llm-prefill", "metricsPort": "1", "scrapeTimeout": "50ms"}
		if c.ref != "" {
			cfg["scaleTargetRef"] = c.ref
		}
		var stdout bytes.Buffer
		err := Run(context.Background(), Process{Stdin: bytes.NewReader(pod), Stdout: &stdout, Lookup: lookup(cfg), Log: quiet,
			Lister: func(time.Duration) (PodLister, error) { return l, nil }})
		rep, derr := signal.Decode(stdout.String())
		if err != nil || derr != nil || rep.Peer == nil || rep.Peer.Replicas == nil || *rep.Peer.Replicas != 4 {
			t.Fatalf("scaleTargetRef %q: %v %v %+v", c.ref, err, derr, rep)
		}
		if ns := gjsonNamespace(t, pod); len(l.asked) != 1 || l.asked[0] != ns+" "+c.want+" llm-prefill" {
			t.Errorf("scaleTargetRef %q: asked %q, want %q in the pod's namespace %q", c.ref, l.asked, c.want, ns)
		}
	}
}

func gjsonNamespace(t *testing.T, input []byte) string {
	t.Helper()
	var in struct {
		Resource struct {
			Metadata struct{ Namespace string } `json:"metadata"`
		} `json:"resource"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		t.Fatal(err)
	}
	return in.Resource.Metadata.Namespace
}

func FuzzMetricInput(f *testing.F) {
	f.Add([]byte(`{"resource":` + podtest.Pod("a", "", 1) + `,"runType":"scaler"}`))
	f.Add([]byte(`{"resource":{"kind":"Deployment","metadata":{"name":"d","namespace":"n"},"spec":{"selector":{"matchLabels":{"a":"b"}}}},"runType":"api"}`))
	f.Add([]byte(`{"resource":{"metadata":{"name":"x","creationTimestamp":"2026-01-01T00:00:00Z"},"status":{"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2025-01-01T00:00:00Z"}]}},"runType":"scaler"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		// Pods are never scraped here (no IP allowed through): metricsPort 1
		// and a short timeout keep the fuzzer fast even if one is.
		var out bytes.Buffer
		err := Run(context.Background(), Process{Stdin: bytes.NewReader(b), Stdout: &out,
			Lookup: lookup(map[string]string{"metricsPort": "1", "scrapeTimeout": "50ms"}), Log: quiet,
			Lister: func(time.Duration) (PodLister, error) { return &fakeLister{}, nil }})
		if err != nil {
			return
		}
		if _, err := signal.Decode(out.String()); err != nil {
			t.Fatalf("accepted input gave an invalid report: %v\n%s", err, out.String())
		}
	})
}

// configure checks only a configured prometheusMatchers; the default
// must therefore be valid itself.
func TestDefaultPrometheusMatchersAreValid(t *testing.T) {
	if err := source.ValidateMatchers(source.RenderMatchers(defaultPrometheusMatchers(), "inference", "llm.a")); err != nil {
		t.Fatal(err)
	}
}
