package sizing

import (
	"math"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/model"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func options() Options {
	return Options{Prior: model.DefaultPrior(), TTFTSLO: 2, Attainment: 0.99, Interval: 15, MetricLag: 15,
		DefaultStartup: 90, HoldMin: 300, Miss: 0.05, MaxPods: 1000, MinHeadroom: DefaultMinHeadroom,
		Limits: model.Limits{ChunkTokens: 8192, MaxNumSeqs: 256, BatchTarget: 1, KVTarget: KVCeiling, MaxUtilisation: MaxUtilisation}}
}

func view(ready int, rps float64) fleet.View {
	return fleet.View{Ready: ready, ArrivalRate: &rps, StartupSeconds: 60}
}

func TestStaffIsSquareRootStaffingAndMonotone(t *testing.T) {
	if got := Staff(9, 1, 100); got != 12 {
		t.Errorf("Staff(9, β=1) = %d, want 9 + 3 = 12", got)
	}
	if got := Staff(0, 1, 100); got != 0 {
		t.Errorf("no load staffs %d pods", got)
	}
	if got := Staff(500, 1, 100); got != 100 {
		t.Errorf("Staff is not capped: %d", got)
	}
	prev := 0
	for r := 0.01; r < 80; r *= 1.07 {
		for _, beta := range []float64{DefaultMinHeadroom, 2, 6} {
			n := Staff(r, beta, 1000)
			if float64(n) < r || float64(n) < r+beta*math.Sqrt(r)-1e-9 {
				t.Fatalf("Staff(%.3g, %g) = %d, below the load plus its headroom", r, beta, n)
			}
		}
		n := Staff(r, 1, 1000)
		if n < prev {
			t.Fatalf("Staff(%.3g) = %d, fewer than %d at a lower load", r, n, prev)
		}
		prev = n
	}
	// Economies of scale: the headroom per unit of load shrinks as the
	// load grows.
	small, large := float64(Staff(2, 1, 1000))/2, float64(Staff(50, 1, 1000))/50
	if large >= small {
		t.Errorf("pods per unit of load: %.2f at R=2, %.2f at R=50; a large fleet must run hotter", small, large)
	}
}

func TestHeadroomRisesOnMissesAndFallsOnlyNearThePlan(t *testing.T) {
	target := 0.007
	b := learnHeadroom(2, 0.5, target, 1000, true, false, DefaultMinHeadroom)
	if b <= 2 || b > 2+Gain*MaxMissFactor*target+1e-9 {
		t.Errorf("a tick losing half its requests to waiting moved β 2 -> %.3f; want up, by at most %g", b, Gain*MaxMissFactor*target)
	}
	if b := learnHeadroom(3, 0, target, 1000, true, false, DefaultMinHeadroom); b >= 3 {
		t.Errorf("no misses at the plan's headroom kept β at %.3f; want it lower", b)
	}
	if b := learnHeadroom(3, 0, target, 1000, false, false, DefaultMinHeadroom); b != 3 {
		t.Errorf("no misses with far more headroom than planned moved β 3 -> %.3f; that says nothing", b)
	}
	if b := learnHeadroom(DefaultMinHeadroom, 0, target, 1e6, true, false, DefaultMinHeadroom); b != DefaultMinHeadroom {
		t.Errorf("β fell below MinHeadroom: %.3f", b)
	}
	if b := learnHeadroom(MaxHeadroom, 1, target, 1e6, true, false, DefaultMinHeadroom); b != MaxHeadroom {
		t.Errorf("β rose above MaxHeadroom: %.3f", b)
	}
	// A tick with few requests counts for little.
	if few, many := learnHeadroom(2, 0.1, target, 5, true, false, DefaultMinHeadroom), learnHeadroom(2, 0.1, target, 5000, true, false, DefaultMinHeadroom); few-2 >= (many-2)/5 {
		t.Errorf("5 requests moved β by %.4f, 5000 by %.4f", few-2, many-2)
	}
}

