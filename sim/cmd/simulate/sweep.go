package main

import (
	"context"
	"log/slog"
)

func cmdSweep(ctx context.Context, args []string, log *slog.Logger) error { return errUsage }
