package export

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/inferscale/inferscale/shared/kube"
	"github.com/inferscale/inferscale/shared/state/store"
)

// at is 50 s after the golden state's last tick: two 15 s intervals missed.
var at = time.Date(2026, 12, 1, 12, 0, 50, 0, time.UTC)

func collector(r Reader) *Collector {
	return NewCollector(r, Options{Interval: 15 * time.Second, Now: func() time.Time { return at }, Version: "test"})
}

func golden(t *testing.T) io.Reader {
	t.Helper()
	f, err := os.Open("testdata/metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// Over the golden state (file backend) every series has its value, name,
// type and help; testdata/metrics.txt is the exposition.
func TestCollectorOverAGoldenStateFile(t *testing.T) {
	c := collector(File{Path: "testdata/state.json"})
	if err := testutil.CollectAndCompare(c, golden(t)); err != nil {
		t.Fatal(err)
	}
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}

// apiServer serves the state ConfigMap like the API server, records
// every request's method, and answers 404 for any other object.
type apiServer struct {
	*httptest.Server
	mu      sync.Mutex
	methods []string
	data    map[string]string
}

func newAPIServer(t *testing.T, data map[string]string) (*apiServer, *kube.Client) {
	s := &apiServer{data: data}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.methods = append(s.methods, r.Method)
		s.mu.Unlock()
		if r.URL.Path != "/api/v1/namespaces/inference/configmaps/inferscale-vllm-state" || s.data == nil {
			http.Error(w, `{"kind":"Status","code":404}`, http.StatusNotFound)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "inferscale-vllm-state", "namespace": "inference", "resourceVersion": "7"}, "data": s.data})
	}))
	t.Cleanup(s.Close)
	roots := x509.NewCertPool()
	roots.AddCert(s.Certificate())
	return s, kube.New(s.URL, "", roots, 2*time.Second, "inference")
}

// Over the ConfigMap backend the exporter gets the state, with the same
// series as from the file, and never writes: every request is a GET.
func TestCollectorOverAConfigMap(t *testing.T) {
	b, err := os.ReadFile("testdata/state.json")
	if err != nil {
		t.Fatal(err)
	}
	srv, client := newAPIServer(t, map[string]string{store.ConfigMapKey: string(b), "other": "kept"})
	c := collector(ConfigMap{API: client, Namespace: "inference", Name: "inferscale-vllm-state"})
	if err := testutil.CollectAndCompare(c, golden(t)); err != nil {
		t.Fatal(err)
	}
	for _, m := range srv.methods {
		if m != http.MethodGet {
			t.Errorf("the exporter sent a %s", m)
		}
	}
	if len(srv.methods) == 0 {
		t.Fatal("no request reached the API server")
	}
}

const upZero = `
# HELP inferscale_state_up 1 when the last read of the persisted state succeeded and decoded, 0 when it failed (no state yet, an API or file error, a state this build cannot decode): then no other state series is served.
# TYPE inferscale_state_up gauge
inferscale_state_up 0
`

// A state that cannot be read or decoded is inferscale_state_up 0 and no
// other state series: no value is made up, none is left from before.
func TestUnreadableStateIsStateUpZero(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	_, missingCM := newAPIServer(t, nil)
	_, noKey := newAPIServer(t, map[string]string{"other": "x"})
	_, badCM := newAPIServer(t, map[string]string{store.ConfigMapKey: `{"v":1,"surprise":1}`})
	down := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "boom", 500) }))
	defer down.Close()
	downRoots := x509.NewCertPool()
	downRoots.AddCert(down.Certificate())
	for name, r := range map[string]Reader{
		"missing file":      File{Path: filepath.Join(dir, "none.json")},
		"not json":          File{Path: write("bad.json", `{"v":1,`)},
		"other schema":      File{Path: write("v2.json", `{"v":2}`)},
		"unknown field":     File{Path: write("new.json", `{"v":1,"fromTheFuture":true}`)},
		"no configmap":      ConfigMap{API: missingCM, Namespace: "inference", Name: "inferscale-vllm-state"},
		"no state key":      ConfigMap{API: noKey, Namespace: "inference", Name: "inferscale-vllm-state"},
		"bad configmap":     ConfigMap{API: badCM, Namespace: "inference", Name: "inferscale-vllm-state"},
		"api server error":  ConfigMap{API: kube.New(down.URL, "", downRoots, time.Second, ""), Namespace: "inference", Name: "x"},
		"stateBackend=none": none{},
	} {
		t.Run(name, func(t *testing.T) {
			c := collector(r)
			if n := testutil.CollectAndCount(c); n != 2 {
				t.Errorf("%d series, want state_up and the build info only", n)
			}
			if err := testutil.CollectAndCompare(c, strings.NewReader(upZero), "inferscale_state_up"); err != nil {
				t.Error(err)
			}
		})
	}
}

