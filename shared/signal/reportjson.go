package signal

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"github.com/inferscale/inferscale/shared/cpa"
)

// Parse decodes one metric value into a Report without reflection and
// without validating it (see Validate). It gives what json.Unmarshal
// gives for the same document, with one difference: keys are matched
// exactly, where encoding/json would also accept "NAME" for "name" (such
// keys are ignored here like any unknown field). The whole value is
// checked for JSON syntax first (trailing data is an error). Evaluate
// reads 64 or more reports per tick in a fresh process, and reflective
// decoding was most of its run time.
func Parse(b []byte) (*Report, error) {
	s := string(b)
	if err := checkSyntax(s); err != nil {
		return nil, err
	}
	return parse(s)
}

// checkSyntax is one fast validating pass over the whole value; on failure
// encoding/json is asked for the reason (it names the offset).
func checkSyntax(s string) error {
	if gjson.Valid(s) {
		return nil
	}
	if err := cpa.DecodeStrict([]byte(s), new(json.RawMessage)); err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	return errors.New("not valid JSON")
}

// parse decodes a syntactically valid value. It works on the string CPA's
// input already holds: gjson reads strings without copying them.
func parse(s string) (*Report, error) {
	v := gjson.Parse(s)
	if v.Type == gjson.Null {
		return &Report{}, nil
	}
	if !v.IsObject() {
		return nil, fmt.Errorf("report: want an object, got %.40s", v.Raw)
	}
	var r Report
	var d fields
	v.ForEach(func(k, x gjson.Result) bool {
		switch k.Str {
		case "v":
			d.integer(x, &r.Version)
		case "scrapeTime":
			d.timeValue(x, &r.ScrapeTime)
		case "pods":
			r.Pods = d.pods(x)
		case "fleet":
			r.Fleet = d.fleet(x)
		}
		if d.err != nil {
			d.at("%s", k.Str)
		}
		return d.err == nil
	})
	if d.err != nil {
		return nil, d.err
	}
	return &r, nil
}

// fields reads typed fields out of gjson results, keeping the first error.
type fields struct{ err error }

func (d *fields) fail(x gjson.Result, want string) {
	if d.err == nil {
		d.err = fmt.Errorf("want %s, got %.40s", want, x.Raw)
	}
}

// at names where the first error happened (paths are only built on error:
// building them per field would cost an allocation each).
func (d *fields) at(format string, args ...any) {
	if d.err != nil {
		d.err = fmt.Errorf(format+": %w", append(args, d.err)...)
	}
}

func (d *fields) str(x gjson.Result, dst *string) {
	switch x.Type {
	case gjson.String:
		*dst = x.Str
	case gjson.Null:
	default:
		d.fail(x, "a string")
	}
}

func (d *fields) boolean(x gjson.Result, dst *bool) {
	switch x.Type {
	case gjson.True, gjson.False:
		*dst = x.Type == gjson.True
	case gjson.Null:
	default:
		d.fail(x, "true or false")
	}
}

// number parses the literal as encoding/json does (strconv on the text,
// so an out-of-range literal is an error rather than an infinity).
func (d *fields) number(x gjson.Result) (float64, bool) {
	if x.Type != gjson.Number {
		d.fail(x, "a number")
		return 0, false
	}
	f, err := strconv.ParseFloat(x.Raw, 64)
	if err != nil {
		d.fail(x, "a number in float64 range")
		return 0, false
	}
	return f, true
}

func (d *fields) floatPtr(x gjson.Result) *float64 {
	if x.Type == gjson.Null {
		return nil
	}
	f, ok := d.number(x)
	if !ok {
		return nil
	}
	return &f
}

func (d *fields) integer(x gjson.Result, dst *int) {
	if x.Type == gjson.Null {
		return
	}
	if x.Type != gjson.Number {
		d.fail(x, "an integer")
		return
	}
	n, err := strconv.ParseInt(x.Raw, 10, 0)
	if err != nil {
		d.fail(x, "an integer")
		return
	}
	*dst = int(n)
}

func (d *fields) timeValue(x gjson.Result, dst *time.Time) {
	if x.Type == gjson.Null {
		return
	}
	if err := dst.UnmarshalJSON([]byte(x.Raw)); err != nil && d.err == nil {
		d.err = err
	}
}

func (d *fields) timePtr(x gjson.Result) *time.Time {
	if x.Type == gjson.Null {
		return nil
	}
	t := new(time.Time)
	d.timeValue(x, t)
	return t
}

