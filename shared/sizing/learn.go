package sizing

import (
	"math"

	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/model"
	"github.com/inferscale/inferscale/shared/state"
)

// learn fits the iteration-time model to each pod's tick and updates the
// mix and prompt lengths. A decode pool's TTFT − queue time is not a
// prefill: its requests arrive with their prompt's KV, and what that time
// holds depends on the connector (one step under NIXL; the transfer wait
// too under a synchronous one: docs/roles.md). Paired with the whole
// prompt's chunks, it told the fit that six steps took what one does, and
// drove α to its bound within three minutes: the ceiling then priced a
// request 5× what its inter-token gaps said. So a decode pool fits from
// its inter-token gaps alone.
func learn(next *state.Service, svc fleet.Service, o Options) {
	fitPods(next, svc, o)
	learnMix(next, svc, o)
}

// minGaps is the fewest inter-token gaps whose mean the fit reads as a
// pod's step time.
const minGaps = 20

// fitPods folds each pod's tick into the fit: its decode steps (the
// inter-token gaps) and, outside a decode pool, its prefills.
func fitPods(next *state.Service, svc fleet.Service, o Options) {
	for _, ps := range svc.Pods {
		if ps.ITLCount >= minGaps {
			// The batch the tick's steps carried is what Little's law says
			// (output tokens/s × seconds per token), not the mean of two
			// gauge readings: the batch turns over several times in a tick,
			// and a noisy regressor flattens the fitted slope. The KV usage
			// is scaled alike.
			run := ps.OutputRate * ps.ITL
			next.Fit.ObserveStep(o.Prior, model.StepSample{ITL: ps.ITL, PromptRate: o.servedPromptRate(ps), Running: run, KV: kvAt(ps, next.Mix, run)})
		}
		if ps.Prefills >= 3 && ps.PromptMean > 0 && !o.Decode {
			chunks := math.Max(1, math.Ceil(ps.PromptMean/math.Max(o.Limits.ChunkTokens, 1)))
			if ps.Prompts.Count > 0 {
				chunks = lengths(ps.Prompts).MeanChunks(o.Limits.ChunkTokens)
			}
			next.Fit.ObservePrefill(o.Prior, model.PrefillSample{Mean: ps.Prefill, Prompt: ps.PromptMean,
				Chunks: chunks, Running: ps.Running, KV: kvAt(ps, next.Mix, ps.Running), Requests: ps.Prefills,
				Shared: sharedTokens(ps, chunks, o.Limits.ChunkTokens),
				Spread: ps.PrefillSpread, Series: ps.PrefillSeries})
		}
	}
}

// sharedTokens is the other prompts' tokens each step of a prefill
// carried: a prompt admitted at a step boundary shares the step with the
// prompts admitted beside it and the chunks still going, as many tokens as
// a step prefills on average (prompt tokens/s × seconds per step), within
// what the budget leaves it. Unread, the fit took BLIS's prefill steps,
// which carry 300-900 other tokens at load, for a β 30-60 % above the
// engine's, then refused the crowd's decode steps that said otherwise
// until a run of refusals re-widened it with α at its floor, and the plan
// priced a request at twice its work (the demo ×4 at half speed: 57 pods
// where 21 static ones meet it). 0 without an inter-token mean to read
// the step from.
func sharedTokens(ps fleet.PodService, chunks, budget float64) float64 {
	if ps.ITLCount < minGaps || !(ps.PromptRate > 0) {
		return 0
	}
	shared := ps.PromptRate * ps.ITL
	if budget > 0 {
		shared = math.Min(shared, math.Max(budget-ps.PromptMean/chunks, 0))
	}
	return shared
}

