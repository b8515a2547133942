package policy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/decide/knobs"
	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/state"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func p(f float64) *float64 { return &f }

// record stores the decision in the state, as the decide stage does.
func record(st *state.State, cfg policy.Config, d policy.Decision, now time.Time) {
	st.Record(state.Tick{At: now, Decided: d.Memory(cfg)})
}

func hasReason(d policy.Decision, sub string) bool {
	for _, r := range append(append([]string{}, d.Reasons...), d.Alerts...) {
		if strings.Contains(r, sub) {
			return true
		}
	}
	return false
}

// Seed 000's example: util 0.85, queue 15, KV 0.72, p99 650 ms on 2 pods
// (its minimum) gives +1; a second tick inside the 60 s cooldown holds.
func TestSeed000ExampleScalesUpOneAndRespectsCooldown(t *testing.T) {
	cfg := v1()
	cfg.MinReplicas = 2
	cfg.QueueTarget = 5 // seed 002's AverageValue
	st := state.New()
	v := fleet.View{Ready: 2, Waiting: 15, Running: 20, KVMean: p(0.72), GPUUtilEWMA: p(0.85),
		TTFTP95: p(0.5), TTFTP99: p(0.65), LatencyRequests: 100, StartupSeconds: 60}
	d := policy.Decide(v, st, cfg, 2, t0)
	if d.Target != 3 {
		t.Fatalf("target %d, want 3; reasons %q", d.Target, d.Reasons)
	}
	if d.Signals != 2 || !hasReason(d, "gpu corroborates") {
		t.Errorf("want queue + corroborating GPU, got %d signals: %q", d.Signals, d.Reasons)
	}
	record(st, cfg, d, t0)
	// CPA did not apply it (still 2 replicas): no scale-up happened, so
	// no cooldown holds the same recommendation.
	d = policy.Decide(v, st, cfg, 2, t0.Add(15*time.Second))
	if d.Target != 3 || hasReason(d, "cooldown") {
		t.Fatalf("unapplied scale-up: target %d, want 3 again; reasons %q", d.Target, d.Reasons)
	}
	record(st, cfg, d, t0.Add(15*time.Second))
	// Applied now (3 replicas, one starting); more load inside the cooldown is held.
	v.Starting, v.Waiting = 1, 30
	d = policy.Decide(v, st, cfg, 3, t0.Add(30*time.Second))
	if d.Target != 3 || !hasReason(d, "cooldown") {
		t.Fatalf("inside the cooldown: target %d, want 3 held; reasons %q", d.Target, d.Reasons)
	}
	record(st, cfg, d, t0.Add(30*time.Second))
	// The cooldown runs from the tick whose target was applied (t0+15s).
	v.Ready, v.Starting = 3, 0
	d = policy.Decide(v, st, cfg, 3, t0.Add(76*time.Second))
	if d.Target <= 3 || hasReason(d, "cooldown") {
		t.Fatalf("after the cooldown: target %d, want above 3; reasons %q", d.Target, d.Reasons)
	}
}

// Seed 000 rule B: KV above 0.9 with moderate GPU load adds two pods on an
// 8-pod fleet (proportional to KV over its 0.8 target).
func TestSeed000RuleBAddsTwo(t *testing.T) {
	v := fleet.View{Ready: 8, Waiting: 0, Running: 400, KVMean: p(0.95), KVMax: p(0.97), GPUUtilEWMA: p(0.7), StartupSeconds: 60}
	d := policy.Decide(v, state.New(), v1(), 8, t0)
	if d.Target != 10 {
		t.Fatalf("target %d, want 10 (+2); reasons %q", d.Target, d.Reasons)
	}
}

