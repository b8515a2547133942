package sizing

import (
	"testing"

	"github.com/inferscale/inferscale/shared/fleet"
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