// learnMix folds the tick's finished requests into the request mix (mean
// prompt and output tokens, a sequence's KV share) and the prompt lengths,
// fading the old with mixHalfLife.
func learnMix(next *state.Service, svc fleet.Service, o Options) {
	decay := math.Exp2(-o.Interval / mixHalfLife)
	w := next.MixWeight * decay
	m := next.Mix
	if m.PromptTokens == 0 && m.OutputTokens == 0 {
		// A fresh memory: the running sequences count at the prior's mix.
		m = defaultMix
	}
	running := 0.0 // the running sequences, where the pods report them
	if svc.Running > 0 {
		running = svc.Running
	}
	if n := svc.Prompts.Count; n > 0 {
		m.PromptTokens = (m.PromptTokens*w + svc.Prompts.Sum) / (w + n)
		next.Prompts = next.Prompts.Decayed(decay, lengths(svc.Prompts))
	}
	if n := svc.Outputs.Count; n > 0 {
		// The requests that finished are those whose outputs were short
		// enough to finish: while a young batch has not turned over (a
		// cold start, 512 sequences running and 156 finished), they are
		// its short ones. The running sequences count at the mean so far
		// until they finish and are counted: the first tick of a cold
		// start read 52 output tokens of a workload whose mean is 160 and
		// priced a request at 0.036 GPU-s where it takes 0.09: the plan
		// sized the cold start at two-fifths of its load. A batch that
		// turns over within the tick barely slows the mean, and does not
		// bias it.
		m.OutputTokens = (m.OutputTokens*(w+running) + svc.Outputs.Sum) / (w + running + n)
	}
	// Without length histograms the token counters over the requests that
	// got their first token give the same means (a tick's started and
	// finished requests differ little over a window of ticks).
	counted := 0.0
	if n := svc.TTFT.Count; n > 0 && svc.Prompts.Count == 0 && svc.PromptTokens > 0 {
		m.PromptTokens = (m.PromptTokens*w + svc.PromptTokens) / (w + n)
		counted = n
	}
	if n := svc.TTFT.Count; n > 0 && svc.Outputs.Count == 0 && svc.OutputTokens > 0 {
		// The tokens a young batch generated so far, over the requests
		// it started, are a part of their outputs: the running sequences
		// count at the mean so far here too. They are among the started,
		// so this halves a cold start's shortfall rather than removing it.
		m.OutputTokens = (m.OutputTokens*(w+running) + svc.OutputTokens) / (w + running + n)
		counted = n
	}
	switch {
	case svc.KVRunning > 0:
		phi := svc.KV / svc.KVRunning
		k := math.Min(w, 100)
		m.KVPerSeq = (m.KVPerSeq*k + phi) / (k + 1)
	case svc.Running > 0:
		// No pod reads its KV cache (TGI): a sequence's share is its
		// context at the prior's share per token, not nothing. Read as 0,
		// the missing gauge priced a decode step without its KV reads and
		// lifted the KV bound: TGI's long prompts were planned at half
		// their work.
		m.KVPerSeq = contextKV(m)
	}
	next.Mix, next.MixWeight = m, w+math.Max(svc.Prompts.Count, counted)
	if next.Mix.PromptTokens == 0 && next.Mix.OutputTokens == 0 {
		next.Mix = defaultMix
	}
}

// contextKV is the KV share of a sequence of mix m where no pod reads
// its KV cache: its mean context (the prompt and half the output) at the
// default mix's share per token (Llama-3.1-8B on one H100-80GB, the
// prior: about 370,000 tokens of cache).
func contextKV(m model.Mix) float64 {
	perToken := defaultMix.KVPerSeq / (defaultMix.PromptTokens + defaultMix.OutputTokens/2)
	return perToken * (m.PromptTokens + m.OutputTokens/2)
}

// kvAt is a pod's KV usage at running sequences: its reading scaled from
// the gauges' running count to them, or where it has no reading the
// mix's share of each.
func kvAt(ps fleet.PodService, m model.Mix, running float64) float64 {
	switch {
	case !ps.KVRead:
		return m.KVPerSeq * running
	case ps.Running > 0:
		return ps.KV * running / ps.Running
	}
	return ps.KV
}
