// Command exporter is inferscale's Prometheus exporter: a long-running
// sidecar of the CPA pod that reads the state evaluate persists (its
// ConfigMap or file, read-only) on every scrape and serves the
// autoscaler's own series on /metrics (package export). evaluate runs as
// a short process every tick and cannot serve them itself. SIGTERM or
// SIGINT stops it; bad settings exit 1, a bad argument exits 2.
package main

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/inferscale/inferscale/shared/cli"
	"github.com/inferscale/inferscale/shared/export"
)

func main() {
	listen := export.DefaultListen
	command := cli.Command{Name: "exporter", Synopsis: "[-listen host:port]", Usage: `Serves the autoscaler's own Prometheus series on /metrics: the replicas the last saved tick saw and
decided, the step that decided, policy v2's forecast, ceiling and headroom, alerts by reason, ticks,
the age of the last saved tick and the intervals missed. It reads the state evaluate persists
(stateBackend, stateConfigMap or stateFile, as evaluate does) on every scrape, read-only; a state it
cannot read is inferscale_state_up 0. docs/exporter.md lists the series.`,
		Flags: func(fs *flag.FlagSet) { fs.StringVar(&listen, "listen", listen, "the address to serve /metrics on") }}
	if code, done := command.Parse(os.Args[1:], os.Stdout, os.Stderr, nil); done {
		os.Exit(code)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("version", cli.Version())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	err := export.Run(ctx, export.Process{Listen: listen, Lookup: os.LookupEnv, Version: cli.Version(), Log: log})
	stop()
	if err != nil {
		log.Error(strings.ReplaceAll(err.Error(), "\n", "; "))
		os.Exit(1)
	}
}