func TestAssessNeedsADemandReading(t *testing.T) {
	v := fleet.View{Ready: 4, StartupSeconds: 60}
	a, next := Assess(v, state.Service{}, options(), t0)
	if a.Valid || a.Need != 0 {
		t.Errorf("no arrival rate: plan %+v, want invalid and no need", a)
	}
	if next.Ticks != 0 || len(next.Forecast.Pending) != 0 {
		t.Errorf("a tick without demand fed the forecast: %+v", next.Forecast)
	}
}

func TestAssessSizesForTheDemandAndDoesNotTouchThePrevious(t *testing.T) {
	o := options()
	var st state.Service
	var a Assessment
	for i := 0; i < 40; i++ {
		prev := st.Clone()
		a, st = Assess(view(10, 100), st, o, t0.Add(time.Duration(i)*15*time.Second))
		if i > 0 && prev.Ticks != st.Ticks-1 {
			t.Fatalf("tick %d: ticks %d -> %d", i, prev.Ticks, st.Ticks)
		}
	}
	if !a.Valid || !a.Warm {
		t.Fatalf("after 10 minutes of demand: valid %v warm %v", a.Valid, a.Warm)
	}
	// 100 req/s of the default mix at the default prior, flat: the need is
	// the load in pods at the ceiling plus β√R, and at least the surge
	// reserve over it (the bound is ranked by now: no stand-in).
	r := 100 * a.WorkPerRequest / a.Ceiling.Utilisation
	if math.Abs(a.Offered-r)/r > 0.05 {
		t.Errorf("offered %.3g pods for a flat demand of %.3g", a.Offered, r)
	}
	if a.StandIn {
		t.Errorf("after 10 minutes of a flat demand the bound is still the warm-up's stand-in")
	}
	want := max(Staff(a.Offered, a.Beta, o.MaxPods), reservePods(a.Offered, SurgeReserve))
	if a.Need != want || a.Need != o.staff(a.Offered, a.Beta) {
		t.Errorf("need %d, want max(Staff(%.3g, %.2g), ⌈R·(1+%.2g)⌉) = %d", a.Need, a.Offered, a.Beta, SurgeReserve, want)
	}
	// Twice the demand needs more pods, never fewer.
	b, _ := Assess(view(10, 200), st, o, t0.Add(41*15*time.Second))
	if b.Need <= a.Need {
		t.Errorf("doubling the demand moved the need %d -> %d", a.Need, b.Need)
	}
}

func TestHorizonUsesTheDefaultUntilAStartupIsSeen(t *testing.T) {
	o := options()
	if h := o.Horizon(0); h != 90+15+15 {
		t.Errorf("no startup seen: horizon %g, want the default 90 + 15 + 15", h)
	}
	if h := o.Horizon(180); h != 210 {
		t.Errorf("startup 180 s: horizon %g, want 210", h)
	}
}

func TestTheHoldKeepsTheLargestRecentNeed(t *testing.T) {
	var s state.Service
	Remember(&s, t0, 12)
	Remember(&s, t0.Add(time.Minute), 5)
	if h := hold(&s, 4, t0.Add(2*time.Minute), 300); h != 12 {
		t.Errorf("hold %d two minutes after a need of 12, want 12", h)
	}
	if h := hold(&s, 4, t0.Add(330*time.Second), 300); h != 5 {
		t.Errorf("hold %d 5.5 minutes after a need of 12 and 4.5 after one of 5, want 5", h)
	}
	if h := hold(&s, 4, t0.Add(time.Hour), 300); h != 4 || len(s.Needs) != 0 {
		t.Errorf("an hour later: hold %d with %d needs kept, want the current 4 and none", h, len(s.Needs))
	}
}

