package workload

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

const serveGenFixture = "testdata/servegen"

func openServeGen(t *testing.T, path string, opts ServeGenOptions) []Request {
	t.Helper()
	src, err := OpenServeGen(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	reqs := drain(t, src)
	checkOrdered(t, reqs)
	return reqs
}

func within(got, want, tol float64) bool { return math.Abs(got-want) <= tol*want }

// The fixture: client 1 Gamma(shape 0.25, CV 2) at 2 req/s over [0, 3600),
// client 2 Weibull(0.5) at 0.5 req/s in [600,1200) and [1800,2400) and
// exponential at 1 req/s in [3000,3600). Expected 7200 + 1200 requests.
func TestServeGenFixtureRates(t *testing.T) {
	reqs := openServeGen(t, serveGenFixture, ServeGenOptions{Seed: 7})
	// ServeGen's construct.py: ceil(rate × window) requests per window.
	if len(reqs) != 8400 {
		t.Errorf("got %d requests, want 8400", len(reqs))
	}
	if last := reqs[len(reqs)-1].Arrival; last >= time.Hour {
		t.Errorf("arrival %v after the last active window", last)
	}
	for _, r := range reqs {
		if r.InputTokens < 1 || r.OutputTokens < 1 || r.InputTokens > AzureConversationInput.Max {
			t.Fatalf("token counts out of the law's bounds: %+v", r)
		}
	}

	two := openServeGen(t, serveGenFixture, ServeGenOptions{Seed: 7, Clients: []int{2}})
	if len(two) != 1200 {
		t.Errorf("client 2: got %d requests, want 1200", len(two))
	}
	for _, r := range two {
		s := r.Arrival.Seconds()
		if s < 600 || (s >= 1200 && s < 1800) || (s >= 2400 && s < 3000) {
			t.Fatalf("client 2 request at %v falls in a window with rate 0", r.Arrival)
		}
	}

	top := openServeGen(t, serveGenFixture, ServeGenOptions{Seed: 7, TopClients: 1})
	one := openServeGen(t, serveGenFixture, ServeGenOptions{Seed: 7, Clients: []int{1}})
	if len(top) != len(one) || len(one) == 0 {
		t.Errorf("TopClients=1 gave %d requests, client 1 alone %d: want the busiest client", len(top), len(one))
	}

	win := openServeGen(t, serveGenFixture, ServeGenOptions{Seed: 7, Clients: []int{2}, Start: 1800 * time.Second, Duration: 10 * time.Minute})
	if len(win) != 300 {
		t.Errorf("window [1800s,2400s) of client 2: got %d, want 300", len(win))
	}
	if len(win) > 0 && (win[0].Arrival < 0 || win[len(win)-1].Arrival >= 10*time.Minute) {
		t.Errorf("window arrivals not rebased on Start: %v .. %v", win[0].Arrival, win[len(win)-1].Arrival)
	}

	half := openServeGen(t, serveGenFixture, ServeGenOptions{Seed: 7, RateFactor: 0.5})
	if len(half) != 4200 {
		t.Errorf("RateFactor 0.5: got %d requests, want 4200", len(half))
	}
	// A window cut by Start keeps its rate: 2 req/s over [3300s, 3600s).
	cut := openServeGen(t, serveGenFixture, ServeGenOptions{Seed: 7, Clients: []int{1}, Start: 3300 * time.Second})
	if len(cut) != 600 {
		t.Errorf("Start inside a window: got %d requests, want 600", len(cut))
	}

	// The fitted law's burstiness survives: gaps of client 1 (Gamma shape
	// 0.25, CV 2) are far burstier than client 2's exponential window.
	if cv := gapCV(one); cv < 1.5 || cv > 2.6 {
		t.Errorf("Gamma(0.25) window gap CV %.2f, want ≈2", cv)
	}
	expo := openServeGen(t, serveGenFixture, ServeGenOptions{Seed: 7, Clients: []int{2}, Start: 3000 * time.Second})
	if cv := gapCV(expo); cv < 0.85 || cv > 1.15 {
		t.Errorf("exponential window gap CV %.2f, want ≈1", cv)
	}
}

// gapCV is the coefficient of variation of the inter-arrival gaps.
func gapCV(reqs []Request) float64 {
	var sum, sq float64
	n := float64(len(reqs) - 1)
	for i := 1; i < len(reqs); i++ {
		g := (reqs[i].Arrival - reqs[i-1].Arrival).Seconds()
		sum += g
		sq += g * g
	}
	mean := sum / n
	return math.Sqrt(sq/n-mean*mean) / mean
}

// Windows expecting less than one request still get their share on
// average (construct.py would give them none).
func TestServeGenFractionalWindows(t *testing.T) {
	var b strings.Builder
	for i := range 2000 {
		b.WriteString(strconv.Itoa(i*600) + ",0.001,1,Gamma,0.5,1\n") // 0.6 expected per window
	}
	p := writeTemp(t, "chunk-9-trace.csv", b.String())
	reqs := openServeGen(t, p, ServeGenOptions{Seed: 2})
	if !within(float64(len(reqs)), 1200, 0.1) { // sd ≈ 22
		t.Errorf("got %d requests over 2000 windows of 0.6 expected, want ≈1200", len(reqs))
	}
	half := openServeGen(t, p, ServeGenOptions{Seed: 2, RateFactor: 0.5})
	if !within(float64(len(half)), 600, 0.12) {
		t.Errorf("RateFactor 0.5: got %d, want ≈600", len(half))
	}
}

func TestServeGenDeterministic(t *testing.T) {
	a := openServeGen(t, serveGenFixture, ServeGenOptions{Seed: 42})
	b := openServeGen(t, serveGenFixture, ServeGenOptions{Seed: 42})
	c := openServeGen(t, serveGenFixture, ServeGenOptions{Seed: 43})
	if !slices.Equal(a, b) {
		t.Error("same seed, different requests")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds, identical requests")
	}
}

// expectedServeGen sums ceil(rate × window length) of every client's rows inside
// [lo, hi) seconds, reading the tar independently of the loader.
func expectedServeGen(t *testing.T, path string, lo, hi float64) float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	total := 0.0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return total
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(h.Name, "-trace.csv") {
			continue
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
			fields := strings.Split(line, ",")
			start, _ := strconv.ParseFloat(fields[0], 64)
			rate, _ := strconv.ParseFloat(fields[1], 64)
			if start >= lo && start+600 <= hi {
				total += math.Ceil(rate*600 - 1e-9)
			}
		}
	}
}

