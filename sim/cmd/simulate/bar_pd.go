package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"time"

	"github.com/inferscale/inferscale/sim/bar"
	"github.com/inferscale/inferscale/sim/engine"
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
	fs.StringVar(&f.prefill, "pd-prefill", "", "with -pd: the prefill pool's policy under test (default: -policy, inferscale with role=prefill)")
	fs.StringVar(&f.decode, "pd-decode", "", "with -pd: the decode pool's policy under test (default: -policy, inferscale with role=decode; inferscale without itlSLO gets 50 ms)")
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
	if set["policy"] && (set["pd-prefill"] || set["pd-decode"]) {
		return errors.New("-pd with -policy and -pd-prefill or -pd-decode: name one policy for both pools (-policy) or each pool's (-pd-prefill, -pd-decode)")
	}
	for _, c := range []struct{ name, why string }{
		{"stress", "-stress adds unified cells, and -pd runs the P/D cells only"},
		{"day", "-day adds a unified cell, and -pd runs the P/D cells only"},
		{"heldout", "-heldout adds unified cells, and -pd runs the P/D cells only"},
	} {
		if set[c.name] {
			return fmt.Errorf("-pd with -%s: %s", c.name, c.why)
		}
	}
	return nil
}

// runner reads and checks the policy pair against the first cell's pools
// (every cell's differ only in GPU speed and seed) and builds the runner,
// whose pools run on base.
// A pool without its own flag takes policy, inferscale with the pool's
// role.
func (f *barPDFlags) runner(policy runner.Spec, first bar.PDCase, base engine.Model, opts runner.Options, jobs int, cacheDir string, log *slog.Logger) (*bar.PDRunner, error) {
	s := bar.DefaultPDSettings()
	s.Model = base
	pools := s.Pools(first, opts)
	preList, decList := orRole(f.prefill, policy, "prefill"), pd.WithITL(orRole(f.decode, policy, "decode"), s.ITLSLO)
	pre, err := poolSpecs(poolFlag(f.prefill, "pd-prefill"), "prefill", preList, pools.Prefill, opts)
	if err != nil {
		return nil, err
	}
	dec, err := poolSpecs(poolFlag(f.decode, "pd-decode"), "decode", decList, pools.Decode, opts)
	if err != nil {
		return nil, err
	}
	if len(pre) != 1 || len(dec) != 1 {
		return nil, fmt.Errorf("-pd: prefill pool %q, decode pool %q: want one policy each", preList, decList)
	}
	r := &bar.PDRunner{Settings: s, Policy: bar.PDPair{Prefill: pre[0], Decode: dec[0]}, Options: opts, Jobs: jobs, Log: log,
		Cache: &bar.Cache{Dir: cacheDir}}
	if f.peers {
		r.Peers = bar.DefaultPDPeers()
	}
	return r, nil
}

// poolFlag names the flag a pool's policy came from.
func poolFlag(own, name string) string {
	if own != "" {
		return name
	}
	return "policy"
}

// orRole is a pool's policy: its own flag's value, else policy, with
// role=<role> where policy is inferscale without a role.
func orRole(own string, policy runner.Spec, role string) string {
	if own != "" {
		return own
	}
	sp := runner.Spec{Name: policy.Name, Params: maps.Clone(policy.Params)}
	if sp.Params == nil {
		sp.Params = map[string]string{}
	}
	if sp.Name == "inferscale" && sp.Params["role"] == "" {
		sp.Params["role"] = role
	}
	return sp.String()
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
