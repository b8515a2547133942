package fleet

import "github.com/inferscale/inferscale/shared/signal"

// histDelta returns cur minus prev bucket by bucket. When the histogram was
// reset (any count went down) or prev is absent, cur itself is the delta
// (everything it counts happened since the reset). ok is false when the
// bucket layouts differ and no delta can be formed, or when the delta's
// mean observation is one no server makes (plausibleDelta).
func histDelta(cur, prev *signal.Histogram) (d signal.Histogram, ok bool) {
	if cur == nil {
		return signal.Histogram{}, false
	}
	if prev == nil || cur.Count < prev.Count {
		return copyHist(cur), true
	}
	if len(cur.Buckets) != len(prev.Buckets) {
		// A baseline the state coarsened (state.Hist.Coarsen) keeps some
		// of cur's bounds: the delta is exact at those.
		proj, ok := project(cur, prev)
		if !ok {
			return signal.Histogram{}, false
		}
		cur = &proj
	}
	d.Buckets = make([]signal.Bucket, len(cur.Buckets))
	for i, b := range cur.Buckets {
		p := prev.Buckets[i]
		if b.UpperBound != p.UpperBound {
			return signal.Histogram{}, false
		}
		if b.Count < p.Count {
			return copyHist(cur), true // reset
		}
		d.Buckets[i] = signal.Bucket{UpperBound: b.UpperBound, Count: b.Count - p.Count}
	}
	d.Count = cur.Count - prev.Count
	d.Sum = cur.Sum - prev.Sum
	return d, plausibleDelta(d)
}

// project reads cur at prev's bounds when every one of them is one of
// cur's (ok false otherwise).
func project(cur, prev *signal.Histogram) (signal.Histogram, bool) {
	out := signal.Histogram{Sum: cur.Sum, Count: cur.Count, Buckets: make([]signal.Bucket, 0, len(prev.Buckets))}
	j := 0
	for _, p := range prev.Buckets {
		for j < len(cur.Buckets) && cur.Buckets[j].UpperBound != p.UpperBound {
			j++
		}
		if j == len(cur.Buckets) {
			return signal.Histogram{}, false
		}
		out.Buckets = append(out.Buckets, cur.Buckets[j])
		j++
	}
	return out, true
}

func copyHist(h *signal.Histogram) signal.Histogram {
	c := signal.Histogram{Sum: h.Sum, Count: h.Count, Buckets: make([]signal.Bucket, len(h.Buckets))}
	copy(c.Buckets, h.Buckets)
	return c
}

// merge adds d into acc. Histograms with another bucket layout are merged
// onto acc's bounds by reading d's cumulative step function at each bound
// (an under-estimate inside a bucket, exact at shared bounds).
func merge(acc *signal.Histogram, d signal.Histogram) {
	if acc.Buckets == nil && acc.Count == 0 {
		*acc = d
		acc.Buckets = append([]signal.Bucket(nil), d.Buckets...)
		return
	}
	same := len(acc.Buckets) == len(d.Buckets)
	for i := 0; same && i < len(d.Buckets); i++ {
		same = acc.Buckets[i].UpperBound == d.Buckets[i].UpperBound
	}
	for i := range acc.Buckets {
		if same {
			acc.Buckets[i].Count += d.Buckets[i].Count
			continue
		}
		acc.Buckets[i].Count += cumulativeAt(d, acc.Buckets[i].UpperBound)
	}
	acc.Count += d.Count
	acc.Sum += d.Sum
}

func cumulativeAt(h signal.Histogram, le float64) float64 {
	c := 0.0
	for _, b := range h.Buckets {
		if b.UpperBound > le {
			break
		}
		c = b.Count
	}
	return c
}
