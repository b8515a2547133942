package state

import (
	"github.com/tidwall/gjson"

	"github.com/inferscale/inferscale/shared/jsonread"
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
	d := &jsonread.Reader{}
	d.Object(v, func(k string, x gjson.Result) {
		switch k {
		case "v":
			d.Int(x, &st.Version)
		case "lastTick":
			st.LastTick = d.TimePtr(x)
		case "lastScaleUp":
			st.LastScaleUp = d.TimePtr(x)
		case "lastScaleDown":
			st.LastScaleDown = d.TimePtr(x)
		case "lastScaleUpSignals":
			d.Int(x, &st.LastScaleUpSignals)
		case "replicas":
			st.Replicas = d.IntPtr(x)
		case "recommendations":
			st.Recommendations = jsonread.Slice(d, x, func(e gjson.Result, r *Recommendation) {
				d.Object(e, func(k string, f gjson.Result) {
					switch k {
					case "at":
						d.Time(f, &r.At)
					case "replicas":
						d.Int(f, &r.Replicas)
					default:
						d.Unknown(k)
					}
				})
			})
		case "gpuUtilEwma":
			st.GPUUtilEWMA = d.FloatPtr(x)
		case "podCapacityRps":
			st.PodCapacityRPS = d.FloatPtr(x)
		case "lastQueue":
			st.LastQueue = d.FloatPtr(x)
		case "pods":
			st.Pods = jsonread.Slice(d, x, func(e gjson.Result, p *PodCounters) { *p = pod(d, e) })
		case "startups":
			st.Startups = jsonread.Slice(d, x, func(e gjson.Result, su *Startup) {
				d.Object(e, func(k string, f gjson.Result) {
					switch k {
					case "pod":
						d.String(f, &su.Pod)
					case "seconds":
						d.Float(f, &su.Seconds)
					case "at":
						d.Time(f, &su.At)
					default:
						d.Unknown(k)
					}
				})
			})
		case "rates":
			st.Rates = jsonread.Slice(d, x, func(e gjson.Result, r *RateSample) {
				d.Object(e, func(k string, f gjson.Result) {
					switch k {
					case "at":
						d.Time(f, &r.At)
					case "rps":
						d.Float(f, &r.RPS)
					default:
						d.Unknown(k)
					}
				})
			})
		case "hourlyPeaks":
			st.HourlyPeaks = jsonread.Slice(d, x, func(e gjson.Result, h *HourlyPeak) {
				d.Object(e, func(k string, f gjson.Result) {
					switch k {
					case "hour":
						d.Time(f, &h.Hour)
					case "replicas":
						d.Int(f, &h.Replicas)
					default:
						d.Unknown(k)
					}
				})
			})
		default:
			d.Unknown(k)
		}
	})
	if err := d.Err(); err != nil {
		return nil, err
	}
	return st, nil
}

func pod(d *jsonread.Reader, e gjson.Result) PodCounters {
	var p PodCounters
	d.Object(e, func(k string, f gjson.Result) {
		switch k {
		case "name":
			d.String(f, &p.Name)
		case "scrapeTime":
			d.Time(f, &p.ScrapeTime)
		case "seenAt":
			d.Time(f, &p.SeenAt)
		case "requestsTotal":
			p.RequestsTotal = d.FloatPtr(f)
		case "inFlight":
			p.InFlight = d.FloatPtr(f)
		case "ttft":
			p.TTFT = hist(d, f)
		case "e2e":
			p.E2E = hist(d, f)
		default:
			d.Unknown(k)
		}
	})
	return p
}

func hist(d *jsonread.Reader, x gjson.Result) *Hist {
	if x.Type == gjson.Null {
		return nil
	}
	h := &Hist{}
	d.Object(x, func(k string, f gjson.Result) {
		switch k {
		case "le":
			h.LE = floats(d, f)
		case "c":
			h.C = floats(d, f)
		case "sum":
			d.Float(f, &h.Sum)
		case "count":
			d.Float(f, &h.Count)
		default:
			d.Unknown(k)
		}
	})
	return h
}

func floats(d *jsonread.Reader, x gjson.Result) []float64 {
	if x.Type == gjson.Null {
		return nil
	}
	out := make([]float64, 0, 24) // a histogram has ~20 bounds
	d.Array(x, func(e gjson.Result) {
		var f float64
		d.Float(e, &f)
		out = append(out, f)
	}, nil)
	return out
}
