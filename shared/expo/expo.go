// Package expo parses Prometheus exposition bodies (text format 0.0.4 and
// OpenMetrics) with prometheus/common/expfmt and reduces metric families to
// the few numbers inferscale reads: an aggregated gauge or counter, or a
// merged raw cumulative histogram.
package expo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/inferscale/inferscale/shared/signal"
)

// AcceptHeader asks for the classic text format first (fast to parse),
// OpenMetrics second.
const AcceptHeader = "text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1"

// Families are the parsed metric families of one exposition, by name.
// Families with HELP/TYPE lines but no samples are absent.
type Families map[string]*dto.MetricFamily

// Parse reads one exposition; a line longer than MaxLineBytes or a sample
// with more than MaxLabels labels fails it. contentType is the response's Content-Type
// header: OpenMetrics is decoded as OpenMetrics, anything else as the
// Prometheus text format (which is what servers send by default).
func Parse(r io.Reader, contentType string) (Families, error) {
	return parse(context.Background(), r, contentType)
}

// parse is Parse within ctx, and with every line bounded (see bounded).
func parse(ctx context.Context, r io.Reader, contentType string) (Families, error) {
	r = newBounded(ctx, r)
	mediaType, _, _ := mime.ParseMediaType(contentType)
	if mediaType == expfmt.OpenMetricsType {
		return parseOpenMetrics(r, contentType)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	// The text parser rejects a last line without its newline, which some
	// exporters send; an extra blank line is harmless.
	fams, err := p.TextToMetricFamilies(io.MultiReader(r, strings.NewReader("\n")))
	if err != nil {
		return nil, fmt.Errorf("parsing text exposition: %w", err)
	}
	return Families(fams), nil
}

func parseOpenMetrics(r io.Reader, contentType string) (Families, error) {
	h := http.Header{}
	h.Set("Content-Type", contentType)
	format := expfmt.ResponseFormat(h)
	if format == expfmt.FmtUnknown {
		return nil, fmt.Errorf("unsupported OpenMetrics content type %q", contentType)
	}
	dec := expfmt.NewDecoder(r, format)
	fams := Families{}
	for {
		mf := &dto.MetricFamily{}
		err := dec.Decode(mf)
		if errors.Is(err, io.EOF) {
			return fams, nil
		}
		if err != nil {
			return nil, fmt.Errorf("parsing OpenMetrics exposition: %w", err)
		}
		if len(mf.GetMetric()) > 0 {
			fams[mf.GetName()] = mf
		}
	}
}

// Family returns the family called name, or nil. OpenMetrics names counter
// families without the _total suffix that the text format keeps, so both
// spellings are tried.
func (f Families) Family(name string) *dto.MetricFamily {
	if mf, ok := f[name]; ok {
		return mf
	}
	if base, ok := strings.CutSuffix(name, "_total"); ok {
		if mf, ok := f[base]; ok && mf.GetType() == dto.MetricType_COUNTER {
			return mf
		}
	}
	return nil
}

// Has reports whether a family called name has at least one sample.
func (f Families) Has(name string) bool { return f.Family(name) != nil }

// Names lists the family names, sorted.
func (f Families) Names() []string {
	names := make([]string, 0, len(f))
	for n := range f {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Agg says how the series of one family are combined.
type Agg string

// Aggregations.
const (
	Sum  Agg = "sum"
	Mean Agg = "mean"
	Max  Agg = "max"
)

// ValidAgg reports whether a is a known aggregation ("" means Sum).
func ValidAgg(a Agg) bool { return a == "" || a == Sum || a == Mean || a == Max }

// Matches reports whether m carries every label in want with the same value.
func Matches(m *dto.Metric, want map[string]string) bool {
	if len(want) == 0 {
		return true
	}
	n := 0
	for _, lp := range m.GetLabel() {
		if v, ok := want[lp.GetName()]; ok {
			if v != lp.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}

// scalar is the value of a gauge, counter or untyped sample.
func scalar(m *dto.Metric) (float64, bool) {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue(), true
	case m.Counter != nil:
		return m.Counter.GetValue(), true
	case m.Untyped != nil:
		return m.Untyped.GetValue(), true
	}
	return 0, false
}

// Value combines the samples of the gauge, counter or untyped family name
// whose labels match want. ok is false when the family is absent, has no
// matching sample, or is of another type; NaN samples are skipped.
func (f Families) Value(name string, want map[string]string, agg Agg) (v float64, ok bool) {
	mf := f.Family(name)
	if mf == nil {
		return 0, false
	}
	n := 0
	var sum, maxV float64
	maxV = math.Inf(-1)
	for _, m := range mf.GetMetric() {
		if !Matches(m, want) {
			continue
		}
		x, isScalar := scalar(m)
		if !isScalar || math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		n++
		sum += x
		maxV = math.Max(maxV, x)
	}
	if n == 0 {
		return 0, false
	}
	switch agg {
	case Mean:
		return sum / float64(n), true
	case Max:
		return maxV, true
	default:
		return sum, true
	}
}

// Histogram merges the histogram series of family name whose labels match
// want into one raw cumulative histogram, bounds and sum multiplied by
// scale (the unit factor to seconds). Series are merged only when their
// finite bucket bounds are identical to the first matching series'; skipped
// counts the series left out. ok is false when there is no matching series.
func (f Families) Histogram(name string, want map[string]string, scale float64) (h *signal.Histogram, skipped int, ok bool) {
	mf := f.Family(name)
	if mf == nil || mf.GetType() != dto.MetricType_HISTOGRAM {
		return nil, 0, false
	}
	if scale == 0 {
		scale = 1
	}
	for _, m := range mf.GetMetric() {
		if !Matches(m, want) || m.Histogram == nil {
			continue
		}
		hist := m.GetHistogram()
		bounds := finiteBuckets(hist)
		if h == nil {
			h = &signal.Histogram{Buckets: make([]signal.Bucket, len(bounds))}
			for i, b := range bounds {
				h.Buckets[i] = signal.Bucket{UpperBound: b.GetUpperBound() * scale, Count: float64(b.GetCumulativeCount())}
				if b.CumulativeCountFloat != nil {
					h.Buckets[i].Count = b.GetCumulativeCountFloat()
				}
			}
			h.Sum = hist.GetSampleSum() * scale
			h.Count = histCount(hist)
			continue
		}
		if !sameBounds(h.Buckets, bounds, scale) {
			skipped++
			continue
		}
		for i, b := range bounds {
			c := float64(b.GetCumulativeCount())
			if b.CumulativeCountFloat != nil {
				c = b.GetCumulativeCountFloat()
			}
			h.Buckets[i].Count += c
		}
		h.Sum += hist.GetSampleSum() * scale
		h.Count += histCount(hist)
	}
	if h == nil {
		return nil, skipped, false
	}
	if math.IsNaN(h.Sum) || math.IsInf(h.Sum, 0) {
		h.Sum = 0
	}
	return h, skipped, true
}

func histCount(h *dto.Histogram) float64 {
	if h.SampleCountFloat != nil {
		return h.GetSampleCountFloat()
	}
	return float64(h.GetSampleCount())
}

// finiteBuckets returns the buckets without +Inf (its count is the
// histogram count) and without non-increasing or NaN bounds.
func finiteBuckets(h *dto.Histogram) []*dto.Bucket {
	out := make([]*dto.Bucket, 0, len(h.GetBucket()))
	prev := math.Inf(-1)
	for _, b := range h.GetBucket() {
		ub := b.GetUpperBound()
		if math.IsNaN(ub) || math.IsInf(ub, 0) || ub <= prev {
			continue
		}
		prev = ub
		out = append(out, b)
	}
	return out
}

func sameBounds(have []signal.Bucket, bounds []*dto.Bucket, scale float64) bool {
	if len(have) != len(bounds) {
		return false
	}
	for i, b := range bounds {
		if have[i].UpperBound != b.GetUpperBound()*scale {
			return false
		}
	}
	return true
}
