// Package workload produces the request streams the simulator replays:
// loaders for public traces (Azure LLM 2023, Mooncake, ServeGen, BurstGPT)
// read as their upstream files are, a synthetic generator that needs no
// files, and time/rate scaling of any stream. Everything streams: memory
// stays bounded whatever the trace length.
package workload

import (
	"fmt"
	"time"
)

// Request is one inference request of a trace.
type Request struct {
	// Arrival is the offset from the start of the trace.
	Arrival      time.Duration
	InputTokens  int
	OutputTokens int
	// Prefilled marks a request whose prompt's KV cache was computed
	// elsewhere and arrives with it (the decode leg of a prefill/decode
	// pair): the serving replica allocates the prompt's KV on admission and
	// computes only its last prompt token, as vLLM does on a full external
	// KV hit, instead of prefilling the whole prompt.
	Prefilled bool
}

// Source yields requests in non-decreasing Arrival order. Next returns
// ok=false at the end of the stream; an error stops the replay.
type Source interface {
	Next() (req Request, ok bool, err error)
	// Close releases files; safe to call more than once.
	Close() error
}

// All reads src to its end and closes it. On an error it returns the
// requests read before it with the error.
func All(src Source) ([]Request, error) {
	defer src.Close()
	var out []Request
	for {
		r, ok, err := src.Next()
		if err != nil || !ok {
			return out, err
		}
		out = append(out, r)
	}
}

// FromRequests replays reqs as a Source (tests, fixed scenarios). Requests
// out of Arrival order make Next fail.
func FromRequests(reqs []Request) Source { return &requestSlice{reqs: reqs} }

type requestSlice struct {
	reqs []Request
	i    int
}

func (s *requestSlice) Next() (Request, bool, error) {
	if s.i >= len(s.reqs) {
		return Request{}, false, nil
	}
	r := s.reqs[s.i]
	if s.i > 0 && r.Arrival < s.reqs[s.i-1].Arrival {
		return Request{}, false, fmt.Errorf("workload: request %d arrives at %v, before request %d at %v", s.i, r.Arrival, s.i-1, s.reqs[s.i-1].Arrival)
	}
	s.i++
	return r, true, nil
}

func (s *requestSlice) Close() error { return nil }
