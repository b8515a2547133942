// Command evaluate is the CPA evaluate stage of inferscale: it reads the
// CPA evaluate input (every pod's metric report and the scale target) on
// stdin, decides against the persisted state and prints one JSON object
// with targetReplicas and the reasons (package decide). Logs go to stderr;
// a bad argument or a terminal on stdin exits 2.
package main

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/inferscale/inferscale/shared/cli"
	"github.com/inferscale/inferscale/shared/decide"
)

var command = cli.Command{Name: "evaluate", Usage: `CPA's evaluate stage: reads the CPA evaluate input (every pod's metric report and the scale
target) on stdin, decides against the persisted state (stateFile or stateConfigMap) and prints one
JSON object with targetReplicas, the reasons and the decision on stdout, and one decision-log line
on stderr. Bad input or settings exit 1 with nothing on stdout and the state untouched.`}

func main() {
	if code, done := command.Parse(os.Args[1:], os.Stdout, os.Stderr, cli.StdinIsTerminal); done {
		os.Exit(code)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("version", cli.Version())
	ctx, cancel := context.WithTimeout(context.Background(), decide.Timeout)
	err := decide.Run(ctx, decide.Process{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Lookup: os.LookupEnv,
		Environ: os.Environ, Version: cli.Version(), Log: log})
	cancel()
	if err != nil {
		log.Error(strings.ReplaceAll(err.Error(), "\n", "; "))
		os.Exit(1)
	}
}
