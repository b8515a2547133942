package state

import (
	"fmt"
	"strconv"
	"time"

	"github.com/tidwall/gjson"
)

// decodeDoc reads a syntactically valid state document as a json.Decoder
// with DisallowUnknownFields would, without reflection: evaluate reads the
// state once per tick in a fresh process, and reflective decoding of the
// per-pod histograms was a fifth of its run time. Keys are matched
// exactly; a key that differs from a field only by case is unknown here
// (encoding/json would match it).
func decodeDoc(s string) (*State, error) {
	v := gjson.Parse(s)
	st := New()
	if v.Type == gjson.Null {
		return st, nil
	}
	d := &reader{}
	d.object(v, func(k string, x gjson.Result) {
		switch k {
		case "v":
			d.integer(x, &st.Version)
		case "lastTick":
			st.LastTick = d.timePtr(x)
		case "lastScaleUp":
			st.LastScaleUp = d.timePtr(x)
		case "lastScaleDown":
			st.LastScaleDown = d.timePtr(x)
		case "lastScaleUpSignals":
			d.integer(x, &st.LastScaleUpSignals)
		case "replicas":
			st.Replicas = d.intPtr(x)
		case "recommendations":
			st.Recommendations = nil
			d.array(x, func(e gjson.Result) {
				var r Recommendation
				d.object(e, func(k string, f gjson.Result) {
					switch k {
					case "at":
						d.timeValue(f, &r.At)
					case "replicas":
						d.integer(f, &r.Replicas)
					default:
						d.unknown(k)
					}
				})
				st.Recommendations = append(st.Recommendations, r)
			}, func() { st.Recommendations = []Recommendation{} })
		case "gpuUtilEwma":
			st.GPUUtilEWMA = d.floatPtr(x)
		case "podCapacityRps":
			st.PodCapacityRPS = d.floatPtr(x)
		case "lastQueue":
			st.LastQueue = d.floatPtr(x)
		case "pods":
			st.Pods = nil
			d.array(x, func(e gjson.Result) {
				st.Pods = append(st.Pods, d.pod(e))
			}, func() { st.Pods = []PodCounters{} })
		case "startups":
			st.Startups = nil
			d.array(x, func(e gjson.Result) {
				var su Startup
				d.object(e, func(k string, f gjson.Result) {
					switch k {
					case "pod":
						d.str(f, &su.Pod)
					case "seconds":
						d.float(f, &su.Seconds)
					case "at":
						d.timeValue(f, &su.At)
					default:
						d.unknown(k)
					}
				})
				st.Startups = append(st.Startups, su)
			}, func() { st.Startups = []Startup{} })
		case "rates":
			st.Rates = nil
			d.array(x, func(e gjson.Result) {
				var r RateSample
				d.object(e, func(k string, f gjson.Result) {
					switch k {
					case "at":
						d.timeValue(f, &r.At)
					case "rps":
						d.float(f, &r.RPS)
					default:
						d.unknown(k)
					}
				})
				st.Rates = append(st.Rates, r)
			}, func() { st.Rates = []RateSample{} })
		case "hourlyPeaks":
			st.HourlyPeaks = nil
			d.array(x, func(e gjson.Result) {
				var h HourlyPeak
				d.object(e, func(k string, f gjson.Result) {
					switch k {
					case "hour":
						d.timeValue(f, &h.Hour)
					case "replicas":
						d.integer(f, &h.Replicas)
					default:
						d.unknown(k)
					}
				})
				st.HourlyPeaks = append(st.HourlyPeaks, h)
			}, func() { st.HourlyPeaks = []HourlyPeak{} })
		default:
			d.unknown(k)
		}
	})
	if d.err != nil {
		return nil, d.err
	}
	return st, nil
}

func (d *reader) pod(e gjson.Result) PodCounters {
	var p PodCounters
	d.object(e, func(k string, f gjson.Result) {
		switch k {
		case "name":
			d.str(f, &p.Name)
		case "scrapeTime":
			d.timeValue(f, &p.ScrapeTime)
		case "seenAt":
			d.timeValue(f, &p.SeenAt)
		case "requestsTotal":
			p.RequestsTotal = d.floatPtr(f)
		case "inFlight":
			p.InFlight = d.floatPtr(f)
		case "ttft":
			p.TTFT = d.hist(f)
		case "e2e":
			p.E2E = d.hist(f)
		default:
			d.unknown(k)
		}
	})
	return p
}

