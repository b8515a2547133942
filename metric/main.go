// Command metric is inferscale's CPA metric stage: it reads the CPA metric
// input (a pod in per-pod mode, the scale target in per-resource mode) on
// stdin, reads the inference servers' signals, GPU activity and pod
// lifecycle, and prints one signal.Report JSON line (package gather). Read
// failures are recorded in the output (exit 0); only malformed stdin or
// configuration exits 1. Logs go to stderr.
package main

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/inferscale/inferscale/shared/gather"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	err := gather.Run(context.Background(), gather.Process{Stdin: os.Stdin, Stdout: os.Stdout, Lookup: os.LookupEnv, Log: log})
	if err != nil {
		log.Error(strings.ReplaceAll(err.Error(), "\n", "; "))
		os.Exit(1)
	}
}
