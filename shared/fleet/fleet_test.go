package fleet

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func hist(counts ...float64) *signal.Histogram {
	bounds := []float64{0.1, 0.5, 1, 2, 5}
	h := &signal.Histogram{}
	for i, c := range counts[:len(counts)-1] {
		h.Buckets = append(h.Buckets, signal.Bucket{UpperBound: bounds[i], Count: c})
	}
	h.Count = counts[len(counts)-1]
	return h
}

func readyPod(name string, at time.Time, waiting, running, reqs float64, ttft *signal.Histogram) signal.Pod {
	readyAt := t0.Add(-time.Hour)
	return signal.Pod{Name: name, Phase: "Running", Ready: true, ReadyAt: &readyAt, StartupSeconds: signal.F(60),
		ScrapeTime: at, Waiting: signal.F(waiting), Running: signal.F(running), RequestsTotal: signal.F(reqs),
		KVCacheUsage: signal.F(0.5), GPU: &signal.GPU{Utilization: signal.F(0.8)}, TTFT: ttft}
}

// testOptions are the aggregation defaults (settings declares them; this
// package cannot import it).
func testOptions() Options {
	return Options{EWMAAlpha: 0.3, StaleAfter: 90 * time.Second, TrendWindow: 3 * time.Minute, PeakWindow: 2 * time.Minute,
		DefaultStartup: 90 * time.Second, SaturationWaiting: 5, StuckAfter: 15 * time.Minute}
}

// tick aggregates one tick and records it into st, as the decide stage does.
func tick(in Input, st *state.State, opt Options, now time.Time) View {
	v, seen := Aggregate(in, st, opt, now)
	st.Record(state.Tick{At: now, Observed: seen})
	return v
}

func report(pods ...signal.Pod) *signal.Report {
	return &signal.Report{Version: signal.Version, Pods: pods}
}

// Latency comes from bucket deltas merged across pods: a pod whose
// cumulative histogram holds old slow requests must not pollute this tick.
func TestLatencyFromMergedDeltasNotAveragedPercentiles(t *testing.T) {
	st := state.New()
	opt := testOptions()
	// Tick 1: pod a has 1000 old slow requests, pod b is fast.
	tick(Input{Reports: []*signal.Report{
		report(readyPod("a", t0, 0, 1, 1000, hist(0, 0, 0, 0, 1000, 1000))),
		report(readyPod("b", t0, 0, 1, 100, hist(100, 100, 100, 100, 100, 100))),
	}}, st, opt, t0)
	// Tick 2: a served 10 fast ones, b 90 fast ones.
	t1 := t0.Add(15 * time.Second)
	v := tick(Input{Reports: []*signal.Report{
		report(readyPod("a", t1, 0, 1, 1010, hist(10, 10, 10, 10, 1010, 1010))),
		report(readyPod("b", t1, 0, 1, 190, hist(190, 190, 190, 190, 190, 190))),
	}}, st, opt, t1)
	if v.TTFTP95 == nil || *v.TTFTP95 > 0.1 {
		t.Fatalf("p95 %v, want <= 0.1 s from this tick's 100 fast requests", v.TTFTP95)
	}
	if v.LatencyRequests != 100 {
		t.Errorf("latency requests %g, want 100", v.LatencyRequests)
	}
	// 10 + 90 finished over 15 s, in-flight unchanged.
	if v.ArrivalRate == nil || math.Abs(*v.ArrivalRate-100.0/15) > 1e-9 {
		t.Errorf("arrival rate %v, want %g", v.ArrivalRate, 100.0/15)
	}
}

