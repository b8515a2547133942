package source

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/inferscale/inferscale/shared/preset"
)

// PrometheusOptions configure the connection to Prometheus.
type PrometheusOptions struct {
	URL string
	// BearerTokenFile is read once per process (each CPA tick is a new process).
	BearerTokenFile    string
	CAFile             string
	InsecureSkipVerify bool
	// Timeout bounds each query: connecting, waiting for the answer and
	// reading all of it (0: only the caller's context).
	Timeout time.Duration
	// MaxResponseBytes bounds each query's answer; a longer one is an
	// error (0: DefaultPrometheusMaxResponseBytes).
	MaxResponseBytes int64
}

// DefaultPrometheusMaxResponseBytes bounds one PromQL answer. The source's
// queries aggregate to one series each (the series listing to one per
// family), so a real answer is a few KiB; 4 MiB leaves room for Prometheus
// warnings and info annotations.
const DefaultPrometheusMaxResponseBytes = 4 << 20

// NewPrometheusAPI builds a PromQL client with the given auth and TLS. It
// follows no redirect: a redirected POST loses its query (and a bearer
// token must not travel to another host), so a redirect is an error that
// names where Prometheus pointed.
func NewPrometheusAPI(o PrometheusOptions) (promv1.API, error) {
	base, err := url.Parse(o.URL)
	if err != nil || base.Host == "" {
		return nil, fmt.Errorf("prometheus URL %q: want scheme://host[:port][/path]", o.URL)
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.InsecureSkipVerify} //nolint:gosec // opt-in by config
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("prometheus CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("prometheus CA file %s holds no certificate", o.CAFile)
		}
		tlsCfg.RootCAs = pool
	}
	maxBytes := o.MaxResponseBytes
	if maxBytes <= 0 {
		maxBytes = DefaultPrometheusMaxResponseBytes
	}
	var rt http.RoundTripper = &http.Transport{TLSClientConfig: tlsCfg, Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: o.Timeout}
	rt = capBody{max: maxBytes, next: rt}
	if o.BearerTokenFile != "" {
		tok, err := os.ReadFile(o.BearerTokenFile)
		if err != nil {
			return nil, fmt.Errorf("prometheus bearer token file: %w", err)
		}
		rt = bearer{token: strings.TrimSpace(string(tok)), host: base.Host, next: rt}
	}
	hc := &http.Client{Transport: rt, Timeout: o.Timeout, CheckRedirect: refuseRedirect}
	c, err := api.NewClient(api.Config{Address: o.URL, Client: hc})
	if err != nil {
		return nil, fmt.Errorf("prometheus client for %q: %w", o.URL, err)
	}
	return promv1.NewAPI(c), nil
}

func refuseRedirect(req *http.Request, via []*http.Request) error {
	return fmt.Errorf("prometheus redirected %s to %s: not followed (the query and the bearer token would not survive it); set prometheusURL to the address that answers",
		via[0].URL.Redacted(), req.URL.Redacted())
}

