package expo

import (
	"bytes"
	"context"
	"mime"
	"strconv"
)

// Wanted is a set of family names to keep when parsing.
type Wanted map[string]bool

// keeps reports whether a sample or descriptor name belongs to a wanted
// family: the name itself, or a histogram/summary family's _bucket, _sum
// or _count series.
func (w Wanted) keeps(name []byte) bool {
	if w[string(name)] {
		return true
	}
	for _, suf := range [...]string{"_bucket", "_sum", "_count"} {
		if bytes.HasSuffix(name, []byte(suf)) && w[string(name[:len(name)-len(suf)])] {
			return true
		}
	}
	return false
}

// ParseWanted parses only the families in want. In the text format it
// drops every other line before handing the rest to expfmt, which makes
// a full vLLM page several times cheaper to read; OpenMetrics bodies are
// parsed whole and then trimmed. A nil want keeps everything. Parsing
// stops with an error when ctx ends.
func ParseWanted(ctx context.Context, body []byte, contentType string, want Wanted) (Families, error) {
	if want == nil {
		return parse(ctx, bytes.NewReader(body), contentType)
	}
	if mt, _, _ := mime.ParseMediaType(contentType); mt == "application/openmetrics-text" {
		fams, err := parse(ctx, bytes.NewReader(body), contentType)
		if err != nil {
			return nil, err
		}
		for n := range fams {
			if !want.keeps([]byte(n)) && !want[n+"_total"] {
				delete(fams, n)
			}
		}
		return fams, nil
	}
	fams, err := parse(ctx, bytes.NewReader(filterText(body, want)), contentType)
	if err != nil {
		return nil, err
	}
	// The pre-filter keeps lines whose name it cannot read (so that garbage
	// still fails the parse); what they declared is trimmed here.
	for n := range fams {
		if !want.keeps([]byte(n)) {
			delete(fams, n)
		}
	}
	return fams, nil
}

// filterText keeps the lines of wanted families. Comment lines are kept
// when they are HELP or TYPE lines of a wanted family; other comments and
// blank lines are dropped. Lines are passed through byte for byte, so a
// malformed kept line still fails the parse.
func filterText(body []byte, want Wanted) []byte {
	out := make([]byte, 0, len(body)/4)
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i+1], body[i+1:]
		} else {
			body = nil
		}
		name := lineName(line)
		if name == nil {
			// Not a sample nor a HELP/TYPE line: keep unknown non-comment
			// content so garbage still fails the parse.
			if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
				out = append(out, line...)
			}
			continue
		}
		if want.keeps(name) {
			out = append(out, line...)
			if line[len(line)-1] != '\n' {
				out = append(out, '\n')
			}
		}
	}
	return out
}

// lineName returns the metric name of a sample line or of a "# HELP" /
// "# TYPE" line, or nil. Names come bare (name{...} v), quoted
// ("name"{...} v) or as the first item in braces ({"name", l="x"} v,
// {name} v), the forms the text parser accepts.
func lineName(line []byte) []byte {
	l := bytes.TrimLeft(line, " \t")
	if len(l) == 0 {
		return nil
	}
	if l[0] == '#' {
		rest := bytes.TrimLeft(l[1:], " \t")
		switch {
		case bytes.HasPrefix(rest, []byte("HELP ")), bytes.HasPrefix(rest, []byte("TYPE ")):
			rest = bytes.TrimLeft(rest[5:], " \t")
		default:
			return nil
		}
		name, _ := nameOrQuoted(rest)
		return name
	}
	if l[0] != '{' {
		name, _ := nameOrQuoted(l)
		return name
	}
	// {name, ...} or {"name", ...}: a name only when no '=' follows it.
	name, rest := nameOrQuoted(bytes.TrimLeft(l[1:], " \t"))
	rest = bytes.TrimLeft(rest, " \t")
	if name == nil || len(rest) == 0 || (rest[0] != ',' && rest[0] != '}') {
		return nil
	}
	return name
}

// nameOrQuoted reads a bare name token or a quoted name (unescaped) at the
// start of b and returns it with what follows; nil when there is neither.
func nameOrQuoted(b []byte) (name, rest []byte) {
	if len(b) == 0 || b[0] != '"' {
		n := nameToken(b)
		return n, b[len(n):]
	}
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			u, err := strconv.Unquote(string(b[:i+1]))
			if err != nil || u == "" {
				return nil, b
			}
			return []byte(u), b[i+1:]
		}
	}
	return nil, b
}

func nameToken(b []byte) []byte {
	for i, c := range b {
		if !(c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			if i == 0 {
				return nil
			}
			return b[:i]
		}
	}
	if len(b) == 0 {
		return nil
	}
	return b
}
