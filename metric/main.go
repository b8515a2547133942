// Command metric is inferscale's CPA metric stage. It reads the CPA metric
// stdin (a pod in per-pod mode, the scale target in per-resource mode),
// reads the inference servers' signals, GPU activity and pod lifecycle,
// and prints one signal.Report JSON line. Read failures are recorded in
// the output (exit 0); only malformed stdin or configuration exits 1.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	out, err := run(context.Background(), os.Stdin, os.LookupEnv, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "metric: "+strings.ReplaceAll(err.Error(), "\n", "; "))
		os.Exit(1)
	}
	if _, err := os.Stdout.Write(out); err != nil {
		fmt.Fprintln(os.Stderr, "metric: writing stdout: "+err.Error())
		os.Exit(1)
	}
}
