package signal

import (
	"math"
	"sort"
)

// Quantile is Prometheus's histogram_quantile(q, h) for a classic
// histogram (promql's bucketQuantile), the one estimate every part of
// inferscale takes from a bucketed histogram:
//
//   - q NaN gives NaN, q < 0 gives -Inf, q > 1 gives +Inf;
//   - no finite bucket, or no observation, gives NaN;
//   - counts that decrease from one bucket to the next (the +Inf bucket,
//     Count, included) are raised to the largest count below them (the
//     envelope Prometheus forces), after counts within a relative 1e-12 of
//     the previous are taken as equal to it;
//   - the rank q·observations is found in the first bucket whose count
//     reaches it and interpolated linearly inside it, from 0 for the
//     lowest bucket (whose bound is returned when it is 0 or less);
//   - a rank in the +Inf bucket gives the highest finite bound.
//
// The bounds must increase (Histogram.Validate holds them so); h is not
// changed.
func Quantile(h Histogram, q float64) float64 {
	switch {
	case math.IsNaN(q):
		return math.NaN()
	case q < 0:
		return math.Inf(-1)
	case q > 1:
		return math.Inf(1)
	case len(h.Buckets) == 0:
		return math.NaN()
	}
	counts := envelope(h)
	n := len(h.Buckets)
	observations := counts[n]
	if observations == 0 {
		return math.NaN()
	}
	rank := q * observations
	b := sort.Search(n, func(i int) bool { return counts[i] >= rank })
	if b == n {
		return h.Buckets[n-1].UpperBound
	}
	if b == 0 && h.Buckets[0].UpperBound <= 0 {
		return h.Buckets[0].UpperBound
	}
	start, end, count := 0.0, h.Buckets[b].UpperBound, counts[b]
	if b > 0 {
		start = h.Buckets[b-1].UpperBound
		count -= counts[b-1]
		rank -= counts[b-1]
	}
	return start + (end-start)*(rank/count)
}

// envelope is the cumulative counts of h's buckets and, last, the +Inf
// bucket's (Count), made monotonic as Prometheus makes them: a count
// within a relative 1e-12 of the previous one is taken as equal to it,
// then no count is below one before it.
func envelope(h Histogram) []float64 {
	counts := make([]float64, 0, len(h.Buckets)+1)
	for _, b := range h.Buckets {
		counts = append(counts, b.Count)
	}
	counts = append(counts, h.Count)
	prev := counts[0]
	for i := 1; i < len(counts); i++ {
		switch d := math.Abs(counts[i] - prev); {
		case d == 0:
		case d/counts[i] <= 1e-12:
			counts[i] = prev
		default:
			prev = counts[i]
		}
	}
	high := counts[0]
	for i := range counts {
		high = math.Max(high, counts[i])
		counts[i] = high
	}
	return counts
}