func TestCounterResetAndPodsComingAndGoing(t *testing.T) {
	st := state.New()
	opt := testOptions()
	tick(Input{Reports: []*signal.Report{
		report(readyPod("a", t0, 0, 2, 500, hist(100, 200, 300, 400, 500, 500))),
		report(readyPod("gone", t0, 0, 2, 500, hist(100, 200, 300, 400, 500, 500))),
	}}, st, opt, t0)
	t1 := t0.Add(10 * time.Second)
	// a restarted: counters went down; its new values are the delta.
	v := tick(Input{Reports: []*signal.Report{
		report(readyPod("a", t1, 0, 2, 20, hist(20, 20, 20, 20, 20, 20))),
	}}, st, opt, t1)
	if v.ArrivalRate == nil || math.Abs(*v.ArrivalRate-2) > 1e-9 {
		t.Errorf("arrival after reset %v, want 2/s", v.ArrivalRate)
	}
	if v.LatencyRequests != 20 {
		t.Errorf("latency requests after reset %g, want 20", v.LatencyRequests)
	}
	// N11 (issue 15): the restart lost what a served before it, so its
	// readings may read low: a is missing for this tick (no scale-down on
	// it); the pod that left is not missing.
	if v.Ready != 1 || v.Missing != 1 || v.MissingNames[0] != "a(counter reset)" {
		t.Errorf("ready %d missing %d %v, want 1/1 (a's counter reset; a pod that left is not missing)", v.Ready, v.Missing, v.MissingNames)
	}
	tick(Input{}, st, opt, t1.Add(time.Hour))
	if len(st.Pods) != 0 {
		t.Errorf("pods not forgotten: %d", len(st.Pods))
	}
}

func TestReadyStartingMissingStale(t *testing.T) {
	st := state.New()
	starting := signal.Pod{Name: "s", Phase: "Running", ScrapeTime: t0, AgeSeconds: signal.F(30)}
	stuck := signal.Pod{Name: "crash", Phase: "Running", ScrapeTime: t0, AgeSeconds: signal.F(3600)}
	term := signal.Pod{Name: "t", Ready: true, Terminating: true, ScrapeTime: t0}
	failed := readyPod("f", t0, 0, 0, 0, nil)
	failed.Error = "connection refused"
	stale := readyPod("old", t0.Add(-10*time.Minute), 0, 0, 0, nil)
	v := tick(Input{
		Reports: []*signal.Report{report(readyPod("a", t0, 3, 4, 0, nil)), report(starting), report(stuck), report(term), report(failed), report(stale)},
		Missing: []string{"empty"},
	}, st, testOptions(), t0)
	if v.Ready != 3 || v.Starting != 1 || v.Stuck != 1 || v.Terminating != 1 || v.Missing != 3 {
		t.Fatalf("got ready %d starting %d terminating %d missing %d %v", v.Ready, v.Starting, v.Terminating, v.Missing, v.MissingNames)
	}
	// The failed and the stale pod were serving (ready an hour ago): the
	// queue is per pod that reported, not diluted by them.
	if v.Waiting != 3 || v.Running != 4 || v.Unreported != 2 || v.Queue() != 3 {
		t.Errorf("sums from the complete pod only: waiting %g running %g unreported %d queue %g", v.Waiting, v.Running, v.Unreported, v.Queue())
	}
}

func TestEWMAAndStartupAndTrend(t *testing.T) {
	st := state.New()
	opt := testOptions()
	var v View
	for i, util := range []float64{1, 1, 0, 0} {
		at := t0.Add(time.Duration(i) * 15 * time.Second)
		pod := readyPod("a", at, 0, 0, float64(i*i*150), nil)
		pod.GPU.Utilization = signal.F(util)
		v = tick(Input{Reports: []*signal.Report{report(pod)}}, st, opt, at)
	}
	// 1 -> 1 -> 0.7 -> 0.49
	if v.GPUUtilEWMA == nil || math.Abs(*v.GPUUtilEWMA-0.49) > 1e-9 || *v.GPUUtil != 0 {
		t.Errorf("EWMA %v util %v", v.GPUUtilEWMA, v.GPUUtil)
	}
	if v.StartupSeconds != 60 || v.StartupObserved != 1 {
		t.Errorf("startup %g observed %d", v.StartupSeconds, v.StartupObserved)
	}
	// rates 10, 30, 50/s: the rate is rising at 20/15 per s.
	if v.RateTrend == nil || math.Abs(*v.RateTrend-20.0/15) > 1e-9 {
		t.Errorf("trend %v, want positive", v.RateTrend)
	}
	if got, _ := startupP90(nil, 42*time.Second); got != 42 {
		t.Errorf("default startup %g", got)
	}
}