// Seed 000 rule D: utilisation under 20% and an empty queue remove a pod,
// but only once the 300 s down-stabilisation window has been observed.
func TestSeed000RuleDAfterWindow(t *testing.T) {
	cfg := v1()
	cfg.MinReplicas = 2
	st := state.New()
	v := fleet.View{Ready: 3, Waiting: 0, Running: 1, GPUUtilEWMA: p(0.15), StartupSeconds: 60}
	var firstDown time.Duration = -1
	for s := time.Duration(0); s <= 400*time.Second; s += 15 * time.Second {
		d := policy.Decide(v, st, cfg, 3, t0.Add(s))
		record(st, cfg, d, t0.Add(s))
		if d.Target < 3 {
			if d.Target != 2 {
				t.Fatalf("at %s: target %d, want 2 (one pod without a capacity model)", s, d.Target)
			}
			firstDown = s
			break
		}
	}
	if firstDown < 300*time.Second || firstDown > 315*time.Second {
		t.Fatalf("first scale-down at %s, want just after 300 s", firstDown)
	}
}

// Seed 004: GPU headroom alone never moves replicas; a p95 at twice the
// SLO corroborated by the GPU scales decisively, capped at +4.
func TestSeed004HeadroomAndSLO(t *testing.T) {
	cfg := v1()
	cfg.TTFTSLO = 60 * time.Millisecond
	cfg.LatencyNeedsLoad = false // seed 004's edge service exposes no queue: latency is its load signal
	v := fleet.View{Ready: 4, GPUUtilEWMA: p(0.9), StartupSeconds: 10}
	d := policy.Decide(v, state.New(), cfg, 4, t0)
	if d.Target != 4 || !hasReason(d, "never moves replicas") {
		t.Fatalf("GPU alone: target %d, want 4 held; reasons %q", d.Target, d.Reasons)
	}
	v.TTFTP95, v.TTFTP99, v.LatencyRequests = p(0.12), p(0.15), 50
	d = policy.Decide(v, state.New(), cfg, 4, t0)
	if d.Target != 8 {
		t.Fatalf("SLO x2 + GPU: target %d, want 8; reasons %q", d.Target, d.Reasons)
	}
	// Without corroboration the same SLO breach is a moderate step (x1.3).
	v.GPUUtilEWMA = p(0.5)
	d = policy.Decide(v, state.New(), cfg, 4, t0)
	if d.Target != 6 {
		t.Fatalf("SLO x2 alone: target %d, want 6; reasons %q", d.Target, d.Reasons)
	}
}

// Seed 000 rule C: P99 above twice the baseline with nothing else wrong
// is an alert, not a scale.
func TestP99AboveBaselineAlertsOnly(t *testing.T) {
	v := fleet.View{Ready: 3, Running: 10, KVMean: p(0.6), TTFTP95: p(1.0), TTFTP99: p(2.5), LatencyRequests: 100, StartupSeconds: 60}
	d := policy.Decide(v, state.New(), v1(), 3, t0)
	if d.Target != 3 || len(d.Alerts) != 1 || !strings.Contains(d.Alerts[0], "baseline") {
		t.Fatalf("target %d alerts %q, want 3 and one baseline alert", d.Target, d.Alerts)
	}
}

func TestDecisiveStepIsCapped(t *testing.T) {
	v := fleet.View{Ready: 4, Waiting: 400, Running: 800, KVMean: p(0.99), GPUUtilEWMA: p(1), StartupSeconds: 60}
	d := policy.Decide(v, state.New(), v1(), 4, t0)
	if d.Target != 8 {
		t.Fatalf("target %d, want 8 (cap max(4, 50%%)); reasons %q", d.Target, d.Reasons)
	}
	cfg := v1()
	cfg.MaxReplicas = 100
	d = policy.Decide(fleet.View{Ready: 20, Waiting: 400, Running: 800, KVMean: p(0.99), StartupSeconds: 60}, state.New(), cfg, 20, t0)
	if d.Target != 30 {
		t.Fatalf("target %d, want 30 (+50%% of 20)", d.Target)
	}
}

