package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/inferscale/inferscale/sim/runner"
	"github.com/inferscale/inferscale/sim/workload"
)

// cmdTrace describes a trace as the simulator would replay it: its
// summary, and the index of dispersion of its arrivals at each window
// (workload.Dispersion). The policy reads that index from its ticks'
// counts (15 s and 30 s) and carries it down to the TTFT objective; this
// says what it is at every scale, which the ticks cannot see below 15 s.
func cmdTrace(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("trace", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	c := &common{}
	c.registerTrace(fs)
	windows := fs.String("windows", "1s,2s,4s,15s,30s,1m", "windows the dispersion is read at, comma-separated durations")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: simulate trace -trace FILE|synthetic:demo [-start D] [-duration D] [-rate F] [-windows 1s,2s,...]\nprints the trace's summary and its arrivals' index of dispersion (1: Poisson) at each window")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseErr(err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("trace: unexpected argument %q", fs.Arg(0))
	}
	ws, err := parseWindows(*windows)
	if err != nil {
		return err
	}
	reqs, err := runner.Load(c.traceSpec())
	if err != nil {
		return err
	}
	st, err := workload.Stats(workload.FromRequests(reqs))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "trace %s: %s\n", c.trace, st)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "window\tdispersion\t")
	for _, win := range ws {
		z, ok := workload.Dispersion(reqs, win)
		val := "-"
		if ok {
			val = fmt.Sprintf("%.2f", z)
		}
		fmt.Fprintf(tw, "%v\t%s\t\n", win, val)
	}
	return tw.Flush()
}

// parseWindows reads a comma-separated list of positive durations.
func parseWindows(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, f := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("-windows %q: %q is not a positive duration", s, f)
		}
		out = append(out, d)
	}
	return out, nil
}
