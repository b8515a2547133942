package fleet

import (
	"math"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

// tgiPod is a pod that exports no TTFT (TGI): n requests so far, each
// 3 s end to end, 0.1 s of it queued, 101 output tokens at 20 ms a gap.
func tgiPod(at time.Time, n float64) signal.Pod {
	p := readyPod("a", at, 0, 4, n, nil)
	p.E2E = hist(0, 0, 0, 0, n, n)
	p.E2E.Sum = 3 * n
	p.QueueTime = hist(n, n, n, n, n, n)
	p.QueueTime.Sum = 0.1 * n
	p.InterToken = &signal.Histogram{Buckets: []signal.Bucket{{UpperBound: 0.025, Count: 100 * n}}, Sum: 0.02 * 100 * n, Count: 100 * n}
	p.GenerationLength = &signal.Histogram{Buckets: []signal.Bucket{{UpperBound: 128, Count: n}}, Sum: 101 * n, Count: n}
	p.PromptLength = &signal.Histogram{Buckets: []signal.Bucket{{UpperBound: 8192, Count: n}}, Sum: 6000 * n, Count: n}
	return p
}

// A server without a TTFT histogram (TGI) gives its prefill as the end to
// end latency less the queue time and the decode: 3 − 0.1 − 100 × 0.02 =
// 0.9 s, with the decode's share of noise. A decode that leaves nothing,
// a counter reset and a pod without generation lengths give no sample:
// never a made-up prefill.
func TestPrefillFromTheEndToEndLatencyWithoutTTFT(t *testing.T) {
	t1 := t0.Add(15 * time.Second)
	ps := twoServingTicks(t, tgiPod(t0, 100), tgiPod(t1, 130)).Service.Pods[0]
	if ps.PrefillSeries != SeriesE2E || ps.Prefills != 30 || math.Abs(ps.Prefill-0.9) > 1e-9 {
		t.Fatalf("prefill %g over %g requests from %q; want 0.9 s over 30 from %q", ps.Prefill, ps.Prefills, ps.PrefillSeries, SeriesE2E)
	}
	if math.Abs(ps.PrefillSpread-DecodeSpread*2) > 1e-9 || ps.PromptMean != 6000 {
		t.Errorf("spread %g, prompt %g; want %g (of a 2 s decode) and 6000", ps.PrefillSpread, ps.PromptMean, DecodeSpread*2)
	}
	none := map[string]func(p *signal.Pod){
		"a decode longer than the latency": func(p *signal.Pod) { p.E2E.Sum = 1 * p.E2E.Count },
		"a counter reset":                  func(p *signal.Pod) { *p.E2E = *hist(0, 0, 0, 0, 5, 5); p.E2E.Sum = 15 },
		"no generation lengths":            func(p *signal.Pod) { p.GenerationLength = nil },
		"no inter-token gaps":              func(p *signal.Pod) { p.InterToken = nil },
		"no queue time":                    func(p *signal.Pod) { p.QueueTime = nil },
		"no end-to-end latency":            func(p *signal.Pod) { p.E2E = nil },
	}
	for name, change := range none {
		second := tgiPod(t1, 130)
		change(&second)
		if ps := twoServingTicks(t, tgiPod(t0, 100), second).Service.Pods[0]; ps.Prefills != 0 || ps.Prefill != 0 {
			t.Errorf("%s: prefill %g over %g requests from %q; want none", name, ps.Prefill, ps.Prefills, ps.PrefillSeries)
		}
	}
	// A server that exports TTFT is read from it, whatever else it has.
	withTTFT := func(at time.Time, n float64) signal.Pod {
		p := tgiPod(at, n)
		p.TTFT = hist(n, n, n, n, n, n)
		p.TTFT.Sum = 0.5 * n
		return p
	}
	if ps := twoServingTicks(t, withTTFT(t0, 100), withTTFT(t1, 130)).Service.Pods[0]; ps.PrefillSeries != "" || math.Abs(ps.Prefill-0.4) > 1e-9 {
		t.Errorf("with a TTFT histogram: prefill %g from %q; want 0.4 s from TTFT − queue time (no series named)", ps.Prefill, ps.PrefillSeries)
	}
}

// A pod without a queue-time series (Triton; llm-d's emulator until a
// request first queues) whose waiting gauge read zero at both scrapes:
// its TTFT is its prefill. Anything waiting at either scrape, or a
// queue-time series that exists, and it is not.
func TestPrefillIsTheTTFTWhenNothingWaited(t *testing.T) {
	pod := func(at time.Time, n, waiting float64) signal.Pod {
		p := servingPod(at, n, n, 0)
		p.QueueTime, p.Waiting = nil, signal.F(waiting)
		return p
	}
	t1 := t0.Add(15 * time.Second)
	ps := twoServingTicks(t, pod(t0, 100, 0), pod(t1, 130, 0)).Service.Pods[0]
	if ps.PrefillSeries != SeriesTTFTIdle || ps.Prefills != 30 || math.Abs(ps.Prefill-0.3) > 1e-9 {
		t.Errorf("nothing waited: prefill %g over %g from %q; want the TTFT's 0.3 s over 30 from %q", ps.Prefill, ps.Prefills, ps.PrefillSeries, SeriesTTFTIdle)
	}
	for name, pair := range map[string][2]float64{"waiting before": {2, 0}, "waiting now": {0, 1}} {
		if ps := twoServingTicks(t, pod(t0, 100, pair[0]), pod(t1, 130, pair[1])).Service.Pods[0]; ps.Prefills != 0 {
			t.Errorf("%s: prefill %g from %q; want none (the TTFT may hold a wait)", name, ps.Prefill, ps.PrefillSeries)
		}
	}
	if ps := twoServingTicks(t, servingPod(t0, 100, 100, 10), servingPod(t1, 130, 130, 13)).Service.Pods[0]; ps.PrefillSeries != "" || math.Abs(ps.Prefill-0.2) > 1e-9 {
		t.Errorf("a queue-time series: prefill %g from %q; want 0.2 s from TTFT − queue time (no series named)", ps.Prefill, ps.PrefillSeries)
	}
}

// A pod without a KV gauge (TGI) adds its running sequences to the
// fleet's but not to those the KV readings are over, and says its tick
// has no KV reading: its KV is unknown, not an empty cache.
func TestAPodWithoutAKVGaugeIsNotAnEmptyCache(t *testing.T) {
	noKV := func(at time.Time, n float64) signal.Pod { p := servingPod(at, n, n, 0); p.KVCacheUsage = nil; return p }
	t1 := t0.Add(15 * time.Second)
	st, opt := state.New(), testOptions()
	tick(Input{Reports: []*signal.Report{report(servingPod(t0, 100, 100, 0), renamed(noKV(t0, 100), "b"))}}, st, opt, t0)
	v := tick(Input{Reports: []*signal.Report{report(servingPod(t1, 130, 130, 0), renamed(noKV(t1, 130), "b"))}}, st, opt, t1)
	if v.Service.Running != 8 || v.Service.KVRunning != 4 || v.Service.KV != 0.5 {
		t.Errorf("running %g, over the KV readings %g, KV %g; want 8, 4 (pod a only), 0.5", v.Service.Running, v.Service.KVRunning, v.Service.KV)
	}
	for _, ps := range v.Service.Pods {
		if ps.KVRead != (ps.Name == "a") {
			t.Errorf("pod %s: KV read %v", ps.Name, ps.KVRead)
		}
	}
}

func renamed(p signal.Pod, name string) signal.Pod { p.Name = name; return p }
