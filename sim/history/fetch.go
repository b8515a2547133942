// Package history rebuilds a replayable workload from the metrics a
// Prometheus holds about a vLLM fleet: per window of the recorded period,
// the request rate (from vllm:request_success_total) and the prompt and
// output length distributions (from the vllm:request_prompt_tokens and
// vllm:request_generation_tokens histograms), read with PromQL range
// queries. The simulator replays the rebuilt requests to tune inferscale
// for the user's own traffic (simulate history).
package history

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/inferscale/inferscale/shared/source"
)

// Limits of one history.
const (
	// MaxWindows is Prometheus's own limit of points per series in a range
	// query.
	MaxWindows = 11000
	// MinStep keeps several scrapes in every window (vLLM is typically
	// scraped every 15–30 s).
	MinStep = 30 * time.Second
	// DefaultTimeout and DefaultMaxResponseBytes bound each query.
	DefaultTimeout          = 60 * time.Second
	DefaultMaxResponseBytes = 64 << 20
)

// The vLLM series read.
const (
	RequestsMetric = "vllm:request_success_total"
	RunningMetric  = "vllm:num_requests_running"
	WaitingMetric  = "vllm:num_requests_waiting"
	PromptMetric   = "vllm:request_prompt_tokens"
	OutputMetric   = "vllm:request_generation_tokens"
)

// Options say where and what to read.
type Options struct {
	// URL of the Prometheus HTTP API (http://prometheus:9090).
	URL string
	// Selector is the PromQL label matchers of the fleet's series, in
	// braces: {namespace="inference",job="vllm"} ("" or {}: every series).
	Selector string
	// Start and End bound the period; Step is the window.
	Start, End time.Time
	Step       time.Duration
	// Timeout and MaxResponseBytes bound each query (0: the defaults).
	Timeout          time.Duration
	MaxResponseBytes int64
	// BearerTokenFile authenticates to Prometheus (optional).
	BearerTokenFile string
}

// Windows is how many windows the period holds.
func (o Options) Windows() int {
	if o.Step <= 0 {
		return 0
	}
	return int(o.End.Sub(o.Start) / o.Step)
}

// Validate checks the options before any query.
func (o *Options) Validate() error {
	var errs []error
	if o.URL == "" {
		errs = append(errs, errors.New("no Prometheus URL"))
	}
	sel := strings.TrimSpace(o.Selector)
	if sel == "" || strings.ReplaceAll(sel, " ", "") == "{}" {
		// Every series of every namespace: never what a fleet's history is.
		errs = append(errs, errors.New(`no selector: name the fleet's series, e.g. -selector '{namespace="inference",job="vllm"}' (an empty one would read every namespace)`))
	} else if !strings.HasPrefix(sel, "{") || !strings.HasSuffix(sel, "}") {
		errs = append(errs, fmt.Errorf("selector %q: want label matchers in braces, e.g. {namespace=\"inference\",job=\"vllm\"}", o.Selector))
	} else if inner := strings.TrimSpace(sel[1 : len(sel)-1]); inner != "" {
		if err := source.ValidateMatchers(inner); err != nil {
			errs = append(errs, fmt.Errorf("selector: %w", err))
		}
	}
	o.Selector = sel
	if o.Start.IsZero() || o.End.IsZero() || !o.End.After(o.Start) {
		errs = append(errs, fmt.Errorf("period %s .. %s: want a start before the end", o.Start.Format(time.RFC3339), o.End.Format(time.RFC3339)))
	}
	if o.Step < MinStep {
		errs = append(errs, fmt.Errorf("step %s: want at least %s (several scrapes per window)", o.Step, MinStep))
	} else if n := o.Windows(); n < 1 || n > MaxWindows {
		errs = append(errs, fmt.Errorf("the period holds %d windows of %s: want 1 to %d", n, o.Step, MaxWindows))
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxResponseBytes == 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if o.Timeout < 0 || o.MaxResponseBytes < 0 {
		errs = append(errs, errors.New("negative timeout or response bound"))
	}
	return errors.Join(errs...)
}

// RangeQuerier is the part of the PromQL API history uses.
type RangeQuerier interface {
	QueryRange(ctx context.Context, query string, r promv1.Range, opts ...promv1.Option) (model.Value, promv1.Warnings, promv1.Infos, error)
}

// NewAPI builds a client whose responses are bounded in time and size.
func NewAPI(o Options) (promv1.API, error) {
	var rt http.RoundTripper = &http.Transport{Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: o.Timeout}
	if o.BearerTokenFile != "" {
		tok, err := os.ReadFile(o.BearerTokenFile)
		if err != nil {
			return nil, fmt.Errorf("prometheus bearer token file: %w", err)
		}
		rt = bearer{token: strings.TrimSpace(string(tok)), next: rt}
	}
	rt = boundedBody{next: rt, max: o.MaxResponseBytes}
	hc := &http.Client{Transport: rt, CheckRedirect: refuseRedirect}
	c, err := api.NewClient(api.Config{Address: o.URL, Client: hc})
	if err != nil {
		return nil, fmt.Errorf("prometheus client for %q: %w", o.URL, err)
	}
	return promv1.NewAPI(c), nil
}

// refuseRedirect follows no redirect: the bearer token would go with the
// query to wherever the answer points.
func refuseRedirect(req *http.Request, via []*http.Request) error {
	return fmt.Errorf("prometheus redirected %s to %s: not followed (the bearer token goes to -prometheus only); give the address that answers",
		via[0].URL.Redacted(), req.URL.Redacted())
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// boundedBody fails a response body that grows past max bytes.
type boundedBody struct {
	next http.RoundTripper
	max  int64
}

func (b boundedBody) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{rc: resp.Body, left: b.max}
	return resp, nil
}

type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, errors.New("prometheus response too large: narrow the selector or the period, or widen the step")
	}
	if int64(len(p)) > l.left {
		p = p[:l.left+1] // one byte more tells a body of exactly max from a larger one
	}
	n, err := l.rc.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n, errors.New("prometheus response too large: narrow the selector or the period, or widen the step")
	}
	return n, err
}

