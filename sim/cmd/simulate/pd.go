package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/oracle"
	"github.com/inferscale/inferscale/sim/pd"
	"github.com/inferscale/inferscale/sim/report"
	"github.com/inferscale/inferscale/sim/runner"
	"github.com/inferscale/inferscale/sim/workload"
)

// pdFlags are the pd command's own flags (the shared ones apply to both
// pools).
type pdFlags struct {
	prefillPolicies, decodePolicies string
	transfer, prefillSLO            float64
	decodeStartup, decodeSpeed      float64
	outputScale                     float64
	withOracle                      bool
}

func (f *pdFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.prefillPolicies, "prefill-policies", "inferscale:role=prefill;keda-queue", "the prefill pool's policies, separated by ';'")
	fs.StringVar(&f.decodePolicies, "decode-policies", "inferscale:role=decode;keda-queue", "the decode pool's policies, separated by ';' (every prefill × decode pair is replayed; inferscale without itlSLO gets -tpot; ratio:k=K keeps ⌈K × the prefill pool's replicas⌉; dynamo[:interval=S,correction=B] is Dynamo's SLA planner, in either pool)")
	fs.Float64Var(&f.transfer, "transfer-per-token", pd.DefaultTransferPerToken, "KV transfer time per prompt token, seconds (the default: Llama-3.1-8B's 128 KiB of KV per token over half a 400 Gb/s RDMA NIC)")
	fs.Float64Var(&f.prefillSLO, "prefill-slo", 0, "the prefill leg's TTFT objective, seconds; the decode leg gets -slo minus it (0: three quarters of -slo)")
	fs.Float64Var(&f.decodeStartup, "decode-startup", 0, "median startup of a decode pod, seconds (0: -startup)")
	fs.Float64Var(&f.decodeSpeed, "decode-gpu-speed", 0, "GPU speed factor of the decode pods (0: -gpu-speed)")
	fs.Float64Var(&f.outputScale, "output-scale", 1, "multiply every request's output tokens (a decode-heavy variant of a trace)")
	fs.BoolVar(&f.withOracle, "oracle", true, "search the oracle and the cheapest static count per pool")
}

// pdSetup is everything a pd run needs, read from the flags.
type pdSetup struct {
	c              *common
	f              pdFlags
	pcfg, dcfg     engine.Config
	opts           runner.Options
	prefill, decod []runner.Spec
}

func cmdPD(ctx context.Context, args []string, w io.Writer, log *slog.Logger) error {
	s, err := parsePD(args)
	if err != nil {
		return err
	}
	start := time.Now()
	reqs, err := runner.Load(s.c.traceSpec())
	if err != nil {
		return err
	}
	reqs = scaleOutputs(reqs, s.f.outputScale)
	s.pcfg = s.c.withInitial(s.pcfg, pd.PrefillRequests(reqs))
	s.dcfg = s.c.withInitial(s.dcfg, reqs)
	sum := summary(reqs)
	log.Info("trace loaded", "trace", s.c.trace, "requests", len(reqs), "hours", fmt.Sprintf("%.2f", sum.hours),
		"meanIn", int(sum.meanIn), "meanOut", int(sum.meanOut))
	rows, err := s.rows(ctx, reqs, log)
	if err != nil {
		return err
	}
	inf := pd.Infeasible(reqs, s.pcfg.Model, s.f.transfer, s.c.slo)
	for _, r := range rows {
		r.res.Infeasible = inf
	}
	fmt.Fprintf(w, "trace %s: %d requests over %.2f h (%.2f req/s, %.0f tokens in, %.0f out), user TTFT SLO %gs (prefill leg %gs, decode leg %gs), ITL SLO %gs, KV transfer %g µs/token, target %.1f%%, warm pods at t=0 %d prefill + %d decode, inferscale %s mode, wall %s\n\n",
		s.c.trace, len(reqs), sum.hours, sum.meanRPS, sum.meanIn, sum.meanOut, s.c.slo, s.pcfg.TTFTSLOSeconds, s.dcfg.TTFTSLOSeconds, s.c.tpot,
		1e6*s.f.transfer, 100*s.c.target, s.pcfg.InitialReplicas, s.dcfg.InitialReplicas, s.c.mode, time.Since(start).Round(time.Second))
	return writePDTable(w, rows)
}

