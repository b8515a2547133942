package workload

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// burstGPTHeader is the first line of the BurstGPT release CSVs
// (github.com/HPMLL/BurstGPT, e.g. BurstGPT_1.csv).
var burstGPTHeader = []string{"Timestamp", "Model", "Request tokens", "Response tokens", "Total tokens", "Log Type"}

// BurstGPTOptions filter a BurstGPT trace.
type BurstGPTOptions struct {
	// Models keeps only rows whose Model is one of these ("ChatGPT",
	// "GPT-4"; case-insensitive). Empty keeps all.
	Models []string
	// LogTypes keeps only rows whose Log Type is one of these
	// ("Conversation log", "API log"; case-insensitive). Empty keeps all.
	LogTypes []string
	// IncludeFailed keeps rows with 0 response tokens. BurstGPT logs
	// failed requests that way; by default they are skipped, since they
	// never produced output and their cost on a server is unknown.
	IncludeFailed bool
}

// OpenBurstGPT streams a BurstGPT CSV. Timestamp is seconds from the start
// of the collection and is used as the Arrival as it is (not rebased), so
// a filtered trace keeps its place in time. Rows out of order by up to
// DefaultReorderWindow rows are sorted back; further ones are an error.
func OpenBurstGPT(path string, opts BurstGPTOptions) (Source, error) {
	in, closers, err := openInput(path)
	if err != nil {
		return nil, err
	}
	rows, err := burstGPTRows(path, in, opts)
	if err != nil {
		closeAll(closers)
		return nil, err
	}
	return newOrderedSource(path, rows, false, closers...), nil
}

func matchesAny(v string, set []string) bool {
	if len(set) == 0 {
		return true
	}
	v = strings.TrimSpace(v)
	for _, s := range set {
		if strings.EqualFold(v, strings.TrimSpace(s)) {
			return true
		}
	}
	return false
}

func burstGPTRows(path string, in io.Reader, opts BurstGPTOptions) (rowFunc, error) {
	r := newCSVReader(in, len(burstGPTHeader))
	if err := readHeader(path, r, burstGPTHeader); err != nil {
		return nil, err
	}
	return func() (Request, int, bool, error) {
		for {
			rec, err := r.Read()
			if errors.Is(err, io.EOF) {
				return Request{}, 0, false, nil
			}
			if err != nil {
				return Request{}, 0, false, csvError(path, err)
			}
			line, _ := r.FieldPos(0)
			sec, err := strconv.ParseFloat(strings.TrimSpace(rec[0]), 64)
			if err != nil || sec < 0 || math.IsNaN(sec) || sec > maxTraceSeconds {
				return Request{}, line, false, fmt.Errorf("%s:%d: Timestamp %q is not a number of seconds in [0, %g]: %w", path, line, rec[0], float64(maxTraceSeconds), ErrMalformed)
			}
			in, err := parseTokens(rec[2])
			if err != nil {
				return Request{}, line, false, fmt.Errorf("%s:%d: Request tokens: %w: %w", path, line, err, ErrMalformed)
			}
			out, err := parseTokens(rec[3])
			if err != nil {
				return Request{}, line, false, fmt.Errorf("%s:%d: Response tokens: %w: %w", path, line, err, ErrMalformed)
			}
			if !matchesAny(rec[1], opts.Models) || !matchesAny(rec[5], opts.LogTypes) {
				continue
			}
			if out == 0 && !opts.IncludeFailed {
				continue
			}
			return Request{Arrival: time.Duration(sec * float64(time.Second)), InputTokens: in, OutputTokens: out}, line, true, nil
		}
	}, nil
}

// maxTraceSeconds bounds trace offsets (about 10 years) so they fit a
// time.Duration.
const maxTraceSeconds = 10 * 366 * 86400
