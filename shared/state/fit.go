package state

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Trim is what Record shed to keep the state within MaxStateBytes: a
// state that does not fit would fail every tick's save, so whatever can
// be rebuilt from the next scrapes goes first (the pods' histogram
// resolution, then the oldest pods' detail, then the oldest pods).
type Trim struct {
	// Shed says what was dropped this tick (empty: nothing).
	Shed []string
	// Began is true when this tick shed and the one before did not: the
	// tick to say so (the state remembers it in Trimmed).
	Began bool
}

// coarseLevels are the bucket counts the pods' histograms are coarsened
// to in turn, least recently seen pods first, before any detail is lost.
var coarseLevels = [...]int{64, 32, 16, 8}

// fit sheds what can be rebuilt until the state encodes within
// MaxStateBytes. The cheap bound decides whether anything is measured.
func (s *State) fit() Trim {
	was := s.Trimmed
	var shed []string
	if n := len(s.Pods) - MaxPods; n > 0 {
		s.dropPods(s.oldestPods()[:n])
		shed = append(shed, fmt.Sprintf("%d least recently seen pods beyond %d", n, MaxPods))
	}
	if len(shed) > 0 || s.bound() > MaxStateBytes {
		shed = append(shed, s.fitPods()...)
		shed = append(shed, s.fitRest()...)
	}
	s.Trimmed = len(shed) > 0
	return Trim{Shed: shed, Began: s.Trimmed && !was}
}

// encodedSize is the length Encode would write (0 when it cannot encode).
func encodedSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// fitPods coarsens, then strips, then drops the pods, least recently seen
// first, until they fit beside the rest of the state.
func (s *State) fitPods() []string {
	s.Trimmed = true // counted in the rest as it will be written
	rest := *s
	rest.Pods = nil
	budget := MaxStateBytes - encodedSize(&rest) - len(`,"pods":[]`)
	size := make([]int, len(s.Pods))
	total := 0
	measure := func(i int) {
		total -= size[i]
		size[i] = encodedSize(&s.Pods[i]) + 1 // and its comma
		total += size[i]
	}
	for i := range s.Pods {
		measure(i)
	}
	order := s.oldestPods()
	var shed []string
	for _, level := range coarseLevels {
		n := 0
		for _, i := range order {
			if total <= budget {
				break
			}
			if s.Pods[i].coarsen(level) {
				measure(i)
				n++
			}
		}
		if n > 0 {
			shed = append(shed, fmt.Sprintf("histograms of %d pods coarsened to %d buckets", n, level))
		}
	}
	stripped, dropped := 0, 0
	for _, i := range order {
		if total <= budget {
			break
		}
		if s.Pods[i].strip() {
			measure(i)
			stripped++
		}
	}
	var gone []int
	for _, i := range order {
		if total <= budget {
			break
		}
		total -= size[i]
		gone = append(gone, i)
		dropped++
	}
	s.dropPods(gone)
	if stripped > 0 {
		shed = append(shed, fmt.Sprintf("histograms and service counters of the %d least recently seen pods", stripped))
	}
	if dropped > 0 {
		shed = append(shed, fmt.Sprintf("the %d least recently seen pods", dropped))
	}
	return shed
}

// fitRest sheds, in turn, the parts outside the pods that only cost
// precision when lost, should the state still not fit: the event
// recorder's memory, the advisory history, the startup history.
func (s *State) fitRest() []string {
	var shed []string
	steps := []struct {
		what string
		drop func()
		has  func() bool
	}{
		{"the event recorder's memory", func() { s.Events = nil }, func() bool { return s.Events != nil }},
		{"the advisory history", func() { s.Advisory = nil }, func() bool { return s.Advisory != nil }},
		{"the startup history", func() { s.Startups = nil }, func() bool { return s.Startups != nil }},
		{"the marks of the last victims", func() { s.Marked = nil }, func() bool { return s.Marked != nil }},
	}
	for _, st := range steps {
		if encodedSize(s) <= MaxStateBytes {
			break
		}
		if st.has() {
			st.drop()
			shed = append(shed, st.what)
		}
	}
	return shed
}

