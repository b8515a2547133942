package sizing

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/model"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

func TestTheBudgetCountsLoadMissesOverAWindow(t *testing.T) {
	o, params := options(), model.DefaultPrior()
	svc := fleet.Service{}
	svc.Queue.Count = 100
	var st state.Service
	miss := 0.02
	if got := spendAt(&st, svc, params, o, &miss, false); got != nil {
		t.Fatalf("judged the budget on %g requests (fewer than %g): %g", st.Spent.Requests, BudgetRequests, *got)
	}
	for range 4 {
		spendAt(&st, svc, params, o, &miss, false)
	}
	got := spendAt(&st, svc, params, o, &miss, false)
	if got == nil || math.Abs(*got-miss) > 1e-9 {
		t.Fatalf("a steady 2%% load miss reads %v, want 0.02", got)
	}
	// A tick below the plan (pods starting) spends nothing: it only fades.
	before := st.Spent
	big := 0.5
	spendAt(&st, svc, params, o, &big, true)
	if st.Spent.Missed >= before.Missed || math.Abs(st.Spent.Missed/st.Spent.Requests-before.Missed/before.Requests) > 1e-12 {
		t.Errorf("a tick below the plan moved the share: %+v -> %+v", before, st.Spent)
	}
	// Nothing missed for an hour: the share falls towards zero.
	none := 0.0
	for range 240 {
		got = spendAt(&st, svc, params, o, &none, false)
	}
	if got == nil || *got > 0.001 {
		t.Errorf("an hour without misses left the share at %v", got)
	}
	// No reading at all: the memory fades and never counts a miss.
	st = state.Service{Spent: state.Spent{Missed: 10, Requests: 1000}}
	spendAt(&st, fleet.Service{}, params, o, nil, false)
	if st.Spent.Requests >= 1000 || math.Abs(st.Spent.Missed/st.Spent.Requests-0.01) > 1e-12 {
		t.Errorf("a tick without readings changed the share: %+v", st.Spent)
	}
}

// spendAt is spend at one fleet size throughout: the whole window's share.
func spendAt(st *state.Service, svc fleet.Service, params model.Params, o Options, load *float64, below bool) *float64 {
	share, _, _ := spend(st, svc, params, o, load, below, 10)
	return share
}

// The budget judges the fleet that is there: misses a smaller fleet made
// stay in the window's share, but they may only pay for a breach of the
// fleet that grew, never buy it a pod; once that fleet has seen enough
// requests of its own (or missed more than a window of them may), its
// share is what the plan reads. Judged on the window, a fleet that grew
// one pod a cooldown on long prompts read the misses of the first minutes
// at every step and climbed to 49 pods where 31 meet the objective.
func TestTheBudgetJudgesTheFleetThatIsThere(t *testing.T) {
	o, params := options(), model.DefaultPrior()
	target := o.target()
	svc := fleet.Service{}
	svc.Queue.Count = 100
	var st state.Service
	high, low := 0.05, 0.002
	at8 := func(miss *float64, ready int) (*float64, int) {
		share, at, _ := spend(&st, svc, params, o, miss, false, ready)
		return share, at
	}
	for range 20 {
		at8(&high, 8)
	}
	got, at := at8(&high, 8)
	if got == nil || math.Abs(*got-high) > 1e-9 || at != 8 {
		t.Fatalf("8 pods missing 5%%: %v at %d, want 0.05 at 8", got, at)
	}
	// The fleet grows: until it has seen BudgetRequests requests of its
	// own, the window's share (the misses at 8 pods, > 3 %) reads no more
	// than the aim: it pays for a breach, it buys no pod.
	got, at = at8(&low, 12)
	if got == nil || math.Abs(*got-target) > 1e-12 || at != 0 {
		t.Fatalf("first tick at 12 pods: %v at %d, want the window's share capped at the aim %g, at 0", got, at, target)
	}
	for range 3 {
		got, at = at8(&low, 12)
	}
	if got == nil || math.Abs(*got-low) > 1e-9 || at != 12 {
		t.Fatalf("400 requests at 12 pods missing 0.2%%: %v at %d, want 0.002 at 12", got, at)
	}
	if w := st.Spent.Missed / st.Spent.Requests; w < 0.03 {
		t.Errorf("the window forgot the misses at 8 pods: %g", w)
	}
	// Back to 8: the record since the last growth goes on, and the
	// smaller fleet's misses add to it (a pod comes back only once they
	// overspend it, not on the first breach after the step down).
	got, at = at8(&high, 8)
	if got == nil || at != 8 || *got <= low || *got >= high {
		t.Errorf("a step down restarted or dropped the record: %v at %d", got, at)
	}
	// Growing again starts a new record: a young fleet missing little
	// reads the window's share, capped at the aim...
	if _, at = at8(&low, 9); at != 0 {
		t.Errorf("a fleet that grew kept the smaller one's reading (at %d)", at)
	}
	// ...and one that already missed more than a window of requests may
	// (300 × the aim: 2.1) reads its own share: 2 of its first 100 do
	// not, 4 of its first 200 do.
	mid := 0.02
	if got, at = at8(&mid, 10); at != 0 {
		t.Fatalf("2 misses in the first 100 requests at 10 pods judged it: %v at %d", *got, at)
	}
	if got, at = at8(&mid, 10); got == nil || at != 10 || math.Abs(*got-mid) > 1e-9 {
		t.Errorf("a young fleet missing 2%% of 200 requests reads %v at %d, want 0.02 at 10", got, at)
	}
}