// TestARefitMovesThePlanAtOnce: the forecast counts requests per second
// and the current model turns them into work, so when the fit moves (here
// every coefficient doubles: a GPU twice as slow as the prior) the very
// next tick's plan doubles its offered load, and the forecast's level is
// still the arrival rate, not work in the old model's units.
func TestARefitMovesThePlanAtOnce(t *testing.T) {
	o := options()
	var st state.Service
	var a Assessment
	for i := 0; i < 40; i++ {
		a, st = Assess(view(10, 100), st, o, t0.Add(time.Duration(i)*15*time.Second))
	}
	twice := model.DefaultPrior()
	twice.Alpha, twice.Beta, twice.GammaSeq, twice.GammaKV = 2*twice.Alpha, 2*twice.Beta, 2*twice.GammaSeq, 2*twice.GammaKV
	th := []float64{twice.Alpha, twice.Beta, twice.GammaSeq, twice.GammaKV}
	st.Fit.Step = model.NewKalman(th, th)
	b, next := Assess(view(10, 100), st, o, t0.Add(40*15*time.Second))
	if got := b.Offered / a.Offered; math.Abs(got-2) > 0.05 {
		t.Errorf("the model's work per request doubled; the offered load moved ×%.3f (%.3g → %.3g pods), want ×2 at once", got, a.Offered, b.Offered)
	}
	if math.Abs(next.Forecast.Level-100)/100 > 0.02 || next.Forecast.Unit != ForecastUnit {
		t.Errorf("forecast level %.4g %q after the refit, want the arrival rate 100 %s", next.Forecast.Level, next.Forecast.Unit, ForecastUnit)
	}
}

// TestAForecastInTheOldUnitIsRestarted: a state written by a release whose
// forecast counted pods of work (no unit) is not continued in requests per
// second; the plan says so and starts again from the tick's arrival rate.
func TestAForecastInTheOldUnitIsRestarted(t *testing.T) {
	var old state.Service
	old.Forecast.Level, old.Forecast.At, old.Forecast.Scores = 3.5, t0.Add(-15*time.Second), []float64{0.1, 0.2}
	a, next := Assess(view(10, 100), old, options(), t0)
	if !a.ForecastReset || next.Forecast.Unit != ForecastUnit || next.Forecast.Level != 100 || len(next.Forecast.Scores) != 0 {
		t.Errorf("old-unit forecast: reset %v, next %+v; want a reported restart at 100 %s", a.ForecastReset, next.Forecast, ForecastUnit)
	}
	if b, _ := Assess(view(10, 100), next, options(), t0.Add(15*time.Second)); b.ForecastReset {
		t.Error("a forecast in requests/s is restarted again")
	}
	if a, _ := Assess(view(10, 100), state.Service{}, options(), t0); a.ForecastReset {
		t.Error("a first tick reports a restart")
	}
}

// missing is a view whose tick's requests all waited 2.5-5 s to be
// scheduled: far past the 2 s objective.
func missing(ready, starting int, rps float64) fleet.View {
	v := view(ready, rps)
	v.Starting = starting
	v.Service.Queue.Count, v.Service.Queue.Sum = 300, 900
	v.Service.Queue.Buckets = []signal.Bucket{{UpperBound: 1, Count: 0}, {UpperBound: 2.5, Count: 0}, {UpperBound: 5, Count: 300}}
	return v
}

// TestBetaIgnoresMissesDuringAColdStart: two pods under a load that needs
// ten, eight on their way. The requests miss because the pods asked for
// are not ready — headroom could not have prevented that — so β does not
// move; nor while the pods asked for are ready but fewer than the plan
// (Planned). The same misses at the plan raise it.
func TestBetaIgnoresMissesDuringAColdStart(t *testing.T) {
	o := options()
	prev := state.Service{Beta: 1.5, Ticks: 10, Planned: 10}
	for name, v := range map[string]fleet.View{"starting": missing(2, 8, 200), "ready below the plan": missing(6, 0, 200)} {
		a, next := Assess(v, prev, o, t0)
		if a.QueueingMiss == nil || *a.QueueingMiss < 0.5 {
			t.Fatalf("%s: the tick's misses were not read: %v", name, a.QueueingMiss)
		}
		if !a.Below || next.Beta != prev.Beta {
			t.Errorf("%s: β %.3g → %.3g (below %v); misses below the plan must not move it", name, prev.Beta, next.Beta, a.Below)
		}
	}
	at := prev
	at.Planned = 6
	if _, next := Assess(missing(6, 0, 200), at, o, t0); next.Beta <= prev.Beta {
		t.Errorf("the same misses at the plan left β at %.3g; they must raise it", next.Beta)
	}
}

