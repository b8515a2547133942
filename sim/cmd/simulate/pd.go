package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/inferscale/inferscale/sim/engine"
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
	pools          pd.Pools
	prefill, decod []runner.Spec
}

func cmdPD(ctx context.Context, args []string, w io.Writer, log *slog.Logger) error {
	s, err := parsePD(args)
	if err != nil || s == nil {
		return err // s is nil without an error after -h
	}
	start := time.Now()
	reqs, err := runner.Load(s.c.traceSpec())
	if err != nil {
		return err
	}
	reqs = pd.ScaleOutputs(reqs, s.f.outputScale)
	s.pools.Prefill = s.c.withInitial(s.pools.Prefill, pd.PrefillRequests(reqs))
	s.pools.Decode = s.c.withInitial(s.pools.Decode, pd.ArrivePrefilled(reqs))
	sum := summary(reqs)
	log.Info("trace loaded", "trace", s.c.trace, "requests", len(reqs), "hours", fmt.Sprintf("%.2f", sum.hours),
		"meanIn", int(sum.meanIn), "meanOut", int(sum.meanOut))
	rows, err := s.rows(ctx, reqs, log)
	if err != nil {
		return err
	}
	inf := s.pools.Infeasible(reqs)
	for _, r := range rows {
		r.res.Infeasible = inf
	}
	fmt.Fprintf(w, "trace %s: %d requests over %.2f h (%.2f req/s, %.0f tokens in, %.0f out), user TTFT SLO %gs (prefill leg %gs, decode leg %gs), ITL SLO %gs, KV transfer %g µs/token, target %.1f%%, warm pods at t=0 %d prefill + %d decode, inferscale %s mode, wall %s\n\n",
		s.c.trace, len(reqs), sum.hours, sum.meanRPS, sum.meanIn, sum.meanOut, s.c.slo, s.pools.Prefill.TTFTSLOSeconds, s.pools.Decode.TTFTSLOSeconds, s.c.tpot,
		1e6*s.f.transfer, 100*s.c.target, s.pools.Prefill.InitialReplicas, s.pools.Decode.InitialReplicas, s.c.mode, time.Since(start).Round(time.Second))
	return writePDTable(w, rows)
}

// parsePD reads and checks every flag before any trace is read. After -h it
// returns neither a setup nor an error.
func parsePD(args []string) (*pdSetup, error) {
	fs, c := newCommon("pd", false)
	s := &pdSetup{c: c}
	s.f.register(fs)
	c.registerDecisionLogs(fs)
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
	pcfg, opts, err := c.setup()
	if err != nil {
		return nil, err
	}
	pcfg.TTFTSLOSeconds = f.prefillSLO
	dc := *c
	if f.decodeStartup > 0 {
		dc.startup = f.decodeStartup
	}
	if f.decodeSpeed > 0 {
		dc.gpuSpeed = f.decodeSpeed
	}
	dcfg, err := dc.engineConfig()
	if err != nil {
		return nil, err
	}
	dcfg.TTFTSLOSeconds = c.slo - f.prefillSLO
	s.pools = pd.Pools{Prefill: pcfg, Decode: dcfg, TransferPerToken: f.transfer, SLO: c.slo, Options: opts}
	if s.prefill, err = poolSpecs("prefill-policies", "prefill", f.prefillPolicies, pcfg, opts); err != nil {
		return nil, err
	}
	if s.decod, err = poolSpecs("decode-policies", "decode", pd.WithITL(f.decodePolicies, c.tpot), dcfg, opts); err != nil {
		return nil, err
	}
	return s, nil
}

// poolSpecs reads and checks the policies of a pool (its flag named
// flagName) against its engine cfg.
func poolSpecs(flagName, pool, list string, cfg engine.Config, opts runner.Options) ([]runner.Spec, error) {
	specs, err := runner.ParseSpecs(list)
	if err != nil {
		return nil, fmt.Errorf("-%s: %w", flagName, err)
	}
	var checked []runner.Spec
	for _, sp := range specs {
		switch {
		case sp.Name == runner.Oracle || (sp.Name == "static" && sp.Params["replicas"] == ""):
			return nil, fmt.Errorf("-%s: %s is reported on its own (the oracle and the cheapest static pair), name a policy", flagName, sp)
		case sp.Name == pd.RatioPolicy && pool == "decode":
			if _, err := pd.ParseRatio(sp); err != nil {
				return nil, fmt.Errorf("-%s: %w", flagName, err)
			}
		case sp.Name == pd.RatioPolicy:
			return nil, fmt.Errorf("-%s: %s follows the prefill pool: a decode policy", flagName, sp)
		case sp.Name == pd.DynamoPolicy:
			if _, err := pd.ParseDynamo(sp, pd.DynamoRole(pool), cfg.TPOTSLOSeconds); err != nil {
				return nil, fmt.Errorf("-%s: %w", flagName, err)
			}
		default:
			checked = append(checked, sp)
		}
	}
	if err := runner.Check(checked, cfg, opts); err != nil {
		return nil, fmt.Errorf("-%s: %w", flagName, err)
	}
	return specs, nil
}

// pdRow is one line of the pd table.
type pdRow struct {
	name string
	res  *pd.Result
}

// rows replays every pair (each prefill replay once), then the cheapest
// static pair and the oracle pair.
func (s *pdSetup) rows(ctx context.Context, reqs []workload.Request, log *slog.Logger) ([]pdRow, error) {
	var rows []pdRow
	preqs := pd.PrefillRequests(reqs)
	for _, ps := range s.prefill {
		rep, err := s.pools.PrefillReplay(ps)
		if err != nil {
			return nil, err
		}
		pre, err := rep(ctx, preqs)
		if err != nil {
			return nil, fmt.Errorf("prefill pool: %w", err)
		}
		for _, ds := range s.decod {
			dec, err := s.pools.DecodeReplay(ds, pre)
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
	more, err := s.referenceRows(ctx, reqs, log)
	if err != nil {
		return nil, err
	}
	return append(rows, more...), nil
}

// referenceRows are the cheapest static pair (each pool's smallest static
// count meeting the target on its own leg: TTFT for both, ITL too for the
// decode pool) and the oracle per pool (the decode pool's holding the ITL
// objective too).
func (s *pdSetup) referenceRows(ctx context.Context, reqs []workload.Request, log *slog.Logger) ([]pdRow, error) {
	target := s.c.target
	orc, pn, dn, err := s.pools.OraclePair(ctx, reqs, target)
	if err != nil {
		return nil, err
	}
	log.Info("oracle per pool", "prefillStatic", pn, "decodeStatic", dn)
	rows := []pdRow{{"oracle per pool", orc}}
	if pn == 0 || dn == 0 {
		log.Warn("no static fleet meets the target", "prefill", pn, "decode", dn)
		return rows, nil
	}
	pre, err := s.pools.StaticPrefill(ctx, reqs, pn)
	if err != nil {
		return nil, err
	}
	for ; dn <= s.pools.Decode.MaxReplicas; dn++ {
		r, err := s.pools.StaticDecode(ctx, reqs, pre, dn)
		if err != nil {
			return nil, err
		}
		if r.Decode.ITLAttainment() >= target {
			name := fmt.Sprintf("cheapest static pair (%d + %d)", pn, dn)
			return append([]pdRow{{name, r}}, rows...), nil
		}
	}
	log.Warn("no static decode pool meets the ITL target", "max", s.pools.Decode.MaxReplicas)
	return rows, nil
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
