// Package oracle is the clairvoyant lower bound on GPU-hours: a policy that
// knows every arrival and the pods' startup time in advance.
//
// It turns the trace into GPU work per window with the engine's own
// per-iteration time model, sizes each window's Ready replicas for that
// work at a utilisation u, creates pods one startup time ahead of need and
// deletes them as soon as no window within one startup time needs them.
// Search then replays the trace and bisects u for the largest value (the
// fewest GPU-hours) whose TTFT attainment still meets the target, and
// compares with the cheapest static fleet that does: the oracle is the
// cheaper of the two.
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
}

// Policy replays a Plan as an Autoscaler.
type Policy struct {
	plan Plan
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
	return p.At(obs.Now), nil
}

// base is the engine's trace origin, shared by every run.
var base = engine.DefaultConfig().Base

// At is the planned replicas at wall time t (trace origin engine.Config.Base).
func (p *Policy) At(t time.Time) int {
	i := int(t.Sub(base).Seconds() / p.plan.StepSeconds)
	if len(p.plan.Replicas) == 0 {
		return 1
	}
	return p.plan.Replicas[min(max(i, 0), len(p.plan.Replicas)-1)]
}

// Work returns the GPU-seconds of serving work arriving in each window.
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
		w[i] += m.PerPrefillToken*in + (out-1)*(perTok+m.PerKVToken*(in+out/2))
	}
	return w
}

// Build makes the plan for utilisation u: each window needs
// ceil(work/(u·window)) Ready replicas (at least minR, and at least one
// while requests arrive), a pod is asked for lead seconds before its
// window and kept while any window up to lead ahead needs it.
func Build(work []float64, u float64, lead float64, minR, maxR int, step float64) Plan {
	need := make([]int, len(work)+1)
	for i, w := range work {
		n := int(math.Ceil(w / (u * WindowSeconds)))
		if w > 0 {
			n = max(n, 1)
		}
		// Work arriving late in a window spills into the next.
		need[i] = max(need[i], n)
		need[i+1] = max(need[i+1], int(math.Ceil(0.5*w/(u*WindowSeconds))))
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
	Target    float64 // TTFT attainment objective, e.g. 0.99
	LeadQ     float64 // startup quantile used as lead time (default 0.99)
	Step      float64 // plan step in seconds (default 5)
	MaxReplay int     // bisection steps (default 12)
}

// Search finds the cheapest plan meeting opts.Target by replay.
func Search(ctx context.Context, cfg engine.Config, reqs []workload.Request, opts Options) (*Result, error) {
	if len(reqs) == 0 {
		return nil, errors.New("oracle: empty workload")
	}
	if opts.Target <= 0 || opts.Target > 1 {
		return nil, fmt.Errorf("oracle: target attainment %g must be in (0, 1]", opts.Target)
	}
	if opts.LeadQ == 0 {
		opts.LeadQ = 0.99
	}
	if opts.Step == 0 {
		opts.Step = 5
	}
	if opts.MaxReplay == 0 {
		opts.MaxReplay = 12
	}
	lead := cfg.Startup.Quantile(opts.LeadQ)
	work := Work(reqs, cfg.Model)
	out := &Result{}
	replay := func(p *Policy, initial int) (*engine.Result, error) {
		out.Replays++
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
	lo, hi := 0.05, 4.0 // utilisation bounds searched (the work model is approximate, so u may exceed 1)
	for i := 0; i < opts.MaxReplay; i++ {
		u := math.Sqrt(lo * hi)
		plan := Build(work, u, lead, cfg.MinReplicas, cfg.MaxReplicas, opts.Step)
		res, err := replay(NewPolicy(plan), 0)
		if err != nil {
			return nil, err
		}
		if res.FeasibleTTFTAttainment() >= opts.Target {
			if best == nil || res.GPUSeconds < best.GPUSeconds {
				best, bestPlan, bestU = res, plan, u
			}
			lo = u
		} else {
			hi = u
		}
		if hi/lo < 1.02 {
			break
		}
	}
	// The cheapest static fleet that meets the target bounds the oracle
	// from above: a clairvoyant planner never does worse than it.
	static, sres, err := cheapestStatic(cfg, opts.Target, replay)
	if err != nil {
		return nil, err
	}
	out.Static = static
	if sres != nil && (best == nil || sres.GPUSeconds < best.GPUSeconds) {
		p := Plan{StepSeconds: 60, Replicas: []int{static}}
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
func cheapestStatic(cfg engine.Config, target float64, replay func(*Policy, int) (*engine.Result, error)) (int, *engine.Result, error) {
	lo, hi := cfg.MinReplicas, cfg.MaxReplicas // invariant: answer in (lo-1, hi]
	lo = max(lo, 1)
	var hiRes *engine.Result
	for lo < hi {
		mid := (lo + hi) / 2
		res, err := replay(NewPolicy(Plan{StepSeconds: 60, Replicas: []int{mid}}), mid)
		if err != nil {
			return 0, nil, err
		}
		if res.FeasibleTTFTAttainment() >= target {
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
		if res.FeasibleTTFTAttainment() < target {
			return 0, nil, nil
		}
		hiRes = res
	}
	return hi, hiRes, nil
}
