package state

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
)

// appendState writes st exactly as json.Marshal would, without reflection
// (evaluate writes the state once per tick in a fresh process, and
// building encoding/json's type caches cost more than the writing).
// Values must be finite; json.Marshal would fail on NaN or Inf, and so
// does this.
func appendState(b []byte, st *State) ([]byte, error) {
	e := encoder{b: b}
	e.raw(`{"v":`)
	e.int(st.Version)
	e.optTime("lastTick", st.LastTick)
	e.optTime("lastScaleUp", st.LastScaleUp)
	e.optTime("lastScaleDown", st.LastScaleDown)
	if st.LastScaleUpSignals != 0 {
		e.key("lastScaleUpSignals")
		e.int(st.LastScaleUpSignals)
	}
	if st.Replicas != nil {
		e.key("replicas")
		e.int(*st.Replicas)
	}
	if len(st.Recommendations) > 0 {
		e.key("recommendations")
		for i, r := range st.Recommendations {
			e.sep(i)
			e.raw(`{"at":`)
			e.time(r.At)
			e.raw(`,"replicas":`)
			e.int(r.Replicas)
			e.raw(`}`)
		}
		e.raw(`]`)
	}
	e.optFloat("gpuUtilEwma", st.GPUUtilEWMA)
	e.optFloat("podCapacityRps", st.PodCapacityRPS)
	e.optFloat("lastQueue", st.LastQueue)
	if len(st.Pods) > 0 {
		e.key("pods")
		for i := range st.Pods {
			p := &st.Pods[i]
			e.sep(i)
			e.raw(`{"name":`)
			e.b = signal.AppendJSONString(e.b, p.Name)
			e.raw(`,"scrapeTime":`)
			e.time(p.ScrapeTime)
			e.raw(`,"seenAt":`)
			e.time(p.SeenAt)
			e.optFloat("requestsTotal", p.RequestsTotal)
			e.optFloat("inFlight", p.InFlight)
			e.optHist("ttft", p.TTFT)
			e.optHist("e2e", p.E2E)
			e.raw(`}`)
		}
		e.raw(`]`)
	}
	if len(st.Startups) > 0 {
		e.key("startups")
		for i, s := range st.Startups {
			e.sep(i)
			e.raw(`{"pod":`)
			e.b = signal.AppendJSONString(e.b, s.Pod)
			e.raw(`,"seconds":`)
			e.float(s.Seconds)
			e.raw(`,"at":`)
			e.time(s.At)
			e.raw(`}`)
		}
		e.raw(`]`)
	}
	if len(st.Rates) > 0 {
		e.key("rates")
		for i, r := range st.Rates {
			e.sep(i)
			e.raw(`{"at":`)
			e.time(r.At)
			e.raw(`,"rps":`)
			e.float(r.RPS)
			e.raw(`}`)
		}
		e.raw(`]`)
	}
	if len(st.HourlyPeaks) > 0 {
		e.key("hourlyPeaks")
		for i, h := range st.HourlyPeaks {
			e.sep(i)
			e.raw(`{"hour":`)
			e.time(h.Hour)
			e.raw(`,"replicas":`)
			e.int(h.Replicas)
			e.raw(`}`)
		}
		e.raw(`]`)
	}
	e.raw(`}`)
	return e.b, e.err
}

// encoder appends JSON, keeping the first error.
type encoder struct {
	b   []byte
	err error
}

func (e *encoder) raw(s string) { e.b = append(e.b, s...) }

// key writes ,"k": (an array's opening bracket is written by sep(0)).
func (e *encoder) key(k string) {
	e.b = append(e.b, ',', '"')
	e.b = append(e.b, k...)
	e.b = append(e.b, '"', ':')
}

// sep opens an array before its first element and separates the others.
func (e *encoder) sep(i int) {
	if i == 0 {
		e.b = append(e.b, '[')
	} else {
		e.b = append(e.b, ',')
	}
}

func (e *encoder) int(n int) { e.b = strconv.AppendInt(e.b, int64(n), 10) }

func (e *encoder) float(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		if e.err == nil {
			e.err = fmt.Errorf("encoding state: unsupported value %v", f)
		}
		e.b = append(e.b, '0')
		return
	}
	e.b = signal.AppendJSONFloat(e.b, f)
}

func (e *encoder) time(t time.Time) {
	j, err := t.MarshalJSON()
	if err != nil {
		if e.err == nil {
			e.err = fmt.Errorf("encoding state: %w", err)
		}
		return
	}
	e.b = append(e.b, j...)
}

func (e *encoder) optTime(k string, t *time.Time) {
	if t != nil {
		e.key(k)
		e.time(*t)
	}
}

func (e *encoder) optFloat(k string, f *float64) {
	if f != nil {
		e.key(k)
		e.float(*f)
	}
}

func (e *encoder) floats(fs []float64) {
	if fs == nil {
		e.raw("null")
		return
	}
	e.b = append(e.b, '[')
	for i, f := range fs {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.float(f)
	}
	e.b = append(e.b, ']')
}

func (e *encoder) optHist(k string, h *Hist) {
	if h == nil {
		return
	}
	e.key(k)
	e.raw(`{"le":`)
	e.floats(h.LE)
	e.raw(`,"c":`)
	e.floats(h.C)
	e.raw(`,"sum":`)
	e.float(h.Sum)
	e.raw(`,"count":`)
	e.float(h.Count)
	e.raw(`}`)
}
