package workload

import (
	"fmt"
	"time"
)

// Summary describes a request stream (see Stats).
type Summary struct {
	Requests    int
	First, Last time.Duration // arrivals of the first and last request
	// MeanRate is requests per second over [First, Last] (0 when the span
	// is empty).
	MeanRate float64
	// PeakPerMinute is the most requests arriving within one calendar
	// minute of the trace, [k·1m, (k+1)·1m); PeakMinute is that k·1m.
	PeakPerMinute int
	PeakMinute    time.Duration
	// MeanInput and MeanOutput are mean token counts per request.
	MeanInput, MeanOutput float64
}

// Span is Last-First.
func (s Summary) Span() time.Duration { return s.Last - s.First }

// Stats drains src (without closing it) and summarises it. A
// decreasing arrival is an error: every Source must be in time order.
func Stats(src Source) (Summary, error) {
	var st Summary
	var in, out float64
	minute, inMinute := time.Duration(-1), 0
	for {
		r, ok, err := src.Next()
		if err != nil {
			return st, fmt.Errorf("stats after %d requests: %w", st.Requests, err)
		}
		if !ok {
			break
		}
		if st.Requests > 0 && r.Arrival < st.Last {
			return st, fmt.Errorf("stats: request %d arrives at %v, before the previous one at %v", st.Requests+1, r.Arrival, st.Last)
		}
		if st.Requests == 0 {
			st.First = r.Arrival
		}
		st.Requests++
		st.Last = r.Arrival
		in += float64(r.InputTokens)
		out += float64(r.OutputTokens)
		m := r.Arrival.Truncate(time.Minute)
		if m != minute {
			minute, inMinute = m, 0
		}
		inMinute++
		if inMinute > st.PeakPerMinute {
			st.PeakPerMinute, st.PeakMinute = inMinute, minute
		}
	}
	if st.Requests > 0 {
		st.MeanInput = in / float64(st.Requests)
		st.MeanOutput = out / float64(st.Requests)
	}
	if span := st.Span().Seconds(); span > 0 {
		st.MeanRate = float64(st.Requests) / span
	}
	return st, nil
}

// String is a one-line summary for logs and the CLI.
func (s Summary) String() string {
	return fmt.Sprintf("%d requests over %v (%.2f req/s), peak %d req/min at %v, mean tokens in %.0f out %.0f",
		s.Requests, s.Span().Round(time.Millisecond), s.MeanRate, s.PeakPerMinute, s.PeakMinute, s.MeanInput, s.MeanOutput)
}
