package sizing

import (
	"math"

	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/forecast"
	"github.com/inferscale/inferscale/shared/model"
)

// workRate is w/τ of leastHeadroom: a request's work over the time in
// which a pod must absorb it, at the ceiling c.
//
// A prefill is due within the TTFT objective. The decode work is not: it
// lands a step at a time over the generation, the output tokens at the
// step time α/(1−c) of a pod at the ceiling, and its margin is that of
// the sequences in the batch (M/G/∞: √ of their number), not that of a
// queue of prefills. So a decode pool, whose requests arrive prefilled,
// takes its whole work over the generation; a unified or prefill pool
// takes the prefill over the objective and the rest over the generation —
// once the model is fitted from both series, which is what tells the two
// apart. On the prior or a partly fitted model (a server that exports
// fewer series: TGI's set, no TTFT) the whole work stays within the
// objective, the larger margin, as before. Taking a decode pool's answers
// as due within its 0.5 s leg priced them 10× and more (1.3 × the decode
// pods the static pair needs), and a unified pool's answers held ServeGen's
// one-pod fleets at two.
func (o Options) workRate(p model.Params, m model.Mix, c float64, fitted bool) float64 {
	w := p.Work(m)
	if !(c < 1) || !o.Decode && !fitted {
		return w / o.TTFTSLO
	}
	generation := math.Max(o.TTFTSLO, math.Max(m.OutputTokens, 1)*p.Alpha/(1-c))
	if o.Decode {
		return w / generation
	}
	prefill := math.Min(p.Beta*m.PromptTokens, w)
	return prefill/o.TTFTSLO + (w-prefill)/generation
}

// staffOver is the plan's fleet for r pods of offered load at headroom β:
// square-root staffing (Staff), and at least reserve, a share of base
// pods of load, more: the prior SurgeReserve (DecodeReserve in a decode
// pool), or what surgeReserve learned. The reserve is what meets a surge
// before new pods are ready — a flash crowd that doubles the load within
// seconds finds only the pods already there, and the pods asked
// for then arrive a startup later. The margin over the objective had
// played that part while it took a request's whole work as due within it
// (20–40 % of the load at 10–30 pods, more on fewer); with the decode
// work over its generation, the reserve is stated. A decode pool's
// overload slows its streams, where a prefill queue's misses whole
// requests, so it keeps less. Measured on the bar at 0.2–0.4 (0.1–0.35
// for the decode pools): docs/performance.md. The reserve may fall short
// of its share by ReserveTolerance of a pod (measured at 0, 0.1, 0.25 and
// 0.5: docs/performance.md, "Stop 36").
//
// The reserve is kept over base pods of load rather than r: the
// forecast's point while its upper bound is the warm-up's stand-in, which
// already covers the unforeseen (Assess).
func (o Options) staffOver(r, base, beta, reserve float64) int {
	n := Staff(r, beta, o.MaxPods)
	if !(r > 0) || !(base > 0) {
		return n
	}
	return max(n, min(reservePods(base, reserve), max(o.MaxPods, 1)))
}

// priorReserve is the surge reserve before the workload's own forecast
// errors say what its surges are.
func (o Options) priorReserve() float64 {
	if o.Decode {
		return DecodeReserve
	}
	return SurgeReserve
}

// surgeReserve is the share of its load the plan keeps for a surge, and
// whether the workload taught it. The prior (SurgeReserve, DecodeReserve
// in a decode pool) was sized for a flash crowd the forecast cannot see
// coming, and a workload that has shown none pays it in every pod: a
// ServeGen evening at 40 req/s kept 5-7 pods where 4 met every request. So
// once a full window of the forecast's horizons has resolved
// (forecast.Options.MaxScores: an hour of 15 s ticks), the reserve is
// what those horizons brought beyond the upper bound forecast for them —
// their mean demand over it, at the objective's quantile (Attainment:
// all but the objective's share of the horizons covered), less what the
// queue absorbs of a horizon over the reserve within the slack the
// objective leaves a request (slack seconds, over the horizon of h
// seconds: forecast.State.Surge) — and never more than the prior: a
// surge the window saw keeps the prior for the next hour, and larger
// ones are the latency feedback's and β's to meet. A shorter window
// would learn a calm first hour too soon: the demo's crowd comes at 40
// minutes.
func (o Options) surgeReserve(st forecast.State, fo forecast.Options, slack, h float64) (float64, bool) {
	prior := o.priorReserve()
	learned, full := st.Surge(o.Attainment, slack/math.Max(h, 1), fo)
	if !full || !(learned < prior) {
		return prior, false
	}
	return learned, true
}

// reservePods is the pods that keep reserve (a share) of base pods of load
// spare, within ReserveTolerance of a pod.
func reservePods(base, reserve float64) int {
	return int(math.Ceil(base*(1+reserve) - ReserveTolerance))
}

// minDemandPods is the least demand, in pods, the queue margin is spread
// over as β (an idle fleet's tick would otherwise divide by zero).
const minDemandPods = 0.05

// queueMargin is the margin in pods that keeps the share of requests the
// queue makes wait past slack within the headroom's aim. The backlog of a
// pooled queue fed work at a variance rate σ² = z·R·w'·c (w' the work due
// within the objective per request, workRate × τ) and drained with Δ pods
// to spare exceeds x with probability exp(−2·Δ·c·x/σ²) (reflected Brownian
// motion); a request waits past slack when the backlog exceeds the fleet's
// work over it, n·c·slack. With R/n ≤ 1 the aim ε holds for
// Δ ≥ ln(1/ε)/2 · z·w'/(c·slack): a constant number of pods, where the
// window margin grows as √R.
func (o Options) queueMargin(p model.Params, m model.Mix, z float64, fitted bool, slack float64) float64 {
	c := p.Ceiling(m, o.Limits).Utilisation
	aim := o.target()
	if w := p.Work(m); !(w > 0 && c > 0 && o.TTFTSLO > 0 && slack > 0 && aim > 0 && aim < 1) {
		return math.Inf(1)
	}
	due := o.workRate(p, m, c, fitted) * o.TTFTSLO
	return math.Log(1/aim) / 2 * max(z, 1) * due / (c * slack)
}

// queueSlack is what the objective leaves a request to wait: the TTFT
// objective less the isolated prefill of the 90th-percentile prompt (of
// the recent lengths; the mix's mean without them; one token in a decode
// pool, whose requests arrive prefilled), at least a quarter of it. Long
// prompts leave little, and the queue margin then asks more than the
// window margin, which stands.
func (o Options) queueSlack(p model.Params, prompts model.Lengths, m model.Mix) float64 {
	prompt := prompts.Quantile(0.9)
	switch {
	case o.Decode:
		prompt = 1
	case math.IsNaN(prompt):
		prompt = m.PromptTokens
	}
	return math.Max(o.TTFTSLO-p.Isolated(prompt, o.Limits.ChunkTokens), o.TTFTSLO/4)
}

// demandPods is the tick's demand in pods at the ceiling: its arrivals'
// work (1 without an arrival reading: the queue margin is then spread as
// over one pod).
func (o Options) demandPods(v fleet.View, p model.Params, m model.Mix) float64 {
	c := p.Ceiling(m, o.Limits).Utilisation
	if v.ArrivalRate == nil || !(c > 0) {
		return 1
	}
	return *v.ArrivalRate * p.Work(m) / c
}
