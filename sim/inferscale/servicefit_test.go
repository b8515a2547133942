package inferscale_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/model"
	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/inferscale"
	"github.com/inferscale/inferscale/sim/runner"
	"github.com/inferscale/inferscale/sim/workload"
)

// fitWorkload is 45 minutes of a diurnal swing (8 to 32 req/s, peak at
// 22 min) with a wide mix of prompt lengths (log-normal, median 700, mean
// 1,500, 16 to 16,384 tokens) and conversation-sized outputs (mean 211):
// the per-pod load, the prompt tokens per step and the fleet all move, so
// the fit sees more than one operating point.
func fitWorkload(t *testing.T) []workload.Request {
	t.Helper()
	return collect(t, workload.Synthetic(workload.SyntheticOptions{
		Duration: 45 * time.Minute, BaseRate: 20, DiurnalAmplitude: 0.6, DiurnalPeriod: 45 * time.Minute,
		PeakAt: 22 * time.Minute, Seed: 7, Input: workload.TokenLaw{Median: 700, Mean: 1500, Min: 16, Max: 16384},
	}))
}

func collect(t *testing.T, src workload.Source) []workload.Request {
	t.Helper()
	reqs, err := workload.All(src)
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

// engineTruth is what the engine's time model (engine.Model.Iteration)
// charges the requests of a trace, in the service model's terms.
type engineTruth struct {
	// Alpha is IterBase, GammaSeq PerDecodeSeq, GammaKV PerKVToken ×
	// KVCapacity (the model's KV regressor is the usage share, 0-1).
	Alpha, GammaSeq, GammaKV float64
	// Beta is the per-prompt-token cost a linear β can represent: the
	// engine charges a prompt of n tokens PerPrefillToken·n +
	// PerAttnPair·n²/2 (causal attention, however it is chunked), so over
	// the trace's prompts the mean cost per prompt token is
	// PerPrefillToken + PerAttnPair·Σn²/(2·Σn).
	Beta float64
	// Work is the mean GPU-seconds one request costs beyond the fixed step
	// cost (what model.Params.Work estimates): its prefill (GEMMs,
	// attention, and its prompt's KV read in each of its chunks' steps)
	// and, for each of its out−1 decode steps, PerDecodeSeq plus its KV
	// read (n+1 … n+out−1 tokens).
	Work float64
}

func truthOf(m engine.Model, reqs []workload.Request) engineTruth {
	var sumIn, sumIn2, work float64
	for _, r := range reqs {
		n, o := float64(max(r.InputTokens, 1)), float64(max(r.OutputTokens, 1))
		chunks := math.Ceil(n / float64(m.MaxBatchTokens))
		sumIn += n
		sumIn2 += n * n
		work += m.PerPrefillToken*n + m.PerAttnPair*n*n/2 + m.PerKVToken*n*chunks +
			(o-1)*m.PerDecodeSeq + m.PerKVToken*((o-1)*(n+1)+(o-1)*(o-2)/2)
	}
	return engineTruth{Alpha: m.IterBase, GammaSeq: m.PerDecodeSeq, GammaKV: m.PerKVToken * float64(m.KVCapacity),
		Beta: m.PerPrefillToken + m.PerAttnPair*sumIn2/(2*sumIn), Work: work / float64(len(reqs))}
}

func (e engineTruth) params() model.Params {
	return model.Params{Alpha: e.Alpha, Beta: e.Beta, GammaSeq: e.GammaSeq, GammaKV: e.GammaKV}
}

// TestServiceFitRecoversEngineCoefficients guards the service model's
// online fit end to end: the engine's pods, their vLLM-named counters and
// histograms, fleet.Service's per-pod readings, sizing's samples and
// model.Fit's Kalman filter must together recover the simulated server's
// iteration-time coefficients, starting from model.DefaultPrior (the
// speed-1 engine, with its older 32 µs β) whatever the GPU speed.
//
// Expected relations and tolerances (what a correct fit achieves on this
// workload):
//   - α ≈ IterBase within 10 %;
//   - β ≈ PerPrefillToken + the attention cost averaged over the trace's
//     prompt tokens (engineTruth.Beta) within 12 %: since the prefill
//     samples' steps carry the other prompts' tokens (stop 44), β is the
//     cost a prompt token adds to a shared step, and at half speed, where
//     a step carries twice the tokens, it reads 10.3 % under that figure
//     (6.0 % before; 8.4 % against 6.0 % on the engine without attention),
//     while the work per request stays within 1.1 %;
//   - γs and γkv are not asserted one by one: at a fixed mix the KV usage
//     is the running batch times the KV share of one sequence (φ ≈ 0.0045
//     here, the cache under 5 % full), so the two regressors are collinear
//     and only the decode cost per output token γs + γkv·φ is identified;
//     it must be within 15 % of PerDecodeSeq + PerKVToken·KVCapacity·φ;
//   - what sizing uses, Params.Work(mix) for the mix the state learned,
//     within 5 % of the engine's true GPU-seconds per request
//     (engineTruth.Work), and closer to it than the prior; the engine's
//     own coefficients must give that figure within 8 % with the same mix
//     (so the mix and φ are right and the rest of the gap is the fit's).
//
// Known defect of policy v2 as merged; this test fails at speeds 1 and 2
// until it is fixed. The fit under-estimates the decode cost per output
// token by 33 % at speed 1, 50 % at speed 2 and 11 % at speed 0.5, and
// over-estimates α by 10 %, 12 % and 3 %, so Work is 25 %, 37 % and 10 %
// low (at speed 1 the fit ends further from the engine than the prior).
// The cause is structural, in the step samples: their running-batch
// regressor is the mean of two gauge readings at the tick's ends
// (fleet.PodService.Running), a noisy measure of the batch the tick's
// inter-token gaps saw (the batch turns over several times in 15 s), so
// the slope is attenuated and the intercept raised (regression dilution:
// ordinary least squares on the same samples shows it too, while the
// engine's true coefficients predict the samples' mean inter-token gap
// within 1.5 %). With the batch the counters imply over the same interval
// instead (Little's law: output tokens/s × mean inter-token gap, KV scaled
// alike) the same replays give α within 2.8 %, β 7.1 %, the decode cost
// 2.3 % and Work 1.9 % at all three speeds.
func TestServiceFitRecoversEngineCoefficients(t *testing.T) {
	reqs := fitWorkload(t)
	for _, speed := range []float64{1, 2, 0.5} {
		t.Run(fmt.Sprintf("gpu-speed=%g", speed), func(t *testing.T) {
			cfg := engine.DefaultConfig()
			cfg.Model = cfg.Model.Scaled(speed)
			cfg.MaxReplicas, cfg.InitialReplicas = 32, 3
			b, err := runner.Build(runner.Spec{Name: "inferscale"}, cfg, runner.Options{Mode: runner.Fast})
			if err != nil {
				t.Fatal(err)
			}
			f := b.Policy.(*inferscale.Fast)
			res, err := runner.Run(context.Background(), cfg, reqs, b)
			if err != nil {
				t.Fatal(err)
			}
			if res.PolicyErrors > 0 {
				t.Fatalf("%d failed ticks, first: %s", res.PolicyErrors, res.FirstPolicyError)
			}
			svc := f.State().Service
			if svc == nil {
				t.Fatal("policy v2 left no service memory")
			}
			prior := model.DefaultPrior()
			fit, truth := svc.Fit.Params(prior), truthOf(cfg.Model, reqs)
			if n := svc.Fit.StepSamples(); n < 500 {
				t.Fatalf("the fit accepted only %d samples in 45 minutes", n)
			}
			phi := svc.Mix.KVPerSeq
			decode := func(p model.Params) float64 { return p.GammaSeq + p.GammaKV*phi }
			rel := func(got, want float64) float64 { return got/want - 1 }
			t.Logf("%d samples, mix %.0f in / %.0f out, φ %.4f", svc.Fit.StepSamples(), svc.Mix.PromptTokens, svc.Mix.OutputTokens, phi)
			t.Logf("α %.4g s vs %.4g (%+.1f%%), β %.4g vs %.4g (%+.1f%%), γs %.3g vs %.3g, γkv %.3g vs %.3g",
				fit.Alpha, truth.Alpha, 100*rel(fit.Alpha, truth.Alpha), fit.Beta, truth.Beta, 100*rel(fit.Beta, truth.Beta),
				fit.GammaSeq, truth.GammaSeq, fit.GammaKV, truth.GammaKV)
			work, trueWork := fit.Work(svc.Mix), truth.params().Work(svc.Mix)
			t.Logf("decode cost per output token %.4g vs %.4g (%+.1f%%); work per request %.4g s vs the engine's %.4g (%+.1f%%; the engine's coefficients at the learned mix: %.4g, prior: %.4g)",
				decode(fit), decode(truth.params()), 100*rel(decode(fit), decode(truth.params())),
				work, truth.Work, 100*rel(work, truth.Work), trueWork, prior.Work(svc.Mix))

			if e := rel(trueWork, truth.Work); math.Abs(e) > 0.08 {
				t.Errorf("the engine's coefficients at the learned mix give %.4g s per request, the engine charges %.4g (%+.1f%%): the mix or φ is off", trueWork, truth.Work, 100*e)
			}
			if e := rel(fit.Alpha, truth.Alpha); math.Abs(e) > 0.10 {
				t.Errorf("α %.4g s, engine IterBase %.4g (%+.1f%%, want within 10%%)", fit.Alpha, truth.Alpha, 100*e)
			}
			if e := rel(fit.Beta, truth.Beta); math.Abs(e) > 0.12 {
				t.Errorf("β %.4g s, engine per prompt token incl. attention %.4g (%+.1f%%, want within 12%%)", fit.Beta, truth.Beta, 100*e)
			}
			if e := rel(decode(fit), decode(truth.params())); math.Abs(e) > 0.15 {
				t.Errorf("decode cost per output token γs+γkv·φ %.4g s, engine %.4g (%+.1f%%, want within 15%%)", decode(fit), decode(truth.params()), 100*e)
			}
			if e := rel(work, truth.Work); math.Abs(e) > 0.05 {
				t.Errorf("work per request %.4g s, engine %.4g (%+.1f%%, want within 5%%)", work, truth.Work, 100*e)
			}
			// Where the prior is off (another GPU speed), the fit must have
			// moved toward the engine; at speed 1 the prior is the engine's
			// own calibration, and the within-10 % check above is the test.
			if priorErr := math.Abs(rel(prior.Work(svc.Mix), truth.Work)); priorErr > 0.10 && math.Abs(work-truth.Work) >= math.Abs(prior.Work(svc.Mix)-truth.Work) {
				t.Errorf("the fit (%.4g s per request) is no closer to the engine (%.4g) than the prior (%.4g)", work, truth.Work, prior.Work(svc.Mix))
			}
		})
	}
}
