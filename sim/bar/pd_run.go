package bar

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/oracle"
	"github.com/inferscale/inferscale/sim/pd"
	"github.com/inferscale/inferscale/sim/report"
	"github.com/inferscale/inferscale/sim/runner"
	"github.com/inferscale/inferscale/sim/workload"
)

// PDPair is a prefill policy and a decode policy.
type PDPair struct{ Prefill, Decode runner.Spec }

// String is "prefill + decode".
func (p PDPair) String() string { return p.Prefill.String() + " + " + p.Decode.String() }

// DefaultPDPeers are the peers simulate pd compares: KEDA's queue scaler
// and Dynamo's SLA planner in both pools.
func DefaultPDPeers() []PDPair {
	keda, dynamo := runner.Spec{Name: "keda-queue", Params: map[string]string{}}, runner.Spec{Name: pd.DynamoPolicy, Params: map[string]string{}}
	return []PDPair{{keda, keda}, {dynamo, dynamo}}
}

// PDRunner evaluates P/D cells: the policy pair, its peers, the oracle
// per pool and the cheapest static pair (the last two cached).
type PDRunner struct {
	Settings PDSettings
	Policy   PDPair   // under test
	Peers    []PDPair // reported, and judged against (BelowPeers)
	Options  runner.Options
	Cache    *Cache
	Jobs     int // cells evaluated at once (≥ 1)
	Log      *slog.Logger

	traces traceCache
}

// Run evaluates every cell, Jobs at a time, and returns the rows in the
// cells' order.
func (r *PDRunner) Run(ctx context.Context, cases []PDCase) ([]PDRow, error) {
	return runCells(ctx, cases, r.Jobs, r.Log, r.cell, func(row PDRow) []any {
		return []any{"user", fmt.Sprintf("%.4f", row.UserAttainment), "itl", fmt.Sprintf("%.4f", row.ITLAttainment), "pass", row.Verdict.All()}
	})
}

// cell evaluates one P/D cell.
func (r *PDRunner) cell(ctx context.Context, c PDCase) (PDRow, error) {
	reqs, err := r.traces.load(c.Trace())
	if err != nil {
		return PDRow{}, err
	}
	if f := c.Workload.OutputScale; f != 0 && f != 1 {
		reqs = pd.ScaleOutputs(slices.Clone(reqs), f) // the loaded trace is shared
	}
	opts := r.Options
	opts.LogName = c.Name()
	pools := r.Settings.Pools(c, opts)
	pools.Prefill.InitialReplicas = oracle.InitialReplicas(pd.PrefillRequests(reqs), pools.Prefill.Model, pools.Prefill.MinReplicas, pools.Prefill.MaxReplicas)
	pools.Decode.InitialReplicas = oracle.InitialReplicas(pd.ArrivePrefilled(reqs), pools.Decode.Model, pools.Decode.MinReplicas, pools.Decode.MaxReplicas)
	inf := pools.Infeasible(reqs)

	res, err := pools.Pair(ctx, reqs, r.Policy.Prefill, r.Policy.Decode)
	if err != nil {
		return PDRow{}, fmt.Errorf("%s: %w", r.Policy, err)
	}
	row := PDRow{Case: c.Name(), PDFigures: pdFigures(res, inf), PrefillKilled: res.Prefill.Killed, DecodeKilled: res.Decode.Killed,
		PrefillFlapsPerHour: pairFlapsPerHour(res.Prefill, res, c.Trace()), DecodeFlapsPerHour: pairFlapsPerHour(res.Decode, res, c.Trace())}
	for _, p := range r.Peers {
		pres, err := pools.Pair(ctx, reqs, p.Prefill, p.Decode)
		if err != nil {
			return PDRow{}, fmt.Errorf("peer %s: %w", p, err)
		}
		row.Peers = append(row.Peers, PDPeer{Name: p.String(), PDFigures: pdFigures(pres, inf)})
	}

	key := PDKey(c, pools, r.Settings)
	s := &pdStatics{pools: pools, reqs: reqs, infeasible: inf, entry: r.Cache.Load(key), pre: map[int]*engine.Result{}}
	orc, err := r.oracle(ctx, s)
	if err != nil {
		return PDRow{}, err
	}
	r.store(key, s.entry)
	row.OracleOK, row.OracleTarget, row.Oracle = orc.Found, orc.Target, orc.PDFigures
	row.StaticPrefill, row.StaticDecode, row.Static, err = s.cheapest(ctx, row.PDFigures)
	if err != nil {
		return PDRow{}, err
	}
	r.store(key, s.entry)
	r.Settings.Judge(&row)
	return row, nil
}

