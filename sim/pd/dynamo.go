package pd

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/sim/scaler"
)

// DynamoRole is the pool a Dynamo planner sizes.
type DynamoRole string

// The two roles of a disaggregated Dynamo graph.
const (
	DynamoPrefill DynamoRole = "prefill"
	DynamoDecode  DynamoRole = "decode"
)

// DefaultDynamoInterval is the SLA planner's adjustment_interval default.
const DefaultDynamoInterval = 180 * time.Second

// dynamoScrape is how often the planner samples the pods' counters
// between adjustments (the Prometheus range its queries cover).
const dynamoScrape = 15 * time.Second

// DynamoConfig is one pool's planner.
type DynamoConfig struct {
	Role DynamoRole
	// Interval is adjustment_interval: one sizing per interval, on the
	// load observed over the last one.
	Interval time.Duration
	// ITL is the decode pool's inter-token objective, seconds (the
	// planner's --itl); the prefill pool's TTFT objective only chooses
	// the profiled configuration, and one GPU per pod leaves no choice.
	ITL float64
	// Correction applies the planner's correction factors (its default;
	// --no-correction drops them): the prefill load × min(1, observed TTFT
	// / profiled TTFT at the observed ISL), and the ITL objective ÷
	// (observed ITL / profiled ITL at the observed concurrency and
	// context).
	Correction bool
	// Profile is the offline profile (ProfileDynamo).
	Profile *DynamoProfile
}

// Dynamo is NVIDIA Dynamo's SLA planner (v0.x planner_core, throughput
// scaling) for one pool of a P/D pair. Every Interval it takes the last
// interval's requests, mean ISL and mean OSL, predicts the next
// interval's with the constant predictor (the next value is the last
// one; Dynamo's default is ARIMA, its simplest option is this), and sets
//
//	prefill: ⌈num_req·ISL/interval · min(1, p_corr) / prefill_thpt_per_gpu(ISL)⌉
//	decode:  ⌈num_req·OSL/interval / best_decode_thpt_per_gpu(ITL/d_corr, ISL+OSL/2)⌉
//
// at least max(1, MinReplicas) (min_endpoint) and at most MaxReplicas,
// one GPU per pod. The per-GPU throughputs come from the offline profile
// only. Between adjustments it keeps spec.replicas. It reads what the
// pods export, lagged: num_req is the requests that arrived (those
// finished plus the growth of those waiting or running), ISL and OSL the
// means of the finished requests' prompt and generation length
// histograms, TTFT, ITL and request duration the means of their
// histograms, all over the interval. An interval with no finished
// request skips the adjustment, as Dynamo skips one on NaN metrics.
//
// Left out: the GPU budget (max_gpu_budget scales both pools down
// together; each pool replays alone here, within -max), and the
// non-draining removal of workers (the simulated pods drain as every
// policy's do).
type Dynamo struct {
	cfg  DynamoConfig
	prev map[string]dynamoTotals
	win  dynamoTotals
	// inflight is the waiting + running requests when the window opened.
	inflight float64
	last     time.Time
}

// dynamoTotals are the cumulative readings of a pod (or their increases
// over a window).
type dynamoTotals struct {
	requests                    float64
	prompt, gen, ttft, itl, e2e sumCount
}

type sumCount struct{ sum, count float64 }

// Check reports what is wrong with cfg's parameters, the profile apart:
// a command line can be checked before the profile is measured.
func (cfg DynamoConfig) Check() error {
	switch {
	case cfg.Role != DynamoPrefill && cfg.Role != DynamoDecode:
		return fmt.Errorf("dynamo: role %q, want prefill or decode", cfg.Role)
	case cfg.Interval < dynamoScrape:
		return fmt.Errorf("dynamo: interval %s, want at least %s", cfg.Interval, dynamoScrape)
	case cfg.Role == DynamoDecode && !(cfg.ITL > 0 && !math.IsInf(cfg.ITL, 0)):
		return fmt.Errorf("dynamo: ITL objective %g s, want a finite number > 0", cfg.ITL)
	}
	return nil
}

// NewDynamo checks cfg, its profile included.
func NewDynamo(cfg DynamoConfig) (*Dynamo, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if cfg.Profile == nil || len(cfg.Profile.ISL) == 0 || len(cfg.Profile.Context) == 0 {
		return nil, errors.New("dynamo: no profile")
	}
	return &Dynamo{cfg: cfg, prev: map[string]dynamoTotals{}}, nil
}

// Name implements scaler.Autoscaler.
func (d *Dynamo) Name() string {
	return fmt.Sprintf("dynamo:interval=%gs,role=%s", d.cfg.Interval.Seconds(), d.cfg.Role)
}

// Period implements scaler.Autoscaler: the sampling tick.
func (d *Dynamo) Period() time.Duration { return dynamoScrape }

