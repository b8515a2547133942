package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/history"
	"github.com/inferscale/inferscale/sim/runner"
	"github.com/inferscale/inferscale/sim/tune"
	"github.com/inferscale/inferscale/sim/workload"
)

// cmdHistory rebuilds the user's traffic from Prometheus, tunes inferscale
// on it and writes a policyFile.
func cmdHistory(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
	fs := flag.NewFlagSet("history", flag.ContinueOnError)
	var o history.Options
	fs.StringVar(&o.URL, "prometheus", "", "Prometheus URL (http://prometheus.monitoring:9090)")
	fs.StringVar(&o.Selector, "selector", "", `label matchers of the vLLM pods' series, e.g. '{namespace="inference",job="vllm"}'`)
	start := fs.String("start", "", "start of the history: RFC 3339 or Unix seconds")
	end := fs.String("end", "", "end of the history: RFC 3339 or Unix seconds")
	fs.DurationVar(&o.Step, "step", time.Minute, "window of the rebuilt rate and length distributions (≥ 30s)")
	fs.DurationVar(&o.Timeout, "timeout", history.DefaultTimeout, "bound of each Prometheus query")
	fs.StringVar(&o.BearerTokenFile, "bearer-token-file", "", "file holding a bearer token for Prometheus")
	out := fs.String("out", "policy.yaml", "write the tuned policyFile here ('-': stdout)")
	workloadOut := fs.String("workload", "", "also write the rebuilt requests as an Azure-format CSV (replay it with simulate run -trace FILE)")
	only := fs.String("params", "", "comma-separated inferscale settings to tune (default: all of simulate policies' inferscale list)")
	grid := fs.Int("grid", 5, "values per setting per pass")
	passes := fs.Int("passes", 2, "coordinate-descent passes")
	seeds := fs.Int("seeds", 3, "replays per trial (rebuild and simulation seeds seed..seed+N-1): a setting counts with its worst attainment and mean GPU-hours")
	var c common
	c.mode, c.bin, c.startupSigma, c.tpot, c.engine = "fast", "bin", 0.25, 0.1, engine.DefaultEngine
	fs.Float64Var(&c.gpuSpeed, "gpu-speed", 1, "speed of your GPU against the simulator's Llama-3.1-8B/H100 model (2: twice as fast)")
	fs.Float64Var(&c.grace, "grace", engine.DefaultConfig().DrainGraceSeconds, "terminationGracePeriodSeconds of your pods")
	fs.Float64Var(&c.preStop, "prestop", engine.DefaultPreStopSeconds, "preStop sleep of your pods, seconds")
	fs.Int64Var(&c.seed, "seed", 1, "seed of the rebuilt arrivals and lengths and of the simulation")
	fs.Float64Var(&c.slo, "slo", 2, "TTFT objective, seconds")
	fs.Float64Var(&c.target, "target", 0.99, "share of requests to serve within the TTFT objective")
	fs.Float64Var(&c.startup, "startup", 60, "median pod startup of your fleet, creation to Ready, seconds")
	fs.Float64Var(&c.lag, "lag", 15, "metric pipeline lag, seconds")
	fs.IntVar(&c.minR, "min", 1, "minReplicas")
	fs.IntVar(&c.maxR, "max", 64, "maxReplicas")
	fs.BoolVar(&c.quiet, "quiet", false, "no per-trial lines on stderr")
	if err := fs.Parse(args); err != nil {
		return parseErr(err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("history: unexpected argument %q", fs.Arg(0))
	}
	var err error
	if o.Start, err = parseTime("-start", *start); err != nil {
		return err
	}
	if o.End, err = parseTime("-end", *end); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if *seeds < 1 || *seeds > 20 {
		return fmt.Errorf("-seeds %d: want 1 to 20", *seeds)
	}
	cfg, opts, err := c.setup()
	if err != nil {
		return err
	}
	params, err := tunables("inferscale", *only)
	if err != nil {
		return err
	}

	api, err := history.NewAPI(o)
	if err != nil {
		return err
	}
	rec, err := history.Fetch(ctx, api, o)
	if err != nil {
		return err
	}
	var replays [][]workload.Request
	for i := 0; i < *seeds; i++ {
		reqs, err := rec.Rebuild(c.seed + int64(i))
		if err != nil {
			return err
		}
		replays = append(replays, reqs)
	}
	reqs := replays[0]
	fid := history.Compare(rec, reqs)
	fmt.Fprintf(stdout, "rebuilt %d requests over %s from %s: %s\n", len(reqs), o.End.Sub(o.Start), o.URL, fid)
	if *workloadOut != "" {
		if err := writeFile(*workloadOut, func(w io.Writer) error { return history.WriteAzureCSV(w, o.Start, reqs) }); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "workload: %s\n", *workloadOut)
	}

	cfg = c.withInitial(cfg, reqs)
	log.Info("tuning inferscale on the rebuilt traffic", "params", len(params), "requests", len(reqs), "target", c.target)
	eval := worstOf(cfg, opts, replays)
	n := 0
	res, err := tune.Search(ctx, params, eval, tune.Options{Target: c.target, Grid: *grid, Passes: *passes,
		OnTrial: func(t tune.Trial) {
			n++
			if !c.quiet {
				fmt.Fprintf(os.Stderr, "trial %3d  TTFT ok %7.3f%%  GPU-h %8.2f  %s\n", n, 100*t.Outcome.Attainment, t.Outcome.GPUHours, tune.Key(t.Params))
			}
		}})
	if err != nil {
		return err
	}
	t := history.Tuned{Options: o, SLO: time.Duration(c.slo * float64(time.Second)), Target: c.target, Params: res.Best.Params,
		Best: res.Best.Outcome, Defaults: res.Trials[0].Outcome, Met: res.Met, Trials: len(res.Trials), Fidelity: fid,
		Sim: fmt.Sprintf("%s per pod, startup %gs, metric lag %gs, replicas %d-%d; worst of %d replays", cfg.Model.Name, c.startup, c.lag, c.minR, c.maxR, *seeds)}
	var policy bytes.Buffer
	if err := history.WritePolicy(&policy, t); err != nil {
		return err
	}
	if err := checkPolicy(policy.Bytes(), cfg); err != nil {
		return fmt.Errorf("the tuned policy does not load back: %w", err)
	}
	verdict := "meets"
	if !res.Met {
		verdict = "does NOT meet"
	}
	fmt.Fprintf(stdout, "best after %d trials: TTFT attainment %.3f%% (%s the %.1f%% target), %.2f GPU-h; defaults %.3f%%, %.2f GPU-h\n",
		len(res.Trials), 100*res.Best.Outcome.Attainment, verdict, 100*c.target, res.Best.Outcome.GPUHours,
		100*t.Defaults.Attainment, t.Defaults.GPUHours)
	if *out == "-" {
		_, err := stdout.Write(policy.Bytes())
		return err
	}
	if err := writeFile(*out, func(w io.Writer) error { _, err := w.Write(policy.Bytes()); return err }); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "policy: %s\n", *out)
	return nil
}