func TestCapacityLearnedWhenSaturated(t *testing.T) {
	st := state.New()
	opt := testOptions()
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 15 * time.Second) }
	tick(Input{Reports: []*signal.Report{report(readyPod("a", at(0), 0, 50, 0, nil))}}, st, opt, at(0))
	tick(Input{Reports: []*signal.Report{report(readyPod("a", at(1), 0, 50, 60, nil))}}, st, opt, at(1))
	if st.PodCapacityRPS != nil {
		t.Fatal("learned a capacity without saturation")
	}
	// Saturated now but not at the previous tick: not yet.
	tick(Input{Reports: []*signal.Report{report(readyPod("a", at(2), 8, 120, 150, nil))}}, st, opt, at(2))
	if st.PodCapacityRPS != nil {
		t.Fatal("learned a capacity from a tick that started unsaturated")
	}
	// 150 finished in 15 s, 8 waiting at both ends: saturated at 10 req/s.
	v := tick(Input{Reports: []*signal.Report{report(readyPod("a", at(3), 8, 120, 300, nil))}}, st, opt, at(3))
	if v.PodCapacityRPS == nil || *v.PodCapacityRPS != 10 {
		t.Fatalf("capacity %v, want 10", v.PodCapacityRPS)
	}
	// A lower saturated sample only pulls it down slowly.
	v = tick(Input{Reports: []*signal.Report{report(readyPod("a", at(4), 8, 120, 375, nil))}}, st, opt, at(4))
	if got := *v.PodCapacityRPS; math.Abs(got-(0.95*10+0.05*5)) > 1e-9 {
		t.Fatalf("capacity %g after a 5 req/s sample", got)
	}
	// Unsaturated but above the estimate: the estimate was low.
	v = tick(Input{Reports: []*signal.Report{report(readyPod("a", at(5), 0, 120, 555, nil))}}, st, opt, at(5))
	if *v.PodCapacityRPS != 12 {
		t.Fatalf("capacity %g, want 12", *v.PodCapacityRPS)
	}
}

func TestHistDeltaLayoutChange(t *testing.T) {
	a := hist(1, 2, 3, 4, 5, 5)
	b := &signal.Histogram{Buckets: []signal.Bucket{{UpperBound: 1, Count: 9}}, Count: 9}
	if _, ok := histDelta(b, a); ok {
		t.Error("different layouts must not form a delta")
	}
	var acc signal.Histogram
	merge(&acc, *a)
	merge(&acc, *b) // another layout merges on acc's bounds
	if acc.Count != 14 || acc.Buckets[2].Count != 3+9 {
		t.Errorf("merged %+v", acc)
	}
}

func TestFleetReportFeedsViewAndTrend(t *testing.T) {
	st := state.New()
	ready, starting := 3, 1
	var v View
	for i := 0; i < 4; i++ {
		at := t0.Add(time.Duration(i) * 15 * time.Second)
		f := &signal.Fleet{Source: "prometheus", ReadyPods: &ready, StartingPods: &starting, Waiting: signal.F(6), Running: signal.F(90),
			KVCacheMean: signal.F(0.5), KVCacheMax: signal.F(0.7), TTFTQuantiles: map[string]float64{"0.95": 0.8, "0.99": 1.5},
			ArrivalRate: signal.F(10 + float64(i)), StalenessSeconds: signal.F(5)}
		v = tick(Input{Reports: []*signal.Report{{Version: signal.Version, ScrapeTime: at, Fleet: f}}}, st, testOptions(), at)
	}
	if v.Ready != 3 || v.Starting != 1 || v.Waiting != 6 || *v.KVMax != 0.7 || *v.TTFTP95 != 0.8 || v.Missing != 0 {
		t.Fatalf("view %+v", v)
	}
	if v.RateTrend == nil || math.Abs(*v.RateTrend-1.0/15) > 1e-9 {
		t.Fatalf("trend %v, want 1/15 per s", v.RateTrend)
	}
	stale := &signal.Fleet{Source: "prometheus", Waiting: signal.F(1), StalenessSeconds: signal.F(300)}
	if v := tick(Input{Reports: []*signal.Report{{Version: signal.Version, Fleet: stale}}}, st, testOptions(), t0); v.Missing == 0 {
		t.Fatal("a stale fleet report must count as missing")
	}
}

