package model

import (
	"math"
	"testing"
)

// lengths of 1000 prompts: 900 of 1k–2k tokens and 100 of 50k–100k.
var mixed = Lengths{LE: []float64{1000, 2000, 5000, 10000, 20000, 50000, 100000}, C: []float64{0, 900, 900, 900, 900, 900, 1000}, Count: 1000}

func TestLengthsQuantileAndCDF(t *testing.T) {
	if q := mixed.Quantile(0.45); math.Abs(q-1500) > 1e-9 {
		t.Errorf("median-ish quantile %g, want 1500", q)
	}
	if c := mixed.CDF(75000); math.Abs(c-0.95) > 1e-9 {
		t.Errorf("CDF(75000) = %g, want 0.95", c)
	}
	if c := (Lengths{}).CDF(10); !math.IsNaN(c) {
		t.Errorf("empty lengths CDF %g, want NaN", c)
	}
	if n := mixed.MeanChunks(8192); n < 1.5 || n > 2.5 {
		t.Errorf("mean chunks %.2f for 10 %% of 75k-token prompts at 8192 per step", n)
	}
}

func TestQueueingMissIsWhatWaitingAdds(t *testing.T) {
	p := DefaultPrior()
	// Nothing waits: no miss is the queue's fault, whatever the prompts.
	noWait := p.QueueingMiss(mixed, 8192, 2, []float64{0.3, 0.5, 1, 2, 5}, []float64{1000, 1000, 1000, 1000, 1000}, 1000)
	if noWait > 0.03 {
		t.Errorf("nothing waits beyond 0.3 s, yet %.3f of misses are blamed on waiting", noWait)
	}
	// Everyone waits 1–2 s: short prompts still make it (1.5 + 0.05 s),
	// but a share of them do not once the wait nears 2 s.
	waited := p.QueueingMiss(mixed, 8192, 2, []float64{0.3, 0.5, 1, 2, 5}, []float64{0, 0, 0, 1000, 1000}, 1000)
	if waited < 0.05 || waited > 0.9 {
		t.Errorf("waits of 1–2 s give a queueing miss of %.3f", waited)
	}
	// Everyone waits 2–5 s: every feasible request misses.
	late := p.QueueingMiss(mixed, 8192, 2, []float64{0.3, 0.5, 1, 2, 5}, []float64{0, 0, 0, 0, 1000}, 1000)
	infeasible := 1 - mixed.CDF(p.LongestFeasible(2, 8192))
	if math.Abs(late-(1-infeasible)) > 1e-9 {
		t.Errorf("waits past the objective: queueing miss %.3f, want every feasible request (%.3f)", late, 1-infeasible)
	}
	if !(noWait <= waited && waited <= late) {
		t.Errorf("queueing miss not monotone in the wait: %.3f %.3f %.3f", noWait, waited, late)
	}
}

func TestCeilingBindsOnBatchOrKV(t *testing.T) {
	p := DefaultPrior()
	short := Mix{PromptTokens: 500, OutputTokens: 500, KVPerSeq: 0.001}
	c := p.Ceiling(short, Limits{MaxNumSeqs: 256, BatchTarget: 1, KVTarget: 0.95, MaxUtilisation: 0.95})
	if c.Bound != "batch" && c.Bound != "utilisation" {
		t.Errorf("short requests bind on %s", c.Bound)
	}
	// At the ceiling the modelled batch is at most the limit.
	w := p.Work(short)
	n := c.Utilisation / w * short.OutputTokens * p.StepAt(c.Utilisation)
	if n > 256*1.0001 {
		t.Errorf("ceiling %.3f runs %.0f sequences, more than 256", c.Utilisation, n)
	}
	long := Mix{PromptTokens: 20000, OutputTokens: 500, KVPerSeq: 0.05}
	if c := p.Ceiling(long, Limits{MaxNumSeqs: 256, BatchTarget: 1, KVTarget: 0.95, MaxUtilisation: 0.95}); c.Bound != "kv" {
		t.Errorf("20k-token contexts at 5 %% of the cache each bind on %s, want kv", c.Bound)
	}
}

// An inter-token-latency objective bounds the ceiling where the step time
// at the planned load would exceed it, and only there.
func TestCeilingKeepsTheStepWithinTheITLObjective(t *testing.T) {
	p := DefaultPrior()
	m := Mix{PromptTokens: 500, OutputTokens: 500, KVPerSeq: 0.001}
	l := Limits{MaxNumSeqs: 256, BatchTarget: 1, KVTarget: 0.95, MaxUtilisation: 0.95}
	loose := p.Ceiling(m, l)
	for _, c := range []struct {
		name      string
		objective float64
		bound     string
	}{
		{"none", 0, loose.Bound},
		{"looser than the ceiling's step", 2 * p.StepAt(loose.Utilisation), loose.Bound},
		{"twice the empty step", 2 * p.Alpha, "itl"},
		{"below the empty step: no bound, said", 0.5 * p.Alpha, loose.Bound},
	} {
		l.StepObjective = c.objective
		got := p.Ceiling(m, l)
		if got.Bound != c.bound {
			t.Errorf("%s: bound %s, want %s", c.name, got.Bound, c.bound)
		}
		unmet := c.objective > 0 && c.objective < p.Alpha
		if got.StepUnmet != unmet {
			t.Errorf("%s: StepUnmet %v, want %v", c.name, got.StepUnmet, unmet)
		}
		if c.objective > 0 && !unmet && p.StepAt(got.Utilisation) > c.objective*1.0001 {
			t.Errorf("%s: step %.4gs at the ceiling, above the objective %.4gs", c.name, p.StepAt(got.Utilisation), c.objective)
		}
		if unmet && got.Utilisation != loose.Utilisation {
			t.Errorf("%s: ceiling %.3g, want the unbounded %.3g (more pods do not shorten a step)", c.name, got.Utilisation, loose.Utilisation)
		}
	}
}