// worstOf evaluates a setting of inferscale on every replay (replay i with
// simulation seed cfg.Seed+i): the worst attainment, the mean GPU-hours. One
// replay's outcome swings with pod start times; tuning on one would fit
// that noise.
func worstOf(cfg engine.Config, opts runner.Options, replays [][]workload.Request) tune.Evaluate {
	return func(ctx context.Context, p map[string]float64) (tune.Outcome, error) {
		out := tune.Outcome{Attainment: 1}
		for i, reqs := range replays {
			c := cfg
			c.Seed = cfg.Seed + uint64(i)
			o, err := replayer("inferscale", c, opts, reqs)(ctx, p)
			if err != nil {
				return tune.Outcome{}, err
			}
			out.Attainment = min(out.Attainment, o.Attainment)
			out.GPUHours += o.GPUHours / float64(len(replays))
		}
		return out, nil
	}
}

// checkPolicy reads the written policyFile back the way the simulator's
// inferscale reads its settings (the evaluate binary's keys).
func checkPolicy(b []byte, cfg engine.Config) error {
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return err
	}
	params := map[string]string{}
	for k, v := range m {
		params[k] = fmt.Sprint(v)
	}
	_, _, err := runner.InferscaleConfig(params, cfg)
	return err
}

// parseTime reads RFC 3339 or Unix seconds.
func parseTime(flagName, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, fmt.Errorf("%s is required (RFC 3339, e.g. 2026-11-30T00:00:00Z, or Unix seconds)", flagName)
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 && f < 1e11 {
		return time.Unix(0, int64(f*1e9)).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("%s %q: want RFC 3339 (2026-11-30T00:00:00Z) or Unix seconds", flagName, s)
}

// writeFile writes through fn into path, replacing it only when all went well.
func writeFile(path string, fn func(io.Writer) error) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := fn(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