// A state written before the summary was kept (or by a tick without it)
// serves the tick's time and age, and nothing of a decision.
func TestStateWithoutASummaryServesOnlyItsTick(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(p, []byte(`{"v":1,"lastTick":"2026-12-01T12:00:40Z","replicas":2}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := collector(File{Path: p})
	want := `
# HELP inferscale_last_tick_age_seconds Seconds since the last saved tick, by the exporter's clock: it grows while ticks fail or do not run.
# TYPE inferscale_last_tick_age_seconds gauge
inferscale_last_tick_age_seconds 10
# HELP inferscale_missed_ticks CPA intervals since the last saved tick in which no tick was saved, allowing one interval for the next: floor(age / interval) - 1, at least 0.
# TYPE inferscale_missed_ticks gauge
inferscale_missed_ticks 0
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "inferscale_last_tick_age_seconds", "inferscale_missed_ticks"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(c, "inferscale_target_replicas", "inferscale_ticks_total", "inferscale_decision_info"); n != 0 {
		t.Errorf("%d decision series from a state without a summary", n)
	}
}

// A plan saved before the need and hold were kept serves its forecast and
// β, and no need, hold or floor: absent, not a plan that asks for 0 pods.
func TestAPlanSavedWithoutItsCountsServesNone(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.json")
	doc := `{"v":1,"lastTick":"2026-12-01T12:00:40Z","replicas":2,"last":{"mode":"active","current":2,"target":2,"minReplicas":1,` +
		`"maxReplicas":8,"decidedBy":"hold","plan":{"forecastLevel":2.5,"forecastUpper":3.25,"ceilingRps":4,"ceilingSource":"fitted","beta":0.8},"ticks":3}}`
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	c := collector(File{Path: p})
	if n := testutil.CollectAndCount(c, "inferscale_headroom_beta"); n != 1 {
		t.Fatalf("%d β series from a state with a plan, want 1", n)
	}
	if n := testutil.CollectAndCount(c, "inferscale_plan_need_replicas", "inferscale_plan_hold_replicas", "inferscale_plan_floor_replicas"); n != 0 {
		t.Errorf("%d need/hold/floor series from a plan saved without them", n)
	}
}

func TestMissedTicks(t *testing.T) {
	for _, c := range []struct{ age, want float64 }{{-3, 0}, {0, 0}, {14, 0}, {29.9, 0}, {30, 1}, {50, 2}, {151, 9}} {
		if got := Missed(c.age, 15); got != c.want {
			t.Errorf("Missed(%g, 15) = %g, want %g", c.age, got, c.want)
		}
	}
}

// A scrape through the HTTP handler: one registry with the state's
// series and the process's own, in the text format.
func TestScrapeOverHTTP(t *testing.T) {
	h, err := Handler(collector(File{Path: "testdata/state.json"}))
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, l, h) }()
	resp, err := http.Get("http://" + l.Addr().String() + MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, s := range []string{"inferscale_state_up 1", "inferscale_target_replicas 5", "go_goroutines", "# TYPE inferscale_ticks_total counter"} {
		if !strings.Contains(string(body), s) {
			t.Errorf("scrape lacks %q", s)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

func TestWithinTheObjective(t *testing.T) {
	le, c := []float64{0.5, 1, 2.5}, []float64{10, 40, 70}
	for _, tc := range []struct {
		x      float64
		n      float64
		bucket string
	}{{1, 40, "1"}, {2, 60, "1,2.5"}, {0.25, 5, "0,0.5"}, {0.5, 10, "0.5"}, {10, 70, "2.5,+Inf"}, {1 + 1e-12, 40, "1"}} {
		n, b := Within(le, c, tc.x)
		if math.Abs(n-tc.n) > 1e-9 || b != tc.bucket {
			t.Errorf("Within(%g) = %g, %q; want %g, %q", tc.x, n, b, tc.n, tc.bucket)
		}
	}
	if n, b := Within(nil, nil, 1); n != 0 || b != "0,+Inf" {
		t.Errorf("no bounds: %g %q", n, b)
	}
}

// A state that stays unreadable is logged once, and again when the error
// changes or the state is readable again.
func TestReadErrorsAreLoggedOnChange(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	var logs strings.Builder
	c := NewCollector(File{Path: path}, Options{Interval: 15 * time.Second, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	for range 3 {
		testutil.CollectAndCount(c)
	}
	if err := os.WriteFile(path, []byte(`{"v":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	testutil.CollectAndCount(c)
	if got := logs.String(); strings.Count(got, "state not read") != 1 || strings.Count(got, "readable again") != 1 {
		t.Fatalf("logs:\n%s", got)
	}
}

func TestIntervalIsCPAsWhenSet(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	for _, c := range []struct {
		env  map[string]string
		want time.Duration
	}{{map[string]string{"interval": "30000"}, 30 * time.Second}, {nil, 15 * time.Second}, {map[string]string{"interval": "soon"}, 15 * time.Second}} {
		if got := Interval(env(c.env), 15*time.Second); got != c.want {
			t.Errorf("Interval(%v) = %s, want %s", c.env, got, c.want)
		}
	}
}