// bearer adds the token to requests for the configured Prometheus host
// only.
type bearer struct {
	token, host string
	next        http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != b.host {
		return b.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// capBody fails an answer longer than max bytes instead of reading it
// whole.
type capBody struct {
	max  int64
	next http.RoundTripper
}

func (c capBody) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > c.max {
		resp.Body.Close()
		return nil, tooLarge(c.max)
	}
	resp.Body = &cappedReader{rc: resp.Body, left: c.max, max: c.max}
	return resp, nil
}

func tooLarge(max int64) error {
	return fmt.Errorf("prometheus answer exceeds %d bytes (prometheusMaxResponseBytes)", max)
}

type cappedReader struct {
	rc        io.ReadCloser
	left, max int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// At the cap: the answer is fine only if it ends here.
		var probe [1]byte
		n, err := c.rc.Read(probe[:])
		if n > 0 {
			return 0, tooLarge(c.max)
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.rc.Read(p)
	c.left -= int64(n)
	return n, err
}

func (c *cappedReader) Close() error { return c.rc.Close() }

// Querier is the part of the PromQL API the Prometheus source uses.
type Querier interface {
	Query(ctx context.Context, query string, ts time.Time, opts ...promv1.Option) (model.Value, promv1.Warnings, promv1.Infos, error)
}

// Prometheus reads fleet aggregates with PromQL built from a preset's
// mapping over a label-matcher set (the target's namespace and pods).
type Prometheus struct {
	API Querier
	// Preset is the mapping; nil detects among Presets from the series present.
	Preset  *preset.Preset
	Presets []*preset.Preset
	// Matchers is a PromQL matcher list without braces, e.g.
	// namespace="inference",pod=~"llm-.*".
	Matchers string
	Window   time.Duration
	// Quantiles are the latency quantiles to report (nil: DefaultQuantiles);
	// the ones the fleet view reads (ViewQuantiles) are always queried.
	Quantiles []float64
}

// DefaultQuantiles is the default of prometheusQuantiles.
func DefaultQuantiles() []float64 { return []float64{0.5, 0.9, 0.95, 0.99} }

// ViewQuantiles are the quantiles the decide stage reads from a fleet
// report: p95 for the latency rule, p99 for the baseline alert.
func ViewQuantiles() []float64 { return []float64{0.95, 0.99} }

// quantiles is the configured list (or the default) plus ViewQuantiles,
// sorted, without duplicates.
func (p *Prometheus) quantiles() []float64 {
	qs := p.Quantiles
	if len(qs) == 0 {
		qs = DefaultQuantiles()
	}
	out := append(append([]float64{}, qs...), ViewQuantiles()...)
	sort.Float64s(out)
	return slices.Compact(out)
}

const matcherSyntax = `^\s*[a-zA-Z_][a-zA-Z0-9_]*\s*(=|!=|=~|!~)\s*"(?:[^"\\]|\\.)*"\s*(,\s*[a-zA-Z_][a-zA-Z0-9_]*\s*(=|!=|=~|!~)\s*"(?:[^"\\]|\\.)*"\s*)*,?\s*$`

// ValidateMatchers checks a matcher list (label op "value", ...).
func ValidateMatchers(m string) error {
	if !regexp.MustCompile(matcherSyntax).MatchString(m) {
		return fmt.Errorf("prometheus matchers %q: want label=\"value\" pairs separated by commas (ops = != =~ !~)", m)
	}
	return nil
}

// RenderMatchers fills {namespace} and {name} in a matcher template with
// PromQL-escaped values.
func RenderMatchers(tmpl, namespace, name string) string {
	esc := func(s string) string { q := strconv.Quote(s); return q[1 : len(q)-1] }
	return strings.NewReplacer("{namespace}", esc(namespace), "{name}", esc(regexp.QuoteMeta(name))).Replace(tmpl)
}

// anyMapped reports whether any family pr maps a signal to has series.
func anyMapped(pr *preset.Preset, present map[string]bool) bool {
	for _, r := range pr.Signals {
		for _, n := range r.Families {
			if present[n] {
				return true
			}
		}
	}
	return false
}

const maxConcurrentQueries = 8

// queryJob is one PromQL query of a fleet round and where its value goes.
type queryJob struct {
	label, q string
	scale    float64
	set      func(float64)
	val      *float64
	err      error
}

// run executes the jobs concurrently, filling val and err.
func (p *Prometheus) run(ctx context.Context, now time.Time, jobs []queryJob) {
	sem := make(chan struct{}, maxConcurrentQueries)
	var wg sync.WaitGroup
	for i := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			jobs[i].val, jobs[i].err = p.scalar(ctx, jobs[i].q, now)
		}()
	}
	wg.Wait()
}

// presentFamilies asks which mapped families have series under the matchers.
func (p *Prometheus) presentFamilies(ctx context.Context, now time.Time) (map[string]bool, error) {
	names := map[string]bool{}
	add := func(pr *preset.Preset) {
		for _, r := range pr.Signals {
			for _, n := range r.Families {
				names[n] = true
			}
		}
		for _, n := range pr.Detect {
			names[n] = true
		}
	}
	if p.Preset != nil {
		add(p.Preset)
	} else {
		for _, pr := range p.Presets {
			add(pr)
		}
	}
	alts := make([]string, 0, len(names))
	for n := range names {
		alts = append(alts, regexp.QuoteMeta(n), regexp.QuoteMeta(n)+"_bucket")
	}
	sort.Strings(alts)
	re := strconv.Quote(strings.Join(alts, "|"))
	m := strings.TrimSuffix(strings.TrimSpace(p.Matchers), ",")
	if m != "" {
		m = "," + m
	}
	q := "count by (__name__) ({__name__=~" + re + m + "})"
	v, _, _, err := p.API.Query(ctx, q, now)
	if err != nil {
		return nil, fmt.Errorf("listing series: %w", err)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("listing series: unexpected result type %s", v.Type())
	}
	present := map[string]bool{}
	for _, s := range vec {
		n := string(s.Metric[model.MetricNameLabel])
		present[strings.TrimSuffix(n, "_bucket")] = true
	}
	return present, nil
}

// scalar runs q and returns its single value; nil when the result is empty
// or NaN (no data in the window).
func (p *Prometheus) scalar(ctx context.Context, q string, now time.Time) (*float64, error) {
	v, _, _, err := p.API.Query(ctx, q, now)
	if err != nil {
		return nil, err
	}
	var x float64
	switch t := v.(type) {
	case model.Vector:
		if len(t) == 0 {
			return nil, nil
		}
		if len(t) > 1 {
			return nil, errors.New("query returned more than one series")
		}
		x = float64(t[0].Value)
	case *model.Scalar:
		x = float64(t.Value)
	default:
		return nil, fmt.Errorf("unexpected result type %s", v.Type())
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil, nil
	}
	if x < 0 && x > -1e-9 {
		x = 0
	}
	return &x, nil
}
