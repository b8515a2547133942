package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// truth is a server 2.5× slower than the default prior, so the fit has to
// move far from where it starts.
var truth = Params{Alpha: 0.015, Beta: 0.00008, GammaSeq: 0.0007, GammaKV: 0.04}

// stepSamples draws pods' ticks at loads from idle to busy: the observed
// inter-token gap is the step time of the pod's mean batch with 5 % noise.
func stepSamples(rng *rand.Rand, n int) []StepSample {
	out := make([]StepSample, n)
	for i := range out {
		running := 1 + rng.Float64()*200
		kv := math.Min(1, running*(0.002+0.002*rng.Float64()))
		prompt := rng.Float64() * 6000 // tokens/s
		// T = α + β·(prompt·T) + γs·n + γkv·k  ⇒  T = (α + γs·n + γkv·k)/(1 − β·prompt)
		t := (truth.Alpha + truth.GammaSeq*running + truth.GammaKV*kv) / (1 - truth.Beta*prompt)
		out[i] = StepSample{ITL: t * (1 + 0.05*rng.NormFloat64()), PromptRate: prompt, Running: running, KV: kv}
	}
	return out
}

func prefillSamples(rng *rand.Rand, n int) []PrefillSample {
	out := make([]PrefillSample, n)
	for i := range out {
		prompt := 200 + rng.Float64()*20000
		chunks := math.Ceil(prompt / 8192)
		running := rng.Float64() * 100
		kv := math.Min(1, running*0.003)
		mean := truth.Alpha*chunks + truth.Beta*prompt + truth.GammaSeq*chunks*running + truth.GammaKV*chunks*kv
		out[i] = PrefillSample{Mean: mean * (1 + 0.1*rng.NormFloat64()), Prompt: prompt, Chunks: chunks, Running: running, KV: kv, Requests: 20}
	}
	return out
}

func TestStepFitRecoversKnownParameters(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var f Fit
	prior := DefaultPrior()
	steps, prefills := stepSamples(rng, 3000), prefillSamples(rng, 600)
	for i := range steps {
		f.ObserveStep(prior, steps[i])
		if i%5 == 0 {
			f.ObservePrefill(prior, prefills[i/5])
		}
	}
	got := f.Params(prior)
	for _, c := range []struct {
		name      string
		got, want float64
		tol       float64
	}{
		{"alpha", got.Alpha, truth.Alpha, 0.10},
		{"beta", got.Beta, truth.Beta, 0.10},
		{"gammaSeq", got.GammaSeq, truth.GammaSeq, 0.15},
		{"gammaKv", got.GammaKV, truth.GammaKV, 0.35},
	} {
		if rel := math.Abs(c.got-c.want) / c.want; rel > c.tol {
			t.Errorf("%s fitted %.4g, true %.4g (%.0f%% off, tolerance %.0f%%)", c.name, c.got, c.want, rel*100, c.tol*100)
		}
	}
	// What matters for sizing is the work of a request mix.
	m := Mix{PromptTokens: 2000, OutputTokens: 300, KVPerSeq: 0.005}
	if rel := math.Abs(got.Work(m)-truth.Work(m)) / truth.Work(m); rel > 0.05 {
		t.Errorf("work per request %.4g s, true %.4g s (%.0f%% off)", got.Work(m), truth.Work(m), rel*100)
	}
	if f.StepSamples() < 2500 {
		t.Errorf("only %d of 3600 clean samples accepted", f.StepSamples())
	}
}

