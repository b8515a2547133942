package decide

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/state"
)

// DecidedBy names the step that set the target, from the last step back.
func TestDecidedByNamesTheStepThatSetTheTarget(t *testing.T) {
	cfg := policy.Config{MinReplicas: 2, MaxReplicas: 8}
	over := func(name string, proposal int) policy.Rule {
		return policy.Rule{Name: name, Over: true, Proposal: proposal}
	}
	for _, c := range []struct {
		want string
		d    policy.Decision
	}{
		{DecidedByMaxReplicas, policy.Decision{Current: 6, Recommendation: 12, Target: 8}},
		{DecidedByMaxReplicas, policy.Decision{Current: 6, Recommendation: 6, ScheduleFloor: 10, Target: 8}},
		{DecidedByMinReplicas, policy.Decision{Current: 3, Recommendation: 1, Target: 2}},
		{DecidedByPredictiveFloor, policy.Decision{Current: 3, Recommendation: 3, PredictiveFloor: 5, Target: 5}},
		{DecidedByScheduleFloor, policy.Decision{Current: 3, Recommendation: 2, ScheduleFloor: 4, Target: 4}},
		{DecidedByStabilisation, policy.Decision{Current: 3, Recommendation: 6, Target: 3}},
		{DecidedByScaleDown, policy.Decision{Current: 5, Recommendation: 3, Target: 3}},
		{DecidedByHold, policy.Decision{Current: 5, Recommendation: 5, Target: 5, Rules: []policy.Rule{over(policy.RuleQueue, 5)}}},
		{policy.RuleSizing, policy.Decision{Current: 3, Recommendation: 6, Target: 6,
			Rules: []policy.Rule{over(policy.RuleQueue, 4), over(policy.RuleSizing, 6), over(policy.RuleGPU, 9)}}},
		{DecidedByScaleFromZero, policy.Decision{Current: 0, Recommendation: 2, Target: 2}},
	} {
		if got := DecidedBy(c.d, cfg); got != c.want {
			t.Errorf("%+v: decided by %q, want %q", c.d, got, c.want)
		}
	}
}

// Every saved tick leaves its summary in the state, with the mode and the
// tick count: advisory mode's Target is the advice.
func TestRunSavesTheSummary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	e := env(map[string]string{"stateFile": path, "mode": "advisory", "INFERSCALE_NOW": "2026-11-29T12:00:05Z", "configPath": filepath.Join(dir, "none.yaml")})
	for range 2 {
		var out bytes.Buffer
		if err := Run(context.Background(), Process{Stdin: bytes.NewReader(input(t, "1", goodValue)), Stdout: &out, Lookup: e, Log: quietLog()}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	l := st.Last
	if l == nil || l.Mode != "advisory" || l.Ticks != 2 || l.Current != 1 || l.Target < 1 || l.DecidedBy == "" || l.MaxReplicas == 0 || l.SLOSeconds <= 0 {
		t.Fatalf("last = %+v", l)
	}
}
