package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"

	"github.com/schollz/progressbar/v3"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/oracle"
	"github.com/inferscale/inferscale/sim/report"
	"github.com/inferscale/inferscale/sim/runner"
	"github.com/inferscale/inferscale/sim/workload"
)

func cmdRun(ctx context.Context, args []string, log *slog.Logger, demo bool) error {
	name := "run"
	if demo {
		name = "demo"
	}
	fs, c := newCommon(name, demo)
	policies := fs.String("policies", "inferscale;hpa-queue;keda-queue;kpa;static", "policies separated by ';' (NAME or NAME:k=v,k=v); 'static' without replicas= takes the cheapest static fleet meeting -target")
	withOracle := fs.Bool("oracle", true, "search the clairvoyant oracle and report GPU-hours ÷ oracle")
	png := fs.String("png", "", "write load, replicas and TTFT over time to this PNG")
	markdown := fs.Bool("markdown", false, "print the table as Markdown")
	c.registerDecisionLogs(fs)
	if demo {
		*png = "sim-demo.png"
		fs.Lookup("png").DefValue = *png
	}
	if err := fs.Parse(args); err != nil {
		return parseErr(err)
	}
	cfg, opts, specs, err := c.setupPolicies(*policies)
	if err != nil {
		return err
	}
	reqs, cfg, err := c.load(cfg)
	if err != nil {
		return err
	}
	sum := summary(reqs)
	log.Info("trace loaded", "trace", c.trace, "requests", len(reqs), "hours", fmt.Sprintf("%.2f", sum.hours),
		"meanRPS", fmt.Sprintf("%.2f", sum.meanRPS), "meanIn", int(sum.meanIn), "meanOut", int(sum.meanOut), "mode", c.mode)

	var results []*engine.Result
	var orc *oracle.Result
	if *withOracle {
		oopts := oracle.Options{Target: c.target}
		var bar *progressbar.ProgressBar
		if !c.quiet && isTerminal() {
			bar = progressbar.NewOptions(oopts.MaxReplays(cfg.MaxReplicas), progressbar.OptionSetWriter(os.Stderr),
				progressbar.OptionSetDescription(fmt.Sprintf("%-24s", "oracle (replays)")), progressbar.OptionShowCount(),
				progressbar.OptionClearOnFinish())
			oopts.OnReplay = func(n int) { _ = bar.Set(n) }
		}
		log.Info("searching the oracle by replay")
		orc, err = oracle.Search(ctx, cfg, reqs, oopts)
		if bar != nil {
			_ = bar.Finish()
		}
		if err != nil {
			log.Warn("no oracle", "err", err)
		} else {
			log.Info("oracle", "gpuHours", fmt.Sprintf("%.2f", orc.Run.GPUHours()), "utilisation", fmt.Sprintf("%.2f", orc.Utilisation),
				"cheapestStatic", orc.Static, "replays", orc.Replays)
		}
	}
	for _, sp := range specs {
		if sp.Name == runner.Oracle {
			continue
		}
		if sp.Name == "static" && sp.Params["replicas"] == "" && orc != nil && orc.Static > 0 {
			sp.Params["replicas"] = strconv.Itoa(orc.Static)
		}
		res, err := runOne(ctx, cfg, reqs, sp, opts, c.quiet || !isTerminal())
		if err != nil {
			return err
		}
		if res.PolicyErrors > 0 {
			log.Warn("policy ticks failed", "policy", res.Policy, "errors", res.PolicyErrors, "first", res.FirstPolicyError)
		}
		results = append(results, res)
	}
	if orc != nil {
		results = append(results, orc.Run)
	}
	rows := make([]report.Row, len(results))
	for i, r := range results {
		rows[i] = report.Summarise(r, c.target)
	}
	if orc != nil {
		report.SetOracle(rows, orc.Run.GPUHours())
	}
	fmt.Printf("trace %s: %d requests over %.2f h (%.2f req/s), startup median %.0fs, metric lag %.0fs, TTFT SLO %.1fs, target %.1f%%, %d warm pods at t=0, GPU speed ×%g, inferscale %s mode\n",
		c.trace, len(reqs), sum.hours, sum.meanRPS, c.startup, c.lag, c.slo, 100*c.target, cfg.InitialReplicas, c.gpuSpeed, c.mode)
	if *markdown {
		err = report.WriteMarkdown(os.Stdout, rows)
	} else {
		err = report.WriteTable(os.Stdout, rows)
	}
	if err != nil {
		return err
	}
	if *png != "" {
		if err := report.Plot(*png, fmt.Sprintf("%s — startup %.0fs, lag %.0fs, TTFT SLO %.1fs", c.trace, c.startup, c.lag, c.slo), results); err != nil {
			return err
		}
		fmt.Printf("picture: %s\n", *png)
	}
	return nil
}

func runOne(ctx context.Context, cfg engine.Config, reqs []workload.Request, sp runner.Spec, opts runner.Options, quiet bool) (*engine.Result, error) {
	b, err := runner.Build(sp, cfg, opts)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	total := reqs[len(reqs)-1].Arrival.Seconds()
	var bar *progressbar.ProgressBar
	if !quiet {
		bar = progressbar.NewOptions64(int64(total), progressbar.OptionSetWriter(os.Stderr),
			progressbar.OptionSetDescription(fmt.Sprintf("%-24s", b.Policy.Name())), progressbar.OptionShowCount(),
			progressbar.OptionSetItsString("sim-s"), progressbar.OptionThrottle(200_000_000), progressbar.OptionClearOnFinish())
		cfg.Progress = func(s float64) { _ = bar.Set64(int64(min(s, total))) }
	}
	res, err := runner.Run(ctx, cfg, reqs, b)
	if bar != nil {
		_ = bar.Finish()
	}
	return res, err
}

func isTerminal() bool {
	st, err := os.Stderr.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

type traceSummary struct {
	hours, meanRPS, meanIn, meanOut float64
}

func summary(reqs []workload.Request) traceSummary {
	var s traceSummary
	for _, r := range reqs {
		s.meanIn += float64(r.InputTokens)
		s.meanOut += float64(r.OutputTokens)
	}
	n := float64(len(reqs))
	s.meanIn /= n
	s.meanOut /= n
	secs := max(reqs[len(reqs)-1].Arrival.Seconds(), 1)
	s.hours = secs / 3600
	s.meanRPS = n / secs
	return s
}