// parsePD reads and checks every flag before any trace is read.
func parsePD(args []string) (*pdSetup, error) {
	fs, c := newCommon("pd", false)
	s := &pdSetup{c: c}
	s.f.register(fs)
	c.tpot = 0.05
	fs.Lookup("tpot").DefValue = "0.05"
	fs.Lookup("tpot").Usage = "inter-token objective of the decode pool (ITL attainment counts the gaps within it), seconds"
	if err := fs.Parse(args); err != nil {
		return nil, parseErr(err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("pd: unexpected arguments %q", fs.Args())
	}
	f := &s.f
	bad := func(name string, v float64, ok bool, want string) error {
		if ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			return nil
		}
		return fmt.Errorf("pd: -%s %g: want %s", name, v, want)
	}
	if f.prefillSLO == 0 {
		f.prefillSLO = 0.75 * c.slo
	}
	for _, chk := range []error{
		bad("transfer-per-token", f.transfer, f.transfer >= 0, "seconds ≥ 0"),
		bad("prefill-slo", f.prefillSLO, f.prefillSLO > 0 && f.prefillSLO < c.slo, fmt.Sprintf("seconds in (0, -slo %g): the decode leg gets the rest", c.slo)),
		bad("decode-startup", f.decodeStartup, f.decodeStartup >= 0, "seconds ≥ 0 (0: -startup)"),
		bad("decode-gpu-speed", f.decodeSpeed, f.decodeSpeed >= 0, "a factor > 0 (0: -gpu-speed)"),
		bad("output-scale", f.outputScale, f.outputScale > 0, "a factor > 0"),
		bad("tpot", c.tpot, c.tpot > 0, "seconds > 0: the decode pool's inter-token objective"),
	} {
		if chk != nil {
			return nil, chk
		}
	}
	var err error
	if s.pcfg, s.opts, err = c.setup(); err != nil {
		return nil, err
	}
	s.pcfg.TTFTSLOSeconds = f.prefillSLO
	dc := *c
	if f.decodeStartup > 0 {
		dc.startup = f.decodeStartup
	}
	if f.decodeSpeed > 0 {
		dc.gpuSpeed = f.decodeSpeed
	}
	if s.dcfg, err = dc.engineConfig(); err != nil {
		return nil, err
	}
	s.dcfg.TTFTSLOSeconds = c.slo - f.prefillSLO
	if s.prefill, err = poolSpecs("prefill", f.prefillPolicies, s.pcfg, s.opts); err != nil {
		return nil, err
	}
	if s.decod, err = poolSpecs("decode", withITL(f.decodePolicies, c.tpot), s.dcfg, s.opts); err != nil {
		return nil, err
	}
	return s, nil
}

func poolSpecs(pool, list string, cfg engine.Config, opts runner.Options) ([]runner.Spec, error) {
	specs, err := runner.ParseSpecs(list)
	if err != nil {
		return nil, fmt.Errorf("-%s-policies: %w", pool, err)
	}
	var checked []runner.Spec
	for _, sp := range specs {
		switch {
		case sp.Name == runner.Oracle || (sp.Name == "static" && sp.Params["replicas"] == ""):
			return nil, fmt.Errorf("-%s-policies: %s is reported on its own (the oracle and the cheapest static pair), name a policy", pool, sp)
		case sp.Name == ratioPolicy && pool == "decode":
			if _, err := ratioK(sp); err != nil {
				return nil, fmt.Errorf("-decode-policies: %w", err)
			}
		case sp.Name == ratioPolicy:
			return nil, fmt.Errorf("-%s-policies: %s follows the prefill pool: a decode policy", pool, sp)
		case sp.Name == dynamoPolicy:
			if _, err := dynamoConfig(sp, pd.DynamoRole(pool), cfg); err != nil {
				return nil, fmt.Errorf("-%s-policies: %w", pool, err)
			}
		default:
			checked = append(checked, sp)
		}
	}
	if err := runner.Check(checked, cfg, opts); err != nil {
		return nil, fmt.Errorf("-%s-policies: %w", pool, err)
	}
	return specs, nil
}

