package sizing

import (
	"math"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/model"
	"github.com/inferscale/inferscale/shared/state"
)

// A prefill's steps carry the tokens a step prefills on average beside
// it, within what the step's budget leaves its own chunk; without an
// inter-token mean there is no step to read them from.
func TestAPrefillSharesWhatAStepPrefillsWithinTheBudget(t *testing.T) {
	busy := fleet.PodService{ITL: 0.04, ITLCount: 500, PromptRate: 20000, PromptMean: 1150}
	for _, c := range []struct {
		name           string
		pod            fleet.PodService
		chunks, budget float64
		want           float64
	}{
		{"a busy pod: 20,000 prompt tokens/s at 40 ms a step", busy, 1, 8192, 800},
		{"no budget known: uncapped", busy, 1, 0, 800},
		{"a budget of 1,500 leaves 350 beside the chunk", busy, 1, 1500, 350},
		{"a prompt of two chunks leaves 1,000 − 575 a step", busy, 2, 1000, 425},
		{"a chunk that fills the budget shares nothing", busy, 1, 1000, 0},
		{"too few inter-token gaps to read a step", fleet.PodService{ITL: 0.04, ITLCount: 19, PromptRate: 20000, PromptMean: 1150}, 1, 8192, 0},
		{"no inter-token histogram", fleet.PodService{PromptRate: 20000, PromptMean: 1150}, 1, 8192, 0},
		{"no prompts prefilled", fleet.PodService{ITL: 0.04, ITLCount: 500, PromptMean: 1150}, 1, 8192, 0},
	} {
		if got := sharedTokens(c.pod, c.chunks, c.budget); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("%s: %g tokens beside the prefill, want %g", c.name, got, c.want)
		}
	}
}

// A decode pool's prompts arrive with their KV: the prompt tokens its
// pods count were transferred, not prefilled, and its steps carry none of
// them. Read as prefill on an engine whose decode step hardly varies with
// the batch (BLIS's: 2.9 ms at GPU speed 2), they left β, α and γs to
// share a flat step, and γs rose to 200 times the engine's.
func TestADecodePoolsStepsPrefillNoneOfItsPrompts(t *testing.T) {
	fitted := func(decode bool) model.Params {
		st := fitPool(decode, 60, view(2, 20), func(i int) fleet.PodService {
			run := 8 + float64(i%7)
			step := 0.0029 + 3e-6*run
			return fleet.PodService{Name: "d", Seconds: 15, ITL: step, ITLCount: 2000,
				PromptRate: 20 * 1150 * (1 + 0.2*float64(i%3)), OutputRate: run / step}
		})
		if st.Fit.StepSamples() == 0 {
			t.Fatalf("decode %v: the fit took no step sample", decode)
		}
		return st.Fit.Params(model.DefaultPrior())
	}
	prior := model.DefaultPrior()
	if u := fitted(false); u.Beta == prior.Beta {
		t.Fatal("a unified pool's β did not move: the test proves nothing")
	}
	d := fitted(true)
	if d.Beta != prior.Beta {
		t.Errorf("a decode pool's β moved %.4g → %.4g on prompts it never prefilled", prior.Beta, d.Beta)
	}
	if got := d.Step(0, 11, 0); math.Abs(got-0.0029)/0.0029 > 0.1 {
		t.Errorf("a decode pool's step at 11 sequences fitted %.4g s (%+v), the engine's 2.9 ms", got, d)
	}
}

// fitPool is the state of a unified or decode pool (options()) after a
// tick every 15 s of v with the one pod pod(i) shows.
func fitPool(decode bool, ticks int, v fleet.View, pod func(i int) fleet.PodService) state.Service {
	o := options()
	o.Decode = decode
	var st state.Service
	for i := range ticks {
		v.Service.Pods = []fleet.PodService{pod(i)}
		_, st = Assess(v, st, o, t0.Add(time.Duration(i)*15*time.Second))
	}
	return st
}