func TestMaxBlocksScaleUpAlerts(t *testing.T) {
	cfg := v1()
	cfg.MaxReplicas = 4
	v := fleet.View{Ready: 4, Waiting: 100, Running: 800, KVMean: p(0.99), StartupSeconds: 60}
	d := policy.Decide(v, state.New(), cfg, 4, t0)
	if d.Target != 4 || !hasReason(d, "maxReplicas 4 blocks") {
		t.Fatalf("target %d alerts %q", d.Target, d.Alerts)
	}
}

// Startup compensation: pods already starting count as capacity on its
// way, so a queue that persists while they start does not cascade.
func TestStartingPodsPreventCascade(t *testing.T) {
	cfg := v1()
	cfg.PodCapacityRPS = 10
	cfg.MaxReplicas = 64
	st := state.New()
	// 6 replicas asked for, 2 ready: 40 req/s needs 40/8 = 5 pods; the
	// queue (20 waiting, 10 per ready pod) proposes 20/3 = 7.
	v := fleet.View{Ready: 2, Starting: 4, Waiting: 20, Running: 300, KVMean: p(0.95), ArrivalRate: p(40), StartupSeconds: 60}
	d := policy.Decide(v, st, cfg, 6, t0)
	if d.Target != 7 {
		t.Fatalf("target %d, want 7 (no cascade); reasons %q", d.Target, d.Reasons)
	}
	v.Waiting = 6 // 3 per ready pod: inside the tolerance band
	d = policy.Decide(v, st, cfg, 6, t0)
	if d.Target != 6 || !hasReason(d, "already asked for") {
		t.Fatalf("target %d, want 6 held as covered by starting pods; reasons %q", d.Target, d.Reasons)
	}
}

// A rising arrival rate raises the projected demand at now + startup.
func TestTrendProjectsDemandAhead(t *testing.T) {
	cfg := v1()
	cfg.PodCapacityRPS = 10
	cfg.MaxReplicas = 64
	v := fleet.View{Ready: 4, Running: 100, KVMean: p(0.6), ArrivalRate: p(24), RateTrend: p(0.2), StartupSeconds: 60}
	// 24 + 0.2 x 60 = 36 req/s at 8 per pod -> 4.5 -> 5 pods.
	d := policy.Decide(v, state.New(), cfg, 4, t0)
	if d.Target != 5 || d.Rules[4].Name != policy.RuleDemand || d.Rules[4].Proposal != 5 {
		t.Fatalf("target %d demand %+v, want 5", d.Target, d.Rules[4])
	}
	v.RateTrend = p(0)
	if d := policy.Decide(v, state.New(), cfg, 4, t0); d.Target != 4 {
		t.Fatalf("flat trend: target %d, want 4", d.Target)
	}
	// A steep trend is capped at maxGrowth x the current rate.
	v.RateTrend = p(10)
	cfg.DecisiveMaxPods = 100
	if d := policy.Decide(v, state.New(), cfg, 4, t0); d.Rules[4].Proposal != 9 { // 24 x 3 / 8
		t.Fatalf("steep trend: demand %+v, want 9", d.Rules[4])
	}
}

func TestNoScaleDownOnMissingOrStartingOrShortHistory(t *testing.T) {
	cfg := v1()
	idle := fleet.View{Ready: 4, KVMean: p(0.05), StartupSeconds: 60}
	st := state.New()
	for s := 0; s <= 600; s += 15 {
		record(st, cfg, policy.Decision{Recommendation: 4, Current: 4, Target: 4}, t0.Add(time.Duration(s-700)*time.Second))
	}
	// history is old enough, but the last 300 s had recommendations of 4: hold.
	d := policy.Decide(idle, st, cfg, 4, t0)
	if d.Target != 4 {
		t.Fatalf("recent high recommendations: target %d, want 4", d.Target)
	}
	fresh := state.New()
	if d := policy.Decide(idle, fresh, cfg, 4, t0); d.Target != 4 || !hasReason(d, "history") {
		t.Fatalf("fresh state: target %d reasons %q", d.Target, d.Reasons)
	}
	missing := idle
	missing.Missing, missing.MissingNames = 1, []string{"pod-x"}
	if d := policy.Decide(missing, st, cfg, 4, t0); d.Target != 4 || !hasReason(d, "missing") {
		t.Fatalf("missing pod: target %d reasons %q", d.Target, d.Reasons)
	}
	starting := idle
	starting.Starting = 1
	if d := policy.Decide(starting, st, cfg, 4, t0); d.Target != 4 || !hasReason(d, "starting") {
		t.Fatalf("starting pod: target %d reasons %q", d.Target, d.Reasons)
	}
}