func (r *PDRunner) store(key string, e *Entry) {
	if err := r.Cache.Store(key, e); err != nil && r.Log != nil {
		r.Log.Warn("bar cache not written", "err", err)
	}
}

// pairFlapsPerHour is a pool's flaps per hour of the pair's replay: both
// pools stand for all of it, and the prefill pool's own replay ends with
// its last prefill, before the decode pool's last token (the demo's
// prefill pools' one flap read 1.00003 an hour over 3,599.9 s); and at
// least the trace's window (flapsPerHour).
func pairFlapsPerHour(pool *engine.Result, pair *pd.Result, t runner.Trace) float64 {
	return flapsPerHour(report.Flaps(pool.ScaleEvents), max(pair.Prefill.EndSeconds, pair.Decode.EndSeconds), t)
}

// PDOracleSteps is how many times the P/D oracle is searched again, 0.1%
// lower each time, when it misses the ceiling the largest static pair
// sets. That pair's decode pool serves the requests as 64 prefill pods
// hand them over; the oracle's cheaper prefill pool hands them over at
// other times, and the decode pool's ITL at the cap can then fall a hair
// below the pair's (the demo ×4 at half speed: 0.93310 at 64+64 pods, and
// no oracle at 0.933).
const PDOracleSteps = 5

// oracle is the cell's oracle per pool for Target; where that fails and
// the largest static pair (MaxReplicas in each pool) falls short of
// Target, for the lower of its two attainments (rounded down to 0.1%), as
// the unified cells' oracle does, and then up to PDOracleSteps times 0.1%
// lower while it still fails; none where that fails too (cached).
func (r *PDRunner) oracle(ctx context.Context, s *pdStatics) (PDOracleResult, error) {
	if s.entry.PDOracle != nil {
		return *s.entry.PDOracle, nil
	}
	target := r.Settings.Target
	res, _, _, err := s.pools.OraclePair(ctx, s.reqs, target)
	if err != nil && ctx.Err() == nil {
		top, terr := s.pair(ctx, s.pools.Prefill.MaxReplicas, s.pools.Decode.MaxReplicas)
		if terr != nil {
			return PDOracleResult{}, terr
		}
		if ceiling := round3(min(top.UserAttainment, top.ITLAttainment)); ceiling < target {
			target, res, err = searchDown(ctx, ceiling, PDOracleSteps, func(t float64) (*pd.Result, error) {
				if r.Log != nil {
					r.Log.Info("P/D oracle searched again below the target", "target", r.Settings.Target, "at", t, "ceiling", ceiling)
				}
				res, _, _, err := s.pools.OraclePair(ctx, s.reqs, t)
				return res, err
			})
		}
	}
	out := PDOracleResult{Target: target}
	switch {
	case err == nil:
		out.Found, out.PDFigures = true, pdFigures(res, s.infeasible)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return PDOracleResult{}, err
	case r.Log != nil:
		r.Log.Warn("no P/D oracle", "target", target, "err", err)
	}
	s.entry.PDOracle = &out
	return out, nil
}

// pdStatics replays a cell's static pairs, each once (cached in entry;
// the static prefill replays, which the decode replays follow, in memory).
type pdStatics struct {
	pools      pd.Pools
	reqs       []workload.Request
	infeasible int
	entry      *Entry
	pre        map[int]*engine.Result
}