// ratioPolicy is the decode pool's fixed-ratio peer (pd.Ratio):
// "ratio:k=0.2" keeps ⌈0.2 × the prefill pool's replicas⌉.
const ratioPolicy = "ratio"

func ratioK(sp runner.Spec) (float64, error) {
	for k := range sp.Params {
		if k != "k" {
			return 0, fmt.Errorf("%s: unknown parameter %q (ratio takes k)", sp, k)
		}
	}
	k, err := strconv.ParseFloat(sp.Params["k"], 64)
	if err != nil || !(k > 0) || math.IsInf(k, 0) {
		return 0, fmt.Errorf("%s: want k=<decode pods per prefill pod, > 0>", sp)
	}
	return k, nil
}

// withITL gives every inferscale spec of list without an itlSLO the
// decode pool's inter-token objective.
func withITL(list string, tpot float64) string {
	specs, err := runner.ParseSpecs(list)
	if err != nil {
		return list // poolSpecs reports it
	}
	parts := make([]string, len(specs))
	for i, sp := range specs {
		if sp.Name == "inferscale" && sp.Params["itlSLO"] == "" {
			sp.Params["itlSLO"] = strconv.FormatFloat(tpot, 'g', -1, 64) + "s"
		}
		parts[i] = sp.String()
	}
	return strings.Join(parts, ";")
}

// scaleOutputs multiplies every request's output tokens by f (at least 1).
func scaleOutputs(reqs []workload.Request, f float64) []workload.Request {
	if f == 1 {
		return reqs
	}
	for i := range reqs {
		reqs[i].OutputTokens = max(1, int(math.Round(float64(reqs[i].OutputTokens)*f)))
	}
	return reqs
}

// pdRow is one line of the pd table.
type pdRow struct {
	name string
	res  *pd.Result
}

// replayer replays a pool's workload under one policy spec.
func (s *pdSetup) replayer(cfg engine.Config, sp runner.Spec) pd.Replay {
	return func(ctx context.Context, reqs []workload.Request) (*engine.Result, error) {
		return runOne(ctx, cfg, reqs, sp, s.opts, true)
	}
}

// decodeReplayer is replayer for the decode pool, where the ratio peer
// follows the prefill replay pre (and dynamo is built here).
func (s *pdSetup) decodeReplayer(sp runner.Spec, pre *engine.Result) (pd.Replay, error) {
	if sp.Name == dynamoPolicy {
		return s.dynamoReplayer(sp, pd.DynamoDecode, s.dcfg)
	}
	if sp.Name != ratioPolicy {
		return s.replayer(s.dcfg, sp), nil
	}
	k, err := ratioK(sp)
	if err != nil {
		return nil, err
	}
	pol, err := pd.NewRatio(k, pre)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, reqs []workload.Request) (*engine.Result, error) {
		return runner.Run(ctx, s.dcfg, reqs, &runner.Built{Policy: pol, Close: func() error { return nil }})
	}, nil
}

// rows replays every pair (each prefill replay once), then the cheapest
// static pair and the oracle pair.
func (s *pdSetup) rows(ctx context.Context, reqs []workload.Request, log *slog.Logger) ([]pdRow, error) {
	var rows []pdRow
	preqs := pd.PrefillRequests(reqs)
	for _, ps := range s.prefill {
		rep := s.replayer(s.pcfg, ps)
		if ps.Name == dynamoPolicy {
			var err error
			if rep, err = s.dynamoReplayer(ps, pd.DynamoPrefill, s.pcfg); err != nil {
				return nil, err
			}
		}
		pre, err := rep(ctx, preqs)
		if err != nil {
			return nil, fmt.Errorf("prefill pool: %w", err)
		}
		for _, ds := range s.decod {
			dec, err := s.decodeReplayer(ds, pre)
			if err != nil {
				return nil, err
			}
			r, err := pd.RunDecode(ctx, reqs, pre, dec, s.f.transfer, s.c.slo)
			if err != nil {
				return nil, err
			}
			rows = append(rows, pdRow{ps.String() + " + " + ds.String(), r})
			log.Info("pair", "pair", rows[len(rows)-1].name, "user", fmt.Sprintf("%.4f", r.UserAttainment()), "gpuHours", fmt.Sprintf("%.2f", r.GPUHours()))
		}
	}
	if !s.f.withOracle {
		return rows, nil
	}
	more, err := s.referenceRows(ctx, reqs, preqs, log)
	if err != nil {
		return nil, err
	}
	return append(rows, more...), nil
}

