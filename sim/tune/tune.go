// Package tune searches a policy's parameters for the fewest GPU-hours at
// a target SLO attainment on a given trace, so that comparisons are made
// against tuned baselines rather than strawmen. The search is a
// coordinate descent over a grid per parameter (log-spaced where the range
// spans a decade or more), repeated for a few passes; a setting that meets
// the target always beats one that does not, and among those that do the
// cheaper wins (among those that do not, the higher attainment).
package tune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Param is one searchable parameter.
type Param struct {
	Name     string
	Min, Max float64
	Default  float64
	Integer  bool
}

// Outcome is what one trial measured.
type Outcome struct {
	Attainment float64
	GPUHours   float64
}

// Trial is one evaluated setting.
type Trial struct {
	Params  map[string]float64
	Outcome Outcome
}

// Evaluate replays the trace with the given parameters.
type Evaluate func(ctx context.Context, params map[string]float64) (Outcome, error)

// Options tune the search itself.
type Options struct {
	Target float64 // attainment to reach, e.g. 0.99
	Grid   int     // values per parameter per pass (default 7)
	Passes int     // coordinate passes (default 2)
	// OnTrial, when set, sees every trial (progress reporting).
	OnTrial func(Trial)
}

// Result is the best setting found.
type Result struct {
	Best   Trial
	Met    bool // Best reaches the target
	Trials []Trial
}

// better reports whether a beats b for the target.
func better(a, b Outcome, target float64) bool {
	am, bm := a.Attainment >= target, b.Attainment >= target
	switch {
	case am && !bm:
		return true
	case !am && bm:
		return false
	case am && bm:
		return a.GPUHours < b.GPUHours
	}
	return a.Attainment > b.Attainment
}

// Grid returns the candidate values of p.
func Grid(p Param, n int) []float64 {
	if n < 2 {
		n = 2
	}
	var out []float64
	logScale := p.Min > 0 && p.Max/p.Min >= 10
	for i := 0; i < n; i++ {
		f := float64(i) / float64(n-1)
		v := p.Min + f*(p.Max-p.Min)
		if logScale {
			v = p.Min * math.Pow(p.Max/p.Min, f)
		}
		if p.Integer {
			v = math.Round(v)
		} else {
			v = round3(v)
		}
		out = append(out, min(max(v, p.Min), p.Max))
	}
	out = append(out, p.Default)
	sort.Float64s(out)
	uniq := out[:0]
	for i, v := range out {
		if i == 0 || v != out[i-1] {
			uniq = append(uniq, v)
		}
	}
	return uniq
}

// round3 keeps three significant digits, so that settings print short
// and exactly (a printed setting must replay as the one measured).
func round3(v float64) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	scale := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*scale) / scale
}

// Search runs the coordinate search.
func Search(ctx context.Context, params []Param, eval Evaluate, opt Options) (*Result, error) {
	if len(params) == 0 {
		return nil, errors.New("tune: no parameters to search")
	}
	if opt.Target <= 0 || opt.Target > 1 {
		return nil, fmt.Errorf("tune: target %g must be in (0, 1]", opt.Target)
	}
	if opt.Grid == 0 {
		opt.Grid = 7
	}
	if opt.Passes == 0 {
		opt.Passes = 2
	}
	for _, p := range params {
		if math.IsNaN(p.Min) || math.IsNaN(p.Max) || p.Min > p.Max || p.Default < p.Min || p.Default > p.Max {
			return nil, fmt.Errorf("tune: parameter %s has a bad range [%g, %g] or default %g", p.Name, p.Min, p.Max, p.Default)
		}
	}
	res := &Result{}
	seen := map[string]Outcome{}
	try := func(set map[string]float64) (Outcome, error) {
		key := Key(set)
		if o, ok := seen[key]; ok {
			return o, nil
		}
		o, err := eval(ctx, set)
		if err != nil {
			return Outcome{}, fmt.Errorf("trial %s: %w", key, err)
		}
		seen[key] = o
		t := Trial{Params: clone(set), Outcome: o}
		res.Trials = append(res.Trials, t)
		if opt.OnTrial != nil {
			opt.OnTrial(t)
		}
		return o, nil
	}
	cur := map[string]float64{}
	for _, p := range params {
		cur[p.Name] = p.Default
	}
	best, err := try(cur)
	if err != nil {
		return nil, err
	}
	for pass := 0; pass < opt.Passes; pass++ {
		improved := false
		for _, p := range params {
			for _, v := range Grid(p, opt.Grid) {
				if v == cur[p.Name] {
					continue
				}
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				cand := clone(cur)
				cand[p.Name] = v
				o, err := try(cand)
				if err != nil {
					return nil, err
				}
				if better(o, best, opt.Target) {
					best, cur, improved = o, cand, true
				}
			}
		}
		if !improved {
			break
		}
	}
	res.Best = Trial{Params: clone(cur), Outcome: best}
	res.Met = best.Attainment >= opt.Target
	return res, nil
}

// Key prints a setting as sorted k=v pairs (the runner's spec syntax).
func Key(set map[string]float64) string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.FormatFloat(set[k]+0, 'g', -1, 64) // exact; +0 turns -0 into 0
	}
	return strings.Join(parts, ",")
}

func clone(m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