// A step down needs the budget within its aim beyond the noise of the
// share: on a few thousand requests (Mooncake's hour at 4 req/s) a share
// just under the edge wanders over it by the next breach, which took the
// pod back within minutes (a flap); on a busy fleet's the same share is
// sure enough.
func TestAStepDownNeedsTheBudgetWithinItsAimBeyondItsNoise(t *testing.T) {
	hold, target := 600.0, 0.007
	share := 0.9 * target / (1 + DownTolerance) // under the edge, by a tenth of it
	for _, c := range []struct {
		requests float64
		want     int
	}{{2400, 20}, {240000, 19}} {
		st := state.Service{}
		RaiseFloor(&st, t0, 20, hold)
		if got := lowerFloor(&st, spentUpper(&share, c.requests), target, false, 8, t0.Add(seconds(hold)), hold); got != c.want {
			t.Errorf("%g requests missing %.3g%%: floor %d, want %d", c.requests, 100*share, got, c.want)
		}
	}
	if spentUpper(nil, 1000) != nil {
		t.Error("no share read an upper bound")
	}
	if got := spentUpper(new(0.0), 1000); got == nil || *got <= 0 {
		t.Errorf("a share of no misses on 1000 requests reads an upper bound %v, want above 0 (a miss may hide in it)", got)
	}
	if got := spentUpper(&share, 0); got == nil || *got != share {
		t.Errorf("no requests changed the share: %v", got)
	}
}

func TestTheFloorComesDownOnePodAtATimeOnceTheBudgetAllows(t *testing.T) {
	hold, target, low, high := 600.0, 0.007, 0.003, 0.02
	edge := 0.999 * target / (1 + DownTolerance) // inside the budget with the tolerance to spare
	st := state.Service{}
	RaiseFloor(&st, t0, 20, hold)
	RaiseFloor(&st, t0, 18, hold) // a smaller ask does not lower it
	at := func(s float64) time.Time { return t0.Add(seconds(s)) }
	if got := lowerFloor(&st, &low, target, false, 8, at(hold-15), hold); got != 20 {
		t.Fatalf("the floor moved within the hold: %d", got)
	}
	steps := []struct {
		at       float64
		spent    *float64
		breached bool
		want     int
	}{
		{hold, &low, false, 19},
		{hold + 15, &low, false, 19},  // one step a minute
		{hold + 60, &high, false, 19}, // misses above the plan's aim: it stays
		{hold + 75, &low, true, 19},   // a breach: it stays
		{hold + 90, &low, false, 19},  // and for a minute after it
		{hold + 135, &low, false, 18}, // calm again
		{hold + 195, nil, false, 17},  // too few requests to judge: the plan's hold still holds
		// At the budget's edge a step down would be undone by the next
		// breach tick (a flap): a removal must fit with DownTolerance to spare.
		{hold + 255, &target, false, 17},
		{hold + 315, &edge, false, 16},
		{hold + 375, &low, false, 15},
	}
	for i, s := range steps {
		if got := lowerFloor(&st, s.spent, target, s.breached, 8, at(s.at), hold); got != s.want {
			t.Fatalf("step %d (t=%gs): floor %d, want %d", i, s.at, got, s.want)
		}
	}
	if got := lowerFloor(&st, &low, target, false, 15, at(hold+380), hold); got != 0 || st.Floor.Pods != 0 {
		t.Errorf("a need that reaches the floor left it at %d", got)
	}
}