// TestBetaFallsAtTheHeldFleetWhenNothingIsMissed: the hold keeps twelve
// pods (a need from a minute ago) where β asks for fewer at the current
// demand; with nothing missed, β comes down, tick after tick.
func TestBetaFallsAtTheHeldFleetWhenNothingIsMissed(t *testing.T) {
	o := options()
	st := state.Service{Beta: 3, Ticks: 100, Planned: 5}
	for i := 0; i < 8; i++ {
		Remember(&st, t0.Add(time.Duration(i-8)*15*time.Second), 12)
	}
	v := view(12, 30)
	v.Service.Queue.Count, v.Service.Queue.Sum = 500, 0.5
	v.Service.Queue.Buckets = []signal.Bucket{{UpperBound: 0.1, Count: 500}}
	a, next := Assess(v, st, o, t0)
	if n := Staff(a.Demand/a.Ceiling.Utilisation, 3, o.MaxPods); n+1 >= 12 {
		t.Fatalf("the demand alone needs %d pods: the fleet is not above it, the test proves nothing", n)
	}
	if next.Beta >= 3 {
		t.Errorf("no misses at the held fleet of 12: β %.3g, want it below 3", next.Beta)
	}
}

// TestTheHoldIgnoresABacklogDrain: a flat 60 req/s, then a backlog of
// 3,000 waiting requests for a minute (what a cold start leaves). The
// backlog asked for more pods while it lasted; once it has drained the
// hold is the flat load's need, not the backlog's for ten minutes.
func TestTheHoldIgnoresABacklogDrain(t *testing.T) {
	o := options()
	var st state.Service
	var a Assessment
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 15 * time.Second) }
	i := 0
	for ; i < 60; i++ {
		a, st = Assess(view(10, 60), st, o, at(i))
		Remember(&st, at(i), a.HoldNeed)
	}
	flat := a.Hold
	peak := 0
	for ; i < 64; i++ {
		v := view(10, 60)
		v.Waiting = 3000
		a, st = Assess(v, st, o, at(i))
		peak = max(peak, a.Need)
		Remember(&st, at(i), a.HoldNeed)
	}
	if peak <= flat+2 {
		t.Fatalf("the backlog asked for %d pods against %d: the test proves nothing", peak, flat)
	}
	a, _ = Assess(view(10, 60), st, o, at(i))
	if a.Hold != flat {
		t.Errorf("after the backlog drained the hold is %d (the backlog's need %d); want the arrivals' %d", a.Hold, peak, flat)
	}
}

// prefillOnly is the plan after 40 ticks of a server that gives only
// prefill samples (no inter-token gaps, no length histograms): 30 requests
// of 6,000 prompt tokens a pod-tick, prefilled as a GPU whose prefill is
// 4× the prior's prefills them, read from series with spread; withTTFT
// adds the tick's TTFT histogram.
func prefillOnly(o Options, series string, spread float64, withTTFT bool) Assessment {
	var st state.Service
	var a Assessment
	slow := 4 * o.Prior.Beta
	for i := 0; i < 40; i++ {
		v := view(4, 2)
		ps := fleet.PodService{Name: "p", Seconds: 15, PromptRate: 30 * 6000 / 15, OutputRate: 30 * 100 / 15,
			Prefill: slow*6000 + o.Prior.Alpha, Prefills: 30, PromptMean: 6000, PrefillSeries: series, PrefillSpread: spread}
		v.Service.Pods = []fleet.PodService{ps}
		if withTTFT {
			v.Service.TTFT = signal.Histogram{Count: 30, Sum: 30 * ps.Prefill}
		}
		v.Service.PromptTokens, v.Service.OutputTokens = 30*6000, 30*100
		a, st = Assess(v, st, o, t0.Add(time.Duration(i)*15*time.Second))
	}
	return a
}

