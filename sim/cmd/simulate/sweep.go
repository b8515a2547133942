package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/oracle"
	"github.com/inferscale/inferscale/sim/report"
	"github.com/inferscale/inferscale/sim/runner"
	"github.com/inferscale/inferscale/sim/workload"
)

func cmdSweep(ctx context.Context, args []string, log *slog.Logger) error {
	fs, c := newCommon("sweep", false)
	what := fs.String("sweep", "startup", "what to vary: startup (median seconds), lag (metric lag seconds) or burst (rate multiplier of the synthetic demo's burst)")
	values := fs.String("values", "0,30,60,90,120,180,240,300", "comma-separated values")
	policies := fs.String("policies", "inferscale;hpa-queue;keda-queue;kpa", "policies separated by ';'")
	withOracle := fs.Bool("oracle", true, "search the oracle at each value (×oracle column)")
	png := fs.String("png", "", "write attainment and GPU-hours ÷ oracle against the swept value to this PNG")
	if err := fs.Parse(args); err != nil {
		return parseErr(err)
	}
	_, opts, specs, err := c.setupPolicies(*policies)
	if err != nil {
		return err
	}
	var vals []float64
	for _, s := range strings.Split(*values, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || v < 0 {
			return fmt.Errorf("-values: %q is not a number ≥ 0", s)
		}
		vals = append(vals, v)
	}
	switch *what {
	case "startup", "lag", "burst":
	default:
		return fmt.Errorf("-sweep %q: want startup, lag or burst", *what)
	}
	if *what == "burst" && c.trace != "synthetic:demo" && c.trace != "synthetic" {
		return fmt.Errorf("-sweep burst varies the synthetic demo's burst: use -trace synthetic:demo")
	}
	var reqs []workload.Request
	if *what != "burst" {
		if reqs, err = runner.Load(c.traceSpec()); err != nil {
			return err
		}
	}
	series := map[string][]report.SweepPoint{}
	var order []string
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tpolicy\tTTFT ok\tof feasible\tp99 TTFT\tGPU-h\t×oracle\tkilled\tunfinished\tscale ev\tflaps\t\n", *what)
	for _, v := range vals {
		cc := *c
		switch *what {
		case "startup":
			cc.startup = v
		case "lag":
			cc.lag = v
		case "burst":
			o := workload.DemoOptions(c.seed)
			for i := range o.Bursts {
				o.Bursts[i].Amplitude = v
			}
			var src workload.Source = workload.Synthetic(o)
			if c.start > 0 || c.dur > 0 {
				src = workload.Window(src, c.start, c.dur)
			}
			if c.rate != 1 || c.tf != 1 {
				src = workload.Scale(src, c.tf, c.rate)
			}
			if reqs, err = workload.All(src); err != nil {
				return err
			}
		}
		cfg, err := cc.engineConfig()
		if err != nil {
			return err
		}
		cfg = cc.withInitial(cfg, reqs)
		var results []*engine.Result
		for _, sp := range specs {
			b, err := runner.Build(sp, cfg, opts)
			if err != nil {
				return err
			}
			res, err := runner.Run(ctx, cfg, reqs, b)
			b.Close()
			if err != nil {
				return err
			}
			results = append(results, res)
		}
		var orcGPU float64
		if *withOracle {
			o, err := oracle.Search(ctx, cfg, reqs, oracle.Options{Target: c.target})
			if err != nil {
				log.Warn("no oracle", *what, v, "err", err)
			} else {
				orcGPU = o.Run.GPUHours()
				results = append(results, o.Run)
			}
		}
		rows := make([]report.Row, len(results))
		for i, r := range results {
			rows[i] = report.Summarise(r, c.target)
		}
		report.SetOracle(rows, orcGPU)
		for _, r := range rows {
			if _, seen := series[r.Policy]; !seen {
				order = append(order, r.Policy)
			}
			series[r.Policy] = append(series[r.Policy], report.SweepPoint{Value: v, Row: r})
			ratio := "-"
			if orcGPU > 0 {
				ratio = fmt.Sprintf("%.2f", r.VsOracle)
			}
			fmt.Fprintf(tw, "%g\t%s\t%.2f%%\t%.2f%%\t%.1fs\t%.2f\t%s\t%d\t%d\t%d\t%d\t\n", v, r.Policy, 100*r.TTFTAttainment, 100*r.FeasibleAttainment, r.TTFTP99, r.GPUHours, ratio, r.Killed, r.Unfinished, r.ScaleEvents, r.Flaps)
		}
		log.Info("sweep point done", *what, v)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if *png != "" {
		xlabel := map[string]string{"startup": "median pod startup (s)", "lag": "metric lag (s)", "burst": "burst amplitude (× base rate)"}[*what]
		if err := report.PlotSweep(*png, fmt.Sprintf("%s — sweep of %s", c.trace, *what), xlabel, c.target, series, order); err != nil {
			return err
		}
		fmt.Printf("picture: %s\n", *png)
	}
	return nil
}
