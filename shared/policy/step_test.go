package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/internal/testenv"
	"github.com/inferscale/inferscale/shared/decide/knobs"
	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/state"
)

// Every decision records the step that set its target: the last step
// that changed the count.
func TestDecisionRecordsTheStepThatSetTheTarget(t *testing.T) {
	shanghai9am := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC) // Monday 09:00 in Shanghai
	floors, err := knobs.ParseScheduleFloors(`[{start: "30 8 * * 1-5", end: "0 10 * * 1-5", replicas: 6, timezone: "Asia/Shanghai"}]`)
	if err != nil {
		t.Fatal(err)
	}
	overloaded := fleet.View{Ready: 4, Waiting: 400, Running: 800, KVMean: p(0.99), GPUUtilEWMA: p(1), StartupSeconds: 60}
	// 12 pods at 40 req/s of 10 each: 6 may go (TestSimulatedRemovalKeepsHeadroom).
	removable := fleet.View{Ready: 12, Running: 240, KVMean: p(0.3), ArrivalRate: p(40), StartupSeconds: 60}
	breached := removable
	breached.TTFTP95, breached.LatencyRequests = p(3), 100
	lastDown := t0.Add(-100 * time.Second)
	predicted := state.New()
	for _, p := range []struct{ day, need int }{{3, 4}, {2, 10}, {1, 8}} {
		predicted.Record(state.Tick{At: shanghai9am.Add(-time.Duration(p.day) * 24 * time.Hour), Decided: state.Decided{Need: p.need}})
	}
	for _, c := range []struct {
		name    string
		v2      bool
		cfg     func(*policy.Config)
		st      *state.State
		v       fleet.View
		current int
		now     time.Time
		want    policy.Step
	}{
		{name: "largest proposal", v: overloaded, current: 4, want: policy.StepQueue},
		{name: "plan", v2: true, cfg: func(c *policy.Config) { c.MaxReplicas = 1000 },
			v: fleet.View{Ready: 2, ArrivalRate: p(200), StartupSeconds: 60}, current: 2, want: policy.StepSizing},
		{name: "from zero", cfg: func(c *policy.Config) { c.MinReplicas = 0 }, v: fleet.View{Waiting: 3, StartupSeconds: 60}, want: policy.StepScaleFromZero},
		{name: "scale-down", cfg: downNow, v: removable, current: 12, want: policy.StepScaleDown},
		{name: "hold", v: fleet.View{Ready: 1, StartupSeconds: 60}, current: 1, want: policy.StepHold},
		{name: "cooldown", cfg: func(c *policy.Config) { c.DownStabilization = 0 }, st: &state.State{LastScaleDown: &lastDown},
			v: fleet.View{Ready: 4, KVMean: p(0.05), StartupSeconds: 60}, current: 4, want: policy.StepStabilisation},
		{name: "schedule floor", cfg: func(c *policy.Config) { c.ScheduleFloors = floors }, v: fleet.View{Ready: 1, StartupSeconds: 60},
			current: 1, now: shanghai9am, want: policy.StepScheduleFloor},
		{name: "predictive floor", st: predicted, v: fleet.View{Ready: 1, StartupSeconds: 60}, current: 1, now: shanghai9am, want: policy.StepPredictiveFloor},
		{name: "maxReplicas", cfg: func(c *policy.Config) { c.MaxReplicas = 4 }, v: overloaded, current: 4, want: policy.StepMaxReplicas},
		{name: "minReplicas", cfg: func(c *policy.Config) { c.MinReplicas = 3 }, v: fleet.View{Ready: 2, StartupSeconds: 60}, current: 2, want: policy.StepMinReplicas},
		{name: "breach", cfg: downNow, v: breached, current: 12, want: policy.StepBreachHold},
	} {
		cfg := v1()
		if c.v2 {
			cfg = knobs.Defaults()
		}
		if c.cfg != nil {
			c.cfg(&cfg)
		}
		st, now := c.st, c.now
		if st == nil {
			st = state.New()
		}
		if now.IsZero() {
			now = t0
		}
		if d := policy.Decide(c.v, st, cfg, c.current, now); d.DecidedBy != c.want {
			t.Errorf("%s: target %d decided by %q, want %q; reasons %q", c.name, d.Target, d.DecidedBy, c.want, d.Reasons)
		}
	}
}

// downNow lets v1 scale down on the first tick, with a known per-pod
// capacity.
func downNow(c *policy.Config) {
	c.DownStabilization, c.PodCapacityRPS, c.MaxReplicas = 0, 10, 20
}

// The exporter's page documents every step its decided_by label takes.
func TestEveryStepIsDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(t), "docs", "exporter.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []policy.Step{policy.StepSizing, policy.StepQueue, policy.StepBatch, policy.StepKV, policy.StepLatency,
		policy.StepDemand, policy.StepScaleFromZero, policy.StepScaleDown, policy.StepHold, policy.StepStabilisation,
		policy.StepScheduleFloor, policy.StepPredictiveFloor, policy.StepRatioFloor, policy.StepMaxReplicas, policy.StepMinReplicas, policy.StepBreachHold} {
		if !strings.Contains(string(b), "`"+string(s)+"`") {
			t.Errorf("docs/exporter.md does not name decided_by %q", s)
		}
	}
}
