package signal

import (
	"errors"
	"fmt"

	"github.com/tidwall/gjson"
)

// UnmarshalJSON decodes {"b":[{"le":x,"c":y},...],"sum":s,"count":n}
// without reflection: a 64-pod evaluate input carries thousands of buckets
// and encoding/json's per-object field matching dominated its run time.
// The caller (encoding/json) has already checked the syntax; types are
// checked here; unknown fields are ignored as encoding/json would, but keys
// are matched exactly (encoding/json would also accept "LE" for "le").
func (h *Histogram) UnmarshalJSON(b []byte) error {
	return h.fromResult(gjson.ParseBytes(b))
}

// fromResult decodes a parsed histogram value (null leaves h unchanged).
func (h *Histogram) fromResult(v gjson.Result) error {
	if v.Type == gjson.Null {
		return nil
	}
	if !v.IsObject() {
		return errors.New("histogram: want an object")
	}
	var out Histogram
	var err error
	v.ForEach(func(key, val gjson.Result) bool {
		switch key.Str {
		case "sum":
			out.Sum, err = number("sum", val)
		case "count":
			out.Count, err = number("count", val)
		case "b":
			if val.Type == gjson.Null {
				return true
			}
			if !val.IsArray() {
				err = errors.New("histogram: \"b\" must be an array")
				return false
			}
			out.Buckets = make([]Bucket, 0, 24)
			val.ForEach(func(_, bv gjson.Result) bool {
				if !bv.IsObject() {
					err = errors.New("histogram: a bucket must be an object")
					return false
				}
				var bk Bucket
				bv.ForEach(func(k, x gjson.Result) bool {
					switch k.Str {
					case "le":
						bk.UpperBound, err = number("le", x)
					case "c":
						bk.Count, err = number("c", x)
					}
					return err == nil
				})
				out.Buckets = append(out.Buckets, bk)
				return err == nil
			})
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	*h = out
	return nil
}

func number(name string, v gjson.Result) (float64, error) {
	switch v.Type {
	case gjson.Number:
		return v.Num, nil
	case gjson.Null:
		return 0, nil
	}
	return 0, fmt.Errorf("histogram: %q must be a number, got %s", name, v.Raw)
}
