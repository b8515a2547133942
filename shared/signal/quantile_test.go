package signal

import (
	"math"
	"testing"
)

// hist is a histogram with finite bounds 0.1, 0.5, 1, 2, 5 and the given
// cumulative counts, the last being the +Inf bucket (Count).
func hist(counts ...float64) Histogram {
	bounds := []float64{0.1, 0.5, 1, 2, 5}
	h := Histogram{Count: counts[len(counts)-1]}
	for i, c := range counts[:len(counts)-1] {
		h.Buckets = append(h.Buckets, Bucket{UpperBound: bounds[i], Count: c})
	}
	return h
}

// Quantile gives what Prometheus's histogram_quantile gives, edge cases
// included (promql/quantile.go, bucketQuantile).
func TestQuantileIsPrometheusHistogramQuantile(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	h := hist(10, 50, 90, 100, 100, 100)
	for _, c := range []struct {
		name string
		h    Histogram
		q    float64
		want float64
	}{
		{"median", h, 0.5, 0.5},
		{"p95", h, 0.95, 1.5},
		{"lowest bucket from 0", h, 0.05, 0.05},
		{"inside a bucket", h, 0.7, 0.75},
		{"q 0: the lowest bucket's start", h, 0, 0},
		{"q 1: where the count is reached", h, 1, 2},
		{"q 0 on an empty lowest bucket: 0/0", hist(0, 5, 10, 10, 10, 10), 0, nan},
		{"rank in +Inf: the highest finite bound", hist(0, 0, 0, 0, 0, 10), 0.99, 5},
		{"+Inf holds half", hist(1, 2, 3, 4, 5, 10), 0.9, 5},
		{"empty", hist(0, 0, 0, 0, 0, 0), 0.5, nan},
		{"no buckets", Histogram{Count: 10}, 0.5, nan},
		{"no buckets, no count", Histogram{}, 0.5, nan},
		{"q NaN", h, nan, nan},
		{"q below 0", h, -0.1, math.Inf(-1)},
		{"q above 1", h, 1.5, inf},
		// 50 is raised to 60: the rank 65 is 5 of the 40 above it (not 15 of 50).
		{"non-monotonic: the envelope", hist(10, 60, 50, 100, 100, 100), 0.65, 1.125},
		{"count below the last bucket: raised to it", hist(10, 50, 90, 100, 100, 80), 0.5, 0.5},
		// 1e13+1 is taken as 1e13, so the rank 1e13+0.5 is in the next bucket.
		{"precision: a count within 1e-12 is equal", hist(1e13, 1e13+1, 2e13, 2e13, 2e13, 2e13), (1e13 + 0.5) / 2e13, 0.5},
		{"lowest bound at 0", Histogram{Count: 10, Buckets: []Bucket{{0, 6}, {1, 10}}}, 0.5, 0},
		{"negative lowest bound", Histogram{Count: 10, Buckets: []Bucket{{-1, 6}, {1, 10}}}, 0.5, -1},
		{"one bucket", Histogram{Count: 4, Buckets: []Bucket{{2, 4}}}, 0.5, 1},
	} {
		got := Quantile(c.h, c.q)
		if math.IsNaN(c.want) != math.IsNaN(got) || (!math.IsNaN(got) && math.Abs(got-c.want) > 1e-9 && got != c.want) {
			t.Errorf("%s: q%g = %g, want %g", c.name, c.q, got, c.want)
		}
	}
	if h.Buckets[2].Count != 90 || h.Count != 100 {
		t.Errorf("the histogram was changed: %+v", h)
	}
}
