package engine

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/sim/scaler"
	"github.com/inferscale/inferscale/sim/workload"
)

// sliceSource replays a fixed list of requests.
type sliceSource struct {
	reqs []workload.Request
	i    int
}

func (s *sliceSource) Next() (workload.Request, bool, error) {
	if s.i >= len(s.reqs) {
		return workload.Request{}, false, nil
	}
	s.i++
	return s.reqs[s.i-1], true, nil
}
func (s *sliceSource) Close() error { return nil }

// poisson makes n requests at rate per second with random lengths.
func poisson(seed uint64, n int, rate float64, in, out int) *sliceSource {
	rng := rand.New(rand.NewPCG(seed, 7))
	t := 0.0
	s := &sliceSource{}
	for i := 0; i < n; i++ {
		t += rng.ExpFloat64() / rate
		s.reqs = append(s.reqs, workload.Request{
			Arrival:      time.Duration(t * float64(time.Second)),
			InputTokens:  1 + rng.IntN(2*in),
			OutputTokens: 1 + rng.IntN(2*out),
		})
	}
	return s
}

type fixed struct{ n int }

func (f fixed) Name() string                              { return "fixed" }
func (f fixed) Period() time.Duration                     { return 15 * time.Second }
func (f fixed) Recommend(scaler.Observation) (int, error) { return f.n, nil }

// stepper asks for a scripted replica count over time, to exercise scale
// down with requests in flight.
type stepper struct{ plan func(t float64) int }

func (s stepper) Name() string          { return "stepper" }
func (s stepper) Period() time.Duration { return 5 * time.Second }
func (s stepper) Recommend(o scaler.Observation) (int, error) {
	return s.plan(o.Now.Sub(DefaultConfig().Base).Seconds()), nil
}

func TestConservationEveryRequestCountedOnce(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DrainGraceSeconds = 2 // make kills likely
	cfg.InitialReplicas = 4
	src := poisson(3, 6000, 20, 3000, 300)
	// A long request that cannot fit the KV cache is rejected.
	src.reqs = append(src.reqs, workload.Request{Arrival: src.reqs[len(src.reqs)-1].Arrival, InputTokens: 500000, OutputTokens: 10})
	pol := stepper{plan: func(t float64) int {
		if int(t/60)%2 == 0 {
			return 5
		}
		return 2
	}}
	res, err := Run(context.Background(), cfg, src, pol)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != len(src.reqs) {
		t.Fatalf("requests %d, want %d", res.Requests, len(src.reqs))
	}
	if got := res.Completed + res.Rejected + res.Killed + res.Unfinished; got != res.Requests {
		t.Fatalf("completed %d + rejected %d + killed %d + unfinished %d = %d, want %d", res.Completed, res.Rejected, res.Killed, res.Unfinished, got, res.Requests)
	}
	if res.Killed == 0 {
		t.Errorf("expected some requests killed by 2 s drains, got none")
	}
	if res.RejectedTooLong != 1 {
		t.Errorf("rejected too long = %d, want 1", res.RejectedTooLong)
	}
	inf, nan := 0, 0
	for _, v := range res.TTFT {
		switch {
		case math.IsNaN(float64(v)):
			nan++
		case math.IsInf(float64(v), 1):
			inf++
		}
	}
	if nan != 0 || inf != res.Rejected+res.Killed+res.Unfinished {
		t.Errorf("TTFT slots: %d unset, %d +Inf; want 0 and %d", nan, inf, res.Rejected+res.Killed+res.Unfinished)
	}
	if res.TTFTMet > res.Completed || res.E2EMet > res.Completed {
		t.Errorf("met counts above completions: %+v", res)
	}
	// GPU time covers at least the warm pods for the whole run.
	if res.GPUSeconds < 2*res.EndSeconds {
		t.Errorf("GPU seconds %.0f below the 2 always-on pods over %.0f s", res.GPUSeconds, res.EndSeconds)
	}
}

