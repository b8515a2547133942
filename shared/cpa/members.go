package cpa

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// members calls fn with each key (unescaped) and raw value of a JSON
// object that is already known to be valid. Unlike gjson's ForEach it
// does not unescape string values: the caller unescapes the ones it keeps,
// once (a metric value is ~1.5 KB of escaped JSON, 64 or more per tick).
func members(obj string, fn func(key, raw string) bool) {
	i := strings.IndexByte(obj, '{') + 1
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] == '}' {
			return
		}
		if obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
		end := stringEnd(obj, i)
		key := obj[i:end]
		i = skipSpace(obj, end)
		i = skipSpace(obj, i+1) // the colon
		raw := obj[i:valueEnd(obj, i)]
		i += len(raw)
		if !fn(unquote(key), raw) {
			return
		}
	}
}

// valueEnd returns the index after the valid JSON value starting at s[i].
func valueEnd(s string, i int) int {
	switch s[i] {
	case '"':
		return stringEnd(s, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(s); {
			switch s[j] {
			case '"':
				j = stringEnd(s, j)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
			j++
		}
		return len(s)
	}
	j := i // a number, true, false or null
	for j < len(s) && !strings.ContainsRune(",}] \t\n\r", rune(s[j])) {
		j++
	}
	return j
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the closing quote of the string
// starting at s[i] == '"'.
func stringEnd(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '"':
			return j + 1
		case '\\':
			j++ // skip the escaped byte
		}
	}
	return len(s)
}

// unquote decodes a valid JSON string literal (quotes included) as
// encoding/json does: invalid UTF-8 and lone surrogates become U+FFFD. A
// literal without escapes is returned as a substring (no copy); otherwise
// the result is built once at its final size.
func unquote(lit string) string {
	s := lit[1 : len(lit)-1]
	if !strings.ContainsRune(s, '\\') && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			i++
			switch e := s[i]; e {
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r := hex4(s[i+1:])
				i += 5
				if utf16.IsSurrogate(r) {
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if dec := utf16.DecodeRune(r, hex4(s[i+2:])); dec != unicode.ReplacementChar {
							b.WriteRune(dec)
							i += 6
							continue
						}
					}
					r = unicode.ReplacementChar
				}
				b.WriteRune(r)
				continue
			default: // '"', '\\', '/'
				b.WriteByte(e)
			}
			i++
		case c < utf8.RuneSelf:
			j := i + 1
			for j < len(s) && s[j] != '\\' && s[j] < utf8.RuneSelf {
				j++
			}
			b.WriteString(s[i:j])
			i = j
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.WriteString(s[i : i+size])
			}
			i += size
		}
	}
	return b.String()
}

// hex4 reads the four hex digits of a \u escape (-1 if they are not).
func hex4(s string) rune {
	if len(s) < 4 {
		return -1
	}
	n, err := strconv.ParseUint(s[:4], 16, 32)
	if err != nil {
		return -1
	}
	return rune(n)
}
