// Package oracle is the clairvoyant lower bound on GPU-hours: a policy that
// knows every arrival and the pods' startup time in advance.
//
// It turns the trace into GPU work per 20 s window with the engine's own
// per-iteration time model, sizes each block of windows' Ready replicas
// for that work at a utilisation u, creates pods one startup time ahead of
// need and deletes them as soon as no block within one startup time needs
// them. Search replays the trace and, for each block size (20 s, 1 min,
// 5 min), bisects u for the largest value (the fewest GPU-hours) whose TTFT
// attainment over the feasible requests still meets the target, and
// compares with the cheapest static fleet that does: the oracle is the
// cheapest of them all.
//
// The oracle is drain-aware: on a scale-down it marks the idlest Ready pods
// lowest with pod-deletion-cost (so the ReplicaSet deletes them), and a
// plan that kills any request at scale-down never counts as meeting the
// target.
package oracle

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/scaler"
	"github.com/inferscale/inferscale/sim/workload"
)

// Version names the oracle's search; bump it with any change that can
// alter its result (cached results are keyed by it and engine.Version).
const Version = "2026-12-prefilled-work"

// WindowSeconds is the planning granularity.
const WindowSeconds = 20

// decodeBatch is the batch size the decode cost per token is priced at.
const decodeBatch = 32

// Plan is a replica schedule: Replicas[i] is spec.replicas from
// i·StepSeconds on.
type Plan struct {
	StepSeconds float64
	Replicas    []int
	Name        string
	// Origin is the wall time of trace offset 0 (engine.Config.Base); zero
	// means engine.DefaultConfig().Base.
	Origin time.Time
}

// Policy replays a Plan as an Autoscaler.
type Policy struct {
	plan  Plan
	costs map[string]int32
}

// NewPolicy wraps a plan.
func NewPolicy(p Plan) *Policy { return &Policy{plan: p} }

// Name implements scaler.Autoscaler.
func (p *Policy) Name() string {
	if p.plan.Name != "" {
		return p.plan.Name
	}
	return "oracle"
}

// Period implements scaler.Autoscaler.
func (p *Policy) Period() time.Duration {
	return time.Duration(p.plan.StepSeconds * float64(time.Second))
}

// Recommend implements scaler.Autoscaler.
func (p *Policy) Recommend(obs scaler.Observation) (int, error) {
	n := p.At(obs.Now)
	p.costs = idlestFirst(obs, n)
	return n, nil
}

// DeletionCosts implements scaler.DeletionCoster: the costs of the last
// Recommend.
func (p *Policy) DeletionCosts() map[string]int32 { return p.costs }

// idlestFirst returns, when n is below the pods not yet deleted, a
// pod-deletion-cost for every Ready pod: the requests it holds (running +
// waiting in its newest delivered scrape, 0 without one), so that the
// ReplicaSet deletes the idlest first. Not-Ready pods go first anyway.
func idlestFirst(obs scaler.Observation, n int) map[string]int32 {
	active := 0
	for _, pv := range obs.Pods {
		if pv.Phase != scaler.Draining {
			active++
		}
	}
	if n >= active {
		return nil
	}
	costs := map[string]int32{}
	for _, pv := range obs.Pods {
		if pv.Phase != scaler.Ready {
			continue
		}
		load := 0.0
		if m := pv.Metrics; m != nil {
			if m.Running != nil {
				load += *m.Running
			}
			if m.Waiting != nil {
				load += *m.Waiting
			}
		}
		costs[pv.Name] = int32(min(load, math.MaxInt32))
	}
	return costs
}

// meets reports whether a replay meets the target drain-aware: the
// attainment over the feasible requests, and nothing killed by scale-down
// (and, with o.ITL, the inter-token gaps within the objective; with
// o.E2ETarget, the requests answered within the end-to-end one).
func meets(res *engine.Result, o Options) bool {
	return res.FeasibleTTFTAttainment() >= o.Target && res.Killed == 0 && (!o.ITL || res.ITLAttainment() >= o.Target) &&
		res.E2EAttainment() >= o.E2ETarget
}

// At is the planned replicas at wall time t.
func (p *Policy) At(t time.Time) int {
	origin := p.plan.Origin
	if origin.IsZero() {
		origin = engine.DefaultConfig().Base
	}
	i := int(t.Sub(origin).Seconds() / p.plan.StepSeconds)
	if len(p.plan.Replicas) == 0 {
		return 1
	}
	return p.plan.Replicas[min(max(i, 0), len(p.plan.Replicas)-1)]
}

