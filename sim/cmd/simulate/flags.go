package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/inferscale"
	"github.com/inferscale/inferscale/sim/oracle"
	"github.com/inferscale/inferscale/sim/runner"
	"github.com/inferscale/inferscale/sim/tune"
	"github.com/inferscale/inferscale/sim/workload"
)

// common holds the flags every subcommand shares.
type common struct {
	trace      string
	seed       int64
	rate, tf   float64
	start, dur time.Duration
	topClients int

	startup, startupSigma, lag float64
	slo, tpot, target          float64
	minR, maxR, initial        int
	grace, preStop             float64
	gpuSpeed                   float64
	engine                     string
	mode                       string
	bin                        string
	cpaStab                    time.Duration
	quiet                      bool
	decisionLogs               string // run, demo and pd only
}

// newCommon is a subcommand's flag set with the shared flags registered
// (demo: faithful mode by default).
func newCommon(name string, demo bool) (*flag.FlagSet, *common) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	c := &common{}
	c.register(fs, demo)
	return fs, c
}

func (c *common) register(fs *flag.FlagSet, demo bool) {
	c.registerTrace(fs)
	fs.Float64Var(&c.startup, "startup", 60, "median pod startup, creation to Ready, seconds")
	fs.Float64Var(&c.startupSigma, "startup-sigma", 0.25, "lognormal sigma of the startup time")
	fs.Float64Var(&c.lag, "lag", 15, "metric pipeline lag, seconds")
	fs.Float64Var(&c.slo, "slo", 2, "TTFT objective, seconds")
	fs.Float64Var(&c.tpot, "tpot", 0.1, "per-output-token allowance of the end-to-end objective, seconds")
	fs.Float64Var(&c.target, "target", 0.99, "attainment target (TTFT) for the oracle, tuning and the pass mark")
	fs.IntVar(&c.minR, "min", 1, "minReplicas for every policy")
	fs.IntVar(&c.maxR, "max", 64, "maxReplicas for every policy")
	fs.IntVar(&c.initial, "initial", 0, "Ready replicas at t=0 for every policy (0: sized for the trace's first two minutes at 50% utilisation)")
	fs.Float64Var(&c.grace, "grace", engine.DefaultGraceSeconds, "terminationGracePeriodSeconds of a deleted pod: it finishes what it holds and is killed with the rest at this age, seconds")
	fs.Float64Var(&c.preStop, "prestop", engine.DefaultPreStopSeconds, "preStop sleep of a deleted pod (counted in the grace period): it lives at least this long after deletion, seconds")
	fs.Float64Var(&c.gpuSpeed, "gpu-speed", 1, "GPU speed factor: every time cost of the fleet model divided by it (2: a GPU twice as fast, 0.5: twice as slow); capacities unchanged")
	fs.StringVar(&c.engine, "engine", engine.DefaultEngine, "the fleet model: "+strings.Join(engine.EngineNames(), ", ")+" (docs/simulator.md, \"Engines\")")
	mode := "fast"
	if demo {
		mode = "faithful"
	}
	fs.StringVar(&c.mode, "mode", mode, "inferscale mode: fast (in-process) or faithful (bin/metric + bin/evaluate via the CPA contract)")
	fs.StringVar(&c.bin, "bin", "bin", "directory of the built metric and evaluate binaries (faithful mode)")
	fs.DurationVar(&c.cpaStab, "cpa-downscale-stabilization", 0, "CPA's own downscaleStabilization for inferscale (0: CPA default, off)")
	fs.BoolVar(&c.quiet, "quiet", false, "no progress bar")
}

// registerDecisionLogs adds -decision-logs (run, demo and pd: one replay
// per policy, so one file each).
func (c *common) registerDecisionLogs(fs *flag.FlagSet) {
	fs.StringVar(&c.decisionLogs, "decision-logs", "", "write each inferscale replay's decision log (the lines evaluate writes on stderr) to a file in this directory, created if need be; `simulate decisions -log FILE` reads one")
}

// registerTrace registers the flags that choose and transform the trace
// (what traceSpec reads).
func (c *common) registerTrace(fs *flag.FlagSet) {
	fs.StringVar(&c.trace, "trace", "synthetic:demo", "workload: synthetic:demo, or an Azure/BurstGPT .csv, Mooncake .jsonl or ServeGen .tar.gz")
	fs.Int64Var(&c.seed, "seed", 1, "seed of the simulation and of generated workloads")
	fs.Float64Var(&c.rate, "rate", 1, "multiply the trace's request rate")
	fs.Float64Var(&c.tf, "time-scale", 1, "stretch the trace's time axis")
	fs.DurationVar(&c.start, "start", 0, "skip this much of the trace")
	fs.DurationVar(&c.dur, "duration", 0, "replay only this much of the trace (0: all)")
	fs.IntVar(&c.topClients, "servegen-top", 0, "ServeGen: keep only the N busiest clients (0: all)")
}