// pair is the static pair of p prefill and d decode pods.
func (s *pdStatics) pair(ctx context.Context, p, d int) (PDFigures, error) {
	key := fmt.Sprintf("%d+%d", p, d)
	if f, ok := s.entry.PDStatic[key]; ok {
		return f, nil
	}
	pre, ok := s.pre[p]
	if !ok {
		var err error
		if pre, err = s.pools.StaticPrefill(ctx, s.reqs, p); err != nil {
			return PDFigures{}, fmt.Errorf("static prefill pool of %d: %w", p, err)
		}
		s.pre[p] = pre
	}
	res, err := s.pools.StaticDecode(ctx, s.reqs, pre, d)
	if err != nil {
		return PDFigures{}, fmt.Errorf("static pair %s: %w", key, err)
	}
	f := pdFigures(res, s.infeasible)
	s.entry.PDStatic[key] = f
	return f, nil
}

// pdStaticSteps is how many prefill pods past the smallest sufficient
// count the static search tries (a larger prefill pool leaves the decode
// leg more of the user's objective, so a smaller decode pool may do).
const pdStaticSteps = 2

// cheapest finds a cheap static pair whose attainments reach want's: the
// smallest prefill pool that reaches them behind the largest decode pool,
// and up to pdStaticSteps more prefill pods, each with the smallest decode
// pool that then reaches them; the cheapest of those. 0, 0 where not even
// MaxReplicas + MaxReplicas reach them. Attainments grow with either
// pool; the bisections rely on that.
func (s *pdStatics) cheapest(ctx context.Context, want PDFigures) (int, int, PDFigures, error) {
	lo, top := max(s.pools.Prefill.MinReplicas, 1), s.pools.Prefill.MaxReplicas
	dlo, dtop := max(s.pools.Decode.MinReplicas, 1), s.pools.Decode.MaxReplicas
	f, err := s.pair(ctx, top, dtop)
	if err != nil || !f.reaches(want) {
		return 0, 0, PDFigures{}, err
	}
	reaches := func(p, d int) (bool, error) {
		f, err := s.pair(ctx, p, d)
		return f.reaches(want), err
	}
	pn, err := smallest(lo, top, func(p int) (bool, error) { return reaches(p, dtop) })
	if err != nil {
		return 0, 0, PDFigures{}, err
	}
	bestP, bestD, best, hi := 0, 0, PDFigures{}, dtop
	for p := pn; p <= min(pn+pdStaticSteps, top); p++ {
		if ok, err := reaches(p, hi); err != nil || !ok {
			if err != nil {
				return 0, 0, PDFigures{}, err
			}
			continue
		}
		d, err := smallest(dlo, hi, func(d int) (bool, error) { return reaches(p, d) })
		if err != nil {
			return 0, 0, PDFigures{}, err
		}
		f, err := s.pair(ctx, p, d)
		if err != nil {
			return 0, 0, PDFigures{}, err
		}
		if bestP == 0 || f.GPUHours() < best.GPUHours() {
			bestP, bestD, best = p, d, f
		}
		hi = d
	}
	return bestP, bestD, best, nil
}

// smallest bisects the smallest n in [lo, hi] for which ok holds, given
// that it holds at hi and, once it holds, at every larger n.
func smallest(lo, hi int, ok func(int) (bool, error)) (int, error) {
	for lo < hi {
		mid := (lo + hi) / 2
		yes, err := ok(mid)
		if err != nil {
			return 0, err
		}
		if yes {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi, nil
}

// searchDown is search at target and, while that fails (not for a
// cancelled or expired ctx), at most steps more times each 0.1% lower
// (rounded to it); it returns the target last searched and its outcome.
func searchDown[T any](ctx context.Context, target float64, steps int, search func(float64) (T, error)) (float64, T, error) {
	res, err := search(target)
	for i := 0; i < steps && err != nil && ctx.Err() == nil && target > 0.001; i++ {
		target = math.Round(target*1000-1) / 1000
		res, err = search(target)
	}
	return target, res, err
}