func TestStepFitIgnoresBadSamplesAndKeepsThePriorWithout(t *testing.T) {
	var f Fit
	prior := DefaultPrior()
	if got := f.Params(prior); got != prior {
		t.Fatalf("no samples: %+v, want the prior %+v", got, prior)
	}
	for _, s := range []StepSample{{ITL: 0}, {ITL: math.NaN()}, {ITL: math.Inf(1)}, {ITL: 0.01, Running: -1}, {ITL: 0.01, PromptRate: -5}} {
		if f.ObserveStep(prior, s) {
			t.Errorf("sample %+v was used", s)
		}
	}
	for _, s := range []PrefillSample{{}, {Mean: 1, Prompt: 100, Chunks: 0, Requests: 1}, {Mean: 1, Prompt: 100, Chunks: 1, Requests: 0},
		{Mean: 1, Prompt: 100, Chunks: 1, Requests: 5, Shared: -1}, {Mean: 1, Prompt: 100, Chunks: 1, Requests: 5, Shared: math.NaN()},
		{Mean: 1, Prompt: 100, Chunks: 1, Requests: 5, Shared: math.Inf(1)}} {
		if f.ObservePrefill(prior, s) {
			t.Errorf("prefill sample %+v was used", s)
		}
	}
	if got := f.Params(prior); got != prior {
		t.Errorf("after bad samples: %+v, want the prior", got)
	}
}

func TestStepFitRejectsAnOutlierButRelearnsAChangedServer(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var f Fit
	prior := DefaultPrior()
	for _, s := range stepSamples(rng, 500) {
		f.ObserveStep(prior, s)
	}
	before := f.Params(prior)
	if f.ObserveStep(prior, StepSample{ITL: 50, Running: 10, KV: 0.1}) {
		t.Error("a 50 s inter-token gap was accepted")
	}
	if f.Params(prior) != before {
		t.Error("a rejected sample moved the fit")
	}
	// The server becomes 3× slower (another GPU): after the gate has
	// refused a run of samples, the filter re-widens and follows.
	slow := truth
	slow.Alpha, slow.GammaSeq = truth.Alpha*3, truth.GammaSeq*3
	for i := 0; i < 400; i++ {
		running := 1 + rng.Float64()*200
		kv := math.Min(1, running*0.003)
		f.ObserveStep(prior, StepSample{ITL: slow.Alpha + slow.GammaSeq*running + slow.GammaKV*kv, Running: running, KV: kv})
	}
	if got := f.Params(prior).Alpha; math.Abs(got-slow.Alpha)/slow.Alpha > 0.25 {
		t.Errorf("alpha %.4g after the change, want about %.4g", got, slow.Alpha)
	}
}

// A server whose prefill costs sixteen times the prior's per token (llm-d's
// vLLM emulator at 250 µs a token) and whose decode is near the prior: the
// decode samples are accepted every tick, the long prompts' prefill samples
// are far beyond the gate. Each series keeps its own run of refusals, so
// the prefill series re-widens the fit and β is learned within minutes.
func TestStepFitLearnsAPrefillFarOffThePriorBesideAcceptedDecodes(t *testing.T) {
	emu := Params{Alpha: 0.0112, Beta: 250e-6, GammaSeq: 0.0008, GammaKV: 0.0001}
	rng := rand.New(rand.NewPCG(5, 6))
	var f Fit
	prior := DefaultPrior()
	betaAt := map[int]float64{}
	for tick := 1; tick <= 40; tick++ {
		running := 1 + rng.Float64()*15
		itl := emu.Alpha + emu.GammaSeq*running
		if !f.ObserveStep(prior, StepSample{ITL: itl * (1 + 0.03*rng.NormFloat64()), PromptRate: 50, Running: running, KV: 0.1}) {
			t.Fatalf("tick %d: a decode sample on the model was refused", tick)
		}
		prompt := 5000 + rng.Float64()*3000
		f.ObservePrefill(prior, PrefillSample{Mean: 0.03 + emu.Beta*prompt, Prompt: prompt, Chunks: 1, Running: running, KV: 0.1, Requests: 12})
		betaAt[tick] = f.Params(prior).Beta
	}
	if got := betaAt[3]; got > 2*prior.Beta {
		t.Errorf("β %.3g after 3 ticks: the gate should still refuse a 16× prefill (prior %.3g)", got, prior.Beta)
	}
	if got := betaAt[resetAfterUnfitted+5]; math.Abs(got-emu.Beta)/emu.Beta > 0.3 {
		t.Errorf("β %.3g %d ticks in, want within 30%% of %.3g", got, resetAfterUnfitted+5, emu.Beta)
	}
	if got := betaAt[40]; math.Abs(got-emu.Beta)/emu.Beta > 0.1 {
		t.Errorf("β %.3g after 40 ticks, want within 10%% of %.3g", got, emu.Beta)
	}
	if got := f.Params(prior).Alpha; math.Abs(got-emu.Alpha)/emu.Alpha > 0.2 {
		t.Errorf("α %.4g after the prefill re-widening, want about %.4g", got, emu.Alpha)
	}
	if f.Prefill == 0 || f.PrefillRejected != 0 {
		t.Errorf("prefill samples accepted %d, refusals pending %d", f.Prefill, f.PrefillRejected)
	}
}