// Simulated removal takes away as many pods as headroom allows, at most half.
func TestSimulatedRemovalKeepsHeadroom(t *testing.T) {
	cfg := v1()
	cfg.DownStabilization = 0
	cfg.PodCapacityRPS = 10
	cfg.MaxReplicas = 20
	st := state.New()
	// 12 pods at 40 req/s: 40/8 = 5 pods needed; KV 0.3 -> 3.6/(12-k) <= 0.8 -> k <= 7;
	// batch 240 running: 20 per pod x (12/(12-k))^2 <= 179 -> k <= 7; cap 50% -> 6.
	v := fleet.View{Ready: 12, Running: 240, KVMean: p(0.3), ArrivalRate: p(40), StartupSeconds: 60}
	d := policy.Decide(v, st, cfg, 12, t0)
	if d.Target != 6 {
		t.Fatalf("target %d, want 6; reasons %q", d.Target, d.Reasons)
	}
	v.KVMean = p(0.45) // 5.4/(12-k) <= 0.8 -> k <= 5
	if d := policy.Decide(v, st, cfg, 12, t0); d.Target != 7 {
		t.Fatalf("target %d, want 7; reasons %q", d.Target, d.Reasons)
	}
	v.KVMean = p(0.3)
	v.ArrivalRate = p(72) // 9 pods needed
	if d := policy.Decide(v, st, cfg, 12, t0); d.Target != 9 {
		t.Fatalf("target %d, want 9; reasons %q", d.Target, d.Reasons)
	}
	// The peak of the last minutes counts too (bursts).
	v.ArrivalRate, v.RatePeak = p(40), p(80)
	if d := policy.Decide(v, st, cfg, 12, t0); d.Target != 10 {
		t.Fatalf("target %d, want 10 for the 80 req/s peak; reasons %q", d.Target, d.Reasons)
	}
}

func TestScaleDownCooldown(t *testing.T) {
	cfg := v1()
	cfg.DownStabilization = 0
	st := state.New()
	last := t0.Add(-100 * time.Second)
	st.LastScaleDown = &last
	v := fleet.View{Ready: 4, KVMean: p(0.05), StartupSeconds: 60}
	if d := policy.Decide(v, st, cfg, 4, t0); d.Target != 4 || !hasReason(d, "cooldown") {
		t.Fatalf("target %d reasons %q", d.Target, d.Reasons)
	}
	if d := policy.Decide(v, st, cfg, 4, t0.Add(201*time.Second)); d.Target >= 4 {
		t.Fatalf("after cooldown: target %d, want below 4", d.Target)
	}
}

