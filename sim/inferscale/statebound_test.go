package inferscale_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferscale/inferscale/internal/testenv"
	"github.com/inferscale/inferscale/shared/state"
	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/inferscale"
	"github.com/inferscale/inferscale/sim/runner"
	"github.com/inferscale/inferscale/sim/scaler"
	"github.com/inferscale/inferscale/sim/workload"
)

// Caps of the state a 14-day replay may reach (see TestStateStaysBoundedOver14Days).
const (
	maxStateBytes   = 64 << 10
	maxServiceBytes = 16 << 10
	// sizeEvery is how often (in ticks) the whole state is encoded: every
	// tick would triple the replay's time; the service memory is checked on
	// every tick.
	sizeEvery = 20
)

// stateWatch wraps the in-process policy and measures its state after
// every decision.
type stateWatch struct {
	*inferscale.Fast
	base  time.Time
	ticks int
	err   error
	// The largest encoded state and service memory, overall and per day.
	max, maxService       int
	maxAt                 time.Time
	perDay, servicePerDay []int
	maxPods               int
}

func (w *stateWatch) Recommend(obs scaler.Observation) (int, error) {
	n, err := w.Fast.Recommend(obs)
	if w.err == nil {
		w.err = w.measure(obs)
	}
	w.ticks++
	return n, err
}

func (w *stateWatch) measure(obs scaler.Observation) error {
	st := w.Fast.State()
	if st.Service == nil {
		return fmt.Errorf("tick %d (%s): no service memory after a v2 decision", w.ticks, obs.Now)
	}
	if err := st.Service.Check(); err != nil {
		return fmt.Errorf("tick %d (%s): %w", w.ticks, obs.Now, err)
	}
	if w.ticks%sizeEvery != 0 {
		return nil
	}
	b, err := state.Encode(st)
	if err != nil {
		return fmt.Errorf("tick %d (%s): %w", w.ticks, obs.Now, err)
	}
	svc, err := json.Marshal(st.Service)
	if err != nil {
		return err
	}
	day := int(obs.Now.Sub(w.base).Hours() / 24)
	for len(w.perDay) <= day {
		w.perDay, w.servicePerDay = append(w.perDay, 0), append(w.servicePerDay, 0)
	}
	w.perDay[day], w.servicePerDay[day] = max(w.perDay[day], len(b)), max(w.servicePerDay[day], len(svc))
	if len(b) > w.max {
		w.max, w.maxAt = len(b), obs.Now
	}
	w.maxService = max(w.maxService, len(svc))
	w.maxPods = max(w.maxPods, len(obs.Pods))
	return nil
}

// TestStateStaysBoundedOver14Days guards the state's size (issue 9: "the
// state that carries all this stays bounded in size, a cap, tested,
// across a 14-day replay"): ServeGen m-large's three busiest clients, all
// 14 days at 2 % of m-large's rate (the diurnal and weekly cycles), through policy v2
// in fast mode. On every tick the service memory passes state.Check; every
// sizeEvery ticks the whole state is encoded (state.Encode) and must stay
// under maxStateBytes (64 KiB: measured at most 34 KB, with at most 11 pods
// whose counters are the part that grows with the fleet), the service
// memory under maxServiceBytes (16 KiB: measured at most 8.4 KB: 240
// forecast errors, one horizon of pending forecasts, one hold of needs,
// the prompt-length buckets), and the service memory of the second week
// may not exceed that of the first by more than 10 %: bounded, not growing.
func TestStateStaysBoundedOver14Days(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 14 days (≈4.7M requests, ~25 s)")
	}
	// The committed excerpt (testdata/traces: the three busiest clients,
	// 29.85 % of m-large's rate, all 14 days) at 0.067: 2 % of the whole.
	path := filepath.Join(testenv.ModuleRoot(t), "testdata", "traces", "servegen_m-large_top3.tar.gz")
	cfg := engine.DefaultConfig()
	src, err := workload.OpenServeGen(path, workload.ServeGenOptions{Seed: 1, RateFactor: 0.067})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	b, err := runner.Build(runner.Spec{Name: "inferscale"}, cfg, runner.Options{Mode: runner.Fast})
	if err != nil {
		t.Fatal(err)
	}
	w := &stateWatch{Fast: b.Policy.(*inferscale.Fast), base: cfg.Base}
	res, err := engine.Run(context.Background(), cfg, src, w)
	if err != nil {
		t.Fatal(err)
	}
	if w.err != nil {
		t.Fatal(w.err)
	}
	if res.PolicyErrors > 0 {
		t.Fatalf("%d failed ticks, first: %s", res.PolicyErrors, res.FirstPolicyError)
	}
	if days := res.EndSeconds / 86400; days < 13.9 || w.ticks < 80000 {
		t.Fatalf("replayed %.1f days in %d ticks; want the whole 14 days", days, w.ticks)
	}
	t.Logf("%d requests, %d ticks, ≤ %d pods: state at most %d bytes (at %s), service memory at most %d bytes",
		res.Requests, w.ticks, w.maxPods, w.max, w.maxAt.Format(time.RFC3339), w.maxService)
	t.Logf("largest state per day %v, service memory %v", w.perDay, w.servicePerDay)
	if w.max > maxStateBytes {
		t.Errorf("state reached %d bytes at %s, above the %d-byte cap", w.max, w.maxAt, maxStateBytes)
	}
	if w.maxService > maxServiceBytes {
		t.Errorf("service memory reached %d bytes, above the %d-byte cap", w.maxService, maxServiceBytes)
	}
	first, second := maxOf(w.servicePerDay[:7]), maxOf(w.servicePerDay[7:])
	if float64(second) > 1.1*float64(first) {
		t.Errorf("service memory grows: at most %d bytes in the first week, %d in the second", first, second)
	}
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