// A prefill read from the end-to-end latency less the decode (a server
// without TTFT) carries the decode's error: it moves the fit less than
// one read from TTFT − queue time, and the fit says which series it came
// from. A spread that is not a number ≥ 0 is refused.
func TestAPrefillWithASpreadCountsForLessAndNamesItsSeries(t *testing.T) {
	prior := DefaultPrior()
	slow := 2 * prior.Beta
	fit := func(spread float64, series string) Fit {
		var f Fit
		for i := 0; i < 5; i++ {
			prompt := 6000.0
			f.ObservePrefill(prior, PrefillSample{Mean: prior.Alpha + slow*prompt, Prompt: prompt, Chunks: 1, Running: 4, KV: 0.1,
				Requests: 30, Spread: spread, Series: series})
		}
		return f
	}
	exact, noisy := fit(0, ""), fit(0.5, "e2e − queue time − decode")
	moved := func(f Fit) float64 { return f.Params(prior).Beta - prior.Beta }
	if !(moved(noisy) > 0) || !(moved(noisy) < 0.8*moved(exact)) {
		t.Errorf("β moved %.3g with a 0.5 s spread, %.3g without: want less, but some", moved(noisy), moved(exact))
	}
	if _, s := exact.Source(); len(s) != 1 || s[0] != SeriesPrefill || exact.PrefillSeries != "" {
		t.Errorf("TTFT − queue time: series %v (stored %q)", s, exact.PrefillSeries)
	}
	if _, s := noisy.Source(); len(s) != 1 || s[0] != "e2e − queue time − decode" {
		t.Errorf("end to end: series %v", s)
	}
	var f Fit
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		if f.ObservePrefill(prior, PrefillSample{Mean: 0.1, Prompt: 6000, Chunks: 1, Requests: 30, Spread: bad}) {
			t.Errorf("a spread of %g was used", bad)
		}
	}
}

// A coefficient out of its box is brought back along the covariance (the
// nearest point in the filter's metric): a coefficient correlated with it
// gives back what it had taken; an uncorrelated one stays; and whatever
// the projection moves stays in its own box.
func TestProjectionMovesWhatIsCorrelatedWithTheBound(t *testing.T) {
	for _, c := range []struct {
		name  string
		theta []float64
		cov   [][]float64
		want  []float64
	}{
		{"anti-correlated: the other gives back", []float64{1, -0.5}, [][]float64{{1, -0.8}, {-0.8, 1}}, []float64{0.6, 0}},
		{"uncorrelated: the other stays", []float64{1, -0.5}, [][]float64{{1, 0}, {0, 1}}, []float64{1, 0}},
		{"no variance left: a clip", []float64{1, -0.5}, [][]float64{{1, 0}, {0, 0}}, []float64{1, 0}},
		{"the other is pushed past its own bound", []float64{0.2, -0.5}, [][]float64{{1, -0.8}, {-0.8, 1}}, []float64{0, 0}},
		{"above the box", []float64{1, 12}, [][]float64{{1, 0.5}, {0.5, 1}}, []float64{0, 10}},
		{"inside the box: nothing moves", []float64{1, 2}, [][]float64{{1, 0.5}, {0.5, 1}}, []float64{1, 2}},
	} {
		k := Kalman{Theta: append([]float64(nil), c.theta...), Cov: c.cov}
		k.project([]float64{0, 0}, []float64{10, 10})
		for i := range c.want {
			if math.Abs(k.Theta[i]-c.want[i]) > 1e-12 {
				t.Errorf("%s: θ %v, want %v", c.name, k.Theta, c.want)
				break
			}
		}
	}
}
