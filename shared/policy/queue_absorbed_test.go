package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/model"
	"github.com/inferscale/inferscale/shared/sizing"
)

// A queue over its target whose last request the ready pods start in time
// (with no prompt length known, within half the objective), with capacity to spare, the plan fitted and its need
// met, is a burst the queues absorb: not over. Any of those missing, it
// stands. What counts is the wait, not the time the backlog takes to
// empty while arrivals keep coming.
func TestAQueueTheReadyPodsStartInTimeIsNotPressure(t *testing.T) {
	cfg := Config{QueueTarget: 3, TTFTSLO: 2 * time.Second}
	rps := 7.7
	plan := func(source string, need int) *sizing.Assessment {
		return &sizing.Assessment{Valid: true, ParamsSource: source, Need: need, ArrivalRate: rps,
			Ceiling: model.Ceiling{Utilisation: 0.95, RequestsPerSecond: 18}}
	}
	burst := Input{View: fleet.View{Ready: 1, Waiting: 9}, Current: 1}
	for _, c := range []struct {
		name string
		plan *sizing.Assessment
		// waiting on the one pod
		waiting float64
		over    bool
	}{
		{"fitted, need met, the last starts within 0.5 s", plan("fitted", 1), 9, false},
		{"the last of 15 starts within 0.83 s, though the backlog takes 1.5 s to empty", plan("fitted", 1), 15, false},
		{"partly fitted", plan("partly fitted", 1), 9, false},
		{"the prior: the ceiling is a guess", plan("prior", 1), 9, true},
		{"policy v1: no plan", nil, 9, true},
		{"the plan needs more pods than are ready", plan("fitted", 2), 9, true},
		{"the last of 30 starts after 1.7 s, past half the objective (no prompt length known)", plan("fitted", 1), 30, true},
	} {
		in := burst
		in.Plan, in.Waiting = c.plan, c.waiting
		r := queue(in, cfg)
		if r.Over != c.over {
			t.Errorf("%s: over %v, want %v (note %q)", c.name, r.Over, c.over, r.Note)
		}
		if !r.Over && (r.Proposal != 0 || !strings.Contains(r.Note, "absorbed within the objective")) {
			t.Errorf("%s: an absorbed queue proposes %d, note %q", c.name, r.Proposal, r.Note)
		}
	}
	// A concurrency target (waiting and running) is not a backlog.
	conc := cfg
	conc.QueueIncludesRunning = true
	in := burst
	in.Plan = plan("fitted", 1)
	if r := queue(in, conc); !r.Over {
		t.Errorf("queueIncludesRunning: the waiting+running target was judged a drained backlog: %q", r.Note)
	}
	// Arrivals at or past the ready pods' ceiling: nothing spare drains it.
	in.Plan.ArrivalRate = 18
	if r := queue(in, cfg); !r.Over {
		t.Errorf("no spare capacity, yet the queue was absorbed: %q", r.Note)
	}
}

// The last waiting request may wait what the objective leaves beyond its
// own prefill (the mix's mean prompt at the fitted model), and at least
// half the objective: short prompts leave it almost all, long ones half.
func TestAQueueMayWaitWhatItsPrefillLeavesOfTheObjective(t *testing.T) {
	cfg := Config{QueueTarget: 3, TTFTSLO: 2 * time.Second, MaxNumBatchedTokens: 8192}
	plan := func(prompt float64) *sizing.Assessment {
		return &sizing.Assessment{Valid: true, ParamsSource: "fitted", Need: 1, ArrivalRate: 6,
			Params: model.Params{Alpha: 0.006, Beta: 2e-4}, Mix: model.Mix{PromptTokens: prompt},
			Ceiling: model.Ceiling{Utilisation: 0.95, RequestsPerSecond: 18}}
	}
	for _, c := range []struct {
		name            string
		prompt, waiting float64
		over            bool
	}{
		{"500-token prompts (0.1 s each): the last of 30 starts after 1.67 s", 500, 30, false},
		{"500-token prompts: the last of 36 after 2 s", 500, 36, true},
		{"4,000-token prompts (0.81 s): the last of 20 starts after 1.11 s, within 1.19", 4000, 20, false},
		{"4,000-token prompts: the last of 24 after 1.33 s", 4000, 24, true},
		{"8,000-token prompts (1.6 s): half the objective, and 20 wait 1.11 s", 8000, 20, true},
		{"8,000-token prompts: 17 wait 0.94 s", 8000, 17, false},
		{"no prompt length known (Triton): half the objective, and 20 wait 1.11 s", 0, 20, true},
	} {
		in := Input{View: fleet.View{Ready: 1, Waiting: c.waiting}, Current: 1, Plan: plan(c.prompt)}
		if r := queue(in, cfg); r.Over != c.over {
			t.Errorf("%s: over %v, want %v (note %q)", c.name, r.Over, c.over, r.Note)
		}
	}
}
