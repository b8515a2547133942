// Command simulate replays LLM-serving traffic through a simulated GPU
// fleet under inferscale, the baseline autoscalers and a clairvoyant
// oracle, and reports SLO attainment, GPU-hours and scaling behaviour.
//
//	simulate run   -trace FILE|synthetic:demo -policies 'inferscale;hpa-queue;kpa' [-oracle] [-png out.png]
//	simulate sweep -trace ... -sweep startup|lag|burst -values 0,60,120
//	simulate tune  -trace ... [-policy inferscale|hpa-queue|...] -target 0.99 [-out policy.yaml]  (inferscale: writes a policyFile)
//	simulate demo  (what make demo runs: faithful mode, synthetic workload or -trace)
//	simulate bar   -policy inferscale [-quick] [-j 2] [-markdown] [-json FILE] [-pd]  (issue 9's bar matrix; -pd: its P/D cells)
//	simulate bar-diff OLD.json NEW.json   (what moved between two bar runs, as Markdown: make bar-delta)
//	simulate pd -trace ... -prefill-policies ... -decode-policies ...   (a prefill/decode pair: two pools, the KV transfer between them)
//	simulate decisions -log FILE [-png out.png]   (summary and picture of inferscale's decision log)
//	simulate profile [-gpu-speed F] [-prompt N]   (the fleet model as inferscale's profile setting)
//	simulate trace -trace ... [-windows 1s,2s,15s]   (the trace's summary and its arrivals' dispersion at each window)
//	simulate history -prometheus URL -selector '{namespace="x",job="vllm"}' -start T -end T [-out policy.yaml]
//	                 (rebuild your traffic from Prometheus, tune inferscale on it, write a policyFile)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"

	"github.com/inferscale/inferscale/sim/runner"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := dispatch(ctx, os.Args[1:], log)
	stop()
	if err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "simulate:", err)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

func dispatch(ctx context.Context, args []string, log *slog.Logger) error {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: simulate run|sweep|tune|demo|bar|bar-diff|pd|policies|decisions|history|profile|trace [flags]  (simulate CMD -h for flags)")
		return errUsage
	}
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:], log, false)
	case "demo":
		return cmdRun(ctx, args[1:], log, true)
	case "sweep":
		return cmdSweep(ctx, args[1:], log)
	case "tune":
		return cmdTune(ctx, args[1:], log)
	case "bar":
		return cmdBar(ctx, args[1:], log)
	case "bar-diff":
		return cmdBarDiff(args[1:], os.Stdout)
	case "policies":
		return cmdPolicies(os.Stdout)
	case "decisions":
		return cmdDecisions(args[1:], os.Stdout, log)
	case "history":
		return cmdHistory(ctx, args[1:], os.Stdout, log)
	case "profile":
		return cmdProfile(args[1:], os.Stdout)
	case "pd":
		return cmdPD(ctx, args[1:], os.Stdout, log)
	case "trace":
		return cmdTrace(args[1:], os.Stdout)
	case "-h", "--help", "help":
		fmt.Fprintln(os.Stdout, "usage: simulate run|sweep|tune|demo|bar|bar-diff|pd|policies|decisions|history|profile|trace [flags]  (simulate CMD -h for flags)")
		return nil
	}
	fmt.Fprintf(os.Stderr, "simulate: unknown command %q (want run, sweep, tune, demo, bar, bar-diff, pd, policies, decisions, history, profile or trace)\n", args[0])
	return errUsage
}

// parseErr maps flag parsing errors: -h is not a failure.
func parseErr(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return errUsage
}

// cmdPolicies lists every policy with its tunables.
func cmdPolicies(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "policy\tparameter\tdefault\trange")
	for _, name := range runner.Names() {
		ps, err := runner.Tunables(name, nil)
		if err != nil {
			return err
		}
		for i, p := range ps {
			label := ""
			if i == 0 {
				label = name
			}
			fmt.Fprintf(tw, "%s\t%s\t%g\t[%g, %g]\n", label, p.Name, p.Default, p.Min, p.Max)
		}
		if len(ps) == 0 {
			fmt.Fprintf(tw, "%s\t-\t\t\n", name)
		}
	}
	fmt.Fprintln(tw, "oracle\t(computed: clairvoyant, -oracle)\t\t")
	return tw.Flush()
}