// Recommend implements scaler.Autoscaler.
func (d *Dynamo) Recommend(obs scaler.Observation) (int, error) {
	d.sample(obs)
	keep := clampReplicas(obs.SpecReplicas, obs)
	if d.last.IsZero() {
		d.last = obs.Now
		return keep, nil
	}
	if obs.Now.Sub(d.last) < d.cfg.Interval {
		return keep, nil
	}
	load, ok := d.measure(obs)
	if !ok {
		return keep, nil
	}
	return clampReplicas(d.size(load, obs.Ready()), obs), nil
}

func clampReplicas(n int, obs scaler.Observation) int {
	return min(max(n, 1, obs.MinReplicas), max(obs.MaxReplicas, 1))
}

// sample adds every pod's increases since the last tick to the window.
func (d *Dynamo) sample(obs scaler.Observation) {
	seen := make(map[string]dynamoTotals, len(obs.Pods))
	for _, p := range obs.Pods {
		if p.Metrics == nil || p.Metrics.Error != "" {
			continue
		}
		cur := totalsOf(p.Metrics)
		d.win.add(cur, d.prev[p.Name])
		seen[p.Name] = cur
	}
	d.prev = seen
}

// measure is the window's load; it opens the next window.
func (d *Dynamo) measure(obs scaler.Observation) (dynamoLoad, bool) {
	w, now := d.win, inflight(obs)
	d.win, d.last = dynamoTotals{}, obs.Now
	arrived := math.Max(0, w.requests+now-d.inflight)
	d.inflight = now
	if w.prompt.count == 0 || w.gen.count == 0 {
		return dynamoLoad{}, false
	}
	return dynamoLoad{numReq: arrived, isl: w.prompt.mean(), osl: w.gen.mean(),
		ttft: w.ttft.mean(), itl: w.itl.mean(), dur: w.e2e.mean()}, true
}

// dynamoLoad is one interval's observed (and, with the constant
// predictor, the next interval's predicted) load.
type dynamoLoad struct {
	numReq, isl, osl float64
	ttft, itl, dur   float64 // NaN where nothing was observed
}

// size is the planner's replica count for load with ready pods serving.
func (d *Dynamo) size(l dynamoLoad, ready int) int {
	iv, prof := d.cfg.Interval.Seconds(), d.cfg.Profile
	if d.cfg.Role == DynamoPrefill {
		corr := 1.0
		if d.cfg.Correction && l.ttft > 0 {
			corr = math.Min(1, l.ttft/prof.PrefillTTFT(l.isl))
		}
		return int(math.Ceil(l.numReq * l.isl / iv * corr / prof.PrefillThroughput(l.isl)))
	}
	itl, ctx := d.cfg.ITL, l.isl+l.osl/2
	if d.cfg.Correction && l.itl > 0 && l.dur > 0 {
		conc := l.numReq / float64(max(ready, 1)) * l.dur / iv
		if corr := l.itl / prof.DecodeITL(conc, ctx); corr > 0 && !math.IsInf(corr, 0) {
			itl /= corr
		}
	}
	return int(math.Ceil(l.numReq * l.osl / iv / prof.BestDecodeThroughput(itl, ctx)))
}

func totalsOf(m *signal.Pod) dynamoTotals {
	v := func(p *float64) float64 {
		if p == nil {
			return 0
		}
		return *p
	}
	h := func(x *signal.Histogram) sumCount {
		if x == nil {
			return sumCount{}
		}
		return sumCount{x.Sum, x.Count}
	}
	return dynamoTotals{requests: v(m.RequestsTotal), prompt: h(m.PromptLength), gen: h(m.GenerationLength),
		ttft: h(m.TTFT), itl: h(m.InterToken), e2e: h(m.E2E)}
}

// add adds the increase from prev to cur (cur itself after a reset).
func (w *dynamoTotals) add(cur, prev dynamoTotals) {
	inc := func(c, p float64) float64 {
		if c < p {
			return c
		}
		return c - p
	}
	sc := func(c, p sumCount) sumCount {
		if c.count < p.count {
			return c
		}
		return sumCount{c.sum - p.sum, c.count - p.count}
	}
	w.requests += inc(cur.requests, prev.requests)
	for _, f := range []struct{ w, c, p *sumCount }{
		{&w.prompt, &cur.prompt, &prev.prompt}, {&w.gen, &cur.gen, &prev.gen}, {&w.ttft, &cur.ttft, &prev.ttft},
		{&w.itl, &cur.itl, &prev.itl}, {&w.e2e, &cur.e2e, &prev.e2e},
	} {
		d := sc(*f.c, *f.p)
		f.w.sum += d.sum
		f.w.count += d.count
	}
}

func (s sumCount) mean() float64 {
	if s.count == 0 {
		return math.NaN()
	}
	return s.sum / s.count
}

// inflight is the requests waiting or running on the pods.
func inflight(obs scaler.Observation) float64 {
	n := 0.0
	for _, p := range obs.Pods {
		if p.Metrics == nil || p.Metrics.Error != "" {
			continue
		}
		for _, g := range []*float64{p.Metrics.Waiting, p.Metrics.Running} {
			if g != nil {
				n += *g
			}
		}
	}
	return n
}