// oldestPods are the pods' indices, least recently seen first (by name
// among pods seen at the same time, so shedding is deterministic).
func (s *State) oldestPods() []int {
	order := make([]int, len(s.Pods))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		pa, pb := &s.Pods[order[a]], &s.Pods[order[b]]
		if !pa.SeenAt.Equal(pb.SeenAt) {
			return pa.SeenAt.Before(pb.SeenAt)
		}
		return pa.Name < pb.Name
	})
	return order
}

// dropPods removes the pods at the given indices, keeping the order.
func (s *State) dropPods(idx []int) {
	if len(idx) == 0 {
		return
	}
	gone := make([]bool, len(s.Pods))
	for _, i := range idx {
		gone[i] = true
	}
	kept := s.Pods[:0]
	for i, p := range s.Pods {
		if !gone[i] {
			kept = append(kept, p)
		}
	}
	s.Pods = kept
}

// coarsen brings every histogram of p to at most level buckets; it
// reports whether one changed.
func (p *PodCounters) coarsen(level int) bool {
	changed := false
	for _, h := range p.hists() {
		if *h != nil && len((*h).LE) > level {
			*h = (*h).Coarsen(level)
			changed = true
		}
	}
	return changed
}

// strip drops p's histograms and service counters (its request counters
// stay: the rates need only those).
func (p *PodCounters) strip() bool {
	if p.TTFT == nil && p.E2E == nil && p.ITL == nil && p.Service == nil {
		return false
	}
	p.TTFT, p.E2E, p.ITL, p.Service = nil, nil, nil, nil
	return true
}

// hists are the addresses of p's histograms.
func (p *PodCounters) hists() []**Hist {
	hs := []**Hist{&p.TTFT, &p.E2E, &p.ITL}
	if p.Service != nil {
		hs = append(hs, &p.Service.Queue, &p.Service.Prompts, &p.Service.Outputs)
	}
	return hs
}

// Coarsen returns h with at most level buckets: every k-th bound counted
// from the last (which is kept), with its cumulative count, so a delta
// against a later, finer reading is exact at the bounds kept. A histogram
// within the level is returned unchanged; h is not modified.
func (h *Hist) Coarsen(level int) *Hist {
	n := len(h.LE)
	if n <= level || level < 1 || len(h.C) != n {
		return h
	}
	step := (n + level - 1) / level
	out := &Hist{Sum: h.Sum, Count: h.Count}
	for i := (n - 1) % step; i < n; i += step {
		out.LE = append(out.LE, h.LE[i])
		out.C = append(out.C, h.C[i])
	}
	return out
}

// bound is an upper bound of the state's encoded size, cheap enough for
// every tick: a name escapes to at most 6 bytes a byte, a number is at
// most 24 bytes and its comma, a time at most 40; the service memory is
// measured.
func (s *State) bound() int {
	n := 1024 + len(s.Events) + 64*len(s.Recommendations) + 96*len(s.Advisory) + 80*(len(s.Rates)+len(s.HourlyPeaks))
	for _, st := range s.Startups {
		n += 96 + 6*len(st.Pod)
	}
	for _, m := range s.Marked {
		n += 3 + 6*len(m)
	}
	if s.Service != nil {
		n += encodedSize(s.Service)
	}
	if s.Last != nil {
		n += encodedSize(s.Last)
	}
	return n + podsBound(s.Pods)
}

// podsBound bounds the pods' encoded size: the keys, two times and eight
// numbers of a pod, its name and its five histograms.
func podsBound(ps []PodCounters) int {
	n := 0
	for i := range ps {
		p := &ps[i]
		n += 600 + 6*len(p.Name)
		for _, h := range p.hists() {
			n += histBound(*h)
		}
	}
	return n
}

func histBound(h *Hist) int {
	if h == nil {
		return 0
	}
	return 100 + 25*(len(h.LE)+len(h.C))
}
