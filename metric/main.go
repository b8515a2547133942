// Command metric is inferscale's CPA metric stage: it reads the CPA metric
// input (a pod in per-pod mode, the scale target in per-resource mode) on
// stdin, reads the inference servers' signals, GPU activity and pod
// lifecycle, and prints one signal.Report JSON line (package gather). Read
// failures are recorded in the output (exit 0); only malformed stdin or
// configuration exits 1; a bad argument or a terminal on stdin exits 2.
// Logs go to stderr.
package main

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/inferscale/inferscale/shared/cli"
	"github.com/inferscale/inferscale/shared/gather"
)

var command = cli.Command{Name: "metric", Usage: `CPA's metric stage: reads the CPA metric input (a pod in per-pod mode, the scale target in
per-resource mode) on stdin and prints one JSON report of the inference servers' signals on stdout.
A pod that cannot be read is recorded in the report (exit 0); malformed input or settings exit 1.`}

func main() {
	if code, done := command.Parse(os.Args[1:], os.Stdout, os.Stderr, cli.StdinIsTerminal); done {
		os.Exit(code)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("version", cli.Version())
	err := gather.Run(context.Background(), gather.Process{Stdin: os.Stdin, Stdout: os.Stdout, Lookup: os.LookupEnv, Log: log})
	if err != nil {
		log.Error(strings.ReplaceAll(err.Error(), "\n", "; "))
		os.Exit(1)
	}
}
