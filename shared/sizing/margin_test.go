package sizing

import (
	"math"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/fleet"
	"github.com/inferscale/inferscale/shared/forecast"
	"github.com/inferscale/inferscale/shared/model"
	"github.com/inferscale/inferscale/shared/state"
)

// decodeHeavy is a mix of long answers (on a decode pool, the prompt's KV
// already there).
var decodeHeavy = model.Mix{PromptTokens: 1000, OutputTokens: 800, KVPerSeq: 0.002}

func TestTheDecodeWorkLandsOverItsGeneration(t *testing.T) {
	p := model.DefaultPrior()
	o := options()
	c := p.Ceiling(decodeHeavy, o.Limits).Utilisation
	w, prefill := p.Work(decodeHeavy), p.Beta*decodeHeavy.PromptTokens
	generation := decodeHeavy.OutputTokens * p.Alpha / (1 - c)
	if generation <= o.TTFTSLO {
		t.Fatalf("the mix's generation %.3gs is within the objective: not a test of it", generation)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*want }
	// Without a model fitted from both series nothing tells the prefill
	// from the decode work: all of it within the objective.
	if got := o.workRate(p, decodeHeavy, c, false); !near(got, w/o.TTFTSLO) {
		t.Errorf("unified, not fitted: %.4g GPU-s/s, want w/τ = %.4g", got, w/o.TTFTSLO)
	}
	if got, want := o.workRate(p, decodeHeavy, c, true), prefill/o.TTFTSLO+(w-prefill)/generation; !near(got, want) {
		t.Errorf("unified, fitted: %.4g GPU-s/s, want the prefill over τ and the rest over the generation, %.4g", got, want)
	}
	d := o
	d.Decode = true
	for _, fitted := range []bool{false, true} {
		if got := d.workRate(p, decodeHeavy, c, fitted); !near(got, w/generation) {
			t.Errorf("decode pool (fitted %v): %.4g GPU-s/s, want its whole work over the generation, %.4g", fitted, got, w/generation)
		}
	}
	// A pod at or past saturation has no generation to speak of, and a
	// one-token answer's is shorter than the objective: the objective
	// stands rather than a window of 1/0 or one that shortens it.
	if got := d.workRate(p, decodeHeavy, 1, true); !near(got, w/o.TTFTSLO) {
		t.Errorf("decode pool at c = 1: %.4g, want w/τ", got)
	}
	short := model.Mix{PromptTokens: 100, OutputTokens: 1}
	if got, want := d.workRate(p, short, 0.5, true), p.Work(short)/o.TTFTSLO; !near(got, want) {
		t.Errorf("a one-token answer: %.4g, want w/τ = %.4g", got, want)
	}

	for _, z := range []float64{1, 4} {
		prior, fitted, decode := o.poissonMargin(p, decodeHeavy, z, false), o.poissonMargin(p, decodeHeavy, z, true), d.poissonMargin(p, decodeHeavy, z, true)
		if want := PoissonZ * math.Sqrt(z*w/(c*o.TTFTSLO)); !near(prior, want) {
			t.Errorf("z %g, not fitted: window margin %.4g, want PoissonZ·√(z·w/(c·τ)) = %.4g", z, prior, want)
		}
		if !(decode < fitted && fitted < prior) {
			t.Errorf("z %g: window margin decode %.3g, fitted unified %.3g, unfitted %.3g: want them in that order, lowest first", z, decode, fitted, prior)
		}
	}
}