func TestServeGenRealTraceRateAndDeterminism(t *testing.T) {
	path := tracePath(t, "servegen/servegen_trace_csvs_m-large.tar.gz")
	// One hour on day 3, 12:00–13:00 of trace time.
	start := 3*24*time.Hour + 12*time.Hour
	opts := ServeGenOptions{Seed: 1, Start: start, Duration: time.Hour}
	src, err := OpenServeGen(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Stats(src)
	if err != nil {
		t.Fatal(err)
	}
	want := expectedServeGen(t, path, start.Seconds(), (start + time.Hour).Seconds())
	if want < 1000 {
		t.Fatalf("expected count %v: the window is unexpectedly idle", want)
	}
	if float64(st.Requests) != want {
		t.Errorf("got %d requests in the hour, the CSV rates give %.0f", st.Requests, want)
	}
	if st.First < 0 || st.Last >= time.Hour {
		t.Errorf("arrivals %v..%v outside [0, 1h)", st.First, st.Last)
	}
	t.Logf("servegen %v+1h: %v (expected %.0f)", start, st, want)

	// Same seed twice: identical prefix.
	short := ServeGenOptions{Seed: 9, Start: start, Duration: time.Minute}
	a := openServeGen(t, path, short)
	b := openServeGen(t, path, short)
	if len(a) == 0 || !slices.Equal(a, b) {
		t.Errorf("same seed gave %d and %d requests or different ones", len(a), len(b))
	}
}

func TestServeGenBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := map[string]struct{ body, frag string }{
		"number":    {"0,1,1,Gamma,0.5,1\n600,fast,1,Gamma,0.5,1\n", "chunk-1-trace.csv:2: column 2"},
		"negative":  {"0,-1,1,Gamma,0.5,1\n", "chunk-1-trace.csv:1: column 2"},
		"order":     {"600,1,1,Gamma,0.5,1\n0,1,1,Gamma,0.5,1\n", "chunk-1-trace.csv:2: window start 0 s does not follow 600 s"},
		"shape":     {"0,1,1,Weibull,0,1\n", "chunk-1-trace.csv:1: Weibull shape 0"},
		"fields":    {"0,1,1,Gamma\n", "chunk-1-trace.csv:1:"},
		"nan":       {"0,NaN,1,Gamma,0.5,1\n", "chunk-1-trace.csv:1:"},
		"hugestart": {"1e300,1,1,Gamma,0.5,1\n", "out of range"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := OpenServeGen(write("chunk-1-trace.csv", c.body), ServeGenOptions{})
			wantErr(t, err, c.frag)
		})
	}
	// An unknown law is replayed as exponential at the row's rate.
	reqs := openServeGen(t, write("chunk-3-trace.csv", "0,2,1,Lognormal,0.5,1\n"), ServeGenOptions{Seed: 1})
	if len(reqs) != 1200 {
		t.Errorf("unknown law: got %d requests, want ≈1200", len(reqs))
	}
	if _, err := OpenServeGen(write("chunk-4-trace.csv", "0,1,1,Gamma,0.5,1\n"), ServeGenOptions{Clients: []int{5}}); err == nil {
		t.Error("no matching client: no error")
	}
	if _, err := OpenServeGen(write("rates.csv", "0,1,1,Gamma,0.5,1\n"), ServeGenOptions{}); err == nil {
		t.Error("file not named chunk-<client>-trace.csv: no error")
	}
	if _, err := OpenServeGen(write("chunk-5-trace.csv", "0,1e9,1,Gamma,0.5,1\n"), ServeGenOptions{}); err == nil || !strings.Contains(err.Error(), "lower RateFactor") {
		t.Errorf("a window of 6e11 requests: got %v, want a refusal", err)
	}
	if _, err := OpenServeGen(serveGenFixture, ServeGenOptions{RateFactor: -1}); err == nil {
		t.Error("negative rate factor: no error")
	}
	if _, err := OpenServeGen(serveGenFixture, ServeGenOptions{Start: -time.Second}); err == nil {
		t.Error("negative start: no error")
	}
	if _, err := OpenServeGen(filepath.Join(dir, "missing"), ServeGenOptions{}); err == nil {
		t.Error("missing path: no error")
	}
	if _, err := OpenServeGen(write("bad.tar.gz", "not gzip"), ServeGenOptions{}); err == nil {
		t.Error("corrupt tar.gz: no error")
	}
}

func FuzzServeGenCSV(f *testing.F) {
	f.Add([]byte("0,0,0,,0,0\n600,0.15,4.07,Gamma,0.0604,103.65\n1200,1.33,8.6,Weibull,0.375,0.397\n"))
	f.Add([]byte("0,2,1,Exponential,1,1\n600,2,1,Mystery,1,1\n"))
	f.Add([]byte("600,1,1,Gamma,0.5,1\n0,1,1,Gamma,0.5,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l := sgLoader{opts: ServeGenOptions{Duration: 2 * time.Hour}, unknownLaws: map[string]int{}}
		if err := l.loadCSV("fuzz", "chunk-1-trace.csv", strings.NewReader(string(data))); err != nil {
			return
		}
		// Cap the rate so a fuzzed huge rate cannot run for long.
		for i := range l.clients[0].windows {
			l.clients[0].windows[i].rate = min(l.clients[0].windows[i].rate, 1)
		}
		fuzzCheck(t, newServeGenSource(l.clients, ServeGenOptions{Duration: 2 * time.Hour}))
	})
}
