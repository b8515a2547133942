//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/inferscale/inferscale/internal/vllmexpo"
	"github.com/inferscale/inferscale/shared/signal"
)

// Failure modes of the emulated servers.
const (
	failNone  = ""
	fail500   = "500"   // /metrics answers 500
	failClose = "close" // the connection is closed without an answer
	failDown  = "down"  // nothing listens: connections are refused
)

// load is what the test controls. Demand is the fleet's offered load in "pods at 100 %" units: requests
// arrive at podCapacityRPS*Demand per second and the Service spreads them evenly over the pods. Fail makes every
// /metrics scrape fail while the engines keep serving (a broken exporter or network path). Prefill is the time to
// first token of a request that does not wait (long prompts; 0: defaultPrefill). Busy, when set, names the pod IPs
// the requests go to (sessions pinned to some pods, say); the other pods get none and drain what they hold.
type load struct {
	Demand  float64
	Fail    string
	Prefill time.Duration
	Busy    []string
}

const defaultPrefill = 200 * time.Millisecond

// The emulated engine: a pod admits up to maxRunning requests into its batch, each takes requestSeconds, and it
// finishes at most podCapacityRPS per second; the rest waits. Queues and batches therefore build and drain over
// time as on a real server, and work is never teleported between pods when the fleet is resized.
const (
	podCapacityRPS = 4.0 // the test tells evaluate so through podCapacityRPS, as a user who measured their model would
	requestSeconds = 10.0
	maxRunning     = 64.0
	step           = 100 * time.Millisecond // integration step
)

// ttftBuckets are vLLM V1's time_to_first_token_seconds buckets.
var ttftBuckets = vllmexpo.TTFTBounds()

// vllmFleet runs one emulated vLLM /metrics server per pod IP.
type vllmFleet struct {
	port int
	mu   sync.Mutex
	load load
	pods map[string]*vllmPod // by pod IP
	// scrapes counts /metrics requests (any outcome), for the test to know ticks happened.
	scrapes int
}

type vllmPod struct {
	ip       string
	srv      *http.Server // nil while not listening
	last     time.Time    // state below is as of last
	running  float64
	waiting  float64
	buckets  []float64 // cumulative TTFT observations per ttftBuckets entry, +Inf last
	sum      float64
	finished float64
}

// advance runs the pod's engine from p.last to now with requests arriving at rate per second, each taking prefill
// seconds to its first token when it does not wait.
func (p *vllmPod) advance(now time.Time, rate, prefill float64) {
	for p.last.Before(now) {
		h := min(now.Sub(p.last), step)
		p.last = p.last.Add(h)
		dt := h.Seconds()
		p.waiting += rate * dt
		admit := min(p.waiting, maxRunning-p.running)
		p.waiting -= admit
		p.running += admit
		done := min(p.running, min(p.running/requestSeconds, podCapacityRPS)*dt)
		p.running -= done
		ttft := prefill + p.waiting/podCapacityRPS // prefill plus the time the queue ahead takes to drain
		for i, ub := range ttftBuckets {
			if ttft <= ub {
				p.buckets[i] += done
			}
		}
		p.buckets[len(ttftBuckets)] += done
		p.sum += done * ttft
		p.finished += done
	}
}

// advanceAll brings every pod up to now under the current load; callers hold f.mu.
func (f *vllmFleet) advanceAll(now time.Time) {
	busy := map[string]bool{}
	for _, ip := range f.load.Busy {
		if _, ok := f.pods[ip]; ok {
			busy[ip] = true
		}
	}
	serving := len(f.pods)
	if len(busy) > 0 {
		serving = len(busy)
	}
	rate := podCapacityRPS * f.load.Demand / float64(max(1, serving))
	prefill := defaultPrefill
	if f.load.Prefill > 0 {
		prefill = f.load.Prefill
	}
	for ip, p := range f.pods {
		r := rate
		if len(busy) > 0 && !busy[ip] {
			r = 0
		}
		p.advance(now, r, prefill.Seconds())
	}
}

func newVLLMFleet(port int) *vllmFleet {
	return &vllmFleet{port: port, pods: map[string]*vllmPod{}}
}

// set changes the load from now on; failDown closes every listener at once (sync reopens them on recovery).
func (f *vllmFleet) set(l load) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advanceAll(time.Now())
	f.load = l
	if l.Fail == failDown {
		for _, p := range f.pods {
			p.unlisten()
		}
	}
}

// totals is what the fleet's engines hold now: requests running and waiting.
func (f *vllmFleet) totals() (running, waiting float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advanceAll(time.Now())
	for _, p := range f.pods {
		running += p.running
		waiting += p.waiting
	}
	return running, waiting
}

func (f *vllmFleet) scrapeCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.scrapes
}

// sync starts an engine for every new IP and drops those whose pod is gone; each engine's /metrics listens on
// its pod's IP unless the servers are down.
func (f *vllmFleet) sync(ips []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advanceAll(time.Now()) // the old fleet size applied until now
	want := map[string]bool{}
	var errs []error
	for _, ip := range ips {
		want[ip] = true
		p, ok := f.pods[ip]
		if !ok {
			p = &vllmPod{ip: ip, last: time.Now(), buckets: make([]float64, len(ttftBuckets)+1)}
			f.pods[ip] = p
		}
		if f.load.Fail != failDown && p.srv == nil {
			if err := f.listen(p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for ip, p := range f.pods {
		if !want[ip] {
			p.unlisten()
			delete(f.pods, ip)
		}
	}
	return errors.Join(errs...)
}

func (f *vllmFleet) listen(p *vllmPod) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(p.ip, fmt.Sprint(f.port)))
	if err != nil {
		return fmt.Errorf("emulated vLLM on %s: %w", p.ip, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) { f.serve(p, w) })
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func(srv *http.Server) { _ = srv.Serve(ln) }(p.srv)
	return nil
}

func (p *vllmPod) unlisten() {
	if p.srv != nil {
		_ = p.srv.Close()
		p.srv = nil
	}
}

func (f *vllmFleet) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for ip, p := range f.pods {
		p.unlisten()
		delete(f.pods, ip)
	}
}

func (f *vllmFleet) serve(p *vllmPod, w http.ResponseWriter) {
	f.mu.Lock()
	f.scrapes++
	l := f.load
	f.advanceAll(time.Now())
	page := &vllmexpo.Page{Model: "Qwen/Qwen2.5-1.5B-Instruct", Sorted: true}
	page.Gauge("vllm:num_requests_running", "Number of requests in model execution batches.", math.Round(p.running))
	page.Gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", math.Round(p.waiting))
	page.Gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", math.Min(0.99, 0.01+0.85*p.running/40))
	ttft := &signal.Histogram{Sum: p.sum, Count: p.finished}
	for i, ub := range ttftBuckets {
		ttft.Buckets = append(ttft.Buckets, signal.Bucket{UpperBound: ub, Count: p.buckets[i]})
	}
	page.Histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", ttft)
	page.CounterSeries("vllm:request_success_total", "Count of successfully processed requests.", vllmexpo.Series{Labels: `finished_reason="stop"`, Value: p.finished})
	f.mu.Unlock()

	switch l.Fail {
	case fail500:
		http.Error(w, "engine dead", http.StatusInternalServerError)
		return
	case failClose:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		http.Error(w, "cannot hijack", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = page.WriteTo(w)
}