func TestAPoolKeepsAReserveForASurge(t *testing.T) {
	o := options()
	d := options()
	d.Decode = true
	for _, r := range []float64{0.3, 1, 4.2, 10, 37.5} {
		for _, c := range []struct {
			o       Options
			reserve float64
		}{{o, SurgeReserve}, {d, DecodeReserve}} {
			if got, want := c.o.staff(r, 0), int(math.Ceil(r*(1+c.reserve)-ReserveTolerance)); got != want {
				t.Errorf("decode %v, R %.3g at β 0: %d pods, want ⌈R·(1+%.2g) − %g⌉ = %d", c.o.Decode, r, got, c.reserve, ReserveTolerance, want)
			}
			// A learned β above the reserve still decides.
			if got, want := c.o.staff(r, 4), Staff(r, 4, c.o.MaxPods); got < want {
				t.Errorf("decode %v, R %.3g at β 4: %d pods, want at least the square-root staffing's %d", c.o.Decode, r, got, want)
			}
		}
	}
	// The reserve is a share, kept within a tenth of a pod: a one-pod fleet
	// a hair short of it (R·1.3 = 1.002 pods) does not buy a second pod,
	// one a tenth of a pod or more short of it does.
	for _, c := range []struct {
		r    float64
		want int
	}{{0.771, 1}, {0.76, 1}, {0.85, 2}, {10, 13}, {10.05, 13}, {10.1, 14}} {
		if got := o.staff(c.r, 0); got != c.want {
			t.Errorf("R %.3g at β 0: %d pods, want %d (R·1.3 = %.4g, within %g of a pod)", c.r, got, c.want, c.r*1.3, ReserveTolerance)
		}
	}
	d.MaxPods = 8
	if got := d.staff(10, 0); got != 8 {
		t.Errorf("the reserve past the fleet's bound: %d pods, want the bound 8", got)
	}
	for _, r := range []float64{0, -1, math.NaN()} {
		if got := d.staff(r, 1); got != 0 {
			t.Errorf("no offered load (%g): %d pods, want 0", r, got)
		}
	}
}

// staff is staffOver at the prior reserve kept over r itself.
func (o Options) staff(r, beta float64) int { return o.staffOver(r, r, beta, o.priorReserve()) }

// Until its errors rank it, the forecast's upper bound is a stand-in
// (WarmupFactor × the point), itself the cover for what the forecast has
// not seen: the reserve is kept over the point then, and over the bound
// once the bound is learned. Stacked on the stand-in it asked 2.6 × the
// point (fails with the reserve over the stand-in).
func TestTheSurgeReserveIsNotStackedOnTheWarmUpStandIn(t *testing.T) {
	o := options()
	var st state.Service
	var first Assessment
	sawStandIn, sawRanked := false, false
	for i := range 40 {
		var a Assessment
		a, st = Assess(view(10, 100), st, o, t0.Add(time.Duration(i)*15*time.Second))
		if i == 0 {
			first = a
		}
		point := (a.Forecast.Point + a.Backlog) * a.WorkPerRequest / a.Ceiling.Utilisation
		stacked := o.staff(a.Offered, a.Beta)
		if a.StandIn {
			sawStandIn = true
			if want := o.staffOver(a.Offered, point, a.Beta, a.Reserve); a.Need != want {
				t.Fatalf("tick %d, stand-in bound %.3g pods (point %.3g): need %d, want the reserve over the point, %d", i, a.Offered, point, a.Need, want)
			}
			if a.Offered > 1.5*point && a.Need >= stacked {
				t.Errorf("tick %d: need %d is the reserve stacked on the stand-in (%d)", i, a.Need, stacked)
			}
			continue
		}
		sawRanked = true
		if a.Need != stacked {
			t.Errorf("tick %d, ranked bound %.3g pods: need %d, want the reserve over the bound, %d", i, a.Offered, a.Need, stacked)
		}
	}
	if !sawStandIn || !sawRanked {
		t.Fatalf("40 ticks of a flat demand: saw the stand-in %v, a ranked bound %v; want both", sawStandIn, sawRanked)
	}
	// The decision says which bound it used.
	if !first.StandIn {
		t.Errorf("the first tick's bound is not the stand-in: %+v", first.Forecast)
	}
}

