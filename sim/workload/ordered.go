package workload

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// ErrMalformed marks input that does not follow the trace's format. Errors
// wrapping it start with "path:line:".
var ErrMalformed = errors.New("malformed trace")

// DefaultReorderWindow is how many rows a file loader holds back to put
// slightly out-of-order timestamps back in order. A row earlier than a
// request already handed out (that is, out of place by more than the
// window) is an error naming its file and line.
const DefaultReorderWindow = 1024

// rowFunc yields a trace's rows in file order: the request (Arrival
// absolute in the file's own time base), its line number, ok=false at EOF.
type rowFunc func() (req Request, line int, ok bool, err error)

// orderedSource turns a row reader into a Source: it sorts within a bounded
// window, optionally rebases arrivals on the earliest one, and owns the
// file's closers.
type orderedSource struct {
	path    string
	rows    rowFunc
	closers []io.Closer
	window  int
	rebase  bool

	buf     []Request
	head    int
	eof     bool
	emitted bool
	last    time.Duration // last Arrival handed out, in file time
	base    time.Duration
	err     error
	closed  bool
}

func newOrderedSource(path string, rows rowFunc, rebase bool, closers ...io.Closer) *orderedSource {
	return &orderedSource{path: path, rows: rows, closers: closers, window: DefaultReorderWindow, rebase: rebase}
}

func (s *orderedSource) Next() (Request, bool, error) {
	if s.err != nil {
		return Request{}, false, s.err
	}
	for !s.eof && len(s.buf)-s.head <= s.window {
		req, line, ok, err := s.rows()
		if err != nil {
			s.err = err
			return Request{}, false, err
		}
		if !ok {
			s.eof = true
			break
		}
		if s.emitted && req.Arrival < s.last {
			s.err = fmt.Errorf("%s:%d: timestamp %v is earlier than one already replayed (%v), out of order by more than %d rows: %w",
				s.path, line, req.Arrival-s.base, s.last-s.base, s.window, ErrMalformed)
			return Request{}, false, s.err
		}
		s.push(req)
	}
	if s.head == len(s.buf) {
		return Request{}, false, nil
	}
	req := s.buf[s.head]
	s.head++
	if s.head > 4096 && s.head*2 > len(s.buf) {
		n := copy(s.buf, s.buf[s.head:])
		s.buf = s.buf[:n]
		s.head = 0
	}
	if !s.emitted && s.rebase {
		s.base = req.Arrival
	}
	s.emitted = true
	s.last = req.Arrival
	req.Arrival -= s.base
	return req, true, nil
}

// push inserts keeping buf[head:] sorted by Arrival; in-order input costs O(1).
func (s *orderedSource) push(req Request) {
	s.buf = append(s.buf, req)
	for i := len(s.buf) - 1; i > s.head && s.buf[i-1].Arrival > req.Arrival; i-- {
		s.buf[i], s.buf[i-1] = s.buf[i-1], s.buf[i]
	}
}

func (s *orderedSource) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		if err := s.closers[i].Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// openInput opens path for reading, transparently gunzipping "*.gz" files
// (but not "*.tar.gz", which is an archive). The closers must be closed in
// reverse order.
func openInput(path string) (io.Reader, []io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open trace: %w", err)
	}
	if strings.HasSuffix(path, ".gz") && !strings.HasSuffix(path, ".tar.gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			_ = f.Close()
			return nil, nil, fmt.Errorf("%s: gunzip: %w", path, err)
		}
		return zr, []io.Closer{f, zr}, nil
	}
	return f, []io.Closer{f}, nil
}

func closeAll(closers []io.Closer) {
	for i := len(closers) - 1; i >= 0; i-- {
		_ = closers[i].Close()
	}
}
