package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/inferscale/inferscale/sim/bar"
	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/inferscale"
	"github.com/inferscale/inferscale/sim/runner"
)

// cmdBar measures a policy against issue 9's bar (package bar).
func cmdBar(ctx context.Context, args []string, log *slog.Logger) error {
	fs := flag.NewFlagSet("bar", flag.ContinueOnError)
	policy := fs.String("policy", "inferscale", "the policy under test: NAME[:k=v,...]")
	shared := fs.String("shared", "../shared", "directory holding traces/ (the reference traces)")
	quick := fs.Bool("quick", false, "seed 1 only (30 cells instead of 90)")
	stress := fs.Bool("stress", false, "add issue 14's cells: a cold start from 2 pods (demo ×4) and engines off the prior (Mooncake prefill ×4, demo decode ×2)")
	day := fs.Bool("day", false, "add issue 14's 24 h day: ServeGen m-large's day 2 at 40% of its rate, judged at ≤ 0.8 × the static fleet's GPU-hours (minutes a cell with a cold cache)")
	heldOut := fs.Bool("heldout", false, "add the held-out cells: trace windows and rates no other cell replays (ServeGen day 1 afternoon at 5 %, day 2 evening at 20 %, Azure code ×8, Mooncake ×2); -only heldout keeps them alone")
	seeds := fs.String("seeds", "1,2,3", "seeds, comma-separated (ignored with -quick)")
	speeds := fs.String("speeds", "1,2,0.5", "GPU speeds, comma-separated")
	only := fs.String("only", "", "keep the cells whose name contains one of these comma-separated substrings")
	jobs := fs.Int("j", 2, "cells evaluated at once")
	markdown := fs.Bool("markdown", false, "print the table as Markdown")
	cacheDir := fs.String("cache", bar.DefaultCacheDir(), "where oracle and static results are cached ('' = no cache)")
	clear := fs.Bool("clear-cache", false, "empty the cache first (a cold run)")
	mode := fs.String("mode", "fast", "inferscale mode: fast or faithful")
	bin := fs.String("bin", "bin", "directory of the built metric and evaluate binaries (faithful mode)")
	jsonOut := fs.String("json", "", "also write the cells' results to this file as JSON (simulate bar-diff compares two)")
	engineName := fs.String("engine", engine.DefaultEngine, "the fleet model every cell runs on (both pools of a P/D cell): "+strings.Join(engine.EngineNames(), ", ")+" (docs/simulator.md, \"Engines\")")
	logs := fs.String("decision-logs", "", "write each cell's inferscale decision log to a file named by the cell in this directory, created if need be (with -only, the cells asked about)")
	var pf barPDFlags
	pf.register(fs)
	if err := fs.Parse(args); err != nil {
		return parseErr(err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bar: unexpected arguments %q", fs.Args())
	}
	if err := pf.check(fs); err != nil {
		return err
	}
	base, err := engine.Named(*engineName)
	if err != nil {
		return fmt.Errorf("-engine: %w", err)
	}
	sp, err := runner.ParseSpec(*policy)
	if err != nil {
		return err
	}
	m, err := parseMode(*mode)
	if err != nil {
		return err
	}
	seedList := []int64{1}
	if !*quick {
		if seedList, err = parseInts(*seeds); err != nil {
			return fmt.Errorf("-seeds: %w", err)
		}
	}
	speedList, err := parseFloats(*speeds)
	if err != nil {
		return fmt.Errorf("-speeds: %w", err)
	}
	if *jobs < 1 {
		return fmt.Errorf("-j %d: want ≥ 1", *jobs)
	}
	if _, err := os.Stat(*shared); err != nil {
		return fmt.Errorf("-shared: %w", err)
	}
	opts := runner.Options{Mode: m, BinDir: *bin, CPA: inferscale.DefaultCPA(), DecisionLogs: *logs}
	if err := checkDecisionLogs(*logs); err != nil {
		return err
	}
	if pf.on {
		cases := bar.Filter(bar.PDMatrix(bar.PDWorkloads(*shared), seedList, speedList), *only)
		if len(cases) == 0 {
			return fmt.Errorf("-only %q keeps no P/D cell", *only)
		}
		r, err := pf.runner(sp, cases[0], base, opts, *jobs, *cacheDir, log)
		if err != nil {
			return err
		}
		return runBarPD(ctx, r, cases, barOutput{fs: fs, json: *jsonOut, markdown: *markdown, clear: *clear}, log)
	}
	workloads := bar.Workloads(*shared)
	if *stress {
		workloads = append(workloads, bar.Stress(*shared)...)
	}
	if *day {
		workloads = append(workloads, bar.Day(*shared)...)
	}
	if *heldOut {
		workloads = append(workloads, bar.HeldOut(*shared)...)
	}
	if *engineName != engine.DefaultEngine {
		workloads = bar.OnEngine(workloads, base)
	}
	cases := bar.Filter(bar.Matrix(workloads, seedList, speedList, bar.Startups()), *only)
	if len(cases) == 0 {
		return fmt.Errorf("-only %q keeps no cell", *only)
	}
	if *clear && *cacheDir != "" {
		if err := bar.Clear(*cacheDir); err != nil {
			return err
		}
	}
	r := &bar.Runner{Settings: bar.DefaultSettings(), Policy: sp, Jobs: *jobs, Log: log, Cache: &bar.Cache{Dir: *cacheDir}, Options: opts}
	report, err := createReport(*jsonOut)
	if err != nil {
		return err
	}
	start := time.Now()
	log.Info("bar matrix", "policy", sp.String(), "cells", len(cases), "jobs", *jobs, "cache", *cacheDir)
	rows, err := r.Run(ctx, cases)
	if err != nil {
		report.abandon()
		return err
	}
	fmt.Printf("bar matrix for %s: %d cells, TTFT SLO 2 s, target 99%%, wall %.0fs\n", sp, len(rows), time.Since(start).Seconds())
	if err := report.write(bar.Report{Policy: sp.String(), Args: cellFlags(fs), Rows: rows}); err != nil {
		return err
	}
	if *markdown {
		return bar.WriteMarkdown(os.Stdout, rows)
	}
	return bar.WriteTable(os.Stdout, rows)
}

// howFlag reports whether a flag changes only how the cells are evaluated
// or where the results go, not which cells there are or what they
// measure: a report leaves these out of its Args, so two runs from
// different places compare equal.
func howFlag(name string) bool {
	switch name {
	case "json", "markdown", "j", "cache", "clear-cache", "bin":
		return true
	}
	return false
}

// cellFlags are the flags set on the command line that define the cells,
// as -name=value in name order (not -policy, -pd-prefill or -pd-decode:
// the report has them).
func cellFlags(fs *flag.FlagSet) []string {
	out := []string{}
	fs.Visit(func(f *flag.Flag) {
		if !howFlag(f.Name) && f.Name != "policy" && f.Name != "pd-prefill" && f.Name != "pd-decode" {
			out = append(out, "-"+f.Name+"="+f.Value.String())
		}
	})
	return out
}

// reportFile is the -json file, created before the cells run so that a
// path that cannot be written fails at once; nil without -json.
type reportFile struct {
	path string
	f    *os.File
}

func createReport(path string) (*reportFile, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-json: %w", err)
	}
	return &reportFile{path: path, f: f}, nil
}

// write writes the report and closes the file.
func (r *reportFile) write(rep bar.Report) error {
	if r == nil {
		return nil
	}
	if err := bar.WriteReport(r.f, rep); err != nil {
		r.abandon()
		return err
	}
	if err := r.f.Close(); err != nil {
		return fmt.Errorf("-json: %w", err)
	}
	return nil
}

// abandon closes and removes the file: no half report is left behind.
func (r *reportFile) abandon() {
	if r == nil {
		return
	}
	r.f.Close()
	os.Remove(r.path)
}

func parseInts(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", f)
		}
		out = append(out, v)
	}
	return out, nil
}

func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0) || v > 1e6 {
			return nil, fmt.Errorf("%q is not a number > 0", f)
		}
		out = append(out, v)
	}
	return out, nil
}
