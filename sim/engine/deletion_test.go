package engine

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/inferscale/inferscale/sim/scaler"
	"github.com/inferscale/inferscale/sim/workload"
)

func pod(idx int, phase scaler.Phase, created, readyAt float64, cost int32) *replica {
	return &replica{idx: idx, uid: scaler.PodUID(idx), phase: phase, created: created, readyAt: readyAt, deletionCost: cost}
}

// TestDeletionOrderFollowsReplicaSetRanks checks deleteFirst rule by rule
// (Kubernetes' ActivePodsWithRanks.Less): each case is a pair the rule
// named decides, built so that every later rule would decide the other way.
func TestDeletionOrderFollowsReplicaSetRanks(t *testing.T) {
	const now = 10000.0
	inf := math.Inf(1)
	// The ready-time bucketing: ages 1100 s and 1500 s share
	// floor(log2(age in ns)) = 40, so the UID decides, not the recency.
	// Pod 0's UID sorts after pod 3's.
	if scaler.PodUID(0) < scaler.PodUID(3) {
		t.Fatal("the UID case below assumes PodUID(0) > PodUID(3)")
	}
	for _, c := range []struct {
		rule        string
		first, then *replica
	}{
		{"1-2: unassigned (Pending) before assigned, even if older", pod(1, scaler.Pending, 0, inf, 0), pod(2, scaler.Starting, 9000, inf, 0)},
		{"1-2: Pending before a Ready pod of lower cost", pod(1, scaler.Pending, 0, inf, 100), pod(2, scaler.Ready, 0, 50, -100)},
		{"3: not Ready before Ready, whatever the costs", pod(1, scaler.Starting, 0, inf, 100), pod(2, scaler.Ready, 9000, 9990, -100)},
		{"4: lower deletion cost first, though Ready longer", pod(1, scaler.Ready, 0, 100, -1), pod(2, scaler.Ready, 9000, 9990, 0)},
		{"6: both Ready: more recently Ready first, though created earlier", pod(1, scaler.Ready, 0, 9990, 0), pod(2, scaler.Ready, 9000, 5000, 0)},
		{"6: ready times in one log2 bucket: by UID", pod(3, scaler.Ready, 9000, now-1500, 0), pod(0, scaler.Ready, 0, now-1100, 0)},
		{"8: newer first (not Ready)", pod(1, scaler.Starting, 9000, inf, 0), pod(2, scaler.Starting, 100, inf, 0)},
		{"8: newer first (Pending)", pod(1, scaler.Pending, 9990, inf, 0), pod(2, scaler.Pending, 10, inf, 0)},
		{"8: equal ready times fall through to the creation time", pod(1, scaler.Ready, 500, 600, 0), pod(2, scaler.Ready, 10, 600, 0)},
	} {
		if !deleteFirst(c.first, c.then, now) || deleteFirst(c.then, c.first, now) {
			t.Errorf("rule %s: pod %d should go before pod %d", c.rule, c.first.idx, c.then.idx)
		}
		got := victims([]*replica{c.then, c.first}, 1, now)
		if len(got) != 1 || got[0] != c.first {
			t.Errorf("rule %s: victims picked pod %d", c.rule, got[0].idx)
		}
	}
	// Pods alike in everything the ReplicaSet looks at (the warm fleet at
	// t=0) are not ordered by deleteFirst.
	a, b := pod(1, scaler.Ready, 0, 0, 0), pod(2, scaler.Ready, 0, 0, 0)
	if deleteFirst(a, b, now) || deleteFirst(b, a, now) {
		t.Error("identical pods ordered")
	}
}

// coster is a scripted policy that also writes pod-deletion costs.
type coster struct {
	plan  func(t float64) (int, map[string]int32)
	seen  *[]scaler.Observation
	costs map[string]int32
}

func (c *coster) Name() string          { return "coster" }
func (c *coster) Period() time.Duration { return 5 * time.Second }
func (c *coster) Recommend(o scaler.Observation) (int, error) {
	*c.seen = append(*c.seen, o)
	n, costs := c.plan(o.Now.Sub(DefaultConfig().Base).Seconds())
	c.costs = costs
	return n, nil
}
func (c *coster) DeletionCosts() map[string]int32 { return c.costs }