// Work returns the GPU-seconds of serving work arriving in each window
// (a prefilled request's prompt is not computed again).
func Work(reqs []workload.Request, m engine.Model) []float64 {
	if len(reqs) == 0 {
		return nil
	}
	n := int(reqs[len(reqs)-1].Arrival.Seconds()/WindowSeconds) + 1
	w := make([]float64, n)
	perTok := m.PerDecodeSeq + m.IterBase/decodeBatch
	for _, r := range reqs {
		i := int(r.Arrival.Seconds() / WindowSeconds)
		in, out := float64(max(r.InputTokens, 1)), float64(max(r.OutputTokens, 1))
		// A prefilled request (a decode pool's) brings its prompt's KV:
		// the pool computes its last token only, but reads the whole
		// context every step.
		computed := in
		if r.Prefilled {
			computed = 1
		}
		w[i] += m.PerPrefillToken*computed + m.PerAttnPair*computed*computed/2 + (out-1)*(perTok+m.PerKVToken*(in+out/2))
	}
	return w
}

// Build makes the plan for utilisation u with needs sized per block of
// `block` windows: each block needs ceil(work/(u·block·window)) Ready
// replicas (at least minR, and at least one while requests arrive; half
// of a block's need spills into the next, for work arriving late in it).
// A pod is asked for lead seconds before its block and kept while any
// block up to lead ahead needs it.
func Build(work []float64, u float64, lead float64, minR, maxR int, step float64, block int) Plan {
	block = max(block, 1)
	need := make([]int, len(work)+block)
	span := u * WindowSeconds * float64(block)
	for b := 0; b*block < len(work); b++ {
		w := 0.0
		for i := b * block; i < min((b+1)*block, len(work)); i++ {
			w += work[i]
		}
		n := int(math.Ceil(w / span))
		if w > 0 {
			n = max(n, 1)
		}
		spill := int(math.Ceil(0.5 * w / span))
		for i := b * block; i < (b+1)*block; i++ {
			need[i] = max(need[i], n)
			if i+block < len(need) {
				need[i+block] = max(need[i+block], spill)
			}
		}
	}
	horizon := float64(len(need)) * WindowSeconds
	steps := int(math.Ceil(horizon/step)) + 1
	p := Plan{StepSeconds: step, Replicas: make([]int, steps)}
	for k := range p.Replicas {
		t := float64(k) * step
		lo := int(t / WindowSeconds)
		hi := int((t + lead + step) / WindowSeconds)
		r := minR
		for i := lo; i <= hi && i < len(need); i++ {
			r = max(r, need[i])
		}
		p.Replicas[k] = min(max(r, minR), maxR)
	}
	return p
}

// Blocks returns the planning granularities Search tries, in windows:
// 20 s, 1 min and 5 min. Finer plans follow the load closely but churn
// pods (each new pod pays a startup); coarser ones hold capacity longer.
func Blocks() []int { return []int{1, 3, 15} }

// Result is the oracle found by Search.
type Result struct {
	Plan        Plan
	Run         *engine.Result
	Utilisation float64 // u of the chosen plan; 0 when the static fleet won
	Static      int     // replicas of the cheapest static fleet that meets the target (0: none does)
	Replays     int
}

// Options tune Search.
type Options struct {
	Target float64 // TTFT attainment objective, e.g. 0.99
	// ITL holds the inter-token objective too: a plan meets the target
	// only when that share of the gaps is within Config.TPOTSLOSeconds
	// (engine.Result.ITLAttainment; a decode pool's oracle).
	ITL bool
	// E2ETarget, when above 0, holds the end-to-end objective too: a plan
	// meets the target only when that share of the requests is answered
	// within it (engine.Result.E2EAttainment). Without it the cheapest plan
	// may run its pods' batches so full that streams slow past it (the
	// demo at half GPU speed: 99.5 % within the TTFT objective, 37 % end to
	// end).
	E2ETarget float64
	LeadQ     float64 // startup quantile used as lead time (default 0.99)
	Step      float64 // plan step in seconds (default 5)
	MaxReplay int     // bisection steps per planning granularity (default 10)
	// OnReplay, when set, is called after every replay (progress).
	OnReplay func(replays int)
}

// MaxReplays bounds how many replays Search makes with opts (for
// progress bars): bisections per block size plus the static search.
func (o Options) MaxReplays(maxReplicas int) int {
	n := o.MaxReplay
	if n == 0 {
		n = 10
	}
	return n*len(Blocks()) + int(math.Ceil(math.Log2(float64(max(maxReplicas, 1))))) + 2
}

