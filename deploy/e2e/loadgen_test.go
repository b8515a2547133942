//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/inferscale/inferscale/internal/testenv"
	"github.com/inferscale/inferscale/sim/workload"
)

// The load generator of the closed-loop scenarios: an arrival process (phases of linearly changing rate, Poisson
// arrivals) replayed through a Service-like dispatcher over the Service's Ready endpoints, each request a streaming
// completion whose prompt and output lengths are drawn from a real trace, and TTFT, inter-token latency and errors
// measured by the client.

// phase is a stretch of the arrival process whose rate goes linearly from From to To requests per second.
type phase struct {
	Name     string
	Duration time.Duration
	From, To float64
}

// arrivalProcess is phases one after another.
type arrivalProcess []phase

func (a arrivalProcess) duration() time.Duration {
	var d time.Duration
	for _, p := range a {
		d += p.Duration
	}
	return d
}

// rate is the arrival rate at offset t.
func (a arrivalProcess) rate(t time.Duration) float64 {
	for _, p := range a {
		if t < p.Duration {
			return p.From + (p.To-p.From)*t.Seconds()/p.Duration.Seconds()
		}
		t -= p.Duration
	}
	return 0
}

// phaseAt names the phase at offset t.
func (a arrivalProcess) phaseAt(t time.Duration) string {
	for _, p := range a {
		if t < p.Duration {
			return p.Name
		}
		t -= p.Duration
	}
	return "after"
}

// arrivals draws a non-homogeneous Poisson process of the rate (thinning a process at the peak rate).
func (a arrivalProcess) arrivals(rng *rand.Rand) []time.Duration {
	peak := 0.0
	for _, p := range a {
		peak = math.Max(peak, math.Max(p.From, p.To))
	}
	var out []time.Duration
	end := a.duration().Seconds()
	for t := rng.ExpFloat64() / peak; t < end; t += rng.ExpFloat64() / peak {
		off := time.Duration(t * float64(time.Second))
		if rng.Float64()*peak < a.rate(off) {
			out = append(out, off)
		}
	}
	return out
}

// lengths is one request's prompt and output, in tokens.
type lengths struct{ In, Out int }

// maxOutputTokens caps the trace's output lengths: the emulator's drain on SIGTERM is fixed at 30 s (vLLM's is
// --shutdown-timeout), and 512 tokens at its slowest inter-token latency (12 ms x the load factor 2) take 12 s.
// The Azure code trace has 0.6 % of its requests above it (max 1,899).
const maxOutputTokens = 512

// traceLengths is the prompt and output lengths of the Azure LLM 2023 code trace (../shared/traces), every request
// of it, outputs capped at maxOutputTokens. The test skips without the trace, and fails without it under CI.
func traceLengths(t *testing.T) []lengths {
	t.Helper()
	path := filepath.Join(testenv.SharedDir(t, "traces/azure_llm_2023"), "traces", "azure_llm_2023", "AzureLLMInferenceTrace_code.csv")
	src, err := workload.OpenAzure(path)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := workload.All(src)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]lengths, 0, len(reqs))
	for _, r := range reqs {
		out = append(out, lengths{In: max(r.InputTokens, 1), Out: min(max(r.OutputTokens, 1), maxOutputTokens)})
	}
	return out
}

// endpoint is one Ready endpoint of the Service.
type endpoint struct {
	pod  string
	addr string // ip:port
}

// dispatcher spreads requests over the Ready endpoints of a Service as kube-proxy does (round-robin here; its
// iptables mode picks at random, evenly) or, with leastOutstanding, to the endpoint with the fewest requests open
// (what llm-d's endpoint picker does by queue depth). It follows the Service's EndpointSlices, as kube-proxy does:
// a terminating endpoint (a deleted pod) is not Ready and gets no new request.
type dispatcher struct {
	c                *cluster
	ns, svc          string
	leastOutstanding bool

	mu    sync.Mutex
	ready []endpoint
	next  int
	pods  map[string]*podTraffic // by pod name
	err   error
	stop  chan struct{}
	done  chan struct{}
}

// podTraffic is what the dispatcher saw of one pod.
type podTraffic struct {
	firstReady, lastReady time.Time
	requests, open        int
}

