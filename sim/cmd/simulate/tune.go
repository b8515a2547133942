package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/runner"
	"github.com/inferscale/inferscale/sim/tune"
	"github.com/inferscale/inferscale/sim/workload"
)

func cmdTune(ctx context.Context, args []string, log *slog.Logger) error {
	fs, c := newCommon("tune", false)
	name := fs.String("policy", "inferscale", "policy to tune: inferscale or a baseline preset")
	out := fs.String("out", "policy.yaml", "inferscale only: write the tuned policyFile here ('-': stdout, '': none)")
	only := fs.String("params", "", "comma-separated parameters to search (default: all the policy's tunables)")
	grid := fs.Int("grid", 7, "values per parameter per pass")
	passes := fs.Int("passes", 2, "coordinate-descent passes")
	if err := fs.Parse(args); err != nil {
		return parseErr(err)
	}
	cfg, opts, err := c.setup()
	if err != nil {
		return err
	}
	params, err := tunables(*name, *only)
	if err != nil {
		return err
	}
	reqs, cfg, err := c.load(cfg)
	if err != nil {
		return err
	}
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
	if *name != "inferscale" || *out == "" {
		return nil
	}
	var policy bytes.Buffer
	writeTunedPolicy(&policy, c.trace, params, res, c.target)
	if err := checkPolicy(policy.Bytes(), cfg); err != nil {
		return fmt.Errorf("the tuned policy does not load back: %w", err)
	}
	if *out == "-" {
		_, err := os.Stdout.Write(policy.Bytes())
		return err
	}
	if err := writeFile(*out, func(w io.Writer) error { _, err := w.Write(policy.Bytes()); return err }); err != nil {
		return err
	}
	fmt.Printf("policy: %s (mount it and set policyFile; docs/sre.md)\n", *out)
	return nil
}

// writeTunedPolicy writes inferscale's tuned settings as a policyFile,
// with what they gave on the trace and, for a setting at the end of its
// range, what that means.
func writeTunedPolicy(w io.Writer, trace string, params []tune.Param, res *tune.Result, target float64) {
	verdict := "met"
	if !res.Met {
		verdict = "NOT met"
	}
	fmt.Fprintf(w, "# inferscale policyFile tuned by `simulate tune` on %s (simulated fleet).\n", trace)
	fmt.Fprintf(w, "#   TTFT attainment %.3f%% (target %.2f%%: %s), %.2f GPU-hours, after %d trials\n",
		100*res.Best.Outcome.Attainment, 100*target, verdict, res.Best.Outcome.GPUHours, len(res.Trials))
	if len(res.Trials) > 0 {
		d := res.Trials[0].Outcome
		fmt.Fprintf(w, "#   inferscale's defaults: TTFT attainment %.3f%%, %.2f GPU-hours\n", 100*d.Attainment, d.GPUHours)
	}
	fmt.Fprintf(w, "# Durations are in seconds. Check the figures on your own fleet in advisory mode first.\n")
	for _, p := range params {
		v, ok := res.Best.Params[p.Name]
		if !ok {
			continue
		}
		switch {
		case p.Name == "scaleDownHold" && v == 0:
			fmt.Fprintf(w, "# scaleDownHold 0: on this trace holding a fallen need bought no attainment, so the plan scales\n"+
				"# down as soon as its need falls. Expect more scale events; raise it if the fleet flaps.\n")
		case v == p.Min && p.Min != p.Default:
			fmt.Fprintf(w, "# %s is at the low end of the range searched (%g): lower was not tried.\n", p.Name, p.Min)
		case v == p.Max && p.Max != p.Default:
			fmt.Fprintf(w, "# %s is at the high end of the range searched (%g): higher was not tried.\n", p.Name, p.Max)
		}
		fmt.Fprintf(w, "%s: %s\n", p.Name, strconv.FormatFloat(v+0, 'g', -1, 64))
	}
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
