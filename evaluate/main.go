// Command evaluate is the CPA evaluate stage of inferscale: it reads the
// JSON CPA pipes in (every pod's metric report and the scale target), runs
// the policy against the persisted state and prints one JSON object with
// targetReplicas and the reasons. Logs go to stderr.
package main

import (
	"context"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"

	"github.com/inferscale/inferscale/shared/evaluator"
)

func main() {
	// A tick is one short process: collect garbage only near a memory
	// ceiling instead of on the default pacing (halves the CPU per run).
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(64 << 20)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithTimeout(context.Background(), evaluator.Timeout)
	err := evaluator.Run(ctx, os.Stdin, os.Stdout, os.LookupEnv, openStore, log)
	cancel()
	if err != nil {
		log.Error(strings.ReplaceAll(err.Error(), "\n", "; "))
		os.Exit(1)
	}
}