// Search finds the cheapest plan meeting opts.Target by replay.
func Search(ctx context.Context, cfg engine.Config, reqs []workload.Request, opts Options) (*Result, error) {
	if len(reqs) == 0 {
		return nil, errors.New("oracle: empty workload")
	}
	if opts.Target <= 0 || opts.Target > 1 {
		return nil, fmt.Errorf("oracle: target attainment %g must be in (0, 1]", opts.Target)
	}
	if !(opts.E2ETarget >= 0 && opts.E2ETarget <= 1) {
		return nil, fmt.Errorf("oracle: end-to-end target %g must be in [0, 1]", opts.E2ETarget)
	}
	if opts.LeadQ == 0 {
		opts.LeadQ = 0.99
	}
	if opts.Step == 0 {
		opts.Step = 5
	}
	if opts.MaxReplay == 0 {
		opts.MaxReplay = 10
	}
	lead := cfg.Startup.Quantile(opts.LeadQ)
	work := Work(reqs, cfg.Model)
	out := &Result{}
	replay := func(p *Policy, initial int) (*engine.Result, error) {
		out.Replays++
		if opts.OnReplay != nil {
			defer opts.OnReplay(out.Replays)
		}
		c := cfg
		c.Progress = nil
		if initial > 0 {
			c.InitialReplicas = initial
		}
		return engine.Run(ctx, c, workload.FromRequests(reqs), p)
	}
	var best *engine.Result
	var bestPlan Plan
	bestU := 0.0
	for _, block := range Blocks() {
		lo, hi := 0.05, 4.0 // utilisation bounds searched (the work model is approximate, so u may exceed 1)
		for i := 0; i < opts.MaxReplay; i++ {
			u := math.Sqrt(lo * hi)
			plan := Build(work, u, lead, cfg.MinReplicas, cfg.MaxReplicas, opts.Step, block)
			plan.Origin = cfg.Base
			res, err := replay(NewPolicy(plan), 0)
			if err != nil {
				return nil, err
			}
			if meets(res, opts) {
				if best == nil || res.GPUSeconds < best.GPUSeconds {
					best, bestPlan, bestU = res, plan, u
				}
				lo = u
			} else {
				hi = u
			}
			if hi/lo < 1.03 {
				break
			}
		}
	}
	// The cheapest static fleet that meets the target bounds the oracle
	// from above: a clairvoyant planner never does worse than it.
	static, sres, err := cheapestStatic(cfg, opts, replay)
	if err != nil {
		return nil, err
	}
	out.Static = static
	if sres != nil && (best == nil || sres.GPUSeconds < best.GPUSeconds) {
		p := Plan{StepSeconds: 60, Replicas: []int{static}, Origin: cfg.Base}
		best, bestPlan, bestU = sres, p, 0
	}
	if best == nil {
		return nil, fmt.Errorf("oracle: no plan reaches %.2f%% TTFT attainment even at %d replicas", 100*opts.Target, cfg.MaxReplicas)
	}
	best.Policy = "oracle"
	bestPlan.Name = "oracle"
	out.Plan, out.Run, out.Utilisation = bestPlan, best, bestU
	return out, nil
}

// cheapestStatic bisects the smallest fixed replica count meeting target.
// A static fleet is there before the trace starts: its pods start warm.
func cheapestStatic(cfg engine.Config, opts Options, replay func(*Policy, int) (*engine.Result, error)) (int, *engine.Result, error) {
	lo, hi := cfg.MinReplicas, cfg.MaxReplicas // invariant: answer in (lo-1, hi]
	lo = max(lo, 1)
	var hiRes *engine.Result
	for lo < hi {
		mid := (lo + hi) / 2
		res, err := replay(NewPolicy(Plan{StepSeconds: 60, Replicas: []int{mid}}), mid)
		if err != nil {
			return 0, nil, err
		}
		if meets(res, opts) {
			hi, hiRes = mid, res
		} else {
			lo = mid + 1
		}
	}
	if hiRes == nil || hi != lo {
		res, err := replay(NewPolicy(Plan{StepSeconds: 60, Replicas: []int{hi}}), hi)
		if err != nil {
			return 0, nil, err
		}
		if !meets(res, opts) {
			return 0, nil, nil
		}
		hiRes = res
	}
	return hi, hiRes, nil
}

// InitialReplicas sizes the warm fleet every policy starts a replay with:
// enough Ready replicas for the first two minutes of the trace at 50%
// utilisation, so that no policy is judged on a cold start it could not
// have prevented (the pods a cluster already had before the trace began).
func InitialReplicas(reqs []workload.Request, m engine.Model, minR, maxR int) int {
	work := Work(reqs, m)
	n := minR
	for i := 0; i < len(work) && float64(i)*WindowSeconds < 120; i++ {
		n = max(n, int(math.Ceil(work[i]/(0.5*WindowSeconds))))
	}
	return min(max(n, minR, 1), maxR)
}