// CPA may hold evaluate's target (its own downscaleStabilization, a
// clamp): a scale-down recommendation that was not applied starts no
// cooldown, so the next tick recommends it again rather than "current"
// (which, with CPA's window, held the fleet forever). The cooldown runs
// from the tick whose decision was applied.
func TestUnappliedScaleDownStartsNoCooldown(t *testing.T) {
	cfg := v1()
	cfg.DownStabilization = 0
	cfg.ScaleDownCooldown = 300 * time.Second
	st := state.New()
	v := fleet.View{Ready: 4, KVMean: p(0.05), StartupSeconds: 60}
	now := t0
	for i := 0; i < 8; i++ { // two minutes of ticks, CPA keeps 4
		d := policy.Decide(v, st, cfg, 4, now)
		if d.Target >= 4 || hasReason(d, "cooldown") {
			t.Fatalf("tick %d, scale-down not applied so far: target %d, want below 4; reasons %q", i, d.Target, d.Reasons)
		}
		record(st, cfg, d, now)
		now = now.Add(15 * time.Second)
	}
	applied := now.Add(-15 * time.Second) // the last tick's target took effect
	v.Ready = 3
	d := policy.Decide(v, st, cfg, 3, now)
	if d.Target != 3 || !hasReason(d, "cooldown") {
		t.Fatalf("after the applied scale-down: target %d, want 3 held by the cooldown; reasons %q", d.Target, d.Reasons)
	}
	record(st, cfg, d, now)
	if st.LastScaleDown == nil || !st.LastScaleDown.Equal(applied) {
		t.Fatalf("lastScaleDown %v, want the applied tick %v", st.LastScaleDown, applied)
	}
	if d := policy.Decide(v, st, cfg, 3, applied.Add(301*time.Second)); d.Target >= 3 {
		t.Fatalf("after the cooldown: target %d, want below 3; reasons %q", d.Target, d.Reasons)
	}
}

func TestScheduleAndPredictiveFloors(t *testing.T) {
	cfg := v1()
	floors, err := knobs.ParseScheduleFloors(`[{start: "30 8 * * 1-5", end: "0 10 * * 1-5", replicas: 6, timezone: "Asia/Shanghai"}]`)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ScheduleFloors = floors
	v := fleet.View{Ready: 1, StartupSeconds: 60}
	// Monday 2026-11-30 09:00 in Shanghai is 01:00 UTC.
	in := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	if d := policy.Decide(v, state.New(), cfg, 1, in); d.Target != 6 || d.ScheduleFloor != 6 {
		t.Fatalf("inside the window: target %d floor %d", d.Target, d.ScheduleFloor)
	}
	if d := policy.Decide(v, state.New(), cfg, 1, in.Add(2*time.Hour)); d.Target != 1 {
		t.Fatalf("after the window: target %d", d.Target)
	}
	cfg.ScheduleFloors = nil
	st := state.New()
	for _, p := range []struct{ day, need int }{{3, 4}, {2, 10}, {1, 8}} {
		st.Record(state.Tick{At: in.Add(-time.Duration(p.day) * 24 * time.Hour), Decided: state.Decided{Need: p.need}})
	}
	// median of {4, 8, 10} = 8, x 0.7 = 5.
	if d := policy.Decide(v, st, cfg, 1, in); d.PredictiveFloor != 5 || d.Target != 5 {
		t.Fatalf("predictive floor %d target %d, want 5", d.PredictiveFloor, d.Target)
	}
}

func TestUrgentBypassesUpCooldownOnlyWhenEnabledAndNothingStarts(t *testing.T) {
	cfg := v1()
	cfg.UrgentBypassesCooldown = true
	st := state.New()
	last := t0.Add(-20 * time.Second)
	st.LastScaleUp, st.LastScaleUpSignals = &last, 4 // no escalation: only urgency can bypass
	v := fleet.View{Ready: 2, Waiting: 30, Running: 400, KVMean: p(0.95), StartupSeconds: 60}
	d := policy.Decide(v, st, cfg, 2, t0)
	if !d.Urgent || d.Target <= 2 || !hasReason(d, "urgent") {
		t.Fatalf("urgent %v target %d reasons %q", d.Urgent, d.Target, d.Reasons)
	}
	v.Starting = 1
	if d := policy.Decide(v, st, cfg, 3, t0); d.Urgent || d.Target != 3 {
		t.Fatalf("with a pod starting: urgent %v target %d, want the cooldown to hold at 3", d.Urgent, d.Target)
	}
	cfg.UrgentBypassesCooldown = false
	v.Starting = 0
	if d := policy.Decide(v, st, cfg, 2, t0); d.Urgent || d.Target != 2 {
		t.Fatalf("bypass off: urgent %v target %d", d.Urgent, d.Target)
	}
}