// TestAReducedMetricSetFitsWhatItCan: a server that exports no
// inter-token or length histograms. The prefill part is fitted against
// the prompt tokens counted per request — from TTFT − queue time, or,
// where the server exports no TTFT (TGI), from the end-to-end latency less
// the queue time and the decode (fleet.SeriesE2E) — the mix from the
// token counters, and the plan says it is partly fitted and from which
// series.
func TestAReducedMetricSetFitsWhatItCan(t *testing.T) {
	o := options()
	for _, c := range []struct {
		series, want string
		spread       float64
		ttft         bool
	}{{"", model.SeriesPrefill, 0, true}, {fleet.SeriesE2E, fleet.SeriesE2E, 0.05, false}} {
		a := prefillOnly(o, c.series, c.spread, c.ttft)
		if a.ParamsSource != "partly fitted" || len(a.ParamsSeries) != 1 || a.ParamsSeries[0] != c.want {
			t.Errorf("%s: source %q %v, want partly fitted from %q", c.want, a.ParamsSource, a.ParamsSeries, c.want)
		}
		if got := a.Params.Beta / o.Prior.Beta; got < 2.5 {
			t.Errorf("%s: β fitted to %.2f× the prior, want near the server's 4×", c.want, got)
		}
		// The token counters give the mix over the requests that got a
		// first token (TGI, which has no TTFT, has no counters either: its
		// length histograms give it).
		if c.ttft && (math.Abs(a.Mix.PromptTokens-6000)/6000 > 0.2 || math.Abs(a.Mix.OutputTokens-100)/100 > 0.5) {
			t.Errorf("%s: mix %+v from the token counters, want near 6000 prompt and 100 output tokens", c.want, a.Mix)
		}
	}
}

// TestMissesMorePodsDidNotMoveStopCountingAsLoad: a breach nothing waited
// for, on a fleet twice what the plan asked for, tick after tick: the
// misses beyond waiting are learned as unmoved and the load share falls
// under the miss budget, so the breach becomes an alert, not one more pod
// a minute; at the plan the same misses are not learned.
func TestMissesMorePodsDidNotMoveStopCountingAsLoad(t *testing.T) {
	o := options()
	v := view(10, 20)
	v.TTFTP95, v.LatencyRequests = &[]float64{4}[0], 300
	v.Service.Queue = signal.Histogram{Count: 300, Sum: 3, Buckets: []signal.Bucket{{UpperBound: 0.1, Count: 300}}}
	v.Service.TTFT = signal.Histogram{Count: 300, Sum: 600, Buckets: []signal.Bucket{{UpperBound: 1, Count: 240}, {UpperBound: 2, Count: 250}, {UpperBound: 5, Count: 300}}}
	for _, c := range []struct {
		planned int
		learns  bool
	}{{5, true}, {10, false}} {
		st := state.Service{Beta: 1, Ticks: 100, Planned: c.planned}
		var first, last float64
		for i := 0; i < 30; i++ {
			st.Planned = c.planned
			a, next := Assess(v, st, o, t0.Add(time.Duration(i)*15*time.Second))
			if a.LoadMiss == nil {
				t.Fatalf("no load miss read")
			}
			if i == 0 {
				first = *a.LoadMiss
			}
			last, st = *a.LoadMiss, next
		}
		switch {
		case first < 0.1:
			t.Errorf("planned %d: the first breach tick reads %.3g as load, want the 17%% missed", c.planned, first)
		case c.learns && last > a0(o):
			t.Errorf("twice the planned pods: load miss %.3g after 30 ticks, want it under the budget %.3g", last, a0(o))
		case !c.learns && last != first:
			t.Errorf("at the plan the load miss moved %.3g → %.3g; only an ample fleet learns", first, last)
		}
	}
}

// a0 is twice the plan's waiting target: what a breach must exceed to be
// load-driven.
func a0(o Options) float64 { return 2 * WaitShare * (1 - o.Attainment) }

