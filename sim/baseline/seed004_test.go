package baseline

import (
	"testing"
	"time"

	"github.com/inferscale/inferscale/sim/scaler"
)

func newTestSeed004(t *testing.T) *Seed004 {
	t.Helper()
	a, err := Presets()["seed004"](nil)
	if err != nil {
		t.Fatal(err)
	}
	return a.(*Seed004)
}

func utilPods(n int, u float64) []podSpec {
	out := make([]podSpec, n)
	for i := range out {
		out[i] = readyUtil(u)
	}
	return out
}

func TestSeed004Evaluate(t *testing.T) {
	ms := func(v float64) *float64 { return &v }
	cases := []struct {
		name string
		cur  int
		cpu  float64 // percent
		p95  *float64
		want int
	}{
		// 0.9/0.75 = 1.2 (< 1.3) → ceil(4.8) = 5 → step 1 → 5
		{"headroom", 4, 90, nil, 5},
		// headroom: min(1.267, 1.3) → ceil(5.07) = 6; startup (95 > 90): ceil(4·95/50) = 8 → step min(4, 4) → 8
		{"startup compensation", 4, 95, nil, 8},
		// headroom ceil(13) → +3; startup ceil(20) → step capped at 4 → 14
		{"step cap", 10, 100, nil, 14},
		// latency 5000/2000 = 2.5 → ceil(5) = 5 → step 3 → 5 (util 50 %: neither up nor down)
		{"latency proportional", 2, 50, ms(5000), 5},
		// util 30 % < 40 %, no latency → floor(5·0.8) = 4
		{"scale down", 5, 30, nil, 4},
		// p95 1500 ms ≥ 0.7·2000: no scale-down
		{"latency blocks scale down", 5, 30, ms(1500), 5},
		// p95 0 is falsy in Python: treated as no latency → scale down
		{"zero latency is falsy", 5, 30, ms(0), 4},
		// floor(1·0.8) = 0 → max(1, 0) = 1
		{"down floor 1", 1, 10, nil, 1},
	}
	s := newTestSeed004(t)
	for _, c := range cases {
		if got := s.evaluate(c.cur, c.cpu, c.p95, t0); got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
	}
}

func TestSeed004CooldownNeverPersists(t *testing.T) {
	s := newTestSeed004(t)
	// t=0: 4 → 5 (headroom). A 15 s cooldown would block the next tick 10 s later,
	// but last_scale_time is a global of a process CPA restarts each tick: 5 → ceil(6) = 6.
	if got, _ := s.Recommend(obsOf(at(0), 4, 1, 20, utilPods(4, 0.9)...)); got != 5 {
		t.Fatalf("t=0: got %d, want 5", got)
	}
	if got, _ := s.Recommend(obsOf(at(10), 5, 1, 20, utilPods(5, 0.9)...)); got != 6 {
		t.Fatalf("t=10: got %d, want 6 (cooldown never applies)", got)
	}
	// The only time the cooldown holds: within 15 s of the Unix epoch (now − 0 < 15).
	epoch := obsOf(time.Unix(5, 0), 4, 1, 20, utilPods(4, 0.9)...)
	if got, _ := s.Recommend(epoch); got != 4 {
		t.Fatalf("near the epoch: got %d, want 4", got)
	}
}

func TestSeed004LatencyFromHistograms(t *testing.T) {
	s := newTestSeed004(t)
	// util 50 %; 10 TTFTs in (2,5] s within the window → p95 = 2 + 3·9.5/10 = 4.85 s
	// → 4850/2000 = 2.425 → ceil(4.85) = 5 → step 3 → 5
	p := podSpec{phase: scaler.Ready, util: f(0.5), waiting: f(0), ttft: hist(0, 0, 0, 0, 10, 10), createdBefore: 30 * time.Second}
	if got, err := s.Recommend(obsOf(at(0), 2, 1, 20, p, p)); err != nil || got != 5 {
		t.Fatalf("got %d, %v; want 5", got, err)
	}
	if _, err := s.Recommend(obsOf(at(10), 2, 1, 20, starting())); err == nil {
		t.Fatal("no utilisation reading: want an error")
	}
}
