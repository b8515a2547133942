package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/runner"
	"github.com/inferscale/inferscale/sim/tune"
	"github.com/inferscale/inferscale/sim/workload"
)

func cmdTune(ctx context.Context, args []string, log *slog.Logger) error {
	fs := flag.NewFlagSet("tune", flag.ContinueOnError)
	var c common
	c.register(fs, false)
	name := fs.String("policy", "hpa-queue", "policy to tune: inferscale or a baseline preset")
	only := fs.String("params", "", "comma-separated parameters to search (default: all the policy's tunables)")
	grid := fs.Int("grid", 7, "values per parameter per pass")
	passes := fs.Int("passes", 2, "coordinate-descent passes")
	if err := fs.Parse(args); err != nil {
		return parseErr(err)
	}
	cfg, err := c.engineConfig()
	if err != nil {
		return err
	}
	opts, err := c.options()
	if err != nil {
		return err
	}
	var names []string
	if *only != "" {
		names = strings.Split(*only, ",")
	}
	params, err := runner.Tunables(*name, names)
	if err != nil {
		return err
	}
	reqs, err := runner.Load(c.traceSpec())
	if err != nil {
		return err
	}
	cfg = c.withInitial(cfg, reqs)
	log.Info("tuning", "policy", *name, "params", len(params), "requests", len(reqs), "target", c.target)
	n := 0
	res, err := tune.Search(ctx, params, replayer(*name, cfg, opts, reqs), tune.Options{Target: c.target, Grid: *grid, Passes: *passes,
		OnTrial: func(t tune.Trial) {
			n++
			fmt.Fprintf(os.Stderr, "trial %3d  TTFT ok %7.3f%%  GPU-h %8.2f  %s\n", n, 100*t.Outcome.Attainment, t.Outcome.GPUHours, tune.Key(t.Params))
		}})
	if err != nil {
		return err
	}
	verdict := "meets"
	if !res.Met {
		verdict = "does NOT meet"
	}
	fmt.Printf("best %s after %d trials: TTFT attainment %.3f%% (%s the %.1f%% target), %.2f GPU-h\n",
		runner.SpecWith(*name, res.Best.Params), len(res.Trials), 100*res.Best.Outcome.Attainment, verdict, 100*c.target, res.Best.Outcome.GPUHours)
	fmt.Printf("use it with: simulate run -policies '%s'\n", runner.SpecWith(*name, res.Best.Params))
	return nil
}

// replayer evaluates one setting of a policy by replaying reqs.
func replayer(name string, cfg engine.Config, opts runner.Options, reqs []workload.Request) tune.Evaluate {
	return func(ctx context.Context, p map[string]float64) (tune.Outcome, error) {
		b, err := runner.Build(runner.SpecWith(name, p), cfg, opts)
		if err != nil {
			return tune.Outcome{}, err
		}
		defer b.Close()
		res, err := runner.Run(ctx, cfg, reqs, b)
		if err != nil {
			return tune.Outcome{}, err
		}
		return tune.Outcome{Attainment: res.FeasibleTTFTAttainment(), GPUHours: res.GPUHours()}, nil
	}
}
