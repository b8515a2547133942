// Package jsonread holds the typed field readers shared by the project's
// reflection-free JSON decoders (signal reports, evaluator state, server
// presets): a Reader takes values out of gjson results with the semantics
// of encoding/json (null leaves a value unchanged, number literals are
// parsed with strconv, an empty array gives an empty non-nil slice) and
// keeps the first error, prefixed with the path of keys and indexes at
// which it happened ("pods: [1]: ttft: want a number, got \"x\"").
package jsonread

import (
	"fmt"
	"strconv"
	"time"

	"github.com/tidwall/gjson"
)

// Reader reads typed values out of gjson results, keeping the first error.
// Once it holds an error, Object and Array read nothing more; the decoders
// stop iterating as soon as Err is set.
type Reader struct{ err error }

// Err is the first error met, with its path, or nil.
func (r *Reader) Err() error { return r.err }

// Keep records err unless an earlier error is already held.
func (r *Reader) Keep(err error) {
	if err != nil && r.err == nil {
		r.err = err
	}
}

// Fail records "want WANT, got RAW" (RAW cut at 40 bytes).
func (r *Reader) Fail(x gjson.Result, want string) {
	if r.err == nil {
		r.err = fmt.Errorf("want %s, got %.40s", want, x.Raw)
	}
}

// Unknown records an unknown object key (for decoders that disallow them).
func (r *Reader) Unknown(k string) {
	if r.err == nil {
		r.err = fmt.Errorf("unknown field %q", k)
	}
}

// Object calls field for each key of an object, stopping at the first
// error, which is then prefixed with the key. Null is no object and no
// error, as with encoding/json; anything else is "want an object".
func (r *Reader) Object(x gjson.Result, field func(k string, v gjson.Result)) {
	if r.err != nil || x.Type == gjson.Null {
		return
	}
	if !x.IsObject() {
		r.Fail(x, "an object")
		return
	}
	x.ForEach(func(k, v gjson.Result) bool {
		field(k.Str, v)
		if r.err != nil {
			r.err = fmt.Errorf("%s: %w", k.Str, r.err)
		}
		return r.err == nil
	})
}

// Array calls elem for each element, stopping at the first error, which is
// then prefixed with the index ("[2]: "). Null is nothing; anything else
// that is not an array is "want an array". empty, when not nil, runs for a
// present empty array (encoding/json gives an empty, non-nil slice there).
func (r *Reader) Array(x gjson.Result, elem func(gjson.Result), empty func()) {
	if r.err != nil || x.Type == gjson.Null {
		return
	}
	if !x.IsArray() {
		r.Fail(x, "an array")
		return
	}
	i := 0
	x.ForEach(func(_, v gjson.Result) bool {
		elem(v)
		if r.err != nil {
			r.err = fmt.Errorf("[%d]: %w", i, r.err)
		}
		i++
		return r.err == nil
	})
	if i == 0 && empty != nil {
		empty()
	}
}

// Slice reads an array into a new slice, elem decoding each element into
// its zero value: nil for null, an empty non-nil slice for [], "want an
// array" for anything else (as encoding/json fills a slice field).
func Slice[T any](r *Reader, x gjson.Result, elem func(e gjson.Result, dst *T)) []T {
	var out []T
	r.Array(x, func(e gjson.Result) {
		var zero T
		out = append(out, zero)
		elem(e, &out[len(out)-1]) // in place: a local passed to elem would escape
	}, func() { out = []T{} })
	return out
}

// String stores a string value in dst (null: dst unchanged).
func (r *Reader) String(x gjson.Result, dst *string) {
	switch x.Type {
	case gjson.String:
		*dst = x.Str
	case gjson.Null:
	default:
		r.Fail(x, "a string")
	}
}

// Strings reads an array of strings: nil for null, an empty non-nil slice
// for [], "want an array of strings" for anything else that is not an
// array; an element's error is prefixed with its index.
func (r *Reader) Strings(x gjson.Result) []string {
	if x.Type != gjson.Null && !x.IsArray() {
		r.Fail(x, "an array of strings")
		return nil
	}
	return Slice(r, x, func(e gjson.Result, s *string) { r.String(e, s) })
}

// Bool stores true or false in dst (null: dst unchanged).
func (r *Reader) Bool(x gjson.Result, dst *bool) {
	switch x.Type {
	case gjson.True, gjson.False:
		*dst = x.Type == gjson.True
	case gjson.Null:
	default:
		r.Fail(x, "true or false")
	}
}

// number parses a number literal as encoding/json does (strconv on the
// text, so an out-of-range literal is an error rather than an infinity).
func (r *Reader) number(x gjson.Result) (float64, bool) {
	if x.Type != gjson.Number {
		r.Fail(x, "a number")
		return 0, false
	}
	f, err := strconv.ParseFloat(x.Raw, 64)
	if err != nil {
		r.Fail(x, "a number in float64 range")
		return 0, false
	}
	return f, true
}

// Float stores a number in dst (null: dst unchanged).
func (r *Reader) Float(x gjson.Result, dst *float64) {
	if x.Type == gjson.Null {
		return
	}
	if f, ok := r.number(x); ok {
		*dst = f
	}
}

// FloatPtr reads a number into a new float64 (null: nil).
func (r *Reader) FloatPtr(x gjson.Result) *float64 {
	if x.Type == gjson.Null {
		return nil
	}
	f, ok := r.number(x)
	if !ok {
		return nil
	}
	return &f
}

// Int stores an integer literal in dst (null: dst unchanged); a fraction,
// an exponent or an out-of-range literal is "want an integer".
func (r *Reader) Int(x gjson.Result, dst *int) {
	if x.Type == gjson.Null {
		return
	}
	if x.Type != gjson.Number {
		r.Fail(x, "an integer")
		return
	}
	n, err := strconv.ParseInt(x.Raw, 10, 0)
	if err != nil {
		r.Fail(x, "an integer")
		return
	}
	*dst = int(n)
}

// IntPtr reads an integer into a new int (null: nil).
func (r *Reader) IntPtr(x gjson.Result) *int {
	if x.Type == gjson.Null {
		return nil
	}
	n := new(int)
	r.Int(x, n)
	return n
}

// Time stores an RFC 3339 string in dst as time.Time.UnmarshalJSON does
// (null: dst unchanged); its error is kept as it is.
func (r *Reader) Time(x gjson.Result, dst *time.Time) {
	if x.Type == gjson.Null {
		return
	}
	if err := dst.UnmarshalJSON([]byte(x.Raw)); err != nil {
		r.Keep(err)
	}
}

// TimePtr reads a time into a new time.Time (null: nil).
func (r *Reader) TimePtr(x gjson.Result) *time.Time {
	if x.Type == gjson.Null {
		return nil
	}
	t := new(time.Time)
	r.Time(x, t)
	return t
}
