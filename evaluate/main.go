// Command evaluate is the CPA evaluate stage of inferscale: it reads the
// CPA evaluate input (every pod's metric report and the scale target) on
// stdin, decides against the persisted state and prints one JSON object
// with targetReplicas and the reasons (package decide). Logs go to stderr.
package main

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/inferscale/inferscale/shared/decide"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithTimeout(context.Background(), decide.Timeout)
	err := decide.Run(ctx, decide.Process{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Lookup: os.LookupEnv, Log: log})
	cancel()
	if err != nil {
		log.Error(strings.ReplaceAll(err.Error(), "\n", "; "))
		os.Exit(1)
	}
}
