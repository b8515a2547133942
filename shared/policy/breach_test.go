package policy_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/decide/knobs"
	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

// TestNoTickScalesDownInABreach: a fleet whose plan is warm at a low load
// would scale down; with the TTFT (or e2e) p95 above its objective it must
// not, whatever the breach is attributed to — nothing waited (long
// prompts, stretched prefills), the model unfitted, policy v1 or v2. The
// views are drawn at random around that fleet; every tick is checked.
func TestNoTickScalesDownInABreach(t *testing.T) {
	for _, v2 := range []bool{true, false} {
		cfg := knobs.Defaults()
		cfg.ServiceModel = v2
		cfg.MaxReplicas = 20
		cfg.E2ESLO = 30 * time.Second
		cfg.ITLSLO = 50 * time.Millisecond
		low := fleet.View{Ready: 10, ArrivalRate: p(1), StartupSeconds: 60, Pods: pods(10), LatencyRequests: 100,
			TTFTP95: p(0.1), E2EP95: p(1), ITLP95: p(0.01), KVMean: p(0.01)}
		low.Service.Queue.Count, low.Service.Queue.Sum = 100, 0.1
		st := state.New()
		// Warm the plan (v2) or the down-window (v1) on the low load,
		// holding at 10 (the decisions are recorded, not applied).
		for i := 0; i < 45; i++ {
			now := t0.Add(time.Duration(i) * 15 * time.Second)
			record(st, cfg, policy.Decide(low, st, cfg, 10, now), now)
		}
		if d := policy.Decide(low, st, cfg, 10, t0.Add(46*15*time.Second)); d.Target >= 10 {
			t.Fatalf("v2=%v: the low load does not scale down (the test would prove nothing): %q", v2, d.Reasons)
		}
		rng := rand.New(rand.NewPCG(14, uint64(len(t.Name()))))
		now := t0.Add(46 * 15 * time.Second)
		for i := 0; i < 500; i++ {
			v := low
			v.ArrivalRate = p(rng.Float64() * 3)
			v.KVMean = p(rng.Float64() * 0.3)
			v.Waiting = float64(rng.IntN(3))
			switch rng.IntN(3) {
			case 0:
				v.TTFTP95 = p(2.01 + rng.Float64()*8)
			case 1:
				v.E2EP95 = p(30.1 + rng.Float64()*30)
			default:
				v.ITLP95 = p(0.051 + rng.Float64()*0.2)
			}
			v.Service.Queue.Count, v.Service.Queue.Sum = 100, rng.Float64()*10
			if d := policy.Decide(v, st, cfg, 10, now); d.Target < 10 {
				t.Fatalf("v2=%v tick %d: scaled down to %d above the objective (TTFT p95 %.3g, e2e p95 %.3g, inter-token p95 %.3g); reasons %q",
					v2, i, d.Target, *v.TTFTP95, *v.E2EP95, *v.ITLP95, d.Reasons)
			}
		}
	}
}

// TestNoScaleDownWithinAMinuteOfABreach: the objective is judged over a
// window, not a tick. A fleet warm on a low load that would scale down
// reads one tick in breach; the ticks after it read the objective met
// again, yet none scales down until BreachCalm has passed since the
// breach, and then the scale-down goes on. A breach dated after now (the
// clock stepped back) holds nothing, and the state keeps the breach's time.
func TestNoScaleDownWithinAMinuteOfABreach(t *testing.T) {
	for _, v2 := range []bool{true, false} {
		cfg := knobs.Defaults()
		cfg.ServiceModel = v2
		cfg.MaxReplicas = 20
		low := fleet.View{Ready: 10, ArrivalRate: p(1), StartupSeconds: 60, Pods: pods(10), LatencyRequests: 100,
			TTFTP95: p(0.1), KVMean: p(0.01)}
		low.Service.Queue.Count, low.Service.Queue.Sum = 100, 0.1
		st := state.New()
		tick := func(i int) time.Time { return t0.Add(time.Duration(i) * 15 * time.Second) }
		for i := 0; i < 45; i++ {
			record(st, cfg, policy.Decide(low, st, cfg, 10, tick(i)), tick(i))
		}
		if d := policy.Decide(low, st, cfg, 10, tick(45)); d.Target >= 10 {
			t.Fatalf("v2=%v: the low load does not scale down (the test would prove nothing): %q", v2, d.Reasons)
		}
		breached := low
		breached.TTFTP95 = p(4)
		d := policy.Decide(breached, st, cfg, 10, tick(45))
		if d.Target < 10 || d.Breach == "" {
			t.Fatalf("v2=%v: the breach tick scaled down to %d or named no breach (%q)", v2, d.Target, d.Breach)
		}
		record(st, cfg, d, tick(45))
		if st.LastBreach == nil || !st.LastBreach.Equal(tick(45)) {
			t.Fatalf("v2=%v: the state did not keep the breach's time: %v", v2, st.LastBreach)
		}
		// 15, 30 and 45 s after the breach: held, and the reason says why.
		for i := 46; i < 49; i++ {
			d := policy.Decide(low, st, cfg, 10, tick(i))
			if d.Target < 10 || d.DecidedBy != policy.StepBreachHold || !hasReason(d, "within 1m0s of a breach") {
				t.Fatalf("v2=%v: %s after the breach: target %d decided by %s; reasons %q", v2, tick(i).Sub(tick(45)), d.Target, d.DecidedBy, d.Reasons)
			}
			if d.Breach != "" {
				t.Fatalf("v2=%v: a tick within the objective named a breach %q", v2, d.Breach)
			}
			record(st, cfg, d, tick(i))
		}
		if d := policy.Decide(low, st, cfg, 10, tick(49)); d.Target >= 10 {
			t.Errorf("v2=%v: a minute after the breach the scale-down did not go on: %q", v2, d.Reasons)
		}
		// A breach dated after now: the clock went back.
		future := tick(200)
		st.LastBreach = &future
		if d := policy.Decide(low, st, cfg, 10, tick(49)); d.Target >= 10 {
			t.Errorf("v2=%v: a breach dated after now held the scale-down: %q", v2, d.Reasons)
		}
	}
}