// referenceRows are the cheapest static pair (each pool's smallest static
// count meeting the target on its own leg: TTFT for both, ITL too for the
// decode pool) and the oracle per pool (the decode pool's holding the ITL
// objective too).
func (s *pdSetup) referenceRows(ctx context.Context, reqs, preqs []workload.Request, log *slog.Logger) ([]pdRow, error) {
	target := s.c.target
	porc, err := oracle.Search(ctx, s.pcfg, preqs, oracle.Options{Target: target})
	if err != nil {
		return nil, fmt.Errorf("prefill pool oracle: %w", err)
	}
	dreqs, from, err := pd.DecodeRequests(reqs, porc.Run.TTFT, s.f.transfer)
	if err != nil {
		return nil, err
	}
	dorc, err := oracle.Search(ctx, s.dcfg, dreqs, oracle.Options{Target: target, ITL: true})
	if err != nil {
		return nil, fmt.Errorf("decode pool oracle: %w", err)
	}
	orc, err := pd.Compose(reqs, porc.Run, dorc.Run, from, s.f.transfer, s.c.slo)
	if err != nil {
		return nil, err
	}
	log.Info("oracle per pool", "prefillStatic", porc.Static, "decodeStatic", dorc.Static)
	rows := []pdRow{{"oracle per pool", orc}}
	pn, dn := porc.Static, dorc.Static
	if pn == 0 || dn == 0 {
		log.Warn("no static fleet meets the target", "prefill", pn, "decode", dn)
		return rows, nil
	}
	pre, err := s.replayer(s.pcfg, staticSpec(pn))(ctx, preqs)
	if err != nil {
		return nil, err
	}
	for ; dn <= s.dcfg.MaxReplicas; dn++ {
		r, err := pd.RunDecode(ctx, reqs, pre, s.replayer(s.dcfg, staticSpec(dn)), s.f.transfer, s.c.slo)
		if err != nil {
			return nil, err
		}
		if r.Decode.ITLAttainment() >= target {
			name := fmt.Sprintf("cheapest static pair (%d + %d)", pn, dn)
			return append([]pdRow{{name, r}}, rows...), nil
		}
	}
	log.Warn("no static decode pool meets the ITL target", "max", s.dcfg.MaxReplicas)
	return rows, nil
}

func staticSpec(n int) runner.Spec {
	return runner.Spec{Name: "static", Params: map[string]string{"replicas": strconv.Itoa(n)}}
}

func writePDTable(w io.Writer, rows []pdRow) error {
	var b strings.Builder
	b.WriteString("| prefill + decode policy | user TTFT ok | of feasible | decode ITL ok | prefill GPU-h | decode GPU-h | total GPU-h | killed (P+D) | rejected (P+D) | flaps (P+D) |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		p, d := r.res.Prefill, r.res.Decode
		fmt.Fprintf(&b, "| %s | %.2f%% | %.2f%% | %.2f%% | %.2f | %.2f | %.2f | %d+%d | %d+%d | %d+%d |\n",
			r.name, 100*r.res.UserAttainment(), 100*r.res.FeasibleUserAttainment(), 100*d.ITLAttainment(),
			p.GPUHours(), d.GPUHours(), r.res.GPUHours(), p.Killed, d.Killed, p.Rejected, d.Rejected,
			report.Flaps(p.ScaleEvents), report.Flaps(d.ScaleEvents))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return nil
}
