package baseline

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/sim/scaler"
)

// histogramPick selects one latency histogram of a pod.
type histogramPick func(m *signal.Pod) *signal.Histogram

func pickTTFT(m *signal.Pod) *signal.Histogram { return m.TTFT }
func pickE2E(m *signal.Pod) *signal.Histogram  { return m.E2E }

type histSnapshot struct {
	at time.Time
	h  signal.Histogram
}

type podHistory struct {
	createdAt time.Time
	snaps     []histSnapshot // oldest first
}

// histogramWindow keeps each pod's cumulative histogram over time so that a
// latency quantile can be taken over the requests that finished within the
// last window, like PromQL's
// histogram_quantile(q, sum by (le) (increase(h[window]))).
type histogramWindow struct {
	window time.Duration
	pick   histogramPick
	pods   map[string]*podHistory
	now    time.Time // time of the latest observation
}

func newHistogramWindow(window time.Duration, pick histogramPick) *histogramWindow {
	return &histogramWindow{window: window, pick: pick, pods: map[string]*podHistory{}}
}

// observe records the histograms the observation carries and forgets
// snapshots no longer needed for the window.
func (w *histogramWindow) observe(obs scaler.Observation) {
	w.now = obs.Now
	for _, p := range obs.Pods {
		if !usable(p) {
			continue
		}
		h := w.pick(p.Metrics)
		if h == nil {
			continue
		}
		ph := w.pods[p.Name]
		if ph == nil {
			ph = &podHistory{createdAt: p.CreatedAt}
			w.pods[p.Name] = ph
		}
		at := p.Metrics.ScrapeTime // samples carry their scrape time, as in Prometheus
		if at.IsZero() {
			at = obs.Now
		}
		if n := len(ph.snaps); n > 0 && !at.After(ph.snaps[n-1].at) {
			continue // the same scrape delivered again
		}
		ph.snaps = append(ph.snaps, histSnapshot{at: at, h: cloneHistogram(*h)})
	}
	cutoff := obs.Now.Add(-w.window)
	for name, ph := range w.pods {
		if ph.snaps[len(ph.snaps)-1].at.Before(cutoff) {
			delete(w.pods, name) // no sample within the window any more
			continue
		}
		// keep the newest snapshot at or before the cutoff as the base
		keep := 0
		for i, s := range ph.snaps {
			if !s.at.After(cutoff) {
				keep = i
			}
		}
		ph.snaps = ph.snaps[keep:]
	}
}

// podDelta is the pod's histogram increase over the window ending now. A
// pod created inside the window served all its requests in it; otherwise
// the base is the oldest snapshot kept (the newest one at or before the
// window's start, or the first one seen).
func (w *histogramWindow) podDelta(ph *podHistory, now time.Time) signal.Histogram {
	cur := ph.snaps[len(ph.snaps)-1].h
	if ph.createdAt.After(now.Add(-w.window)) {
		return cur
	}
	base := ph.snaps[0].h
	if cur.Count < base.Count || !sameBounds(cur, base) {
		return cur // counter reset (server restart): everything since start
	}
	d := cloneHistogram(cur)
	d.Count -= base.Count
	d.Sum -= base.Sum
	for i := range d.Buckets {
		d.Buckets[i].Count = math.Max(0, d.Buckets[i].Count-base.Buckets[i].Count)
	}
	return d
}

// errNoRequests means no request finished within the window: there is no
// latency to report (PromQL returns NaN).
var errNoRequests = errors.New("no requests finished within the latency window")

// fleetQuantile is the q-quantile over all pods' requests in the window.
func (w *histogramWindow) fleetQuantile(q float64, now time.Time) (float64, error) {
	var acc *signal.Histogram
	names := make([]string, 0, len(w.pods))
	for n := range w.pods {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d := w.podDelta(w.pods[n], now)
		if acc == nil {
			c := cloneHistogram(d)
			acc = &c
			continue
		}
		if !sameBounds(*acc, d) {
			return 0, fmt.Errorf("pod %s: histogram buckets differ from the other pods'", n)
		}
		acc.Count += d.Count
		acc.Sum += d.Sum
		for i := range acc.Buckets {
			acc.Buckets[i].Count += d.Buckets[i].Count
		}
	}
	if acc == nil {
		return 0, errNoRequests
	}
	return histogramQuantile(q, *acc)
}

// podQuantile is the q-quantile over one pod's requests in the window.
func (w *histogramWindow) podQuantile(name string, q float64, now time.Time) (float64, error) {
	ph := w.pods[name]
	if ph == nil {
		return 0, errNoRequests
	}
	return histogramQuantile(q, w.podDelta(ph, now))
}

// histogramQuantile is Prometheus' histogram_quantile (signal.Quantile),
// with an error where PromQL would return NaN or an infinity: a quantile
// outside [0, 1], no request in the window, no finite bucket.
func histogramQuantile(q float64, h signal.Histogram) (float64, error) {
	if math.IsNaN(q) || q < 0 || q > 1 {
		return 0, fmt.Errorf("quantile %g is outside [0, 1]", q)
	}
	if h.Count <= 0 {
		return 0, errNoRequests
	}
	if len(h.Buckets) == 0 {
		return 0, errors.New("histogram has no finite buckets")
	}
	return signal.Quantile(h, q), nil
}

func cloneHistogram(h signal.Histogram) signal.Histogram {
	c := h
	c.Buckets = append([]signal.Bucket(nil), h.Buckets...)
	return c
}

func sameBounds(a, b signal.Histogram) bool {
	if len(a.Buckets) != len(b.Buckets) {
		return false
	}
	for i := range a.Buckets {
		if a.Buckets[i].UpperBound != b.Buckets[i].UpperBound {
			return false
		}
	}
	return true
}
