package baseline

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/sim/scaler"
)

func TestHistogramQuantile(t *testing.T) {
	h := signal.Histogram{Buckets: []signal.Bucket{{UpperBound: 0.1, Count: 2}, {UpperBound: 0.5, Count: 6}, {UpperBound: 1, Count: 8}}, Count: 10}
	cases := []struct{ q, want float64 }{
		{0.5, 0.4},  // rank 5 in (0.1,0.5]: 0.1 + 0.4·(5−2)/4
		{0.1, 0.05}, // rank 1 in (0,0.1]: 0.1·1/2
		{0.95, 1},   // rank 9.5 in +Inf: highest finite bound
		{0.8, 1},    // rank 8 in (0.5,1]: 0.5 + 0.5·2/2
	}
	for _, c := range cases {
		got, err := histogramQuantile(c.q, h)
		if err != nil || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("q=%g: got %g, %v; want %g", c.q, got, err, c.want)
		}
	}
	if _, err := histogramQuantile(0.5, signal.Histogram{Buckets: h.Buckets[:0]}); !errors.Is(err, errNoRequests) {
		t.Errorf("empty histogram: err = %v, want errNoRequests", err)
	}
	if _, err := histogramQuantile(1.5, h); err == nil {
		t.Error("q=1.5: want an error")
	}
	if _, err := histogramQuantile(0.5, signal.Histogram{Count: 3}); err == nil {
		t.Error("no finite buckets: want an error")
	}
}

func histObs(sec float64, h *signal.Histogram, created time.Duration) scaler.Observation {
	return obsOf(at(sec), 1, 1, 10, podSpec{phase: scaler.Ready, waiting: f(0), ttft: h, createdBefore: created})
}

func TestHistogramWindowUsesDeltas(t *testing.T) {
	w := newHistogramWindow(time.Minute, pickTTFT)
	// an old pod: 100 fast requests before the window, then 10 slow ones (0.5–1 s)
	w.observe(histObs(0, hist(100, 100, 100, 100, 100, 100), time.Hour))
	w.observe(histObs(30, hist(100, 100, 110, 110, 110, 110), time.Hour))
	// delta over the window = 10 requests in (0.5, 1]: p50 = 0.5 + 0.5·5/10 = 0.75
	// (the cumulative histogram would say 0.05)
	got, err := w.fleetQuantile(0.5, at(30))
	if err != nil || math.Abs(got-0.75) > 1e-9 {
		t.Fatalf("p50 over the window: got %g, %v; want 0.75", got, err)
	}
	// t=90: no new request since t=30 (the base is the t=30 snapshot) → no latency
	w.observe(histObs(90, hist(100, 100, 110, 110, 110, 110), time.Hour))
	if _, err := w.fleetQuantile(0.5, at(90)); !errors.Is(err, errNoRequests) {
		t.Fatalf("idle window: err = %v, want errNoRequests", err)
	}
	// counter reset (restart): the new cumulative values are the delta: 4 requests in (1,2]
	w.observe(histObs(100, hist(0, 0, 0, 4, 4, 4), time.Hour))
	got, err = w.fleetQuantile(0.5, at(100))
	if err != nil || math.Abs(got-1.5) > 1e-9 {
		t.Fatalf("after a reset: got %g, %v; want 1.5", got, err)
	}
}

func TestHistogramWindowNewPodAndMismatch(t *testing.T) {
	w := newHistogramWindow(time.Minute, pickTTFT)
	// a pod created 10 s ago: all its requests fall in the window: 4 in (1,2] → p50 1.5
	w.observe(histObs(0, hist(0, 0, 0, 4, 4, 4), 10*time.Second))
	got, err := w.fleetQuantile(0.5, at(0))
	if err != nil || math.Abs(got-1.5) > 1e-9 {
		t.Fatalf("new pod: got %g, %v; want 1.5", got, err)
	}
	// two pods with different bucket layouts cannot be summed
	o := obsOf(at(5), 2, 1, 10,
		podSpec{phase: scaler.Ready, ttft: hist(0, 0, 0, 4, 4, 4), createdBefore: 10 * time.Second},
		podSpec{phase: scaler.Ready, createdBefore: 10 * time.Second,
			ttft: &signal.Histogram{Buckets: []signal.Bucket{{UpperBound: 3, Count: 1}}, Count: 1}})
	w2 := newHistogramWindow(time.Minute, pickTTFT)
	w2.observe(o)
	if _, err := w2.fleetQuantile(0.5, at(5)); err == nil {
		t.Fatal("different bucket layouts: want an error")
	}
}

// FuzzHistogramQuantile checks that any cumulative histogram gives a
// quantile inside its finite bounds, or an error — never a panic or NaN.
func FuzzHistogramQuantile(f *testing.F) {
	f.Add(0.5, 2.0, 6.0, 8.0, 10.0)
	f.Add(0.99, 0.0, 0.0, 0.0, 0.0)
	f.Add(0.0, 5.0, 5.0, 5.0, 5.0)
	f.Fuzz(func(t *testing.T, q, a, b, c, total float64) {
		h := signal.Histogram{Buckets: []signal.Bucket{{UpperBound: 0.1, Count: a}, {UpperBound: 0.5, Count: b}, {UpperBound: 1, Count: c}}, Count: total}
		if (&signal.Report{Version: signal.Version, Pods: []signal.Pod{{Name: "p", TTFT: &h}}}).Validate() != nil {
			return // not a histogram any source produces
		}
		v, err := histogramQuantile(q, h)
		if err != nil {
			return
		}
		if math.IsNaN(v) || v < 0 || v > 1 {
			t.Fatalf("q=%g over %+v: %g outside [0, 1]", q, h, v)
		}
	})
}

func TestHistogramWindowDedupesByScrapeTime(t *testing.T) {
	w := newHistogramWindow(time.Minute, pickTTFT)
	o := histObs(0, hist(0, 0, 0, 4, 4, 4), time.Hour)
	w.observe(o)
	// the controller ticks again before a new scrape arrives: same ScrapeTime
	o.Now = at(5)
	w.observe(o)
	if n := len(w.pods["pod-00"].snaps); n != 1 {
		t.Fatalf("same scrape recorded %d times, want once", n)
	}
	// a lagged scrape is stamped with its scrape time, not the observation's
	o2 := histObs(30, hist(0, 0, 0, 6, 6, 6), time.Hour)
	o2.Pods[0].Metrics.ScrapeTime = at(15)
	w.observe(o2)
	if got := w.pods["pod-00"].snaps[1].at; !got.Equal(at(15)) {
		t.Fatalf("snapshot stamped %v, want the scrape time %v", got, at(15))
	}
}
