package bar

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/oracle"
	"github.com/inferscale/inferscale/sim/report"
	"github.com/inferscale/inferscale/sim/runner"
	"github.com/inferscale/inferscale/sim/workload"
)

// Runner evaluates cells.
type Runner struct {
	Settings Settings
	Policy   runner.Spec
	Options  runner.Options // how inferscale runs (fast or faithful)
	Cache    *Cache
	Jobs     int // cells evaluated at once (≥ 1)
	Log      *slog.Logger

	traces traceCache
}

// traceCache reads each trace once for every cell that uses it.
type traceCache struct {
	mu     sync.Mutex
	traces map[string]*loaded
}

type loaded struct {
	once sync.Once
	reqs []workload.Request
	err  error
}

// load reads a trace once per spec and seed.
func (tc *traceCache) load(t runner.Trace) ([]workload.Request, error) {
	key := fmt.Sprintf("%+v", t)
	tc.mu.Lock()
	if tc.traces == nil {
		tc.traces = map[string]*loaded{}
	}
	l, ok := tc.traces[key]
	if !ok {
		l = &loaded{}
		tc.traces[key] = l
	}
	tc.mu.Unlock()
	l.once.Do(func() { l.reqs, l.err = runner.Load(t) })
	return l.reqs, l.err
}

// Run evaluates every cell, Jobs at a time, and returns the rows in the
// cells' order.
func (r *Runner) Run(ctx context.Context, cases []Case) ([]Row, error) {
	return runCells(ctx, cases, r.Jobs, r.Log, r.cell, func(row Row) []any {
		return []any{"attainment", fmt.Sprintf("%.4f", row.Attainment), "pass", row.Verdict.All()}
	})
}

// runCells evaluates every cell with cell, jobs at a time, logging each
// with what logged gives, and returns the rows in the cells' order.
func runCells[C interface{ Name() string }, R any](ctx context.Context, cases []C, jobs int, log *slog.Logger,
	cell func(context.Context, C) (R, error), logged func(R) []any) ([]R, error) {
	rows := make([]R, len(cases))
	errs := make([]error, len(cases))
	next := make(chan int)
	var wg sync.WaitGroup
	progress := newProgress(len(cases), time.Now())
	for w := 0; w < max(jobs, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				start := time.Now()
				rows[i], errs[i] = cell(ctx, cases[i])
				done, eta := progress.step(time.Now())
				if errs[i] == nil && log != nil {
					log.Info("cell done", append([]any{"n", fmt.Sprintf("%d/%d", done, len(cases)), "eta", eta.Round(time.Second).String(),
						"case", cases[i].Name(), "seconds", fmt.Sprintf("%.1f", time.Since(start).Seconds())}, logged(rows[i])...)...)
				}
			}
		}()
	}
	for i := range cases {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bar matrix stopped: %w", err)
	}
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cases[i].Name(), err)
		}
	}
	return rows, nil
}

// cell evaluates one cell: the policy, then what it is measured against
// (compare).
func (r *Runner) cell(ctx context.Context, c Case) (Row, error) {
	reqs, err := r.traces.load(c.Trace())
	if err != nil {
		return Row{}, err
	}
	cfg := r.Settings.Config(c)
	cfg.InitialReplicas = oracle.InitialReplicas(reqs, cfg.Model, cfg.MinReplicas, cfg.MaxReplicas)
	row := Row{Case: c.Name(), StaticShare: c.Workload.StaticShare}

	pcfg := cfg
	if c.Workload.ColdStart > 0 {
		pcfg.InitialReplicas = c.Workload.ColdStart
	}
	pcfg.Hidden = c.Workload.Hidden
	opts := r.Options
	opts.LogName = c.Name()
	b, err := runner.Build(r.Policy, pcfg, opts)
	if err != nil {
		return Row{}, err
	}
	res, err := runner.Run(ctx, pcfg, reqs, b)
	if cerr := b.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return Row{}, err
	}
	row.Attainment = res.FeasibleTTFTAttainment()
	row.E2EAttainment = res.E2EAttainment()
	row.GPUHours = res.GPUHours()
	row.Killed, row.Unfinished = res.Killed, res.Unfinished
	row.DownsInBreach = DefaultBreach(cfg).DownsInBreach(res, reqs)
	row.FlapsPerHour = flapsPerHour(report.Flaps(res.ScaleEvents), res.EndSeconds, c.Trace())

	if err := r.compare(ctx, c, cfg, reqs, &row); err != nil {
		return Row{}, err
	}
	r.Settings.Judge(&row)
	return row, nil
}