func (l *limitedBody) Close() error { return l.rc.Close() }

// Recorded is what Prometheus holds about the period, per window.
type Recorded struct {
	Start time.Time
	Step  time.Duration
	// Finished is the requests finished in each window (the counter's
	// increase); InFlight the requests running or waiting at each window's
	// start and, last, at the end of the period.
	Finished, InFlight []float64
	// Arrivals is the requests that arrived in each window: those finished
	// plus the growth of those in flight (under overload, completions lag
	// arrivals by the whole queue).
	Arrivals []float64
	// Prompt and Output are the length histograms' increases.
	Prompt, Output Histograms
	// Empty counts windows without any sample (no traffic, or no data).
	Empty int
}

// Histograms are one histogram's increase per window.
type Histograms struct {
	// Bounds are the finite upper bounds, ascending.
	Bounds []float64
	// Counts per window: per bucket (not cumulative), the last for +Inf.
	Counts [][]float64
	// Sums per window (the _sum increase).
	Sums []float64
}

// Fetch reads the period from Prometheus: six range queries, each bounded
// by the options' timeout.
func Fetch(ctx context.Context, q RangeQuerier, o Options) (*Recorded, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	n := o.Windows()
	f := fetcher{q: q, o: o, n: n, rng: promv1.Range{Start: o.Start.Add(o.Step), End: o.Start.Add(time.Duration(n) * o.Step), Step: o.Step}}
	r := &Recorded{Start: o.Start, Step: o.Step}
	var err error
	seen := make([]bool, n)
	if r.Finished, err = f.scalar(ctx, fmt.Sprintf("sum(increase(%s%s[%s]))", RequestsMetric, o.Selector, promDuration(o.Step)), seen); err != nil {
		return nil, err
	}
	if r.InFlight, err = f.inFlight(ctx); err != nil {
		return nil, err
	}
	r.Arrivals = make([]float64, n)
	for k := range r.Arrivals {
		r.Arrivals[k] = math.Max(0, r.Finished[k]+r.InFlight[k+1]-r.InFlight[k])
	}
	if r.Prompt, err = f.histograms(ctx, PromptMetric, seen); err != nil {
		return nil, err
	}
	if r.Output, err = f.histograms(ctx, OutputMetric, seen); err != nil {
		return nil, err
	}
	for _, s := range seen {
		if !s {
			r.Empty++
		}
	}
	if r.Empty == n {
		return nil, fmt.Errorf("prometheus at %s holds no %s%s between %s and %s", o.URL, RequestsMetric, o.Selector,
			o.Start.Format(time.RFC3339), o.End.Format(time.RFC3339))
	}
	return r, nil
}

type fetcher struct {
	q   RangeQuerier
	o   Options
	n   int
	rng promv1.Range
}

func (f fetcher) matrix(ctx context.Context, query string) (model.Matrix, error) {
	ctx, cancel := context.WithTimeout(ctx, f.o.Timeout)
	defer cancel()
	v, _, _, err := f.q.QueryRange(ctx, query, f.rng, promv1.WithTimeout(f.o.Timeout))
	if err != nil {
		return nil, fmt.Errorf("prometheus query %s: %w", query, err)
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("prometheus query %s: got a %s, want a matrix", query, v.Type())
	}
	if err := checkValues(query, m); err != nil {
		return nil, err
	}
	return m, nil
}

// window maps a point to its window index (the point at Start+(k+1)·Step
// closes window k; the one at Start gives -1), or -2 outside.
func (f fetcher) window(ts model.Time) int {
	k := int(math.Round(float64(ts.Time().Sub(f.o.Start))/float64(f.o.Step))) - 1
	if k < -1 || k >= f.n {
		return -2
	}
	return k
}