func newDispatcher(c *cluster, ns, svc string, leastOutstanding bool) *dispatcher {
	d := &dispatcher{c: c, ns: ns, svc: svc, leastOutstanding: leastOutstanding, pods: map[string]*podTraffic{},
		stop: make(chan struct{}), done: make(chan struct{})}
	d.refresh()
	go func() {
		defer close(d.done)
		for {
			select {
			case <-d.stop:
				return
			case <-time.After(200 * time.Millisecond):
				d.refresh()
			}
		}
	}()
	return d
}

func (d *dispatcher) close() {
	close(d.stop)
	<-d.done
}

// refresh reads the Service's EndpointSlices: every endpoint whose ready condition is true.
func (d *dispatcher) refresh() {
	var slices discoveryv1.EndpointSliceList
	sel := url.QueryEscape(discoveryv1.LabelServiceName + "=" + d.svc)
	if err := d.c.getJSON("/apis/discovery.k8s.io/v1/namespaces/"+d.ns+"/endpointslices?labelSelector="+sel, &slices); err != nil {
		d.mu.Lock()
		d.err = err
		d.mu.Unlock()
		return
	}
	var ready []endpoint
	for _, s := range slices.Items {
		port := 0
		for _, p := range s.Ports {
			if p.Port != nil && (p.Name == nil || *p.Name == "http") {
				port = int(*p.Port)
			}
		}
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || !*e.Conditions.Ready || len(e.Addresses) == 0 || e.TargetRef == nil || port == 0 {
				continue
			}
			ready = append(ready, endpoint{pod: e.TargetRef.Name, addr: net.JoinHostPort(e.Addresses[0], strconv.Itoa(port))})
		}
	}
	sort.Slice(ready, func(i, j int) bool { return ready[i].pod < ready[j].pod })
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ready, d.err = ready, nil
	for _, e := range ready {
		p := d.pods[e.pod]
		if p == nil {
			p = &podTraffic{firstReady: now}
			d.pods[e.pod] = p
		}
		p.lastReady = now
	}
}

// acquire picks an endpoint for a new request and counts it open there; it returns the endpoint and the requests
// already open on it. ok is false when no endpoint is Ready.
func (d *dispatcher) acquire() (endpoint, int, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.ready) == 0 {
		return endpoint{}, 0, false
	}
	var e endpoint
	if d.leastOutstanding {
		e = d.ready[0]
		for _, c := range d.ready[1:] {
			if d.pods[c.pod].open < d.pods[e.pod].open {
				e = c
			}
		}
	} else {
		e = d.ready[d.next%len(d.ready)]
		d.next++
	}
	p := d.pods[e.pod]
	open := p.open
	p.open++
	p.requests++
	return e, open, true
}

func (d *dispatcher) release(e endpoint) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pods[e.pod].open--
}

// traffic is a copy of what the dispatcher saw of each pod.
func (d *dispatcher) traffic() map[string]podTraffic {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string]podTraffic{}
	for name, p := range d.pods {
		out[name] = *p
	}
	return out
}

// result is one request as the client saw it.
type result struct {
	Sent  time.Time
	Phase string
	Pod   string
	// Open is the requests already open on the pod when this one was sent (its batch and queue, as the client
	// knows them).
	Open    int
	In, Out int
	Tokens  int // output tokens received
	TTFT    time.Duration
	ITL     time.Duration // mean gap between tokens after the first
	E2E     time.Duration
	Err     string // a failed, refused or truncated request
}

func (r result) ok() bool { return r.Err == "" }

// loadRun is one replay of an arrival process.
type loadRun struct {
	began   time.Time
	process arrivalProcess
	results []result
}

// replay sends one request per arrival (lengths drawn from the trace with rng) through d, streaming, and returns
// when every request has finished. model is the served model's name.
func replay(d *dispatcher, process arrivalProcess, trace []lengths, model string, seed uint64) *loadRun {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	arrivals := process.arrivals(rng)
	client := loadClient()
	defer client.CloseIdleConnections()
	run := &loadRun{began: time.Now(), process: process, results: make([]result, len(arrivals))}
	var wg sync.WaitGroup
	for i, at := range arrivals {
		l := trace[rng.IntN(len(trace))]
		time.Sleep(time.Until(run.began.Add(at)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := result{Sent: time.Now(), Phase: process.phaseAt(at), In: l.In, Out: l.Out}
			e, open, ok := d.acquire()
			if !ok {
				r.Err = "no Ready endpoint"
				run.results[i] = r
				return
			}
			defer d.release(e)
			r.Pod, r.Open = e.pod, open
			stream(client, e.addr, model, fmt.Sprintf("r%d", i), nil, &r)
			run.results[i] = r
		}()
	}
	wg.Wait()
	return run
}

// loadClient is the client's HTTP client: requests up to 2 minutes long, many connections per pod kept open.
func loadClient() *http.Client {
	return &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{
		MaxIdleConns: 1024, MaxIdleConnsPerHost: 256, IdleConnTimeout: 30 * time.Second,
		DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext}}
}