func TestDeterministicForASeed(t *testing.T) {
	run := func(seed uint64) *Result {
		cfg := DefaultConfig()
		cfg.Seed = seed
		pol := stepper{plan: func(t float64) int { return 1 + int(t/100)%4 }}
		res, err := Run(context.Background(), cfg, poisson(5, 3000, 10, 2000, 200), pol)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := run(1), run(1)
	if a.GPUSeconds != b.GPUSeconds || a.TTFTMet != b.TTFTMet || len(a.ScaleEvents) != len(b.ScaleEvents) {
		t.Fatalf("same seed, different results: %v/%v %d/%d", a.GPUSeconds, b.GPUSeconds, a.TTFTMet, b.TTFTMet)
	}
	for i := range a.TTFT {
		if a.TTFT[i] != b.TTFT[i] {
			t.Fatalf("request %d: TTFT %v vs %v", i, a.TTFT[i], b.TTFT[i])
		}
	}
	c := run(2)
	if c.GPUSeconds == a.GPUSeconds {
		t.Errorf("different seeds gave identical GPU time %.3f (startup draws ignored the seed?)", a.GPUSeconds)
	}
}

// TestCalibrationReproducesPublishedSweep replays the InferenceBench
// concurrency sweep cited in Llama31_8B_H100 (closed loop, fixed
// concurrency) and compares TPOT and throughput within 15%.
func TestCalibrationReproducesPublishedSweep(t *testing.T) {
	m := Llama31_8B_H100()
	const in, out = 400, 256 // a short chat prompt
	for _, c := range []struct {
		conc       int
		tpotMs     float64
		throughput float64 // output tok/s, 0 = not published for this point
	}{{1, 6.48, 0}, {4, 6.59, 0}, {16, 10.94, 1384.2}} {
		// Closed loop at steady state: every step decodes conc sequences
		// whose KV grows from in to in+out.
		var total float64
		for k := 0; k < out; k++ {
			total += m.DecodeStep(c.conc, c.conc*(in+k))
		}
		tpot := total / out * 1000
		if rel := math.Abs(tpot-c.tpotMs) / c.tpotMs; rel > 0.15 {
			t.Errorf("concurrency %d: TPOT %.2f ms, published %.2f ms (%.0f%% off)", c.conc, tpot, c.tpotMs, rel*100)
		}
		if c.throughput > 0 {
			// Prefill of each new prompt interleaves with decoding.
			perReq := total + m.PerPrefillToken*in
			got := float64(c.conc*out) / perReq
			if rel := math.Abs(got-c.throughput) / c.throughput; rel > 0.15 {
				t.Errorf("concurrency %d: %.0f tok/s, published %.0f (%.0f%% off)", c.conc, got, c.throughput, rel*100)
			}
		}
	}
}

// TestCalibrationReproducesPublishedPrefill replays single prompts through
// the whole engine and compares their TTFT with the two published
// measurements cited in Llama31_8B_H100, within 15%: the BLIS step-time
// model of vLLM v0.8.4 serving Llama-3.1-8B-Instruct on one H100 at the
// four prompt means of its workloads, and, for the attention term,
// FlashAttention-3's H100 throughput (the extra time a long prompt takes
// over its linear part is its attention FLOPs at 646 TFLOP/s).
func TestCalibrationReproducesPublishedPrefill(t *testing.T) {
	ttft := func(in int) float64 {
		t.Helper()
		src := &sliceSource{reqs: []workload.Request{{Arrival: time.Second, InputTokens: in, OutputTokens: 2}}}
		res, err := Run(context.Background(), DefaultConfig(), src, fixed{1})
		if err != nil {
			t.Fatal(err)
		}
		return float64(res.TTFT[0])
	}
	const chunk = 8192
	for _, n := range []int{256, 1024, 4096, 10240} {
		steps := float64((n + chunk - 1) / chunk)
		blis := steps*5752.705e-6 + float64(n)*17.25086e-6 // beta_coeffs, seconds
		got := ttft(n)
		if rel := math.Abs(got-blis) / blis; rel > 0.15 {
			t.Errorf("%d-token prompt: TTFT %.1f ms, BLIS %.1f ms (%.0f%% off)", n, got*1000, blis*1000, rel*100)
		}
	}
	m := DefaultConfig().Model
	for _, n := range []int{32768, 100000} {
		steps := float64((n + chunk - 1) / chunk)
		attention := ttft(n) - steps*m.IterBase - float64(n)*m.PerPrefillToken
		want := 524288 * float64(n) * float64(n) / 2 / 646e12 // FLOP per pair × pairs ÷ FA3's 646 TFLOP/s
		if rel := math.Abs(attention-want) / want; rel > 0.15 {
			t.Errorf("%d-token prompt: attention part %.3fs, FlashAttention-3 at 646 TFLOP/s says %.3fs (%.0f%% off)", n, attention, want, rel*100)
		}
	}
}

func TestEngineMatchesTimeModelForOneRequest(t *testing.T) {
	cfg := DefaultConfig()
	_, res := replayOne(t, cfg, workload.Request{Arrival: time.Second, InputTokens: 1000, OutputTokens: 101})
	checkTimeline(t, cfg.Model, res, 1, cfg.Model.Iteration(1000, AttnPairs(1000, 0), 0, 1000), 1000, 101)
}

// replayOne replays req alone on one warm pod.
func replayOne(t *testing.T, cfg Config, req workload.Request) (*Engine, *Result) {
	t.Helper()
	e, err := New(cfg, &sliceSource{reqs: []workload.Request{req}}, fixed{1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return e, res
}

// checkTimeline checks a lone request's TTFT and its end: out-1 decode
// steps of one sequence after the first token, over in+1, in+2, … KV
// tokens.
func checkTimeline(t *testing.T, m Model, res *Result, arrival, wantTTFT float64, in, out int) {
	t.Helper()
	if got := float64(res.TTFT[0]); math.Abs(got-wantTTFT) > 1e-6 {
		t.Errorf("TTFT %.6f, want %.6f", got, wantTTFT)
	}
	wantEnd := arrival + wantTTFT
	for k := 0; k < out-1; k++ {
		wantEnd += m.DecodeStep(1, in+1+k)
	}
	if math.Abs(res.EndSeconds-wantEnd) > 1e-6 {
		t.Errorf("finished at %.6f, want %.6f", res.EndSeconds, wantEnd)
	}
}

func TestKVPressureCausesPreemptionsNotLoss(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Model.KVCapacity = 60000
	src := poisson(9, 400, 40, 4000, 2000)
	res, err := Run(context.Background(), cfg, src, fixed{1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Preemptions == 0 {
		t.Errorf("no preemptions with a 60k-token KV cache under 40 req/s of 4k+2k tokens")
	}
	if res.Completed != res.Requests {
		t.Errorf("completed %d of %d; preempted requests must still finish", res.Completed, res.Requests)
	}
}

func TestScaleDownFollowsReplicaSetOrder(t *testing.T) {
	cfg := DefaultConfig()
	cfg.InitialReplicas = 2
	src := poisson(1, 200, 1, 100, 10)
	var seen []scaler.Observation
	pol := recorder{plan: func(t float64) int {
		switch {
		case t < 20:
			return 4 // two new pods, still starting at t=20
		default:
			return 3 // must delete one of the starting pods, not a ready one
		}
	}, seen: &seen}
	res, err := Run(context.Background(), cfg, src, pol)
	if err != nil {
		t.Fatal(err)
	}
	_ = res
	for _, o := range seen {
		if o.Now.Sub(cfg.Base).Seconds() == 25 {
			ready, starting, draining := 0, 0, 0
			for _, p := range o.Pods {
				switch p.Phase {
				case scaler.Ready:
					ready++
				case scaler.Starting, scaler.Pending:
					starting++
				case scaler.Draining:
					// The deleted starting pod lives out its preStop; a
					// deleted ready one would have a ReadyAt.
					if !p.ReadyAt.IsZero() {
						t.Errorf("a ready pod was drained while a starting one existed: %+v", p)
					}
					draining++
				}
			}
			if ready != 2 || starting != 1 || draining != 1 {
				t.Errorf("at t=25: %d ready, %d starting, %d draining; want 2, 1 and 1", ready, starting, draining)
			}
			return
		}
	}
	t.Fatal("no observation at t=25")
}

type recorder struct {
	plan func(t float64) int
	seen *[]scaler.Observation
}

func (r recorder) Name() string          { return "recorder" }
func (r recorder) Period() time.Duration { return 5 * time.Second }
func (r recorder) Recommend(o scaler.Observation) (int, error) {
	*r.seen = append(*r.seen, o)
	return r.plan(o.Now.Sub(DefaultConfig().Base).Seconds()), nil
}

func TestMetricsAreLaggedAndValid(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MetricLagSeconds = 20
	var seen []scaler.Observation
	pol := recorder{plan: func(float64) int { return 1 }, seen: &seen}
	if _, err := Run(context.Background(), cfg, poisson(2, 500, 5, 500, 50), pol); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, o := range seen {
		for _, p := range o.Pods {
			if p.Metrics == nil {
				if o.Now.Sub(cfg.Base) >= 25*time.Second {
					t.Errorf("ready pod without metrics at %s", o.Now)
				}
				continue
			}
			age := o.Now.Sub(p.Metrics.ScrapeTime).Seconds()
			if age < 20 || age >= 25 {
				t.Errorf("scrape age %.1fs, want within [20, 25)", age)
			}
			if err := (&signalReport{p.Metrics}).validate(); err != nil {
				t.Errorf("invalid pod signal: %v", err)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no metrics observed")
	}
}

func TestConfigRejectsBadValues(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ScrapeIntervalSeconds = 0
	cfg.MinReplicas, cfg.MaxReplicas = 5, 2
	cfg.Model.PerPrefillToken = math.NaN()
	if _, err := Run(context.Background(), cfg, poisson(1, 1, 1, 1, 1), fixed{1}); err == nil {
		t.Fatal("bad config accepted")
	}
	if _, err := Run(context.Background(), DefaultConfig(), nil, fixed{1}); err == nil {
		t.Fatal("nil source accepted")
	}
	back := &sliceSource{reqs: []workload.Request{{Arrival: 2 * time.Second, InputTokens: 1, OutputTokens: 1}, {Arrival: time.Second, InputTokens: 1, OutputTokens: 1}}}
	if _, err := Run(context.Background(), DefaultConfig(), back, fixed{1}); err == nil {
		t.Fatal("arrivals going back in time accepted")
	}
}

func TestInfeasibleRequestsAreCountedAndNeverMeetTheSLO(t *testing.T) {
	cfg := DefaultConfig()
	m := cfg.Model
	// 100k tokens: 13 chunks of prefill, well above 2 s even alone.
	if got := m.IsolatedTTFT(100000); got < 3 {
		t.Fatalf("isolated TTFT of 100k tokens %.2fs; the model is too fast", got)
	}
	src := &sliceSource{reqs: []workload.Request{
		{Arrival: time.Second, InputTokens: 100000, OutputTokens: 5},
		{Arrival: 10 * time.Second, InputTokens: 500, OutputTokens: 5},
	}}
	res, err := Run(context.Background(), cfg, src, fixed{1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Infeasible != 1 || res.TTFTMet != 0 && res.TTFTMet != 1 {
		t.Fatalf("infeasible %d, met %d", res.Infeasible, res.TTFTMet)
	}
	if got := float64(res.TTFT[0]); math.Abs(got-m.IsolatedTTFT(100000)) > 1e-6 {
		t.Errorf("alone, the long prompt took %.4fs, model says %.4fs", got, m.IsolatedTTFT(100000))
	}
	if res.FeasibleTTFTAttainment() != float64(res.TTFTMet) {
		t.Errorf("feasible attainment %.2f with %d of 1 feasible met", res.FeasibleTTFTAttainment(), res.TTFTMet)
	}
}

func TestHeldRequestsWaitForAReadyPodOrAreRejected(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MinReplicas, cfg.InitialReplicas = 0, 0
	cfg.HoldTimeoutSeconds = 40
	cfg.Startup = Startup{PendingSeconds: 0, MedianSeconds: 60, Sigma: 0}
	// t=1 s: held until the pod asked for at t=15 s is Ready at 75 s: 74 s > 40 s, rejected.
	// t=50 s: held 25 s, dispatched at 75 s.
	src := &sliceSource{reqs: []workload.Request{
		{Arrival: time.Second, InputTokens: 100, OutputTokens: 2},
		{Arrival: 50 * time.Second, InputTokens: 100, OutputTokens: 2},
	}}
	res, err := Run(context.Background(), cfg, src, fixed{1})
	if err != nil {
		t.Fatal(err)
	}
	if res.RejectedNoReplica != 1 || res.Completed != 1 {
		t.Fatalf("rejected %d completed %d; want 1 and 1", res.RejectedNoReplica, res.Completed)
	}
	if got := float64(res.TTFT[1]); got < 25 || got > 25.1 {
		t.Errorf("second request's TTFT %.2fs, want ≈25 s (held until the pod was Ready)", got)
	}
}

func TestDrainFinishesShortRequestsAndKillsLongOnes(t *testing.T) {
	cfg := DefaultConfig()
	cfg.InitialReplicas = 2
	cfg.DrainGraceSeconds = 10
	// Two long requests (one per pod, least outstanding), then the policy
	// drops to 1 pod at t=15 s: the newest-ready pod drains and its request,
	// needing ~60 s of decoding, is killed at t=25 s. The other finishes.
	src := &sliceSource{reqs: []workload.Request{
		{Arrival: time.Second, InputTokens: 100, OutputTokens: 8000},
		{Arrival: 2 * time.Second, InputTokens: 100, OutputTokens: 8000},
	}}
	res, err := Run(context.Background(), cfg, src, fixed{1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Killed != 1 || res.Completed != 1 {
		t.Fatalf("killed %d completed %d; want 1 and 1", res.Killed, res.Completed)
	}
	// GPU time: the survivor runs to the end, the drained pod to t=25 s.
	want := res.EndSeconds + 25
	if math.Abs(res.GPUSeconds-want) > 1e-6 {
		t.Errorf("GPU seconds %.3f, want %.3f", res.GPUSeconds, want)
	}
}

// TestEngineReproducesPublishedTPOT runs the cited sweep's concurrency
// levels through the whole engine (a batch of C requests arriving
// together) and compares the measured time per output token.
func TestEngineReproducesPublishedTPOT(t *testing.T) {
	for _, c := range []struct {
		conc   int
		tpotMs float64
	}{{1, 6.48}, {4, 6.59}, {16, 10.94}} {
		const in, out = 400, 256
		src := &sliceSource{}
		for i := 0; i < c.conc; i++ {
			src.reqs = append(src.reqs, workload.Request{Arrival: time.Second, InputTokens: in, OutputTokens: out})
		}
		cfg := DefaultConfig()
		cfg.InitialReplicas = 1
		res, err := Run(context.Background(), cfg, src, fixed{1})
		if err != nil {
			t.Fatal(err)
		}
		// Every request finishes at the same time: TPOT from the last
		// first token to the end.
		var lastFirst float64
		for _, v := range res.TTFT {
			lastFirst = max(lastFirst, 1+float64(v))
		}
		tpot := (res.EndSeconds - lastFirst) / (out - 1) * 1000
		if rel := math.Abs(tpot-c.tpotMs) / c.tpotMs; rel > 0.15 {
			t.Errorf("concurrency %d: engine TPOT %.2f ms, published %.2f ms (%.0f%% off)", c.conc, tpot, c.tpotMs, rel*100)
		}
	}
}

// TestInterTokenAndLengthHistogramsFollowTheRun checks the three vLLM
// histograms a service model is fitted from: inter-token gaps of a batch
// of 16 concurrent decodes are one decode step each, and the per-request
// prompt and generation lengths are counted once per finished request.
func TestInterTokenAndLengthHistogramsFollowTheRun(t *testing.T) {
	const conc, in, out = 16, 400, 256
	src := &sliceSource{}
	for i := 0; i < conc; i++ {
		src.reqs = append(src.reqs, workload.Request{Arrival: time.Second, InputTokens: in, OutputTokens: out})
	}
	// A late request keeps the replay (and its scrapes) going after the batch.
	src.reqs = append(src.reqs, workload.Request{Arrival: 30 * time.Second, InputTokens: 1, OutputTokens: 1})
	cfg := DefaultConfig()
	cfg.MetricLagSeconds = 0
	var seen []scaler.Observation
	if _, err := Run(context.Background(), cfg, src, recorder{plan: func(float64) int { return 1 }, seen: &seen}); err != nil {
		t.Fatal(err)
	}
	var last *signal.Pod
	for _, o := range seen {
		for _, p := range o.Pods {
			if p.Metrics != nil && p.Metrics.RequestsTotal != nil && *p.Metrics.RequestsTotal == conc {
				last = p.Metrics
			}
		}
	}
	if last == nil {
		t.Fatal("no scrape after every request finished")
	}
	if got, want := last.InterToken.Count, float64(conc*(out-1)); got != want {
		t.Errorf("inter-token samples %g, want %g (one per generated token after the first)", got, want)
	}
	mean := last.InterToken.Sum / last.InterToken.Count
	// Mid-run decode step: 16 sequences holding ~16×(400+128) KV tokens.
	step := cfg.Model.DecodeStep(conc, conc*(in+out/2))
	if rel := math.Abs(mean-step) / step; rel > 0.05 {
		t.Errorf("mean inter-token gap %.2f ms, decode step %.2f ms (%.0f%% off)", mean*1000, step*1000, rel*100)
	}
	if last.PromptLength.Count != conc || last.PromptLength.Sum != conc*in {
		t.Errorf("prompt-length histogram count %g sum %g, want %d and %d", last.PromptLength.Count, last.PromptLength.Sum, conc, conc*in)
	}
	if last.GenerationLength.Count != conc || last.GenerationLength.Sum != conc*out {
		t.Errorf("generation-length histogram count %g sum %g, want %d and %d", last.GenerationLength.Count, last.GenerationLength.Sum, conc, conc*out)
	}
}

// TestGPUSpeedScalesEveryTimeCost checks Model.Scaled: a GPU twice as fast
// halves every time cost and so the whole engine's latencies, a GPU twice
// as slow doubles them, and the capacities stay as they were.
func TestGPUSpeedScalesEveryTimeCost(t *testing.T) {
	base := Llama31_8B_H100()
	for _, speed := range []float64{2, 0.5} {
		m := base.Scaled(speed)
		for _, c := range []struct {
			name      string
			got, base float64
		}{{"IterBase", m.IterBase, base.IterBase}, {"PerPrefillToken", m.PerPrefillToken, base.PerPrefillToken}, {"PerAttnPair", m.PerAttnPair, base.PerAttnPair},
			{"PerDecodeSeq", m.PerDecodeSeq, base.PerDecodeSeq}, {"PerKVToken", m.PerKVToken, base.PerKVToken}} {
			if math.Abs(c.got*speed-c.base) > 1e-9*c.base {
				t.Errorf("speed %g: %s %g, want %g", speed, c.name, c.got, c.base/speed)
			}
		}
		if m.MaxNumSeqs != base.MaxNumSeqs || m.MaxBatchTokens != base.MaxBatchTokens || m.KVCapacity != base.KVCapacity || m.MaxModelLen != base.MaxModelLen {
			t.Errorf("speed %g changed a capacity: %+v", speed, m)
		}
		// One request through the whole engine: its TTFT and its time in
		// the system scale by 1/speed.
		run := func(m Model) *Result {
			cfg := DefaultConfig()
			cfg.Model = m
			src := &sliceSource{reqs: []workload.Request{{Arrival: time.Second, InputTokens: 20000, OutputTokens: 300}}}
			res, err := Run(context.Background(), cfg, src, fixed{1})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		ref, got := run(base), run(m)
		if want := float64(ref.TTFT[0]) / speed; math.Abs(float64(got.TTFT[0])-want) > 1e-4*want {
			t.Errorf("speed %g: TTFT %.4fs, want %.4fs", speed, got.TTFT[0], want)
		}
		if want := (ref.EndSeconds - 1) / speed; math.Abs(got.EndSeconds-1-want) > 1e-6*want {
			t.Errorf("speed %g: request took %.4fs, want %.4fs", speed, got.EndSeconds-1, want)
		}
	}
}

// The inter-token-latency objective, counted on the gaps: a steady load on
// two pods meets a loose objective with every gap and a tight one below
// any step with none.
func TestITLAttainmentCountsTheGaps(t *testing.T) {
	run := func(tpot float64) *Result {
		cfg := DefaultConfig()
		cfg.TPOTSLOSeconds = tpot
		res, err := Run(context.Background(), cfg, poisson(4, 600, 1, 500, 200), stepper{plan: func(float64) int { return 2 }})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	loose, tight := run(1), run(1e-4)
	if loose.Gaps < 600*50 || loose.GapsMet != loose.Gaps || loose.ITLAttainment() != 1 {
		t.Errorf("a 1 s objective: %g of %g gaps met it", loose.GapsMet, loose.Gaps)
	}
	if tight.Gaps != loose.Gaps || tight.GapsMet != 0 || tight.ITLAttainment() != 0 {
		t.Errorf("a 0.1 ms objective, below any step: %g of %g gaps met it", tight.GapsMet, tight.Gaps)
	}
	if (&Result{}).ITLAttainment() != 1 {
		t.Error("nothing decoded must read as met, not as a miss")
	}
}
