package history

import (
	"fmt"
	"math"
	"sort"

	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/sim/workload"
)

// MinCompareRequests: windows with fewer recorded requests are left out of
// the per-window rate error (their relative error is noise).
const MinCompareRequests = 20

// Fidelity says how far the rebuilt load is from the recorded one, each
// figure at the resolution Prometheus holds (per window, per bucket).
type Fidelity struct {
	Windows, EmptyWindows int
	// Requests over the period, recorded and rebuilt.
	RecordedRequests, RebuiltRequests float64
	// RateMaxError is the largest relative difference of a window's
	// request count (windows with at least MinCompareRequests recorded).
	RateMaxError float64
	Prompt       LengthFidelity
	Output       LengthFidelity
}

// LengthFidelity compares one length distribution.
type LengthFidelity struct {
	// RecordedMean is _sum/_count; RebuiltMean the rebuilt lengths' mean.
	RecordedMean, RebuiltMean float64
	// P50 and P90 as histogram_quantile interpolates them, from the
	// recorded buckets and from the rebuilt lengths put in the same buckets.
	RecordedP50, RebuiltP50, RecordedP90, RebuiltP90 float64
	// Distance is the total-variation distance between the recorded and the
	// rebuilt bucket distributions (0: the same, 1: disjoint).
	Distance float64
}

// Compare measures the rebuilt requests against the recording.
func Compare(r *Recorded, reqs []workload.Request) Fidelity {
	f := Fidelity{Windows: len(r.Arrivals), EmptyWindows: r.Empty}
	rebuilt := make([]float64, len(r.Arrivals))
	var in, out []float64
	for _, q := range reqs {
		if k := int(q.Arrival / r.Step); k >= 0 && k < len(rebuilt) {
			rebuilt[k]++
		}
		in = append(in, float64(q.InputTokens))
		out = append(out, float64(q.OutputTokens))
	}
	for k, n := range r.Arrivals {
		f.RecordedRequests += n
		f.RebuiltRequests += rebuilt[k]
		if n >= MinCompareRequests {
			f.RateMaxError = math.Max(f.RateMaxError, math.Abs(rebuilt[k]-n)/n)
		}
	}
	f.Prompt = compareLengths(r.Prompt, in)
	f.Output = compareLengths(r.Output, out)
	return f
}

func compareLengths(h Histograms, rebuilt []float64) LengthFidelity {
	rec, s := h.Total()
	var lf LengthFidelity
	if n := sum(rec); n > 0 {
		lf.RecordedMean = s / n
	}
	lf.RebuiltMean = mean(rebuilt)
	bounds := append(append([]float64(nil), h.Bounds...), math.Inf(1))
	reb := make([]float64, len(bounds))
	for _, v := range rebuilt {
		reb[sort.SearchFloat64s(bounds, v)]++ // le is inclusive
	}
	lf.RecordedP50, lf.RecordedP90 = bucketQuantile(bounds, rec, 0.5), bucketQuantile(bounds, rec, 0.9)
	lf.RebuiltP50, lf.RebuiltP90 = bucketQuantile(bounds, reb, 0.5), bucketQuantile(bounds, reb, 0.9)
	pr, pb := cumulative(rec), cumulative(reb)
	prevR, prevB := 0.0, 0.0
	for i := range bounds {
		lf.Distance += math.Abs((pr[i] - prevR) - (pb[i] - prevB))
		prevR, prevB = pr[i], pb[i]
	}
	lf.Distance /= 2
	return lf
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	return sum(v) / float64(len(v))
}

// bucketQuantile is PromQL's histogram_quantile (signal.Quantile) over
// per-bucket counts whose bounds end with +Inf.
func bucketQuantile(bounds, counts []float64, q float64) float64 {
	var h signal.Histogram
	for i, v := range counts {
		h.Count += v
		if i < len(bounds)-1 {
			h.Buckets = append(h.Buckets, signal.Bucket{UpperBound: bounds[i], Count: h.Count})
		}
	}
	return signal.Quantile(h, q)
}

// String is a one-line account for logs and the policy file.
func (f Fidelity) String() string {
	return fmt.Sprintf("%d windows (%d empty); requests recorded %.0f, rebuilt %.0f (largest window difference %.1f%%); "+
		"prompt tokens mean %.0f vs %.0f, p50 %.0f vs %.0f, p90 %.0f vs %.0f, bucket distance %.3f; "+
		"output tokens mean %.0f vs %.0f, p50 %.0f vs %.0f, p90 %.0f vs %.0f, bucket distance %.3f",
		f.Windows, f.EmptyWindows, f.RecordedRequests, f.RebuiltRequests, 100*f.RateMaxError,
		f.Prompt.RecordedMean, f.Prompt.RebuiltMean, f.Prompt.RecordedP50, f.Prompt.RebuiltP50, f.Prompt.RecordedP90, f.Prompt.RebuiltP90, f.Prompt.Distance,
		f.Output.RecordedMean, f.Output.RebuiltMean, f.Output.RecordedP50, f.Output.RebuiltP50, f.Output.RecordedP90, f.Output.RebuiltP90, f.Output.Distance)
}