func phaseAt(seen []scaler.Observation, base time.Time, at float64) map[string]scaler.PodView {
	for _, o := range seen {
		if o.Now.Sub(base).Seconds() == at {
			out := map[string]scaler.PodView{}
			for _, p := range o.Pods {
				out[p.Name] = p
			}
			return out
		}
	}
	return nil
}

// TestVictimsFollowDeletionCosts scales three identical warm pods down one
// at a time: the pod with the lowest cost goes first; costs persist on the
// pods, and a later tick that names only one pod changes only that one.
func TestVictimsFollowDeletionCosts(t *testing.T) {
	cfg := DefaultConfig()
	cfg.InitialReplicas = 3
	var seen []scaler.Observation
	pol := &coster{seen: &seen, plan: func(t float64) (int, map[string]int32) {
		switch {
		case t == 5:
			return 3, map[string]int32{"llm-00000": 5, "llm-00001": -3, "llm-00002": 0, "no-such-pod": -9}
		case t < 20:
			return 3, nil
		case t == 30:
			return 2, map[string]int32{"llm-00002": 7} // llm-00000 keeps its 5
		case t < 40:
			return 2, nil
		}
		return 1, nil
	}}
	src := &sliceSource{reqs: []workload.Request{{Arrival: 80 * time.Second, InputTokens: 10, OutputTokens: 2}}}
	if _, err := Run(context.Background(), cfg, src, pol); err != nil {
		t.Fatal(err)
	}
	at25 := phaseAt(seen, cfg.Base, 25)
	if at25["llm-00001"].Phase != scaler.Draining || at25["llm-00000"].Phase != scaler.Ready || at25["llm-00002"].Phase != scaler.Ready {
		t.Fatalf("at t=25 (after 3→2): %+v; want llm-00001 (cost -3) deleted", at25)
	}
	if at25["llm-00000"].DeletionCost != 5 || at25["llm-00002"].DeletionCost != 0 {
		t.Errorf("costs at t=25: %d and %d, want 5 and 0", at25["llm-00000"].DeletionCost, at25["llm-00002"].DeletionCost)
	}
	at45 := phaseAt(seen, cfg.Base, 45)
	if at45["llm-00000"].Phase != scaler.Draining || at45["llm-00002"].Phase != scaler.Ready {
		t.Fatalf("at t=45 (after 2→1): %+v; want llm-00000 (cost 5, kept) deleted before llm-00002 (cost 7)", at45)
	}
	if _, ok := at45["llm-00001"]; ok {
		t.Error("the empty pod deleted at t=20 is still there at t=45 (its 15 s preStop ended at 35)")
	}
}

