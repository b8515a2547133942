package oracle_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/oracle"
	"github.com/inferscale/inferscale/sim/scaler"
	"github.com/inferscale/inferscale/sim/workload"
)

func TestOracleMarksTheIdlestReadyPodsForDeletion(t *testing.T) {
	base := engine.DefaultConfig().Base
	ready := func(name string, running, waiting float64) scaler.PodView {
		return scaler.PodView{Name: name, Phase: scaler.Ready, Metrics: &signal.Pod{Running: signal.F(running), Waiting: signal.F(waiting)}}
	}
	obs := scaler.Observation{Now: base.Add(time.Minute), Pods: []scaler.PodView{
		ready("a", 4, 2), ready("b", 0, 0), ready("c", 1, 0),
		{Name: "fresh", Phase: scaler.Ready}, // no scrape delivered yet
		{Name: "starting", Phase: scaler.Starting},
		{Name: "gone", Phase: scaler.Draining},
	}}
	for _, c := range []struct {
		plan int
		want map[string]int32
	}{
		{5, nil}, // five pods not deleted yet: no scale-down, no annotation
		{2, map[string]int32{"a": 6, "b": 0, "c": 1, "fresh": 0}},
	} {
		p := oracle.NewPolicy(oracle.Plan{StepSeconds: 60, Replicas: []int{c.plan}, Origin: base})
		if n, err := p.Recommend(obs); err != nil || n != c.plan {
			t.Fatalf("plan %d: Recommend = %d, %v", c.plan, n, err)
		}
		got := p.DeletionCosts()
		if len(got) != len(c.want) {
			t.Fatalf("plan %d: costs %v, want %v", c.plan, got, c.want)
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("plan %d: cost of %s = %d, want %d", c.plan, k, got[k], v)
			}
		}
	}
}

// longGenerations is a workload whose requests decode for tens of seconds
// under a swinging rate, so that a scale-down victim usually holds some.
func longGenerations(seed uint64) []workload.Request {
	rng := rand.New(rand.NewPCG(seed, 3))
	var reqs []workload.Request
	t := 0.0
	for t < 3600 {
		rate := 0.3 + 2.7*float64(int(t/600)%2) // 10-minute swings between 0.3 and 3 req/s
		t += rng.ExpFloat64() / rate
		reqs = append(reqs, workload.Request{Arrival: time.Duration(t * float64(time.Second)), InputTokens: 500 + rng.IntN(1500), OutputTokens: 1000 + rng.IntN(6000)})
	}
	return reqs
}

// withoutCosts hides a policy's deletion costs (the ReplicaSet picks by
// its own order alone).
type withoutCosts struct{ scaler.Autoscaler }

// TestOracleSearchNeverReturnsAPlanThatKills: under a grace period far
// shorter than the generations, plans that meet the attainment target
// kill requests at scale-down; Search returns one that kills none (here a
// static fleet).
func TestOracleSearchNeverReturnsAPlanThatKills(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.DrainGraceSeconds = 20
	cfg.PreStopSeconds = 5
	cfg.MaxReplicas = 16
	reqs := longGenerations(5)
	orc, err := oracle.Search(context.Background(), cfg, reqs, oracle.Options{Target: 0.99})
	if err != nil {
		t.Fatal(err)
	}
	if orc.Run.Killed != 0 {
		t.Fatalf("the oracle killed %d requests at scale-down", orc.Run.Killed)
	}
	plan := oracle.Build(oracle.Work(reqs, cfg.Model), 0.3, cfg.Startup.Quantile(0.99), cfg.MinReplicas, cfg.MaxReplicas, 5, 3)
	plan.Origin = cfg.Base
	res, err := engine.Run(context.Background(), cfg, workload.FromRequests(reqs), oracle.NewPolicy(plan))
	if err != nil {
		t.Fatal(err)
	}
	// This plan meets the attainment target and kills: only the kill gate
	// keeps plans like it out.
	if res.FeasibleTTFTAttainment() < 0.99 || res.Killed == 0 {
		t.Fatalf("the u=0.3 plan (attainment %.4f, killed %d) does not exercise the kill gate", res.FeasibleTTFTAttainment(), res.Killed)
	}
}

// TestOracleDeletesTheIdlestPod: three warm pods each get a request, the
// first a short one; when the plan drops to two, the oracle's deletion
// costs make the ReplicaSet delete the now idle pod, killing nothing; by
// the ReplicaSet's own order (UIDs: llm-00001's sorts first) a busy pod
// goes and its request is killed at the end of a 10 s grace period.
func TestOracleDeletesTheIdlestPod(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.InitialReplicas = 3
	cfg.DrainGraceSeconds = 10
	reqs := []workload.Request{
		{Arrival: 1000 * time.Millisecond, InputTokens: 100, OutputTokens: 10},   // llm-00000, done in 0.1 s
		{Arrival: 1100 * time.Millisecond, InputTokens: 100, OutputTokens: 8000}, // llm-00001, ~50 s
		{Arrival: 1200 * time.Millisecond, InputTokens: 100, OutputTokens: 8000}, // llm-00002, ~50 s
	}
	plan := oracle.Plan{StepSeconds: 5, Replicas: []int{3, 3, 3, 3, 3, 3, 2}, Origin: cfg.Base} // 2 from t=30 s
	for _, c := range []struct {
		name   string
		policy scaler.Autoscaler
		killed int
	}{{"oracle", oracle.NewPolicy(plan), 0}, {"without costs", withoutCosts{oracle.NewPolicy(plan)}, 1}} {
		res, err := engine.Run(context.Background(), cfg, workload.FromRequests(reqs), c.policy)
		if err != nil {
			t.Fatal(err)
		}
		if res.Killed != c.killed || res.Completed != 3-c.killed {
			t.Errorf("%s: killed %d, completed %d; want %d and %d", c.name, res.Killed, res.Completed, c.killed, 3-c.killed)
		}
	}
}