// A TTFT breach with nothing queueing (long prompts) is an alert, not a
// scale: more replicas would not shorten a prefill.
func TestLatencyWithoutQueueingDoesNotScale(t *testing.T) {
	v := fleet.View{Ready: 4, Running: 8, KVMean: p(0.1), TTFTP95: p(3.5), TTFTP99: p(6), LatencyRequests: 50, StartupSeconds: 60}
	d := policy.Decide(v, state.New(), v1(), 4, t0)
	if d.Target != 4 || len(d.Alerts) == 0 || !strings.Contains(d.Alerts[0], "would not help") {
		t.Fatalf("target %d alerts %q", d.Target, d.Alerts)
	}
	v.Waiting = 12 // 3 per pod: now the queue explains it
	if d := policy.Decide(v, state.New(), v1(), 4, t0); d.Target <= 4 {
		t.Fatalf("with a queue: target %d, want a scale-up; reasons %q", d.Target, d.Reasons)
	}
}

// What the predictive floor remembers is the demand, not replicas held by
// the windows.
func TestNeedIsDemandWhenHolding(t *testing.T) {
	cfg := v1()
	cfg.PodCapacityRPS = 10
	v := fleet.View{Ready: 8, Running: 40, KVMean: p(0.1), ArrivalRate: p(20), StartupSeconds: 60}
	d := policy.Decide(v, state.New(), cfg, 8, t0) // fresh state: the down-window holds 8
	if d.Target != 8 || d.Need != 3 {
		t.Fatalf("target %d need %d, want 8 held and a need of 3", d.Target, d.Need)
	}
}

// A pod that never became ready is not capacity on its way: it neither
// covers a needed scale-up nor holds a scale-down.
func TestStuckPods(t *testing.T) {
	cfg := v1()
	cfg.PodCapacityRPS = 10
	// 4 replicas, 1 stuck, 3 ready at 30 req/s: 30/8 -> 4 pods needed on top of the stuck one.
	v := fleet.View{Ready: 3, Stuck: 1, Running: 150, KVMean: p(0.5), ArrivalRate: p(30), StartupSeconds: 60}
	d := policy.Decide(v, state.New(), cfg, 4, t0)
	if d.Target != 5 || len(d.Alerts) == 0 {
		t.Fatalf("target %d alerts %q, want 5 (4 needed + the stuck pod)", d.Target, d.Alerts)
	}
	cfg.DownStabilization = 0
	idle := fleet.View{Ready: 3, Stuck: 1, Running: 10, KVMean: p(0.05), ArrivalRate: p(2), StartupSeconds: 60}
	if d := policy.Decide(idle, state.New(), cfg, 4, t0); d.Target >= 4 {
		t.Fatalf("idle with a stuck pod: target %d, want a scale-down; reasons %q", d.Target, d.Reasons)
	}
}

// Inside the up-cooldown, more signals agreeing than at the last scale-up
// (a moderate step that was not enough) is an escalation, not held.
func TestEscalationInsideCooldown(t *testing.T) {
	cfg := v1()
	st := state.New()
	last := t0.Add(-20 * time.Second)
	st.LastScaleUp, st.LastScaleUpSignals = &last, 1
	v := fleet.View{Ready: 4, Waiting: 200, Running: 1000, KVMean: p(0.95), StartupSeconds: 60}
	d := policy.Decide(v, st, cfg, 5, t0)
	if d.Target <= 5 || !hasReason(d, "escalation") {
		t.Fatalf("target %d reasons %q, want an escalation", d.Target, d.Reasons)
	}
	st.LastScaleUpSignals = d.Signals
	if d := policy.Decide(v, st, cfg, 5, t0); d.Target != 5 || !hasReason(d, "cooldown") {
		t.Fatalf("same signals again: target %d reasons %q, want held", d.Target, d.Reasons)
	}
}

