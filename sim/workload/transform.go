package workload

import (
	"fmt"
	"math"
	"time"
)

// Scale stretches time and thins or duplicates requests, deterministically.
//
// timeFactor multiplies every arrival offset: 0.5 replays the trace in half
// the time (twice the rate), 2 stretches it. rateFactor keeps on average
// rateFactor copies of each request, chosen by an error-accumulating
// counter (no randomness): 0.25 keeps every fourth request, 2.5 emits
// 2,3,2,3,... copies. The copies of one request are spread evenly over the
// gap to the next one, so duplication raises the rate without stacking
// identical timestamps; the last request's copies share its timestamp.
// A factor that is not finite, timeFactor <= 0 or rateFactor < 0 makes
// Next fail.
func Scale(src Source, timeFactor, rateFactor float64) Source {
	return &scaled{src: src, tf: timeFactor, rf: rateFactor}
}

type scaled struct {
	src     Source
	tf, rf  float64
	acc     float64
	ahead   Request
	hasNext bool
	started bool
	// copies of cur still to emit: copy j of k arrives at cur + j·gap/k
	cur  Request
	gap  time.Duration
	j, k int
}

func (s *scaled) Next() (Request, bool, error) {
	if !(s.tf > 0) || math.IsInf(s.tf, 0) || !(s.rf >= 0) || math.IsInf(s.rf, 0) {
		return Request{}, false, fmt.Errorf("workload scale: time factor %v must be > 0 and rate factor %v >= 0, both finite", s.tf, s.rf)
	}
	for s.j >= s.k {
		if !s.started {
			s.started = true
			r, ok, err := s.src.Next()
			if err != nil {
				return Request{}, false, err
			}
			s.ahead, s.hasNext = r, ok
		}
		if !s.hasNext {
			return Request{}, false, nil
		}
		cur := s.ahead
		r, ok, err := s.src.Next()
		if err != nil {
			return Request{}, false, err
		}
		s.ahead, s.hasNext = r, ok
		s.acc += s.rf
		k := math.Floor(s.acc + 1e-9)
		s.acc -= k
		s.cur, s.j, s.k, s.gap = cur, 0, int(min(k, math.MaxInt32)), 0
		if ok && r.Arrival > cur.Arrival {
			s.gap = r.Arrival - cur.Arrival
		}
	}
	c := s.cur
	at := float64(c.Arrival) + float64(s.j)*float64(s.gap)/float64(s.k)
	c.Arrival = time.Duration(at * s.tf)
	s.j++
	return c, true, nil
}

func (s *scaled) Close() error { return s.src.Close() }

// Window keeps the requests arriving in [start, start+duration) and
// re-bases them on start (the first kept request arrives at or after 0).
// duration 0 keeps everything from start on. It stops reading src at the
// end of the window, so a window early in a long trace is cheap.
func Window(src Source, start, duration time.Duration) Source {
	return &windowed{src: src, start: start, duration: duration}
}

type windowed struct {
	src             Source
	start, duration time.Duration
	done            bool
}

func (w *windowed) Next() (Request, bool, error) {
	if w.start < 0 || w.duration < 0 {
		return Request{}, false, fmt.Errorf("workload window: start %v and duration %v must be >= 0", w.start, w.duration)
	}
	for !w.done {
		r, ok, err := w.src.Next()
		if err != nil {
			return Request{}, false, err
		}
		if !ok {
			w.done = true
			break
		}
		if r.Arrival < w.start {
			continue
		}
		if w.duration > 0 && r.Arrival >= w.start+w.duration {
			w.done = true
			break
		}
		r.Arrival -= w.start
		return r, true, nil
	}
	return Request{}, false, nil
}

func (w *windowed) Close() error { return w.src.Close() }
