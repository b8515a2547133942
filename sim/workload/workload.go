// Package workload produces the request streams the simulator replays:
// loaders for public traces (Azure LLM 2023, Mooncake, ServeGen, BurstGPT)
// read as their upstream files are, a synthetic generator that needs no
// files, and time/rate scaling of any stream. Everything streams: memory
// stays bounded whatever the trace length.
package workload

import "time"

// Request is one inference request of a trace.
type Request struct {
	// Arrival is the offset from the start of the trace.
	Arrival      time.Duration
	InputTokens  int
	OutputTokens int
}

// Source yields requests in non-decreasing Arrival order. Next returns
// ok=false at the end of the stream; an error stops the replay.
type Source interface {
	Next() (req Request, ok bool, err error)
	// Close releases files; safe to call more than once.
	Close() error
}