func (c *common) engineConfig() (engine.Config, error) {
	cfg := engine.DefaultConfig()
	cfg.Seed = uint64(c.seed)
	if math.IsNaN(c.gpuSpeed) || math.IsInf(c.gpuSpeed, 0) || c.gpuSpeed <= 0 {
		return cfg, fmt.Errorf("-gpu-speed %g: want a finite number > 0", c.gpuSpeed)
	}
	m, err := engine.Named(c.engine)
	if err != nil {
		return cfg, fmt.Errorf("-engine: %w", err)
	}
	cfg.Model = m.Scaled(c.gpuSpeed)
	cfg.Startup.MedianSeconds = max(c.startup-cfg.Startup.PendingSeconds, 0)
	if c.startup < cfg.Startup.PendingSeconds {
		cfg.Startup.PendingSeconds = c.startup
	}
	cfg.Startup.Sigma = c.startupSigma
	cfg.MetricLagSeconds = c.lag
	cfg.TTFTSLOSeconds = c.slo
	cfg.TPOTSLOSeconds = c.tpot
	cfg.MinReplicas, cfg.MaxReplicas = c.minR, c.maxR
	cfg.InitialReplicas = min(max(c.initial, c.minR), c.maxR) // 0 (auto) is resolved by withInitial
	cfg.DrainGraceSeconds = c.grace
	cfg.PreStopSeconds = c.preStop
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	if c.target <= 0 || c.target > 1 {
		return cfg, fmt.Errorf("-target %g: want (0, 1]", c.target)
	}
	return cfg, nil
}

func (c *common) traceSpec() runner.Trace {
	return runner.Trace{Spec: c.trace, Seed: c.seed, RateFactor: c.rate, TimeFactor: c.tf, Start: c.start, Duration: c.dur,
		ServeGenTopClients: c.topClients}
}

// setup is the fleet model and the inferscale options the flags give.
func (c *common) setup() (engine.Config, runner.Options, error) {
	cfg, err := c.engineConfig()
	if err != nil {
		return cfg, runner.Options{}, err
	}
	opts, err := c.options()
	return cfg, opts, err
}

func (c *common) options() (runner.Options, error) {
	m, err := parseMode(c.mode)
	if err != nil {
		return runner.Options{}, err
	}
	cp := inferscale.DefaultCPA()
	cp.DownscaleStabilization = c.cpaStab
	if err := checkDecisionLogs(c.decisionLogs); err != nil {
		return runner.Options{}, err
	}
	return runner.Options{Mode: m, BinDir: c.bin, CPA: cp, DecisionLogs: c.decisionLogs}, nil
}

// parseMode reads -mode: fast or faithful.
func parseMode(s string) (runner.Mode, error) {
	m := runner.Mode(s)
	if m != runner.Fast && m != runner.Faithful {
		return "", fmt.Errorf("-mode %q: want fast or faithful", s)
	}
	return m, nil
}

// setupPolicies is setup and the -policies value read and checked
// against it, before any trace is read.
func (c *common) setupPolicies(policies string) (engine.Config, runner.Options, []runner.Spec, error) {
	cfg, opts, err := c.setup()
	if err != nil {
		return cfg, opts, nil, err
	}
	specs, err := runner.ParseSpecs(policies)
	if err != nil {
		return cfg, opts, nil, err
	}
	if err := runner.Check(specs, cfg, opts); err != nil {
		return cfg, opts, nil, fmt.Errorf("-policies: %w", err)
	}
	return cfg, opts, specs, nil
}

// tunables are the policy's tunables named in -params (comma-separated;
// all of them when it is empty).
func tunables(policy, only string) ([]tune.Param, error) {
	var names []string
	if only != "" {
		names = strings.Split(only, ",")
	}
	return runner.Tunables(policy, names)
}

// load reads the trace and resolves -initial 0 from it.
func (c *common) load(cfg engine.Config) ([]workload.Request, engine.Config, error) {
	reqs, err := runner.Load(c.traceSpec())
	if err != nil {
		return nil, cfg, err
	}
	return reqs, c.withInitial(cfg, reqs), nil
}

// withInitial resolves -initial 0 from the loaded trace.
func (c *common) withInitial(cfg engine.Config, reqs []workload.Request) engine.Config {
	if c.initial == 0 {
		cfg.InitialReplicas = oracle.InitialReplicas(reqs, cfg.Model, cfg.MinReplicas, cfg.MaxReplicas)
	}
	return cfg
}

// checkDecisionLogs creates -decision-logs' directory.
func checkDecisionLogs(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("-decision-logs: %w", err)
	}
	return nil
}
