package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/inferscale/inferscale/sim/bar"
	"github.com/inferscale/inferscale/sim/pd"
	"github.com/inferscale/inferscale/sim/runner"
)

// barPDFlags are simulate bar's P/D cells' flags.
type barPDFlags struct {
	on              bool
	prefill, decode string
	peers           bool
}

func (f *barPDFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.on, "pd", false, "run the P/D cells only (prefill and decode pools: Mooncake's conversation hour and the demo with outputs ×4) instead of the unified ones")
	fs.StringVar(&f.prefill, "pd-prefill", "inferscale:role=prefill", "with -pd: the prefill pool's policy under test")
	fs.StringVar(&f.decode, "pd-decode", "inferscale:role=decode", "with -pd: the decode pool's policy under test (inferscale without itlSLO gets 50 ms)")
	fs.BoolVar(&f.peers, "pd-peers", true, "with -pd: replay the peer pairs (keda-queue and dynamo in both pools) and judge the policy pair against those of its attainment")
}

// check rejects the flags that do not go with -pd, or need it.
func (f *barPDFlags) check(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if !f.on {
		for _, name := range []string{"pd-prefill", "pd-decode", "pd-peers"} {
			if set[name] {
				return fmt.Errorf("-%s needs -pd (the P/D cells)", name)
			}
		}
		return nil
	}
	for _, c := range []struct{ name, why string }{
		{"policy", "the P/D cells' policies are -pd-prefill and -pd-decode"},
		{"stress", "-stress adds unified cells, and -pd runs the P/D cells only"},
		{"day", "-day adds a unified cell, and -pd runs the P/D cells only"},
	} {
		if set[c.name] {
			return fmt.Errorf("-pd with -%s: %s", c.name, c.why)
		}
	}
	return nil
}

// runner reads and checks the policy pair against the first cell's pools
// (every cell's differ only in GPU speed and seed) and builds the runner.
func (f *barPDFlags) runner(first bar.PDCase, opts runner.Options, jobs int, cacheDir string, log *slog.Logger) (*bar.PDRunner, error) {
	s := bar.DefaultPDSettings()
	pools := s.Pools(first, opts)
	pre, err := poolSpecs("prefill", f.prefill, pools.Prefill, opts)
	if err != nil {
		return nil, fmt.Errorf("-pd-prefill: %w", err)
	}
	dec, err := poolSpecs("decode", pd.WithITL(f.decode, s.ITLSLO), pools.Decode, opts)
	if err != nil {
		return nil, fmt.Errorf("-pd-decode: %w", err)
	}
	if len(pre) != 1 || len(dec) != 1 {
		return nil, fmt.Errorf("-pd-prefill %q, -pd-decode %q: want one policy each", f.prefill, f.decode)
	}
	r := &bar.PDRunner{Settings: s, Policy: bar.PDPair{Prefill: pre[0], Decode: dec[0]}, Options: opts, Jobs: jobs, Log: log,
		Cache: &bar.Cache{Dir: cacheDir}}
	if f.peers {
		r.Peers = bar.DefaultPDPeers()
	}
	return r, nil
}

// barOutput is where a bar run's results go.
type barOutput struct {
	fs       *flag.FlagSet
	json     string
	markdown bool
	clear    bool // empty the cache first
}

// runBarPD evaluates the P/D cells and prints them.
func runBarPD(ctx context.Context, r *bar.PDRunner, cases []bar.PDCase, out barOutput, log *slog.Logger) error {
	if out.clear && r.Cache.Dir != "" {
		if err := bar.Clear(r.Cache.Dir); err != nil {
			return err
		}
	}
	report, err := createReport(out.json)
	if err != nil {
		return err
	}
	start := time.Now()
	log.Info("bar P/D cells", "pair", r.Policy.String(), "cells", len(cases), "jobs", r.Jobs, "cache", r.Cache.Dir)
	rows, err := r.Run(ctx, cases)
	if err != nil {
		report.abandon()
		return err
	}
	s := r.Settings
	fmt.Printf("bar P/D cells for %s: %d cells, user TTFT SLO %g s (prefill leg %g s), ITL SLO %g s, target %g%%, wall %.0fs\n",
		r.Policy, len(rows), s.SLO, s.PrefillSLO, s.ITLSLO, 100*s.Target, time.Since(start).Seconds())
	if err := report.write(bar.Report{PDPolicy: r.Policy.String(), Args: cellFlags(out.fs), PDRows: rows}); err != nil {
		return err
	}
	if out.markdown {
		return bar.WritePDMarkdown(os.Stdout, rows)
	}
	return bar.WritePDTable(os.Stdout, rows)
}