// compare fills in what the row's policy is measured against: the oracle,
// the cheapest static fleet of its attainment, and both held to the
// end-to-end objective too (from the cell's cache, stored after each).
func (r *Runner) compare(ctx context.Context, c Case, cfg engine.Config, reqs []workload.Request, row *Row) error {
	key := Key(c, cfg, r.Settings)
	entry := r.Cache.Load(key)
	store := func() {
		if err := r.Cache.Store(key, entry); err != nil && r.Log != nil {
			r.Log.Warn("bar cache not written", "err", err)
		}
	}
	orc, err := r.oracle(ctx, cfg, reqs, entry)
	if err != nil {
		return err
	}
	store()
	row.OracleOK, row.OracleTarget = orc.Found, orc.Target
	row.OracleAttainment, row.OracleGPUHours, row.OracleMeanFleet = orc.Attainment, orc.GPUHours, orc.MeanFleet

	n, st, err := r.cheapestStatic(ctx, cfg, reqs, entry, func(s StaticResult) bool { return s.Attainment >= row.Attainment })
	if err != nil {
		return err
	}
	row.StaticN, row.StaticGPUHours, row.StaticAttainment = n, st.GPUHours, st.Attainment
	wantE2E := min(row.E2EAttainment, r.Settings.Target)
	n, st, err = r.cheapestStatic(ctx, cfg, reqs, entry, func(s StaticResult) bool {
		return s.Attainment >= row.Attainment && *s.E2EAttainment >= wantE2E
	})
	if err != nil {
		return err
	}
	store()
	row.StaticE2EN, row.StaticE2EGPUHours = n, st.GPUHours
	if st.E2EAttainment != nil {
		row.StaticE2EAttainment = *st.E2EAttainment
	}

	orcE2E, err := r.oracleE2E(ctx, cfg, reqs, entry, orc.Target, row.E2EAttainment)
	if err != nil {
		return err
	}
	store()
	row.OracleE2EOK, row.OracleE2ETarget = orcE2E.Found, orcE2E.Target
	row.OracleE2EGPUHours, row.OracleE2EMeanFleet = orcE2E.GPUHours, orcE2E.MeanFleet
	return nil
}

// flapsPerHour is flaps per hour of a replay that ran for end seconds,
// and at least the trace's window where the cell cuts one (Duration,
// stretched by TimeFactor): a window's last requests may end before it
// does (Mooncake's hour ended at 59:07, and its one flap read 1.015 an
// hour). A trace replayed whole is its own length (Azure code's 57
// minutes: one flap is 1.05 an hour).
func flapsPerHour(flaps int, end float64, t runner.Trace) float64 {
	window := t.Duration.Seconds()
	if t.TimeFactor > 0 {
		window *= t.TimeFactor
	}
	if hours := max(end, window) / 3600; hours > 0 {
		return float64(flaps) / hours
	}
	return 0
}

// static replays an n-pod warm static fleet (cached).
func (r *Runner) static(ctx context.Context, cfg engine.Config, reqs []workload.Request, e *Entry, n int) (StaticResult, error) {
	if s, ok := e.static(n); ok {
		return s, nil
	}
	b, err := runner.Build(runner.Spec{Name: "static", Params: map[string]string{"replicas": strconv.Itoa(n)}}, cfg, runner.Options{})
	if err != nil {
		return StaticResult{}, err
	}
	res, err := runner.Run(ctx, cfg, reqs, b)
	if err != nil {
		return StaticResult{}, err
	}
	s := StaticResult{Attainment: res.FeasibleTTFTAttainment(), GPUHours: res.GPUHours(), E2EAttainment: new(res.E2EAttainment())}
	e.setStatic(n, s)
	return s, nil
}