// TestNoTTFTExportedNeverScalesDownOnLatency: a server that exports no
// TTFT (TGI's preset) but a queue-time histogram. The objective cannot be
// judged low, so the plan does not remove pods for it; and a queue time
// past the objective for a fifth of the requests is a breach by itself.
func TestNoTTFTExportedNeverScalesDownOnLatency(t *testing.T) {
	cfg := knobs.Defaults()
	cfg.MaxReplicas = 20
	v := fleet.View{Ready: 10, ArrivalRate: p(1), StartupSeconds: 60, Pods: pods(10)}
	v.Service.Queue = signal.Histogram{Count: 100, Sum: 1, Buckets: []signal.Bucket{{UpperBound: 0.1, Count: 100}, {UpperBound: 5, Count: 100}}}
	st := state.New()
	d := steady(t, st, cfg, v, 10, 45)
	if d.Target < 10 || d.Rules[3].Name != policy.RuleLatency || d.Rules[3].Low || !strings.Contains(d.Rules[3].Note, "no TTFT exported") {
		t.Errorf("no TTFT exported: target %d, latency rule %+v; want it never low", d.Target, d.Rules[3])
	}
	cfg = knobs.Defaults()
	cfg.MaxReplicas = 20
	v.TTFTP95, v.LatencyRequests = p(0.1), 100
	v.Service.TTFT.Count = 100
	steady(t, st, cfg, v, 10, 1)
	v.Service.Queue.Buckets = []signal.Bucket{{UpperBound: 1, Count: 80}, {UpperBound: 5, Count: 100}}
	if d := policy.Decide(v, st, cfg, 10, t0.Add(47*15*time.Second)); d.Target < 10 || !hasReason(d, "waited longer than the TTFT objective") {
		t.Errorf("a fifth of the requests waited 1-5 s: target %d; reasons %q", d.Target, d.Reasons)
	}
}

// TestWithoutTTFTTheQueueAndThePrefillTogetherAreABreach: a server that
// exports no TTFT but its queue time, end-to-end latency and prompt
// lengths (TGI's preset). Its requests waited little, so the queue time
// alone reads no breach; but a fifth of its prompts are too long for any
// pod to prefill within the objective, so the model puts a fifth of the
// requests past it: no scale-down, where the same fleet with short
// prompts scales down (fails with the breach read on the queue time only).
func TestWithoutTTFTTheQueueAndThePrefillTogetherAreABreach(t *testing.T) {
	view := func(longShare float64) fleet.View {
		v := fleet.View{Ready: 10, ArrivalRate: p(1), StartupSeconds: 60, Pods: pods(10), LatencyRequests: 100, E2EP95: p(1), KVMean: p(0.01)}
		v.Service.Queue = signal.Histogram{Count: 100, Sum: 1, Buckets: []signal.Bucket{{UpperBound: 0.1, Count: 100}, {UpperBound: 5, Count: 100}}}
		short := 100 * (1 - longShare)
		v.Service.Prompts = signal.Histogram{Count: 100, Sum: short*500 + (100-short)*400000,
			Buckets: []signal.Bucket{{UpperBound: 1000, Count: short}, {UpperBound: 500000, Count: 100}}}
		return v
	}
	for _, c := range []struct {
		long   float64
		breach bool
	}{{0, false}, {0.2, true}} {
		cfg := knobs.Defaults()
		cfg.MaxReplicas = 20
		cfg.E2ESLO = 30 * time.Second // what judges the latency low without a TTFT
		st := state.New()
		d := steady(t, st, cfg, view(c.long), 10, 45)
		held := hasReason(d, "the model puts")
		switch {
		case c.breach && (d.Target < 10 || !held):
			t.Errorf("a fifth of the prompts past any pod's prefill, no TTFT exported: target %d, reasons %q; want no scale-down, for the model's reading of the breach", d.Target, d.Reasons)
		case !c.breach && (d.Target >= 10 || held):
			t.Errorf("short prompts that waited little: target %d, reasons %q; want the low load to scale down (else the case proves nothing)", d.Target, d.Reasons)
		}
	}
}