// β starts at the least the margins ask, not at a stated prior: the
// arrivals' margin and the reserve cover a fleet before any request has
// missed, and the misses raise β from there (fails with β starting at 1).
func TestHeadroomStartsAtTheLeastTheMarginsAsk(t *testing.T) {
	o := options()
	a, next := Assess(view(10, 100), state.Service{}, o, t0)
	if a.Beta != a.LeastBeta || next.Beta != a.LeastBeta {
		t.Errorf("first tick: β %.3g (kept %.3g), want the least %.3g (%s margin)", a.Beta, next.Beta, a.LeastBeta, a.LeastBy)
	}
	if !(a.LeastBeta < 1) {
		t.Fatalf("the least β is %.3g at 100 req/s of the default mix: the case does not tell a prior of 1 apart", a.LeastBeta)
	}
	// A state of an older build that kept a larger β keeps it: the misses
	// taught it.
	prev := state.Service{Beta: 2.5, Ticks: 7}
	if b, _ := Assess(view(10, 100), prev, o, t0); b.Beta != 2.5 {
		t.Errorf("a learned β of 2.5 became %.3g", b.Beta)
	}
}

func TestADecodePoolIsSizedOnItsSequencesAndItsReserve(t *testing.T) {
	plan := func(decode bool) Assessment {
		o := options()
		o.Decode = decode
		st := state.Service{Mix: decodeHeavy}
		var a Assessment
		for i := range 40 {
			a, st = Assess(view(40, 60), st, o, t0.Add(time.Duration(i)*15*time.Second))
		}
		return a
	}
	u, d := plan(false), plan(true)
	// The decode pool computes one prompt token a request, not the prompt.
	served := decodeHeavy
	served.PromptTokens = 1
	if want := d.Params.Work(served); math.Abs(d.WorkPerRequest-want) > 1e-12 || !(d.WorkPerRequest < u.WorkPerRequest) {
		t.Fatalf("decode pool: %.4g GPU-s a request, want %.4g (its one computed prompt token), below the unified pool's %.4g",
			d.WorkPerRequest, want, u.WorkPerRequest)
	}
	if reserve := reservePods(d.Offered, DecodeReserve); d.Need < reserve {
		t.Errorf("decode pool: need %d at R %.3g, want at least its reserve, %d", d.Need, d.Offered, reserve)
	}
	if !(d.Need < u.Need) {
		t.Errorf("decode pool: need %d (β %.2g), want below the unified pool's %d (β %.2g) on the prior, whose margin takes the answers as due within the TTFT objective",
			d.Need, d.Beta, u.Need, u.Beta)
	}
}

// A decode pod's TTFT − queue time is one step (or the KV transfer wait),
// not the prefill of the prompt the server counts: paired with that
// prompt's chunks it would drive α to its bound. A decode pool fits from
// its inter-token gaps alone; a unified pool takes the same samples.
func TestADecodePoolDoesNotFitItsPromptsAsPrefills(t *testing.T) {
	fitted := func(decode bool) state.Service {
		return fitPool(decode, 20, view(4, 2), func(int) fleet.PodService {
			return fleet.PodService{Name: "d", Seconds: 15, PromptRate: 30 * 12000 / 15, OutputRate: 30 * 300 / 15,
				Prefill: 0.012, Prefills: 30, PromptMean: 12000}
		})
	}
	if u := fitted(false); u.Fit.Prefill == 0 {
		t.Fatal("a unified pool fitted none of the prefill samples: the test proves nothing")
	}
	if d := fitted(true); d.Fit.Prefill != 0 || d.Fit.StepSamples() != 0 {
		t.Errorf("a decode pool fitted %d prefill samples (%d in all); want none", d.Fit.Prefill, d.Fit.StepSamples())
	}
}

