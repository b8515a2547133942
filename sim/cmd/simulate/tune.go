package main

import (
	"context"
	"log/slog"
)

func cmdTune(ctx context.Context, args []string, log *slog.Logger) error { return errUsage }