// TestDrainingPodTakesNoNewRequestsAndCostsGPUUntilEmpty deletes one of two
// pods while it decodes a long request. It gets no request after its
// deletion, finishes the one it holds, and its GPU time ends when it is
// empty, or at the end of its preStop when that is later.
func TestDrainingPodTakesNoNewRequestsAndCostsGPUUntilEmpty(t *testing.T) {
	m := DefaultConfig().Model
	const in, out = 100, 3000
	// Alone on its pod, the long request is done at:
	done := m.Iteration(in, AttnPairs(in, 0), 0, in)
	for k := 0; k < out-1; k++ {
		done += m.DecodeStep(1, in+1+k)
	}
	for _, c := range []struct {
		preStop float64
		podEnd  func(arrival float64) float64
	}{
		{0, func(a float64) float64 { return a + done }},
		{25, func(float64) float64 { return 15 + 25 }}, // deleted at 15, preStop to 40 > done
	} {
		if c.preStop > 0 && 2+done >= 15+c.preStop {
			t.Fatalf("the request (%.1fs) outlasts the preStop; pick a longer one", done)
		}
		cfg := DefaultConfig()
		cfg.InitialReplicas = 2
		cfg.PreStopSeconds = c.preStop
		src := &sliceSource{reqs: []workload.Request{
			{Arrival: 1 * time.Second, InputTokens: in, OutputTokens: out},
			{Arrival: 2 * time.Second, InputTokens: in, OutputTokens: out},
		}}
		for i := 0; i < 20; i++ {
			src.reqs = append(src.reqs, workload.Request{Arrival: time.Duration(16+i) * time.Second, InputTokens: 50, OutputTokens: 20})
		}
		// One late request keeps the replay going past the victim's end.
		src.reqs = append(src.reqs, workload.Request{Arrival: 60 * time.Second, InputTokens: 50, OutputTokens: 20})
		var seen []scaler.Observation
		pol := recorder{plan: func(t float64) int {
			if t < 15 {
				return 2
			}
			return 1
		}, seen: &seen}
		cfg.MetricLagSeconds = 0
		res, err := Run(context.Background(), cfg, src, pol)
		if err != nil {
			t.Fatal(err)
		}
		if res.Completed != res.Requests || res.Killed != 0 {
			t.Fatalf("preStop %g: completed %d of %d, killed %d", c.preStop, res.Completed, res.Requests, res.Killed)
		}
		victim := ""
		for name, p := range phaseAt(seen, cfg.Base, 20) {
			if p.Phase == scaler.Draining {
				victim = name
			}
		}
		if victim == "" {
			t.Fatalf("preStop %g: no pod draining at t=20", c.preStop)
		}
		// The victim held one of the two long requests (least outstanding
		// spread them) and completed only that one.
		arrival := 1.0
		if victim == "llm-00001" {
			arrival = 2
		}
		for _, o := range seen {
			for _, p := range o.Pods {
				if p.Name == victim && p.Metrics != nil && *p.Metrics.RequestsTotal > 1 {
					t.Errorf("preStop %g: the deleted pod %s completed %g requests", c.preStop, victim, *p.Metrics.RequestsTotal)
				}
			}
		}
		// GPU time: the survivor to the end, the victim until it ended.
		want := res.EndSeconds + c.podEnd(arrival)
		if math.Abs(res.GPUSeconds-want) > 1e-6 {
			t.Errorf("preStop %g: GPU seconds %.4f, want %.4f (victim ends at %.4f)", c.preStop, res.GPUSeconds, want, c.podEnd(arrival))
		}
	}
}

// TestKillsAreCountedOnlyPastTheGracePeriod: a request that outlasts the
// grace period of its deleted pod is killed by the scale-down; the same
// request finishes under a longer grace period; a request still running
// when the replay stops is unfinished, not killed.
func TestKillsAreCountedOnlyPastTheGracePeriod(t *testing.T) {
	long := func() *sliceSource {
		return &sliceSource{reqs: []workload.Request{
			{Arrival: time.Second, InputTokens: 100, OutputTokens: 8000},
			{Arrival: 2 * time.Second, InputTokens: 100, OutputTokens: 8000},
		}}
	}
	for _, c := range []struct {
		grace         float64
		killed, compl int
	}{{10, 1, 1}, {DefaultGraceSeconds, 0, 2}} {
		cfg := DefaultConfig()
		cfg.InitialReplicas = 2
		cfg.DrainGraceSeconds = c.grace
		res, err := Run(context.Background(), cfg, long(), fixed{1})
		if err != nil {
			t.Fatal(err)
		}
		if res.Killed != c.killed || res.Completed != c.compl || res.Unfinished != 0 {
			t.Errorf("grace %gs: killed %d completed %d unfinished %d; want %d, %d, 0", c.grace, res.Killed, res.Completed, res.Unfinished, c.killed, c.compl)
		}
	}
	cfg := DefaultConfig()
	cfg.MaxTailSeconds = 20
	res, err := Run(context.Background(), cfg, &sliceSource{reqs: []workload.Request{{Arrival: time.Second, InputTokens: 100, OutputTokens: 20000}}}, fixed{1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unfinished != 1 || res.Killed != 0 || !math.IsInf(float64(res.TTFT[0]), 1) {
		t.Errorf("replay stopped mid-request: unfinished %d killed %d TTFT %v; want 1, 0, +Inf", res.Unfinished, res.Killed, res.TTFT[0])
	}
}