// Without a per-pod capacity the batch and KV projections alone let 8
// lightly loaded pods halve (demo trace: 8 -> 4 at 50 req/s, then 20 s
// TTFT); one step may raise the load per pod by at most 25% instead.
func TestUnknownCapacityLimitsScaleDownStep(t *testing.T) {
	cfg := v1()
	cfg.DownStabilization = 0
	cfg.MaxReplicas = 30
	st := state.New()
	v := fleet.View{Ready: 8, Running: 185, KVMean: p(0.08), ArrivalRate: p(50), StartupSeconds: 60}
	if d := policy.Decide(v, st, cfg, 8, t0); d.Target != 7 {
		t.Fatalf("no capacity known: target %d, want 7 (8 x 0.8 = 6.4 pods' worth of load kept per step); reasons %q", d.Target, d.Reasons)
	}
	v.Ready, v.Running = 20, 400
	if d := policy.Decide(v, st, cfg, 20, t0); d.Target != 16 {
		t.Fatalf("no capacity known, 20 pods: target %d, want 16; reasons %q", d.Target, d.Reasons)
	}
	cfg.PodCapacityRPS = 20 // 50/16 -> 4 pods needed; the 50% cap allows 4
	v.Ready, v.Running = 8, 185
	if d := policy.Decide(v, st, cfg, 8, t0); d.Target != 4 {
		t.Fatalf("capacity known: target %d, want 4; reasons %q", d.Target, d.Reasons)
	}
}

// Defect 2: a latency the fleet could not read this tick (no baseline)
// may be the slow pod's: it is never low, and holds a scale-down like any
// missing signal. Without an SLO there is nothing to hold for.
func TestUnreadLatencyIsNeverLow(t *testing.T) {
	cfg := v1()
	cfg.DownStabilization = 0
	idle := fleet.View{Ready: 4, KVMean: p(0.05), StartupSeconds: 60}
	if d := policy.Decide(idle, state.New(), cfg, 4, t0); d.Target >= 4 {
		t.Fatalf("idle and read: target %d, want a scale-down", d.Target)
	}
	unread := idle
	unread.LatencyUnread = []string{"vllm-2"}
	d := policy.Decide(unread, state.New(), cfg, 4, t0)
	if d.Target != 4 || !hasReason(d, "[latency] not under the low-water mark") {
		t.Fatalf("latency unread: target %d, want 4 held; reasons %q", d.Target, d.Reasons)
	}
	cfg.TTFTSLO = 0
	if d := policy.Decide(unread, state.New(), cfg, 4, t0); d.Target >= 4 {
		t.Fatalf("no SLO: target %d, want a scale-down", d.Target)
	}
}

// Defect 10: the per-pod load is over the ready pods that reported; the
// proposal scales it to every ready pod, and pods that just became ready
// (Unreported 0) still count as capacity with no load.
func TestPerPodLoadIsOverTheReportingPods(t *testing.T) {
	v := fleet.View{Ready: 4, Unreported: 3, Missing: 3, Waiting: 10, Running: 200, StartupSeconds: 60}
	d := policy.Decide(v, state.New(), v1(), 4, t0)
	q, b := d.Rules[0], d.Rules[1]
	if *q.Value != 10 || q.Proposal != 14 || *b.Value != 200.0/256 || !b.Over || d.Target <= 4 {
		t.Fatalf("queue %+v batch %+v target %d", q, b, d.Target)
	}
	v.Unreported = 0
	if d := policy.Decide(v, state.New(), v1(), 4, t0); *d.Rules[0].Value != 2.5 || d.Target != 4 {
		t.Fatalf("new pods not scraped yet: queue %+v target %d", d.Rules[0], d.Target)
	}
}

// v1 is the policy with v1's demand rule, windows and cooldowns
// (serviceModel=false): the tests above hold it to its rules.
func v1() policy.Config {
	c := knobs.Defaults()
	c.ServiceModel = false
	return c
}