// TestAMissingKVGaugeIsNotReadAsAnEmptyCache: a server without a KV gauge
// (TGI) running long prompts. Its sequences' KV share is their context at
// the prior's share per token, not 0 — a missing signal never reads as
// low — so their decode work and the KV bound count it; where the pods do
// read their cache, the reading is what is learned.
func TestAMissingKVGaugeIsNotReadAsAnEmptyCache(t *testing.T) {
	o := options()
	tick := func(kv, kvRunning float64) Assessment {
		var st state.Service
		var a Assessment
		for i := 0; i < 20; i++ {
			v := view(4, 2)
			v.Service.Running, v.Service.KV, v.Service.KVRunning = 40, kv, kvRunning
			v.Service.Prompts = signal.Histogram{Count: 30, Sum: 30 * 12000, Buckets: []signal.Bucket{{UpperBound: 20000, Count: 30}}}
			v.Service.Outputs = signal.Histogram{Count: 30, Sum: 30 * 300, Buckets: []signal.Bucket{{UpperBound: 500, Count: 30}}}
			a, st = Assess(v, st, o, t0.Add(time.Duration(i)*15*time.Second))
		}
		return a
	}
	missing, read := tick(0, 0), tick(40*0.05, 40)
	want := contextKV(missing.Mix)
	if math.Abs(missing.Mix.KVPerSeq-want) > 1e-12 || want < 5*defaultMix.KVPerSeq {
		t.Errorf("no KV gauge: KV per sequence %.4g, want the context's %.4g (a 12k-token prompt holds ~10× a chat's)", missing.Mix.KVPerSeq, want)
	}
	if math.Abs(read.Mix.KVPerSeq-0.05) > 0.01 {
		t.Errorf("a read KV gauge: KV per sequence %.4g, want near the 0.05 read", read.Mix.KVPerSeq)
	}
	if !(missing.WorkPerRequest > tick(0, 40).WorkPerRequest) {
		t.Errorf("work per request %.4g without a gauge, not above the %.4g of a cache read empty", missing.WorkPerRequest, tick(0, 40).WorkPerRequest)
	}
}

// TestTheOutputsOfAYoungBatchAreNotItsMean: the first tick of a cold
// start finishes 156 requests of 52 output tokens while 512 sequences
// still run. Read as the mix, the short ones that finished first set the
// work per request at a fraction of the workload's; the running
// sequences hold the mean where it was until they finish.
func TestTheOutputsOfAYoungBatchAreNotItsMean(t *testing.T) {
	o := options()
	v := view(2, 65)
	v.Service.Running = 512
	v.Service.Outputs = signal.Histogram{Count: 156, Sum: 156 * 52, Buckets: []signal.Bucket{{UpperBound: 100, Count: 156}}}
	a, next := Assess(v, state.Service{}, o, t0)
	if a.Mix.OutputTokens < 0.7*defaultMix.OutputTokens {
		t.Errorf("a young batch's first finishes moved the mean output %.0f → %.0f tokens", defaultMix.OutputTokens, a.Mix.OutputTokens)
	}
	if !(a.Mix.OutputTokens < defaultMix.OutputTokens) {
		t.Errorf("the finished requests moved the mean output nowhere: %.0f", a.Mix.OutputTokens)
	}
	// Without length histograms (SGLang, a reduced vLLM set) the tokens
	// generated over the requests started stand for the mean: 512
	// sequences 25 tokens into their outputs, 668 started. The running
	// ones are among the started, so this halves the shortfall (101
	// tokens; 25 without them) rather than removing it.
	c := view(2, 65)
	c.Service.Running = 512
	c.Service.TTFT = signal.Histogram{Count: 668, Sum: 668, Buckets: []signal.Bucket{{UpperBound: 2, Count: 668}}}
	c.Service.OutputTokens = 668 * 25
	if b, _ := Assess(c, state.Service{}, o, t0); b.Mix.OutputTokens < 0.45*defaultMix.OutputTokens {
		t.Errorf("a young batch's tokens so far moved the mean output %.0f → %.0f tokens", defaultMix.OutputTokens, b.Mix.OutputTokens)
	}
	// A batch that turns over within the tick (as many finished as run)
	// reads its mean: ticks of 300-token outputs bring it there.
	for i := 1; i <= 120; i++ {
		v := view(2, 65)
		v.Service.Running = 100
		v.Service.Outputs = signal.Histogram{Count: 500, Sum: 500 * 300, Buckets: []signal.Bucket{{UpperBound: 500, Count: 500}}}
		a, next = Assess(v, next, o, t0.Add(time.Duration(i)*15*time.Second))
	}
	if math.Abs(a.Mix.OutputTokens-300) > 3 {
		t.Errorf("a steady batch of 300-token outputs reads a mean of %.1f", a.Mix.OutputTokens)
	}
}