func (d *fields) pods(x gjson.Result) []Pod {
	if x.Type == gjson.Null {
		return nil
	}
	if !x.IsArray() {
		d.fail(x, "an array")
		return nil
	}
	out := make([]Pod, 0, 1)
	x.ForEach(func(_, px gjson.Result) bool {
		var p Pod
		d.pod(px, &p)
		if d.err != nil {
			d.at("[%d]", len(out))
		}
		out = append(out, p)
		return d.err == nil
	})
	return out
}

func (d *fields) pod(x gjson.Result, p *Pod) {
	if x.Type == gjson.Null {
		return
	}
	if !x.IsObject() {
		d.fail(x, "an object")
		return
	}
	x.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "name":
			d.str(v, &p.Name)
		case "namespace":
			d.str(v, &p.Namespace)
		case "node":
			d.str(v, &p.Node)
		case "phase":
			d.str(v, &p.Phase)
		case "ready":
			d.boolean(v, &p.Ready)
		case "terminating":
			d.boolean(v, &p.Terminating)
		case "createdAt":
			p.CreatedAt = d.timePtr(v)
		case "startedAt":
			p.StartedAt = d.timePtr(v)
		case "readyAt":
			p.ReadyAt = d.timePtr(v)
		case "startupSeconds":
			p.StartupSeconds = d.floatPtr(v)
		case "ageSeconds":
			p.AgeSeconds = d.floatPtr(v)
		case "scrapeTime":
			d.timeValue(v, &p.ScrapeTime)
		case "server":
			d.str(v, &p.Server)
		case "error":
			d.str(v, &p.Error)
		case "waiting":
			p.Waiting = d.floatPtr(v)
		case "running":
			p.Running = d.floatPtr(v)
		case "kvCacheUsage":
			p.KVCacheUsage = d.floatPtr(v)
		case "gpu":
			p.GPU = d.gpu(v)
		case "ttft":
			p.TTFT = d.histogram(v)
		case "e2e":
			p.E2E = d.histogram(v)
		case "queueTime":
			p.QueueTime = d.histogram(v)
		case "interToken":
			p.InterToken = d.histogram(v)
		case "requestsTotal":
			p.RequestsTotal = d.floatPtr(v)
		case "promptTokensTotal":
			p.PromptTokensTotal = d.floatPtr(v)
		case "generationTokensTotal":
			p.GenerationTokensTotal = d.floatPtr(v)
		case "preemptionsTotal":
			p.PreemptionsTotal = d.floatPtr(v)
		case "notes":
			p.Notes = d.strings(v)
		}
		if d.err != nil {
			d.at("%s", k.Str)
		}
		return d.err == nil
	})
}

func (d *fields) gpu(x gjson.Result) *GPU {
	if x.Type == gjson.Null {
		return nil
	}
	if !x.IsObject() {
		d.fail(x, "an object")
		return nil
	}
	g := &GPU{}
	x.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "utilization":
			g.Utilization = d.floatPtr(v)
		case "smActive":
			g.SMActive = d.floatPtr(v)
		case "field":
			d.str(v, &g.Field)
		case "source":
			d.str(v, &g.Source)
		case "count":
			d.integer(v, &g.Count)
		case "error":
			d.str(v, &g.Error)
		}
		if d.err != nil {
			d.at("%s", k.Str)
		}
		return d.err == nil
	})
	return g
}

func (d *fields) histogram(x gjson.Result) *Histogram {
	if x.Type == gjson.Null {
		return nil
	}
	h := &Histogram{}
	if err := h.fromResult(x); err != nil && d.err == nil {
		d.err = err
	}
	return h
}

func (d *fields) strings(x gjson.Result) []string {
	if x.Type == gjson.Null {
		return nil
	}
	if !x.IsArray() {
		d.fail(x, "an array of strings")
		return nil
	}
	out := []string{}
	x.ForEach(func(_, s gjson.Result) bool {
		var v string
		d.str(s, &v)
		if d.err != nil {
			d.at("[%d]", len(out))
		}
		out = append(out, v)
		return d.err == nil
	})
	return out
}

// fleet is the rare per-resource form: decoded with encoding/json.
func (d *fields) fleet(x gjson.Result) *Fleet {
	if x.Type == gjson.Null {
		return nil
	}
	f := &Fleet{}
	if err := json.Unmarshal([]byte(x.Raw), f); err != nil && d.err == nil {
		d.err = err
	}
	return f
}
