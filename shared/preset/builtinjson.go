package preset

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/inferscale/inferscale/shared/expo"
)

// decodeJSON reads a preset document as a json.Decoder with
// DisallowUnknownFields would, without reflection: metric decodes every
// built-in preset on each per-pod run when detecting the server, and the
// reflective decoder's type caches were most of that cost. Keys are
// matched exactly (encoding/json would also take "Name").
func decodeJSON(doc string) (*Preset, error) {
	if !gjson.Valid(doc) {
		return nil, errors.New("not valid JSON")
	}
	v := gjson.Parse(doc)
	var p Preset
	if v.Type == gjson.Null {
		return &p, nil
	}
	err := object(v, func(k string, x gjson.Result) error {
		switch k {
		case "name":
			return str(x, &p.Name)
		case "description":
			return str(x, &p.Description)
		case "detect":
			return strs(x, &p.Detect)
		case "notes":
			return strs(x, &p.Notes)
		case "signals":
			if x.Type == gjson.Null {
				p.Signals = nil
				return nil
			}
			if p.Signals == nil {
				p.Signals = map[string]Reading{}
			}
			return object(x, func(sig string, rx gjson.Result) error {
				var r Reading // a map element starts from zero, as in encoding/json
				if err := reading(rx, &r); err != nil {
					return err
				}
				p.Signals[sig] = r
				return nil
			})
		}
		return fmt.Errorf("unknown field %q", k)
	})
	if err != nil {
		return nil, err
	}
	return &p, nil
}

func reading(x gjson.Result, r *Reading) error {
	return object(x, func(k string, f gjson.Result) error {
		switch k {
		case "families":
			return strs(f, &r.Families)
		case "labels":
			if f.Type == gjson.Null {
				r.Labels = nil
				return nil
			}
			if r.Labels == nil {
				r.Labels = map[string]string{}
			}
			return object(f, func(name string, lv gjson.Result) error {
				var s string
				if err := str(lv, &s); err != nil {
					return err
				}
				r.Labels[name] = s
				return nil
			})
		case "scale":
			if f.Type == gjson.Null {
				return nil
			}
			if f.Type != gjson.Number {
				return fmt.Errorf("want a number, got %.40s", f.Raw)
			}
			n, err := strconv.ParseFloat(f.Raw, 64)
			if err != nil {
				return fmt.Errorf("want a number in float64 range, got %.40s", f.Raw)
			}
			r.Scale = n
			return nil
		case "agg":
			var s string
			s = string(r.Agg)
			if err := str(f, &s); err != nil {
				return err
			}
			r.Agg = expo.Agg(s)
			return nil
		}
		return fmt.Errorf("unknown field %q", k)
	})
}

// object calls field for each member of an object (null: nothing); the
// error names the key.
func object(x gjson.Result, field func(k string, v gjson.Result) error) error {
	if x.Type == gjson.Null {
		return nil
	}
	if !x.IsObject() {
		return fmt.Errorf("want an object, got %.40s", x.Raw)
	}
	var err error
	x.ForEach(func(k, v gjson.Result) bool {
		if err = field(k.Str, v); err != nil {
			err = fmt.Errorf("%s: %w", k.Str, err)
		}
		return err == nil
	})
	return err
}

func str(x gjson.Result, dst *string) error {
	switch x.Type {
	case gjson.String:
		*dst = x.Str
	case gjson.Null:
	default:
		return fmt.Errorf("want a string, got %.40s", x.Raw)
	}
	return nil
}

func strs(x gjson.Result, dst *[]string) error {
	if x.Type == gjson.Null {
		*dst = nil
		return nil
	}
	if !x.IsArray() {
		return fmt.Errorf("want an array of strings, got %.40s", x.Raw)
	}
	out := []string{}
	var err error
	x.ForEach(func(_, e gjson.Result) bool {
		var s string
		err = str(e, &s)
		out = append(out, s)
		return err == nil
	})
	*dst = out
	return err
}
