// Package vllmexpo is the one place that knows how a vLLM V1 server writes
// its /metrics page: the histogram bucket bounds of vllm/v1/metrics/
// loggers.py and a Prometheus text-format writer with vLLM's label sets
// (model_name, engine) and number style. The simulator's pods, the
// gather stage's test pages (shared/expo/expotest) and the end-to-end
// test's emulated servers all write through it. Standard library and
// shared/signal only, so anything may import it.
package vllmexpo

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/inferscale/inferscale/shared/signal"
)

// TTFTBounds are the bucket bounds of vllm:time_to_first_token_seconds.
func TTFTBounds() []float64 {
	return []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
}

// LatencyBounds are the bucket bounds of the request-latency histograms:
// vllm:e2e_request_latency_seconds, request_queue_time_seconds,
// request_prefill/decode/inference_time_seconds.
func LatencyBounds() []float64 {
	return []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
}

// InterTokenBounds are the bucket bounds of
// vllm:inter_token_latency_seconds (and the per-request TPOT histogram).
func InterTokenBounds() []float64 {
	return []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
}

// TokenBounds are the 1-2-5 bucket bounds of the per-request token
// histograms (vllm:request_prompt_tokens, request_generation_tokens, ...),
// up to maxModelLen.
func TokenBounds(maxModelLen int) []float64 {
	var out []float64
	for mag := 1.0; ; mag *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if mag*m > float64(maxModelLen) {
				return out
			}
			out = append(out, mag*m)
		}
	}
}

// Page builds one /metrics body. Families are written in the order they
// are added, every vLLM family with one series per engine.
type Page struct {
	// Model is the model_name label.
	Model string
	// Engines is the number of data-parallel engines (label engine="0",
	// "1", ...); 0 means 1.
	Engines int
	// Sorted writes labels in alphabetical order (engine, le, model_name),
	// as prometheus_client does in multiprocess mode; otherwise in vLLM's
	// declaration order (model_name, engine, then le).
	Sorted bool
	// Created, when > 0, follows every counter and histogram family with
	// prometheus_client's "_created" gauge family holding this value.
	Created float64

	b strings.Builder
}

// Series is one sample of a family: extra labels (`k="v",...`, without
// the vLLM ones) and a value.
type Series struct {
	Labels string
	Value  float64
}

func (p *Page) engines() int { return max(p.Engines, 1) }

// labels is the label set of engine e with extra pairs and, when le is not
// empty, a bucket bound.
func (p *Page) labels(e int, extra, le string) string {
	model := `model_name="` + escape(p.Model) + `"`
	engine := `engine="` + strconv.Itoa(e) + `"`
	var parts []string
	if extra != "" {
		parts = append(parts, extra)
	}
	if p.Sorted {
		parts = append(parts, engine)
		if le != "" {
			parts = append(parts, `le="`+le+`"`)
		}
		return strings.Join(append(parts, model), ",")
	}
	parts = append(parts, model, engine)
	if le != "" {
		parts = append(parts, `le="`+le+`"`)
	}
	return strings.Join(parts, ",")
}

func (p *Page) header(name, help, typ string) {
	fmt.Fprintf(&p.b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

// Gauge adds a gauge family with value v on every engine.
func (p *Page) Gauge(name, help string, v float64) {
	p.header(name, help, "gauge")
	for e := 0; e < p.engines(); e++ {
		fmt.Fprintf(&p.b, "%s{%s} %s\n", name, p.labels(e, "", ""), Num(v))
	}
}

// Counter adds a counter family (name ends in _total) with value v on
// every engine.
func (p *Page) Counter(name, help string, v float64) {
	p.CounterSeries(name, help, Series{Value: v})
}

// CounterSeries adds a counter family with one series per extra label set
// (request_success_total by finished_reason), each on every engine.
func (p *Page) CounterSeries(name, help string, series ...Series) {
	p.header(name, help, "counter")
	for _, s := range series {
		for e := 0; e < p.engines(); e++ {
			fmt.Fprintf(&p.b, "%s{%s} %s\n", name, p.labels(e, s.Labels, ""), Num(s.Value))
		}
	}
	if p.Created > 0 {
		base := strings.TrimSuffix(name, "_total") + "_created"
		p.header(base, help, "gauge")
		for _, s := range series {
			for e := 0; e < p.engines(); e++ {
				fmt.Fprintf(&p.b, "%s{%s} %s\n", base, p.labels(e, s.Labels, ""), Num(p.Created))
			}
		}
	}
}

// Histogram adds a histogram family: h's cumulative buckets, +Inf (= its
// count), _sum and _count, on every engine. A nil h adds nothing.
func (p *Page) Histogram(name, help string, h *signal.Histogram) {
	if h == nil {
		return
	}
	p.header(name, help, "histogram")
	for e := 0; e < p.engines(); e++ {
		for _, b := range h.Buckets {
			fmt.Fprintf(&p.b, "%s_bucket{%s} %s\n", name, p.labels(e, "", Num(b.UpperBound)), Num(b.Count))
		}
		fmt.Fprintf(&p.b, "%s_bucket{%s} %s\n", name, p.labels(e, "", "+Inf"), Num(h.Count))
		fmt.Fprintf(&p.b, "%s_sum{%s} %s\n%s_count{%s} %s\n", name, p.labels(e, "", ""), Num(h.Sum), name, p.labels(e, "", ""), Num(h.Count))
	}
	if p.Created > 0 {
		p.header(name+"_created", help, "gauge")
		for e := 0; e < p.engines(); e++ {
			fmt.Fprintf(&p.b, "%s_created{%s} %s\n", name, p.labels(e, "", ""), Num(p.Created))
		}
	}
}

// Family adds a family that is not vLLM's (process stats, a DCGM
// exporter's gauge on the same endpoint): its samples carry exactly the
// labels given.
func (p *Page) Family(name, help, typ string, series ...Series) {
	p.header(name, help, typ)
	for _, s := range series {
		if s.Labels == "" {
			fmt.Fprintf(&p.b, "%s %s\n", name, Num(s.Value))
			continue
		}
		fmt.Fprintf(&p.b, "%s{%s} %s\n", name, s.Labels, Num(s.Value))
	}
}

// String is the page.
func (p *Page) String() string { return p.b.String() }

// WriteTo writes the page.
func (p *Page) WriteTo(w io.Writer) (int64, error) {
	n, err := io.WriteString(w, p.b.String())
	if err != nil {
		return int64(n), fmt.Errorf("writing metrics: %w", err)
	}
	return int64(n), nil
}

// Num writes a sample value as prometheus_client does: integral values
// with ".0" ("12345678.0"), others exact and shortest ("0.25", "2.5e-05").
func Num(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	case v == math.Trunc(v) && math.Abs(v) < 1e16:
		return strconv.FormatFloat(v, 'f', -1, 64) + ".0"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
