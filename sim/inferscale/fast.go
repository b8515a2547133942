package inferscale

import (
	"fmt"
	"time"

	"github.com/inferscale/inferscale/shared/decide"
	"github.com/inferscale/inferscale/shared/podinfo"
	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
	"github.com/inferscale/inferscale/sim/scaler"
)

// CPA holds the CustomPodAutoscaler settings that act outside the binaries.
type CPA struct {
	// Interval is CPA's tick (interval, default 15 s).
	Interval time.Duration
	// DownscaleStabilization is CPA's own max-over-window (default 0: off).
	DownscaleStabilization time.Duration
}

// DefaultCPA is CPA v2.12.2's defaults.
func DefaultCPA() CPA { return CPA{Interval: 15 * time.Second} }

// postEvaluate applies what CPA does with evaluate's targetReplicas before
// it patches the scale subresource (internal/scaling/scaling.go Scale):
// clamp, the "disabled at zero" rule, then downscale stabilisation.
type postEvaluate struct {
	window time.Duration
	hist   []stabEntry
}

type stabEntry struct {
	at       time.Time
	replicas int
}

func (p *postEvaluate) apply(target, spec, minR, maxR int, now time.Time) int {
	target = min(max(target, minR), maxR)
	if spec == 0 && minR != 0 {
		return 0
	}
	if p.window <= 0 {
		return target
	}
	kept := p.hist[:0]
	for _, e := range p.hist {
		if now.Sub(e.at) <= p.window {
			kept = append(kept, e)
		}
	}
	p.hist = append(kept, stabEntry{now, target})
	best := target
	for _, e := range p.hist {
		best = max(best, e.replicas)
	}
	return best
}

// Fast runs the policy in-process through decide.Step.
type Fast struct {
	name  string
	cfg   policy.Config
	cpa   CPA
	st    *state.State
	post  postEvaluate
	trips bool
	// Last is the newest decision, for explanations and tests.
	Last policy.Decision
	// costs are the pod-deletion costs of the last tick.
	costs map[string]int32
}

// NewFast builds the in-process policy. cfg's replica bounds are
// overridden by the simulation's on every tick (CPA passes its own
// minReplicas/maxReplicas to the binaries).
func NewFast(name string, cfg policy.Config, cpa CPA) *Fast {
	if name == "" {
		name = "inferscale"
	}
	if cpa.Interval <= 0 {
		cpa.Interval = DefaultCPA().Interval
	}
	return &Fast{name: name, cfg: cfg, cpa: cpa, st: state.New(), post: postEvaluate{window: cpa.DownscaleStabilization}}
}

// RoundTripState makes every tick encode and decode the state, as the file
// backend of the binary does (slower; for identity checks).
func (f *Fast) RoundTripState(on bool) { f.trips = on }

// State is the policy's live memory (what evaluate would persist), for
// tests and reports to read; it changes on every Recommend and must not be
// modified.
func (f *Fast) State() *state.State { return f.st }

// Name implements scaler.Autoscaler.
func (f *Fast) Name() string { return f.name }

// Period implements scaler.Autoscaler.
func (f *Fast) Period() time.Duration { return f.cpa.Interval }

// Recommend implements scaler.Autoscaler.
func (f *Fast) Recommend(obs scaler.Observation) (int, error) {
	cfg := f.cfg
	cfg.MinReplicas, cfg.MaxReplicas = obs.MinReplicas, obs.MaxReplicas
	entries := make([]decide.Entry, 0, len(obs.Pods))
	for _, pv := range obs.Pods {
		rep, err := PodReport(pv, obs.Now)
		if err != nil {
			return 0, err
		}
		entries = append(entries, decide.Entry{Resource: pv.Name, Report: rep})
	}
	if f.trips {
		b, err := state.Encode(f.st)
		if err != nil {
			return 0, fmt.Errorf("encoding state: %w", err)
		}
		if f.st, err = state.Decode(b); err != nil {
			return 0, fmt.Errorf("decoding state: %w", err)
		}
	}
	marked := append([]string(nil), f.st.Marked...)
	d := decide.Step(cfg, f.st, obs.SpecReplicas, entries, obs.Now)
	f.Last = d
	f.costs = Marks(marked, d.Victims)
	return f.post.apply(d.Target, obs.SpecReplicas, obs.MinReplicas, obs.MaxReplicas, obs.Now), nil
}

// DeletionCosts implements scaler.DeletionCoster: what evaluate patches
// onto the pods before a scale-down (the victims' cost, the previous
// victims' cleared).
func (f *Fast) DeletionCosts() map[string]int32 { return f.costs }

// Marks are the pod-deletion costs one tick writes: VictimDeletionCost on
// its victims, 0 (the annotation removed) on the previous tick's victims
// that are not victims again.
func Marks(marked, victims []string) map[string]int32 {
	if len(marked) == 0 && len(victims) == 0 {
		return nil
	}
	m := map[string]int32{}
	for _, p := range policy.Unmarked(marked, victims) {
		m[p] = 0
	}
	for _, v := range victims {
		m[v] = policy.VictimDeletionCost
	}
	return m
}

// PodReport is the report the metric binary prints for one pod at now:
// the lifecycle read from the pod object, plus, for a pod that serves, the
// newest delivered scrape (or a scrape error when none has arrived yet).
func PodReport(pv scaler.PodView, now time.Time) (*signal.Report, error) {
	raw, err := PodJSON(pv)
	if err != nil {
		return nil, err
	}
	info, err := podinfo.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("pod %s: %w", pv.Name, err)
	}
	now = now.Round(0).UTC()
	p := info.Lifecycle(now)
	if pv.Phase == scaler.Ready || pv.Phase == scaler.Draining {
		if m := pv.Metrics; m != nil {
			p.Server = "vllm"
			p.Waiting, p.Running, p.KVCacheUsage = m.Waiting, m.Running, m.KVCacheUsage
			p.TTFT, p.E2E, p.QueueTime, p.InterToken = m.TTFT, m.E2E, m.QueueTime, m.InterToken
			p.PromptLength, p.GenerationLength = m.PromptLength, m.GenerationLength
			p.RequestsTotal, p.PromptTokensTotal = m.RequestsTotal, m.PromptTokensTotal
			p.GenerationTokensTotal, p.PreemptionsTotal = m.GenerationTokensTotal, m.PreemptionsTotal
			if m.GPU != nil {
				g := *m.GPU
				p.GPU = &g
			}
		} else {
			p.Error = fmt.Sprintf("scraping http://%s:%d/metrics: connection refused", PodIP(pv.Serial), MetricsPort)
		}
	}
	return &signal.Report{Version: signal.Version, ScrapeTime: now, Pods: []signal.Pod{p}}, nil
}