// scalar reads a one-series query into per-window values (0 where absent).
func (f fetcher) scalar(ctx context.Context, query string, seen []bool) ([]float64, error) {
	m, err := f.matrix(ctx, query)
	if err != nil {
		return nil, err
	}
	if len(m) > 1 {
		return nil, fmt.Errorf("prometheus query %s: %d series, want one", query, len(m))
	}
	out := make([]float64, f.n)
	for _, s := range m {
		for _, p := range s.Values {
			if k := f.window(p.Timestamp); k >= 0 && finiteNonNeg(float64(p.Value)) {
				out[k] = float64(p.Value)
				if seen != nil {
					seen[k] = true
				}
			}
		}
	}
	return out, nil
}

// inFlight reads running+waiting at Start and at the end of every window.
func (f fetcher) inFlight(ctx context.Context) ([]float64, error) {
	sel := strings.TrimSpace(f.o.Selector[1 : len(f.o.Selector)-1])
	if sel != "" {
		sel = "," + sel
	}
	query := fmt.Sprintf(`sum({__name__=~"%s|%s"%s})`, regexp.QuoteMeta(RunningMetric), regexp.QuoteMeta(WaitingMetric), sel)
	g := f
	g.rng.Start = f.o.Start
	m, err := g.matrix(ctx, query)
	if err != nil {
		return nil, err
	}
	out := make([]float64, f.n+1)
	for _, s := range m {
		for _, p := range s.Values {
			if k := f.window(p.Timestamp) + 1; k >= 0 && k <= f.n && finiteNonNeg(float64(p.Value)) {
				out[k] = float64(p.Value)
			}
		}
	}
	return out, nil
}

// histograms reads one histogram's bucket and sum increases.
func (f fetcher) histograms(ctx context.Context, metric string, seen []bool) (Histograms, error) {
	query := fmt.Sprintf("sum by (le) (increase(%s_bucket%s[%s]))", metric, f.o.Selector, promDuration(f.o.Step))
	m, err := f.matrix(ctx, query)
	if err != nil {
		return Histograms{}, err
	}
	type series struct {
		le   float64
		vals []float64
	}
	var all []series
	hasInf := false
	for _, s := range m {
		le, err := strconv.ParseFloat(string(s.Metric["le"]), 64)
		if err != nil || math.IsNaN(le) {
			return Histograms{}, fmt.Errorf("prometheus query %s: bucket le=%q is not a number", query, s.Metric["le"])
		}
		hasInf = hasInf || math.IsInf(le, 1)
		vals := make([]float64, f.n)
		for _, p := range s.Values {
			if k := f.window(p.Timestamp); k >= 0 && finiteNonNeg(float64(p.Value)) {
				vals[k] = float64(p.Value)
				seen[k] = true
			}
		}
		all = append(all, series{le, vals})
	}
	if !hasInf {
		return Histograms{}, fmt.Errorf("prometheus holds no %s_bucket{le=\"+Inf\"} series for %s: is the selector right, and is vLLM exporting its length histograms?", metric, f.o.Selector)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].le < all[j].le })
	h := Histograms{Counts: make([][]float64, f.n)}
	for _, s := range all[:len(all)-1] {
		h.Bounds = append(h.Bounds, s.le)
	}
	for k := 0; k < f.n; k++ {
		counts := make([]float64, len(all))
		prev := 0.0
		for i, s := range all {
			c := math.Max(s.vals[k], prev) // cumulative counts never decrease
			counts[i] = c - prev
			prev = c
		}
		h.Counts[k] = counts
	}
	if h.Sums, err = f.scalar(ctx, fmt.Sprintf("sum(increase(%s_sum%s[%s]))", metric, f.o.Selector, promDuration(f.o.Step)), nil); err != nil {
		return Histograms{}, err
	}
	return h, nil
}

func finiteNonNeg(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 }

// MaxValue bounds every value read from Prometheus (requests, tokens,
// in flight, per window): a larger one (1e308 is a finite float) is no
// count a server made, and it overflows the rebuild's arithmetic.
const MaxValue = 1e15

// checkValues fails on a point beyond MaxValue: reading it as 0 would make
// a window quieter than it was, keeping it would make a count of 1e308.
func checkValues(query string, m model.Matrix) error {
	for _, s := range m {
		for _, p := range s.Values {
			if v := float64(p.Value); finiteNonNeg(v) && v > MaxValue {
				return fmt.Errorf("prometheus query %s: value %g at %s is beyond %g: not a count a server made", query, v, p.Timestamp.Time().UTC().Format(time.RFC3339), MaxValue)
			}
		}
	}
	return nil
}

// promDuration spells d as PromQL does (1m, 90s, 1h30m).
func promDuration(d time.Duration) string { return model.Duration(d).String() }

// Total is the histogram summed over all windows.
func (h Histograms) Total() (counts []float64, sum float64) {
	if len(h.Counts) == 0 {
		return nil, 0
	}
	counts = make([]float64, len(h.Counts[0]))
	for k, c := range h.Counts {
		for i, v := range c {
			counts[i] += v
		}
		sum += h.Sums[k]
	}
	return counts, sum
}
