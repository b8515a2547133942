package history

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/inferscale/inferscale/sim/workload"
)

// MinWindowObservations: a window with fewer finished requests takes its
// length distribution from the whole period instead of its own buckets.
const MinWindowObservations = 50

// Rebuild makes the requests of the recorded period, offsets from Start:
// in each window as many arrivals as Recorded.Arrivals says (a fractional
// count rounded at random, so that no volume is lost on average), at
// uniform random times, which makes a Poisson process of the window's rate;
// prompt and output lengths drawn independently from the window's
// histograms (the period's when the window has few observations): a
// bucket with its recorded probability, then a length within it from a
// log-normal fitted to the whole period's histogram, so that bucket
// masses are kept exactly and the shape inside a bucket is plausible.
// vLLM's histograms do not pair a prompt with its output, so neither does
// the rebuild.
func (r *Recorded) Rebuild(seed int64) ([]workload.Request, error) {
	if len(r.Arrivals) == 0 {
		return nil, errors.New("rebuild: no windows")
	}
	total, err := r.requests()
	if err != nil {
		return nil, err
	}
	prompt, err := newLengths(r.Prompt)
	if err != nil {
		return nil, fmt.Errorf("rebuild prompt lengths: %w", err)
	}
	output, err := newLengths(r.Output)
	if err != nil {
		return nil, fmt.Errorf("rebuild output lengths: %w", err)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
	out := make([]workload.Request, 0, total+len(r.Arrivals))
	for k, n := range r.Arrivals {
		count := int(n)
		if rng.Float64() < n-float64(count) {
			count++
		}
		times := make([]time.Duration, count)
		for i := range times {
			times[i] = time.Duration((float64(k) + rng.Float64()) * float64(r.Step))
		}
		slices.Sort(times)
		for _, t := range times {
			out = append(out, workload.Request{Arrival: t, InputTokens: prompt.draw(rng, k), OutputTokens: output.draw(rng, k)})
		}
	}
	if len(out) == 0 {
		return nil, errors.New("rebuild: the recorded period holds no requests")
	}
	return out, nil
}

// MaxRebuildRequests bounds the requests one rebuild makes (each is held in
// memory and replayed): 1e7 requests per window ran out of memory.
const MaxRebuildRequests = 5_000_000

// requests is how many requests the windows' arrivals add up to: an error
// when one is not a finite count or the whole is above MaxRebuildRequests,
// before anything is allocated for them.
func (r *Recorded) requests() (int, error) {
	total := 0.0
	for k, n := range r.Arrivals {
		if !finiteNonNeg(n) || n > MaxRebuildRequests {
			return 0, fmt.Errorf("rebuild: window %d holds %g arrivals, not a count between 0 and %d", k, n, MaxRebuildRequests)
		}
		total += n
	}
	if total > MaxRebuildRequests {
		return 0, fmt.Errorf("rebuild: the period holds %.0f requests, more than the %d one replay holds; take a shorter period or a narrower selector", total, MaxRebuildRequests)
	}
	return int(total), nil
}

// lengths draws token counts from one histogram series.
type lengths struct {
	bounds    []float64 // bucket k spans (bounds[k-1], bounds[k]]; bounds[-1]=0, last +Inf
	global    []float64 // cumulative probabilities over the period
	perWindow [][]float64
	mu, sigma float64 // log-normal fitted to the period
}

func newLengths(h Histograms) (*lengths, error) {
	total, _ := h.Total()
	n := 0.0
	for _, c := range total {
		n += c
	}
	if n <= 0 {
		return nil, errors.New("the histogram has no observations in the period")
	}
	l := &lengths{bounds: append(slices.Clone(h.Bounds), math.Inf(1)), global: cumulative(total)}
	for _, c := range h.Counts {
		if sum(c) >= MinWindowObservations {
			l.perWindow = append(l.perWindow, cumulative(c))
		} else {
			l.perWindow = append(l.perWindow, nil)
		}
	}
	l.mu, l.sigma = fitLogNormal(l.bounds, total)
	return l, nil
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

// cumulative turns counts into cumulative probabilities.
func cumulative(c []float64) []float64 {
	out := make([]float64, len(c))
	s, t := 0.0, sum(c)
	for i, v := range c {
		s += v
		out[i] = s / t
	}
	return out
}

func (l *lengths) draw(rng *rand.Rand, window int) int {
	cdf := l.global
	if window < len(l.perWindow) && l.perWindow[window] != nil {
		cdf = l.perWindow[window]
	}
	b := sort.SearchFloat64s(cdf, rng.Float64())
	b = min(b, len(cdf)-1)
	lo := 0.0
	if b > 0 {
		lo = l.bounds[b-1]
	}
	hi := l.bounds[b]
	x := l.within(rng, lo, hi)
	tokens := int(math.Ceil(x))
	if !math.IsInf(hi, 1) {
		tokens = min(tokens, int(math.Floor(hi)))
	}
	return max(tokens, int(math.Floor(lo))+1, 1)
}

// within draws from the fitted log-normal restricted to (lo, hi].
func (l *lengths) within(rng *rand.Rand, lo, hi float64) float64 {
	cdf := func(x float64) float64 {
		if x <= 0 {
			return 0
		}
		return 0.5 * math.Erfc(-(math.Log(x)-l.mu)/(l.sigma*math.Sqrt2))
	}
	plo, phi := cdf(lo), cdf(hi)
	if math.IsInf(hi, 1) {
		phi = 1
	}
	if phi-plo < 1e-12 { // far in a tail of the fit: uniform in the bucket
		if math.IsInf(hi, 1) {
			hi = 2 * math.Max(lo, 1)
		}
		return lo + rng.Float64()*(hi-lo)
	}
	p := plo + rng.Float64()*(phi-plo)
	p = math.Min(math.Max(p, 1e-15), 1-1e-15)
	x := math.Exp(l.mu + l.sigma*math.Sqrt2*math.Erfinv(2*p-1))
	if !math.IsInf(hi, 1) {
		x = math.Min(x, hi)
	} else {
		x = math.Min(x, 4*math.Max(lo, 1)) // keep the open bucket's tail sane
	}
	return math.Max(x, lo)
}

// fitLogNormal is the maximum-likelihood log-normal of bucketed data
// (interval-censored: each observation lies somewhere in its bucket).
func fitLogNormal(bounds, counts []float64) (mu, sigma float64) {
	ll := func(mu, sigma float64) float64 {
		s, prev := 0.0, 0.0
		for i, c := range counts {
			p := 1.0
			if !math.IsInf(bounds[i], 1) {
				p = 0.5 * math.Erfc(-(math.Log(bounds[i])-mu)/(sigma*math.Sqrt2))
			}
			if c > 0 {
				s += c * math.Log(math.Max(p-prev, 1e-300))
			}
			prev = p
		}
		return s
	}
	// Start from the bucket holding the median, σ = 1.
	cdf := cumulative(counts)
	m := sort.SearchFloat64s(cdf, 0.5)
	m = min(m, len(bounds)-1)
	hi := bounds[m]
	if math.IsInf(hi, 1) {
		hi = bounds[max(m-1, 0)]
	}
	mu, sigma = math.Log(math.Max(hi, 1)), 1.0
	best := ll(mu, sigma)
	for step := 1.0; step > 1e-4; {
		improved := false
		for _, d := range [][2]float64{{step, 0}, {-step, 0}, {0, step}, {0, -step}} {
			m2, s2 := mu+d[0], sigma+d[1]
			if s2 < 0.01 || s2 > 10 {
				continue
			}
			if v := ll(m2, s2); v > best {
				mu, sigma, best, improved = m2, s2, v, true
			}
		}
		if !improved {
			step /= 2
		}
	}
	return mu, sigma
}