// A state written before Floor.Next keeps the time its floor last changed
// (Floor.At): it decodes, and its floor comes down a hold after that time,
// as the build that wrote it would have let it.
func TestAFloorWrittenBeforeNextComesDownAHoldAfterItsLastChange(t *testing.T) {
	hold, target, low := 600.0, 0.007, 0.003
	// What the build before Next wrote: the same document, "at" for "next".
	old := state.New()
	old.Service = &state.Service{Beta: 1, Floor: state.Floor{Pods: 12, Next: t0}}
	b, err := state.Encode(old)
	if err != nil {
		t.Fatal(err)
	}
	raw := bytes.Replace(b, []byte(`"next":`), []byte(`"at":`), 1)
	if bytes.Equal(raw, b) {
		t.Fatalf("no floor in %s", b)
	}
	st, err := state.Decode(raw)
	if err != nil {
		t.Fatalf("a state with the floor's old field does not decode: %v", err)
	}
	svc := st.Service
	if svc == nil || svc.Floor.Pods != 12 {
		t.Fatalf("decoded floor %+v, want 12 pods", svc)
	}
	at := func(s float64) time.Time { return t0.Add(seconds(s)) }
	if got := lowerFloor(svc, &low, target, false, 4, at(hold-15), hold); got != 12 {
		t.Fatalf("the old floor moved within the hold after its last change: %d", got)
	}
	if !svc.Floor.At.IsZero() || !svc.Floor.Next.Equal(at(hold)) {
		t.Fatalf("the old field was not turned into Next: %+v", svc.Floor)
	}
	if got := lowerFloor(svc, &low, target, false, 4, at(hold), hold); got != 11 {
		t.Errorf("a hold after its last change the old floor is at %d, want 11", got)
	}
}

// The step that gives the floor up onto the plan's need waits a flap
// window after the one before it: the plan was short when the floor rose,
// and on Mooncake at 5-6 pods its need rose by a pod within three minutes
// of the floor coming down onto it, a reversal (a flap).
func TestTheFloorsLastStepOntoTheNeedWaitsAFlapWindow(t *testing.T) {
	hold, target, low, need := 600.0, 0.007, 0.001, 8
	at := func(s float64) time.Time { return t0.Add(seconds(s)) }
	st := state.Service{}
	RaiseFloor(&st, t0, 10, hold)
	steps := []struct {
		at   float64
		want int
	}{
		{hold, 9},                             // a step; the next would land on the need
		{hold + FloorStepSeconds, 9},          // so it does not come a minute later
		{hold + FloorLastStepSeconds - 15, 9}, // nor before the flap window
		{hold + FloorLastStepSeconds, 8},      // then it comes down onto the need
		{hold + FloorLastStepSeconds + 15, 0}, // and is gone
	}
	for i, s := range steps {
		if got := lowerFloor(&st, &low, target, false, need, at(s.at), hold); got != s.want {
			t.Fatalf("step %d (t=%gs): floor %d, want %d", i, s.at, got, s.want)
		}
	}
	if st.Floor.Pods != 0 {
		t.Errorf("the floor came down onto the need and stayed: %+v", st.Floor)
	}
}

// Waiting near the plan is load: more pods shorten it. Far above the plan
// (WaitUnmovedFactor × its need) the waiting a breach still reads is what
// more pods did not move, and it is learned and taken out with the rest.
func TestWaitingFarAboveThePlanIsWhatPodsDidNotMove(t *testing.T) {
	const planned, slo = 10, 2.0
	breach := func(ready int) fleet.View {
		v := view(ready, 4)
		p95 := 3.0
		v.TTFTP95 = &p95
		v.Service.TTFT = signal.Histogram{Count: 200, Sum: 400, Buckets: []signal.Bucket{{UpperBound: 2, Count: 194}, {UpperBound: 5, Count: 200}}}
		return v
	}
	queueing, load := 0.02, 0.03 // 2 % waited past the objective, 3 % missed beyond the infeasible
	run := func(ready int) float64 {
		var st state.Service
		var miss *float64
		for range 30 {
			miss, _ = unmoved(&st, breach(ready), slo, planned, &queueing, &load, "")
		}
		return *miss
	}
	if !breachRead(breach(10), slo) {
		t.Fatal("the view reads no breach: the test proves nothing")
	}
	if near := run(13); near < queueing {
		t.Errorf("at 13 pods for a plan of 10 the load miss is %.3g, below the %.3g that waited: waiting near the plan is load", near, queueing)
	}
	far := run(int(WaitUnmovedFactor*planned) + 1)
	if far >= queueing/2 {
		t.Errorf("far above the plan the load miss is %.3g: want the unmoved waiting (%.3g) taken out", far, queueing)
	}
}
