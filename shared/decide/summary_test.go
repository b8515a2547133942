package decide

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/state"
)

// The summary keeps the step the policy recorded, and a decision held
// for not being encodable is a hold.
func TestSummaryKeepsTheStepThePolicyRecorded(t *testing.T) {
	cfg := policy.Config{MinReplicas: 2, MaxReplicas: 8}
	d := policy.Decision{Current: 6, Recommendation: 12, Target: 8, DecidedBy: policy.StepMaxReplicas}
	if l := Summary(d, "active", cfg); l.DecidedBy != "maxReplicas" || l.Target != 8 || l.MaxReplicas != 8 {
		t.Errorf("summary %+v, want decided by maxReplicas", l)
	}
	h, _ := held(d, cfg, errors.New("NaN"))
	if l := Summary(h, "active", cfg); l.DecidedBy != "hold" || l.Target != 6 {
		t.Errorf("held: summary %+v, want a hold at 6", l)
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
