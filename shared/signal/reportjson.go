package signal

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/inferscale/inferscale/shared/cpa"
	"github.com/inferscale/inferscale/shared/jsonread"
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
// input already holds: gjson reads strings without copying them. Unknown
// keys are ignored, as encoding/json ignores them.
func parse(s string) (*Report, error) {
	v := gjson.Parse(s)
	if v.Type == gjson.Null {
		return &Report{}, nil
	}
	if !v.IsObject() {
		return nil, fmt.Errorf("report: want an object, got %.40s", v.Raw)
	}
	var r Report
	var d jsonread.Reader
	d.Object(v, func(k string, x gjson.Result) {
		switch k {
		case "v":
			d.Int(x, &r.Version)
		case "scrapeTime":
			d.Time(x, &r.ScrapeTime)
		case "pods":
			r.Pods = jsonread.Slice(&d, x, func(e gjson.Result, p *Pod) { pod(&d, e, p) })
		case "fleet":
			r.Fleet = fleet(&d, x)
		}
	})
	if err := d.Err(); err != nil {
		return nil, err
	}
	return &r, nil
}

func pod(d *jsonread.Reader, x gjson.Result, p *Pod) {
	d.Object(x, func(k string, v gjson.Result) {
		switch k {
		case "name":
			d.String(v, &p.Name)
		case "namespace":
			d.String(v, &p.Namespace)
		case "node":
			d.String(v, &p.Node)
		case "phase":
			d.String(v, &p.Phase)
		case "ready":
			d.Bool(v, &p.Ready)
		case "terminating":
			d.Bool(v, &p.Terminating)
		case "createdAt":
			p.CreatedAt = d.TimePtr(v)
		case "startedAt":
			p.StartedAt = d.TimePtr(v)
		case "readyAt":
			p.ReadyAt = d.TimePtr(v)
		case "startupSeconds":
			p.StartupSeconds = d.FloatPtr(v)
		case "ageSeconds":
			p.AgeSeconds = d.FloatPtr(v)
		case "scrapeTime":
			d.Time(v, &p.ScrapeTime)
		case "server":
			d.String(v, &p.Server)
		case "error":
			d.String(v, &p.Error)
		case "waiting":
			p.Waiting = d.FloatPtr(v)
		case "running":
			p.Running = d.FloatPtr(v)
		case "kvCacheUsage":
			p.KVCacheUsage = d.FloatPtr(v)
		case "gpu":
			p.GPU = gpu(d, v)
		case "ttft":
			p.TTFT = histogram(d, v)
		case "e2e":
			p.E2E = histogram(d, v)
		case "queueTime":
			p.QueueTime = histogram(d, v)
		case "interToken":
			p.InterToken = histogram(d, v)
		case "requestsTotal":
			p.RequestsTotal = d.FloatPtr(v)
		case "promptTokensTotal":
			p.PromptTokensTotal = d.FloatPtr(v)
		case "generationTokensTotal":
			p.GenerationTokensTotal = d.FloatPtr(v)
		case "preemptionsTotal":
			p.PreemptionsTotal = d.FloatPtr(v)
		case "notes":
			p.Notes = d.Strings(v)
		}
	})
}

func gpu(d *jsonread.Reader, x gjson.Result) *GPU {
	if x.Type == gjson.Null {
		return nil
	}
	if !x.IsObject() {
		d.Fail(x, "an object")
		return nil
	}
	g := &GPU{}
	d.Object(x, func(k string, v gjson.Result) {
		switch k {
		case "utilization":
			g.Utilization = d.FloatPtr(v)
		case "smActive":
			g.SMActive = d.FloatPtr(v)
		case "field":
			d.String(v, &g.Field)
		case "source":
			d.String(v, &g.Source)
		case "count":
			d.Int(v, &g.Count)
		case "error":
			d.String(v, &g.Error)
		}
	})
	return g
}

func histogram(d *jsonread.Reader, x gjson.Result) *Histogram {
	if x.Type == gjson.Null {
		return nil
	}
	h := &Histogram{}
	d.Keep(h.fromResult(x))
	return h
}

// fleet is the rare per-resource form: decoded with encoding/json.
func fleet(d *jsonread.Reader, x gjson.Result) *Fleet {
	if x.Type == gjson.Null {
		return nil
	}
	f := &Fleet{}
	d.Keep(json.Unmarshal([]byte(x.Raw), f))
	return f
}
