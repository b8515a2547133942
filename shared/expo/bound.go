package expo

import (
	"context"
	"fmt"
	"io"
)

// The most one exposition line may hold. expfmt's parsers check every
// label of a sample against all the labels before it (quadratic: one
// series with 16k labels took 15.5 s, 32k 65 s, a 7.9 MiB line over two
// minutes; issue 15, N6), so a line beyond these is refused before it is
// parsed. Real servers write lines of a few hundred bytes with under a
// dozen labels.
const (
	MaxLineBytes = 64 << 10
	MaxLabels    = 128
)

// bounded passes an exposition through to the parser while checking, in
// one linear pass, that no line is longer than MaxLineBytes and no sample
// carries more than MaxLabels labels, and that ctx has not ended (so that
// parsing stops at the scrape's deadline). The first violation is the
// error every later Read returns.
type bounded struct {
	ctx  context.Context
	r    io.Reader
	err  error
	line int // 1-based number of the current line
	// The current line: its length, whether it is a comment, whether the
	// scan is inside its braces or a quoted string (and after a
	// backslash), and how many labels it has so far.
	n                         int
	comment, braces, quoted   bool
	escaped, started, checked bool
	labels                    int
}

func newBounded(ctx context.Context, r io.Reader) *bounded {
	return &bounded{ctx: ctx, r: r, line: 1}
}

func (b *bounded) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if err := b.ctx.Err(); err != nil {
		b.err = fmt.Errorf("parsing stopped: %w", err)
		return 0, b.err
	}
	n, err := b.r.Read(p)
	for _, c := range p[:n] {
		if b.err = b.scan(c); b.err != nil {
			return 0, b.err
		}
	}
	return n, err
}

// scan moves the line state over one byte.
func (b *bounded) scan(c byte) error {
	if c == '\n' {
		*b = bounded{ctx: b.ctx, r: b.r, line: b.line + 1}
		return nil
	}
	b.n++
	if b.n > MaxLineBytes {
		return fmt.Errorf("line %d is longer than %d bytes", b.line, MaxLineBytes)
	}
	if !b.started && c != ' ' && c != '\t' {
		b.started, b.comment = true, c == '#'
	}
	switch {
	case b.comment:
	case b.quoted && b.escaped:
		b.escaped = false
	case b.quoted:
		b.escaped, b.quoted = c == '\\', c != '"'
	case c == '"':
		b.quoted = true
	case c == '{':
		b.braces = true
	case c == '}':
		b.braces = false
	case c == '=' && b.braces:
		b.labels++
		if b.labels > MaxLabels {
			return fmt.Errorf("line %d has more than %d labels", b.line, MaxLabels)
		}
	}
	return nil
}