// Aggregate changes nothing: what the tick learned comes back to be
// recorded, the previous state is only read.
func TestAggregateLeavesThePreviousStateAlone(t *testing.T) {
	st := state.New()
	opt := testOptions()
	for i := 0; i < 3; i++ {
		at := t0.Add(time.Duration(i) * 15 * time.Second)
		tick(Input{Reports: []*signal.Report{report(readyPod("a", at, 6, 50, float64(100*i), hist(1, 2, 3, 4, 5, 5)))}}, st, opt, at)
	}
	before, err := state.Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	at := t0.Add(time.Minute)
	v, seen := Aggregate(Input{Reports: []*signal.Report{report(readyPod("a", at, 8, 50, 500, hist(2, 4, 6, 8, 10, 10)), readyPod("b", at, 0, 1, 0, nil))}}, st, opt, at)
	after, _ := state.Encode(st)
	if !bytes.Equal(before, after) {
		t.Fatalf("Aggregate changed the state:\n%s\n%s", before, after)
	}
	if v.Ready != 2 || len(seen.Pods) != 2 || seen.Queue == nil || seen.GPUUtilEWMA == nil || len(seen.Startups) != 1 {
		t.Fatalf("view %+v observed %+v", v, seen)
	}
}

// Defect 2: a scrape older than the stored one (the clock stepped back,
// or the state was written ahead of it) resets that pod's baseline instead
// of being ignored as "the same scrape again"; the latency it cannot
// delta this tick is unread, not absent.
func TestScrapeGoingBackwardsResetsThePodBaseline(t *testing.T) {
	st := state.New()
	opt := testOptions()
	ahead := t0.Add(time.Hour)
	tick(Input{Reports: []*signal.Report{report(readyPod("a", ahead, 0, 1, 1000, hist(10, 20, 30, 40, 50, 50)))}}, st, opt, ahead)
	v := tick(Input{Reports: []*signal.Report{report(readyPod("a", t0, 0, 1, 1100, hist(10, 20, 30, 40, 60, 60)))}}, st, opt, t0)
	if p := st.Pod("a"); p == nil || !p.ScrapeTime.Equal(t0) || *p.RequestsTotal != 1100 {
		t.Fatalf("baseline not reset: %+v", p)
	}
	if len(v.LatencyUnread) != 1 || v.TTFTP95 != nil {
		t.Fatalf("unread %v p95 %v, want the pod's latency unread", v.LatencyUnread, v.TTFTP95)
	}
	// The same scrape again is no reset: the stored counters stay.
	tick(Input{Reports: []*signal.Report{report(readyPod("a", t0, 0, 1, 1100, hist(10, 20, 30, 40, 60, 60)))}}, st, opt, t0.Add(15*time.Second))
	v = tick(Input{Reports: []*signal.Report{report(readyPod("a", t0.Add(30*time.Second), 0, 1, 1200, hist(10, 20, 30, 140, 160, 160)))}}, st, opt, t0.Add(30*time.Second))
	if v.TTFTP95 == nil || len(v.LatencyUnread) != 0 || v.LatencyRequests != 100 {
		t.Fatalf("next scrape: p95 %v requests %g unread %v", v.TTFTP95, v.LatencyRequests, v.LatencyUnread)
	}
}