func TestTheQueueMarginStandsWhereShortPromptsLeaveTheObjectiveToWait(t *testing.T) {
	p := model.DefaultPrior()
	o := options()
	m := model.Mix{PromptTokens: 200, OutputTokens: 200, KVPerSeq: 0.0005}
	hist := func(tokens float64) model.Lengths {
		return model.Lengths{LE: []float64{tokens, 2 * tokens}, C: []float64{900, 1000}, Count: 1000}
	}
	short, long := hist(200), hist(p.LongestFeasible(o.TTFTSLO, o.Limits.ChunkTokens)*0.8)
	shortSlack, longSlack := o.queueSlack(p, short, m), o.queueSlack(p, long, m)
	if !(shortSlack > 0.9*o.TTFTSLO) || longSlack != o.TTFTSLO/4 {
		t.Fatalf("slack %.3gs for short prompts, %.3gs for long ones: want nearly the objective, and its quarter", shortSlack, longSlack)
	}
	for _, r := range []float64{0.7, 5, 40} {
		window := o.poissonMargin(p, m, 1, true)
		queue := o.queueMargin(p, m, 1, true, shortSlack) / math.Sqrt(r)
		if got := o.leastHeadroom(p, m, 1, true, r, shortSlack); got != queue || !(queue < window) {
			t.Errorf("R %g, short prompts: least β %.3g, want the queue's %.3g, below the window's %.3g", r, got, queue, window)
		}
	}
	// The long prompts leave a quarter of the objective: the queue's
	// margin grows fourfold, and at a pod of demand the window's,
	// the smaller, stands.
	heavy := model.Mix{PromptTokens: 4000, OutputTokens: 100, KVPerSeq: 0.002}
	window := o.poissonMargin(p, heavy, 4, true)
	if got := o.leastHeadroom(p, heavy, 4, true, 1, longSlack); got != window {
		t.Errorf("long prompts, z 4: least β %.3g, want the window margin %.3g (queue's: %.3g)", got, window, o.queueMargin(p, heavy, 4, true, longSlack))
	}
	// A decode pool's requests arrive prefilled: the objective is all slack.
	d := o
	d.Decode = true
	if got := d.queueSlack(p, long, m); got < 0.99*o.TTFTSLO {
		t.Errorf("decode pool: slack %.3gs, want nearly the whole objective", got)
	}
	// The knob is still the floor.
	o.MinHeadroom = 2
	if got := o.leastHeadroom(p, m, 1, true, 5, shortSlack); got != 2 {
		t.Errorf("minHeadroom 2: least β %.3g", got)
	}
}

// The surge reserve is the prior until an hour of the forecast's horizons
// has resolved; then it is what those horizons brought beyond their upper
// bound — on a steady load next to nothing, so the plan keeps fewer pods
// than the prior asks — and a crowd in the window brings the prior back
// (capped at it) until its horizons have left the window.
func TestTheSurgeReserveIsLearnedFromAnHourOfHorizons(t *testing.T) {
	o := options()
	fo := forecast.DefaultOptions(time.Duration(o.Horizon(60) * float64(time.Second)))
	var st state.Service
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 15 * time.Second) }
	assess := func(i int, rps float64) Assessment {
		var a Assessment
		a, st = Assess(view(20, rps), st, o, at(i))
		return a
	}
	i, learnedAt, fewer := 0, -1, false
	for ; i < 400; i++ {
		a := assess(i, 100)
		if !a.ReserveLearned {
			if a.Reserve != SurgeReserve {
				t.Fatalf("tick %d, %d horizons resolved: reserve %.3g, want the prior %.3g", i, len(st.Forecast.Excess), a.Reserve, SurgeReserve)
			}
			continue
		}
		if learnedAt < 0 {
			learnedAt = i
		}
		if a.Reserve >= SurgeReserve/2 {
			t.Errorf("tick %d, a steady 100 req/s: learned reserve %.3g, want under half the prior", i, a.Reserve)
		}
		if prior := o.staffOver(a.Offered, a.Offered, a.Beta, SurgeReserve); a.Need < prior {
			fewer = true
		}
	}
	if learnedAt < fo.MaxScores {
		t.Fatalf("learned at tick %d, before a full window of %d horizons", learnedAt, fo.MaxScores)
	}
	if !fewer {
		t.Error("the learned reserve never planned fewer pods than the prior")
	}
	// A crowd doubles the load for 3 minutes: the prior is back once its
	// horizons resolve, and gone again an hour later.
	back := false
	for end := i + 12; i < end; i++ {
		assess(i, 200)
	}
	for end := i + fo.MaxScores + 20; i < end; i++ {
		a := assess(i, 100)
		if !a.ReserveLearned && a.Reserve == SurgeReserve {
			back = true
		}
	}
	if !back {
		t.Error("a crowd that doubled the load did not bring the prior reserve back")
	}
	if a := assess(i, 100); !a.ReserveLearned {
		t.Errorf("an hour after the crowd: reserve %.3g, still the prior", a.Reserve)
	}
}