// stream sends one streaming completion (prompt of r.In tokens, exactly r.Out output tokens: max_tokens with
// ignore_eos, as vLLM's benchmark client asks), with the extra fields of the body (the P/D decode request's
// kv_transfer_params), and records what the client sees. A request fails when it cannot connect, is answered other
// than 200, or its stream ends before [DONE] or with fewer tokens than asked.
func stream(client *http.Client, addr, model, id string, extra map[string]any, r *result) {
	req := completion(model, id, r.In, r.Out)
	req["stream"], req["stream_options"] = true, map[string]bool{"include_usage": true}
	for k, v := range extra {
		req[k] = v
	}
	body, _ := json.Marshal(req)
	begin := time.Now()
	resp, err := client.Post("http://"+addr+"/v1/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		r.Err = "request: " + err.Error()
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		r.Err = fmt.Sprintf("answer %s: %s", resp.Status, b)
		return
	}
	var first, last time.Time
	done, usage := false, -1
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line, found := strings.CutPrefix(sc.Text(), "data: ")
		if !found {
			continue
		}
		if line == "[DONE]" {
			done = true
			break
		}
		var chunk struct {
			Choices []struct {
				Text string `json:"text"`
			} `json:"choices"`
			Usage *struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(line), &chunk); err != nil {
			r.Err = "bad chunk: " + err.Error()
			return
		}
		if chunk.Usage != nil {
			usage = chunk.Usage.CompletionTokens
		}
		if len(chunk.Choices) > 0 && chunk.Choices[0].Text != "" {
			now := time.Now()
			if first.IsZero() {
				first = now
			}
			last = now
			r.Tokens++
		}
	}
	r.E2E = time.Since(begin)
	if !first.IsZero() {
		r.TTFT = first.Sub(begin)
		if r.Tokens > 1 {
			r.ITL = last.Sub(first) / time.Duration(r.Tokens-1)
		}
	}
	switch {
	case sc.Err() != nil:
		r.Err = "stream cut: " + sc.Err().Error()
	case !done:
		r.Err = fmt.Sprintf("stream ended without [DONE] after %d chunks", r.Tokens)
	case first.IsZero():
		r.Err = "no token"
	case usage >= 0 && usage < r.Out:
		r.Err = fmt.Sprintf("truncated: %d of %d tokens", usage, r.Out)
	}
}

// completion is the body of a completion request of in prompt tokens and exactly out output tokens. The
// emulator's tokenizer (no model tokenizer: --force-dummy-tokenizer) counts a word as a token.
func completion(model, id string, in, out int) map[string]any {
	return map[string]any{"model": model, "prompt": id + strings.Repeat(" hi", in-1), "max_tokens": out, "ignore_eos": true}
}

// attainment is the share of requests sent in [from, to) whose TTFT met slo (a failed request misses), and how
// many there were.
func attainment(rs []result, from, to time.Time, slo time.Duration) (float64, int) {
	n, met := 0, 0
	for _, r := range rs {
		if r.Sent.Before(from) || !r.Sent.Before(to) {
			continue
		}
		n++
		if r.ok() && r.TTFT <= slo {
			met++
		}
	}
	if n == 0 {
		return math.NaN(), 0
	}
	return float64(met) / float64(n), n
}

// failures is the requests that failed, refused or were cut off.
func failures(rs []result) []result {
	var out []result
	for _, r := range rs {
		if !r.ok() {
			out = append(out, r)
		}
	}
	return out
}

// quantile is the q-quantile of durations (0 for none).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, max(0, int(math.Ceil(q*float64(len(s))))-1))]
}

// waitReady waits until the dispatcher sees n Ready endpoints.
func (d *dispatcher) waitReady(ctx context.Context, n int) error {
	for {
		d.mu.Lock()
		got := len(d.ready)
		d.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d endpoints Ready: %w", got, n, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