// cheapestStatic bisects the smallest static fleet that meets want (0
// and an empty result when not even MaxReplicas pods do). Attainment
// grows with the fleet; the bisection relies on that.
func (r *Runner) cheapestStatic(ctx context.Context, cfg engine.Config, reqs []workload.Request, e *Entry, want func(StaticResult) bool) (int, StaticResult, error) {
	top, err := r.static(ctx, cfg, reqs, e, cfg.MaxReplicas)
	if err != nil {
		return 0, StaticResult{}, err
	}
	if !want(top) {
		return 0, StaticResult{}, nil
	}
	lo, hi, best := max(cfg.MinReplicas, 1), cfg.MaxReplicas, top // answer in [lo, hi]
	for lo < hi {
		mid := (lo + hi) / 2
		s, err := r.static(ctx, cfg, reqs, e, mid)
		if err != nil {
			return 0, StaticResult{}, err
		}
		if want(s) {
			hi, best = mid, s
		} else {
			lo = mid + 1
		}
	}
	return hi, best, nil
}

// oracle searches the oracle for Target; where not even MaxReplicas
// static pods reach Target, for the attainment they do reach (rounded
// down to 0.1%), the oracle's own ceiling (cached).
func (r *Runner) oracle(ctx context.Context, cfg engine.Config, reqs []workload.Request, e *Entry) (OracleResult, error) {
	if e.Oracle != nil {
		return *e.Oracle, nil
	}
	target := r.Settings.Target
	top, err := r.static(ctx, cfg, reqs, e, cfg.MaxReplicas)
	if err != nil {
		return OracleResult{}, err
	}
	if top.Attainment < target {
		target = round3(top.Attainment)
	}
	out, err := r.search(ctx, cfg, reqs, oracle.Options{Target: target}, target)
	if err != nil {
		return OracleResult{}, err
	}
	e.Oracle = &out
	return out, nil
}

// search is the oracle that opts asks for, reported against target (Found
// false, and a warning, when none meets it; an error only when the search
// was stopped).
func (r *Runner) search(ctx context.Context, cfg engine.Config, reqs []workload.Request, opts oracle.Options, target float64) (OracleResult, error) {
	out := OracleResult{Target: target}
	orc, err := oracle.Search(ctx, cfg, reqs, opts)
	switch {
	case err == nil:
		out.Found = true
		out.Attainment, out.E2EAttainment = orc.Run.FeasibleTTFTAttainment(), orc.Run.E2EAttainment()
		out.GPUHours = orc.Run.GPUHours()
		if orc.Run.EndSeconds > 0 {
			out.MeanFleet = orc.Run.GPUSeconds / orc.Run.EndSeconds
		}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return OracleResult{}, err
	case r.Log != nil:
		r.Log.Warn("no oracle", "target", opts.Target, "end-to-end target", opts.E2ETarget, "err", err)
	}
	return out, nil
}

// oracleE2E searches the oracle held to the end-to-end objective as well
// as to ttft, the TTFT oracle's target (cached by its end-to-end target).
// That target is Target, or where the policy answered fewer requests
// within the objective, or not even MaxReplicas static pods reach it, the
// lower of those, rounded down to 0.1 %: the oracle is held to what the
// policy reached, as the static fleet is.
func (r *Runner) oracleE2E(ctx context.Context, cfg engine.Config, reqs []workload.Request, e *Entry, ttft, policy float64) (OracleResult, error) {
	top, err := r.static(ctx, cfg, reqs, e, cfg.MaxReplicas)
	if err != nil {
		return OracleResult{}, err
	}
	target := min(r.Settings.Target, round3(policy), round3(*top.E2EAttainment))
	key := strconv.FormatFloat(target, 'f', 3, 64)
	if o, ok := e.OracleE2E[key]; ok {
		return o, nil
	}
	out, err := r.search(ctx, cfg, reqs, oracle.Options{Target: ttft, E2ETarget: target}, target)
	if err != nil {
		return OracleResult{}, err
	}
	e.OracleE2E[key] = out
	return out, nil
}

// progress counts finished cells and estimates the time left from the
// mean time per cell so far.
type progress struct {
	mu    sync.Mutex
	total int
	done  int
	start time.Time
}

func newProgress(total int, start time.Time) *progress { return &progress{total: total, start: start} }

// step records one finished cell at now: how many are done and the time
// the rest should take.
func (p *progress) step(now time.Time) (int, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	per := now.Sub(p.start) / time.Duration(p.done)
	return p.done, per * time.Duration(p.total-p.done)
}