// N1 (issue 15): a baseline the state coarsened to fit its byte budget
// still forms a delta with the next, finer reading (exact at the bounds
// kept), so the pods' latency stays read.
func TestHistDeltaAgainstACoarsenedBaseline(t *testing.T) {
	before := hist(1, 2, 3, 4, 5, 5)
	coarse := state.HistOf(before).Coarsen(2).Signal() // bounds 0.5 and 5
	d, ok := histDelta(hist(2, 4, 6, 8, 10, 10), coarse)
	if !ok || len(d.Buckets) != 2 || d.Buckets[0] != (signal.Bucket{UpperBound: 0.5, Count: 2}) || d.Buckets[1] != (signal.Bucket{UpperBound: 5, Count: 5}) || d.Count != 5 {
		t.Fatalf("delta %+v ok %v, want 2 at 0.5 and 5 at 5", d, ok)
	}
}

// N2 (issue 15): readings within the schema's ranges whose deltas no
// server makes — a prompt-length sum that grows by 1e19 over ten requests,
// a request counter that jumps by 1e14 in 15 s — are not read: one pod's
// report cannot size the fleet alone. The rate is unknown, not huge.
func TestImplausibleDeltasAreNotRead(t *testing.T) {
	opt := Options{StaleAfter: time.Minute}
	st := state.New()
	pod := func(at time.Time, reqs, promptCount, promptSum float64) signal.Pod {
		p := readyPod("a", at, 0, 1, reqs, nil)
		p.PromptLength = &signal.Histogram{Buckets: []signal.Bucket{{UpperBound: 1024, Count: promptCount}}, Count: promptCount, Sum: promptSum}
		return p
	}
	tick(Input{Reports: []*signal.Report{report(pod(t0, 100, 1e12, 1e12))}}, st, opt, t0)
	at := t0.Add(15 * time.Second)
	v := tick(Input{Reports: []*signal.Report{report(pod(at, 1e14, 1e12+10, 1e19))}}, st, opt, at)
	if v.ArrivalRate != nil || v.Throughput != nil {
		t.Errorf("arrival %v, throughput %v from a counter jump of 1e14 in 15 s: want unknown", deref(v.ArrivalRate), deref(v.Throughput))
	}
	if v.Service.Prompts.Count != 0 || len(v.Service.Pods) != 1 || v.Service.Pods[0].PromptMean != 0 {
		t.Errorf("prompt delta read: %+v", v.Service.Prompts)
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// N11 (issue 15): a Prometheus fleet report without the staleness, KV or
// TTFT readings and without an error allowed a scale-down. Each gap is
// missing; an idle fleet that says no request finished still has its
// TTFT explained.
func TestPrometheusFleetGapsAreMissing(t *testing.T) {
	ready, zero := 4, 0
	full := signal.Fleet{Source: "prometheus", ReadyPods: &ready, Waiting: signal.F(0), Running: signal.F(1),
		KVCacheMean: signal.F(0.1), StalenessSeconds: signal.F(5), TTFTQuantiles: map[string]float64{"0.95": 0.2}}
	cases := map[string]func(f *signal.Fleet){
		"staleness unknown": func(f *signal.Fleet) { f.StalenessSeconds = nil },
		"no KV reading":     func(f *signal.Fleet) { f.KVCacheMean = nil },
		"no TTFT reading":   func(f *signal.Fleet) { f.TTFTQuantiles = nil },
	}
	for name, drop := range cases {
		f := full
		drop(&f)
		v, _ := Aggregate(Input{Reports: []*signal.Report{{Version: signal.Version, Fleet: &f}}}, state.New(), testOptions(), t0)
		if v.Missing != 1 || v.MissingNames[0] != "fleet("+name+")" {
			t.Errorf("%s: missing %d %v", name, v.Missing, v.MissingNames)
		}
	}
	idle := full
	idle.TTFTQuantiles, idle.TTFTRequests = nil, signal.F(float64(zero))
	if v, _ := Aggregate(Input{Reports: []*signal.Report{{Version: signal.Version, Fleet: &idle}}}, state.New(), testOptions(), t0); v.Missing != 0 {
		t.Errorf("no TTFT because no request finished: missing %v", v.MissingNames)
	}
	if v, _ := Aggregate(Input{Reports: []*signal.Report{{Version: signal.Version, Fleet: &full}}}, state.New(), testOptions(), t0); v.Missing != 0 {
		t.Errorf("a complete fleet report: missing %v", v.MissingNames)
	}
}

// TestPromptMeanFromTheCountersWithoutALengthHistogram: a pod that exports
// TTFT and queue-time histograms and the prompt-token counter but no
// prompt-length histogram. Its prefill sample takes the prompt tokens the
// tick prefilled over the requests that got their first token, and the
// tick's token totals reach the service view.
func TestPromptMeanFromTheCountersWithoutALengthHistogram(t *testing.T) {
	v := twoServingTicks(t, servingPod(t0, 100, 100, 0.1*100), servingPod(t0.Add(15*time.Second), 130, 130, 0.1*130))
	ps := v.Service.Pods[0]
	if math.Abs(ps.PromptMean-3000) > 1e-6 || ps.Prefills != 30 || math.Abs(ps.Prefill-0.2) > 1e-9 {
		t.Errorf("prefill sample: mean prompt %g over %g requests, prefill %g; want 3000 tokens, 30, 0.2 s", ps.PromptMean, ps.Prefills, ps.Prefill)
	}
	if math.Abs(v.Service.PromptTokens-30*3000) > 1e-6 || math.Abs(v.Service.OutputTokens-3000) > 1e-6 {
		t.Errorf("tick totals: %g prompt, %g output tokens; want 90000 and 3000", v.Service.PromptTokens, v.Service.OutputTokens)
	}
}

// A server without token counters (TGI: its token totals are the sums of
// its length histograms) gets its token rates from the length histograms'
// deltas; where a counter exists, the counter is what is read.
func TestTokenRatesFromTheLengthHistogramsWithoutCounters(t *testing.T) {
	withLengths := func(at time.Time, n float64) signal.Pod {
		p := servingPod(at, n, n, 0.1*n)
		p.PromptTokensTotal, p.GenerationTokensTotal = nil, nil
		p.PromptLength = &signal.Histogram{Buckets: []signal.Bucket{{UpperBound: 4096, Count: n}}, Sum: n * 2000, Count: n}
		p.GenerationLength = &signal.Histogram{Buckets: []signal.Bucket{{UpperBound: 512, Count: n}}, Sum: n * 200, Count: n}
		return p
	}
	v := twoServingTicks(t, withLengths(t0, 100), withLengths(t0.Add(15*time.Second), 130))
	ps := v.Service.Pods[0]
	if math.Abs(ps.PromptRate-30*2000/15.0) > 1e-9 || math.Abs(ps.OutputRate-30*200/15.0) > 1e-9 {
		t.Errorf("rates %g prompt, %g output tokens/s; want %g and %g", ps.PromptRate, ps.OutputRate, 30*2000/15.0, 30*200/15.0)
	}
	if math.Abs(v.Service.PromptTokens-30*2000) > 1e-6 || math.Abs(v.Service.OutputTokens-30*200) > 1e-6 {
		t.Errorf("tick totals: %g prompt, %g output tokens; want 60000 and 6000", v.Service.PromptTokens, v.Service.OutputTokens)
	}
	// Both: the counters (3,000 prompt tokens a request), not the sums.
	both := func(at time.Time, n float64) signal.Pod {
		p := withLengths(at, n)
		p.PromptTokensTotal, p.GenerationTokensTotal = signal.F(n*3000), signal.F(n*100)
		return p
	}
	v = twoServingTicks(t, both(t0, 100), both(t0.Add(15*time.Second), 130))
	if r := v.Service.Pods[0].PromptRate; math.Abs(r-30*3000/15.0) > 1e-9 {
		t.Errorf("with a counter: prompt rate %g, want the counter's %g", r, 30*3000/15.0)
	}
}

// The inter-token p95 for an inter-token objective: from the pods' bucket
// deltas when TrackITL keeps their buckets in the state (a pod's old slow
// gaps do not count this tick), nothing without it, and Prometheus's
// quantile in the per-resource form.
func TestInterTokenP95FromDeltasOnlyWhenTracked(t *testing.T) {
	itl := func(p signal.Pod, h *signal.Histogram) signal.Pod { p.InterToken = h; return p }
	for _, track := range []bool{false, true} {
		st := state.New()
		opt := testOptions()
		opt.TrackITL = track
		// Tick 1: a pod whose past gaps were all slow (1-2 s).
		tick(Input{Reports: []*signal.Report{report(itl(readyPod("a", t0, 0, 1, 100, hist(0, 0, 0, 0, 100, 100)), hist(0, 0, 0, 500, 500, 500)))}}, st, opt, t0)
		// Tick 2: 1,000 fast gaps (≤ 0.1 s).
		t1 := t0.Add(15 * time.Second)
		v := tick(Input{Reports: []*signal.Report{report(itl(readyPod("a", t1, 0, 1, 200, hist(100, 100, 100, 100, 200, 200)), hist(1000, 1000, 1000, 1500, 1500, 1500)))}}, st, opt, t1)
		switch {
		case !track && v.ITLP95 != nil:
			t.Errorf("untracked: inter-token p95 %v, want none (the state keeps no buckets for it)", *v.ITLP95)
		case track && (v.ITLP95 == nil || *v.ITLP95 > 0.1):
			t.Errorf("tracked: inter-token p95 %v, want ≤ 0.1 s from this tick's fast gaps", v.ITLP95)
		}
	}
	f := &signal.Fleet{Source: "prometheus", ReadyPods: new(2), Waiting: signal.F(0), ITLQuantiles: map[string]float64{"0.95": 0.04}, StalenessSeconds: signal.F(5)}
	v := tick(Input{Reports: []*signal.Report{{Version: signal.Version, ScrapeTime: t0, Fleet: f}}}, state.New(), testOptions(), t0)
	if v.ITLP95 == nil || *v.ITLP95 != 0.04 {
		t.Errorf("per-resource inter-token p95 %v, want Prometheus's 0.04", v.ITLP95)
	}
}

// A server that observes the queue time only of the requests that queued
// (llm-d's vLLM emulator): 30 requests got their first token, 6 of them
// waited 0.5 s each. The tick's mean wait is 3 s over 30 requests (0.1 s),
// not over the 6 (0.5 s, which would leave the prefill sample at −0.2 s and
// the prefill cost unlearned).
func TestPrefillSampleCountsTheRequestsThatDidNotQueue(t *testing.T) {
	v := twoServingTicks(t, servingPod(t0, 100, 20, 0.5*20), servingPod(t0.Add(15*time.Second), 130, 26, 0.5*26))
	if ps := v.Service.Pods[0]; ps.Prefills != 30 || math.Abs(ps.Prefill-0.2) > 1e-9 {
		t.Errorf("prefill sample %g s over %g requests; want 0.3 − 3/30 = 0.2 s over 30", ps.Prefill, ps.Prefills)
	}
}

// servingPod is pod "a" at a scrape: n requests finished (their TTFT sums
// to 0.3 s each, 3,000 prompt and 100 generated tokens each, no length
// histograms), queued of them observed in the queue-time histogram with
// waits summing to wait.
func servingPod(at time.Time, n, queued, wait float64) signal.Pod {
	p := readyPod("a", at, 0, 4, n, hist(n, n, n, n, n, n))
	p.TTFT.Sum = 0.3 * n
	p.QueueTime = hist(queued, queued, queued, queued, queued, queued)
	p.QueueTime.Sum = wait
	p.PromptTokensTotal, p.GenerationTokensTotal = signal.F(n*3000), signal.F(n*100)
	return p
}

// twoServingTicks aggregates first, then second, into a fresh state and
// returns the second tick's view, which must have the pod's service.
func twoServingTicks(t *testing.T, first, second signal.Pod) View {
	t.Helper()
	st, opt := state.New(), testOptions()
	tick(Input{Reports: []*signal.Report{report(first)}}, st, opt, first.ScrapeTime)
	v := tick(Input{Reports: []*signal.Report{report(second)}}, st, opt, second.ScrapeTime)
	if len(v.Service.Pods) != 1 {
		t.Fatalf("service pods %+v", v.Service.Pods)
	}
	return v
}