func (d *reader) hist(x gjson.Result) *Hist {
	if x.Type == gjson.Null {
		return nil
	}
	h := &Hist{}
	d.object(x, func(k string, f gjson.Result) {
		switch k {
		case "le":
			h.LE = d.floats(f)
		case "c":
			h.C = d.floats(f)
		case "sum":
			d.float(f, &h.Sum)
		case "count":
			d.float(f, &h.Count)
		default:
			d.unknown(k)
		}
	})
	return h
}

func (d *reader) floats(x gjson.Result) []float64 {
	if x.Type == gjson.Null {
		return nil
	}
	out := make([]float64, 0, 24) // a histogram has ~20 bounds
	d.array(x, func(e gjson.Result) {
		var f float64
		d.float(e, &f)
		out = append(out, f)
	}, nil)
	return out
}

// reader reads typed values out of gjson results, keeping the first error.
type reader struct{ err error }

func (d *reader) fail(x gjson.Result, want string) {
	if d.err == nil {
		d.err = fmt.Errorf("want %s, got %.40s", want, x.Raw)
	}
}

func (d *reader) unknown(k string) {
	if d.err == nil {
		d.err = fmt.Errorf("unknown field %q", k)
	}
}

// object calls field for each key of an object (null is no object and no
// error, as with encoding/json); the error names the key.
func (d *reader) object(x gjson.Result, field func(k string, v gjson.Result)) {
	if d.err != nil || x.Type == gjson.Null {
		return
	}
	if !x.IsObject() {
		d.fail(x, "an object")
		return
	}
	x.ForEach(func(k, v gjson.Result) bool {
		field(k.Str, v)
		if d.err != nil {
			d.err = fmt.Errorf("%s: %w", k.Str, d.err)
		}
		return d.err == nil
	})
}

// array calls elem for each element; empty runs for a present empty array
// (encoding/json gives an empty, non-nil slice there).
func (d *reader) array(x gjson.Result, elem func(gjson.Result), empty func()) {
	if d.err != nil || x.Type == gjson.Null {
		return
	}
	if !x.IsArray() {
		d.fail(x, "an array")
		return
	}
	i := 0
	x.ForEach(func(_, v gjson.Result) bool {
		elem(v)
		if d.err != nil {
			d.err = fmt.Errorf("[%d]: %w", i, d.err)
		}
		i++
		return d.err == nil
	})
	if i == 0 && empty != nil {
		empty()
	}
}

func (d *reader) str(x gjson.Result, dst *string) {
	switch x.Type {
	case gjson.String:
		*dst = x.Str
	case gjson.Null:
	default:
		d.fail(x, "a string")
	}
}

func (d *reader) float(x gjson.Result, dst *float64) {
	if x.Type == gjson.Null {
		return
	}
	if x.Type != gjson.Number {
		d.fail(x, "a number")
		return
	}
	f, err := strconv.ParseFloat(x.Raw, 64)
	if err != nil {
		d.fail(x, "a number in float64 range")
		return
	}
	*dst = f
}

func (d *reader) floatPtr(x gjson.Result) *float64 {
	if x.Type == gjson.Null {
		return nil
	}
	f := new(float64)
	d.float(x, f)
	return f
}

func (d *reader) integer(x gjson.Result, dst *int) {
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

func (d *reader) intPtr(x gjson.Result) *int {
	if x.Type == gjson.Null {
		return nil
	}
	n := new(int)
	d.integer(x, n)
	return n
}

func (d *reader) timeValue(x gjson.Result, dst *time.Time) {
	if x.Type == gjson.Null {
		return
	}
	if err := dst.UnmarshalJSON([]byte(x.Raw)); err != nil && d.err == nil {
		d.err = err
	}
}

func (d *reader) timePtr(x gjson.Result) *time.Time {
	if x.Type == gjson.Null {
		return nil
	}
	t := new(time.Time)
	d.timeValue(x, t)
	return t
}
