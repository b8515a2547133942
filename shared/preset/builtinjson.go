package preset

import (
	"errors"

	"github.com/tidwall/gjson"

	"github.com/inferscale/inferscale/shared/expo"
	"github.com/inferscale/inferscale/shared/jsonread"
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
	var d jsonread.Reader
	d.Object(v, func(k string, x gjson.Result) {
		switch k {
		case "name":
			d.String(x, &p.Name)
		case "description":
			d.String(x, &p.Description)
		case "detect":
			p.Detect = d.Strings(x)
		case "notes":
			p.Notes = d.Strings(x)
		case "signals":
			if x.Type == gjson.Null {
				p.Signals = nil
				return
			}
			if p.Signals == nil {
				p.Signals = map[string]Reading{}
			}
			d.Object(x, func(sig string, rx gjson.Result) {
				var r Reading // a map element starts from zero, as in encoding/json
				reading(&d, rx, &r)
				p.Signals[sig] = r
			})
		default:
			d.Unknown(k)
		}
	})
	if err := d.Err(); err != nil {
		return nil, err
	}
	return &p, nil
}

func reading(d *jsonread.Reader, x gjson.Result, r *Reading) {
	d.Object(x, func(k string, f gjson.Result) {
		switch k {
		case "families":
			r.Families = d.Strings(f)
		case "labels":
			if f.Type == gjson.Null {
				r.Labels = nil
				return
			}
			if r.Labels == nil {
				r.Labels = map[string]string{}
			}
			d.Object(f, func(name string, lv gjson.Result) {
				var s string
				d.String(lv, &s)
				r.Labels[name] = s
			})
		case "scale":
			d.Float(f, &r.Scale)
		case "agg":
			s := string(r.Agg)
			d.String(f, &s)
			r.Agg = expo.Agg(s)
		default:
			d.Unknown(k)
		}
	})
}
