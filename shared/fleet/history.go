package fleet

import (
	"math"
	"sort"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

// noteStartup records a ready pod's startup once. Once the history is
// full, only pods that became ready in the last ten minutes are added, so
// a large fleet does not churn the history with old startups.
func (a *aggregation) noteStartup(p *signal.Pod) {
	if !p.Ready || p.StartupSeconds == nil {
		return
	}
	if len(a.startups) >= state.MaxStartups && (p.ReadyAt == nil || a.now.Sub(*p.ReadyAt) > 10*time.Minute) {
		return
	}
	for _, s := range a.startups {
		if s.Pod == p.Name {
			return
		}
	}
	at := a.now
	if p.ReadyAt != nil {
		at = *p.ReadyAt
	}
	s := state.Startup{Pod: p.Name, Seconds: *p.StartupSeconds, At: at}
	a.obs.Startups = append(a.obs.Startups, s)
	a.startups = state.WithStartups(a.startups, s)
}

// addRate records this tick's arrival rate for the trend and the peak.
func (a *aggregation) addRate(rps float64) {
	r := state.RateSample{At: a.now, RPS: rps}
	a.obs.Rate, a.obs.RateKeep = &r, max(a.opt.TrendWindow, a.opt.PeakWindow)
}

// learnCapacity learns the per-pod capacity from the throughput of the
// pods measured tick to tick (pods that just became ready are still
// warming up, and pods whose scrape lags are left out) while the queue
// per reporting pod was at the saturation level at both ends of the tick:
// a slowly decaying maximum of those samples, since a saturated tick can
// only under-state the capacity (preemptions, a pod that just joined),
// while a lasting change of the request mix still pulls the estimate down
// over a few dozen ticks.
func (a *aggregation) learnCapacity() {
	var queue float64
	if a.complete > 0 {
		queue = a.v.Waiting / float64(a.complete)
		a.obs.Queue = new(queue)
	}
	known := a.prev.PodCapacityRPS
	if a.estN == 0 || a.estThr <= 0 {
		return
	}
	perPod := a.estThr / float64(a.estN)
	saturatedBefore := a.prev.LastQueue != nil && *a.prev.LastQueue >= a.opt.SaturationWaiting
	switch {
	case queue >= a.opt.SaturationWaiting && saturatedBefore:
		if known == nil || perPod >= *known {
			a.obs.PodCapacityRPS = new(perPod)
		} else {
			a.obs.PodCapacityRPS = new(0.95*(*known) + 0.05*perPod)
		}
	case a.estN == a.v.Ready && known != nil && perPod > *known:
		// Unsaturated pods served more than the estimate: it was low.
		a.obs.PodCapacityRPS = new(perPod)
	}
}

// finishHistory fills what the view reads from the history as this tick
// leaves it: the peak and trend of the arrival rate, the learned
// capacity and the startup time.
func (a *aggregation) finishHistory() {
	v, opt := &a.v, a.opt
	rates := a.prev.Rates
	if a.obs.Rate != nil {
		rates = state.WithRate(rates, *a.obs.Rate, a.obs.RateKeep)
	}
	for _, r := range rates {
		if age := a.now.Sub(r.At); age >= 0 && age <= opt.PeakWindow && (v.RatePeak == nil || r.RPS > *v.RatePeak) {
			v.RatePeak = new(r.RPS)
		}
	}
	if slope, level, ok := trend(rates, a.now, opt.TrendWindow); ok {
		v.RateTrend, v.RateFitted = new(slope), new(math.Max(0, level))
	}
	if c := a.obs.PodCapacityRPS; c != nil {
		v.PodCapacityRPS = new(*c)
	} else if c := a.prev.PodCapacityRPS; c != nil {
		v.PodCapacityRPS = new(*c)
	}
	v.StartupSeconds, v.StartupObserved = startupP90(a.startups, opt.DefaultStartup)
}

func startupP90(ss []state.Startup, def time.Duration) (float64, int) {
	n := len(ss)
	if n == 0 {
		return def.Seconds(), 0
	}
	xs := make([]float64, n)
	for i, s := range ss {
		xs[i] = s.Seconds
	}
	sort.Float64s(xs)
	idx := int(math.Ceil(0.9*float64(n))) - 1
	return xs[max(0, idx)], n
}

// trend fits a least-squares line to the rate samples within window and
// returns its slope and its value at now.
func trend(rs []state.RateSample, now time.Time, window time.Duration) (slope, level float64, ok bool) {
	var n, sx, sy, sxx, sxy float64
	for _, r := range rs {
		age := now.Sub(r.At)
		if age > window || age < 0 {
			continue
		}
		x := -age.Seconds()
		n++
		sx += x
		sy += r.RPS
		sxx += x * x
		sxy += x * r.RPS
	}
	if n < 3 {
		return 0, 0, false
	}
	den := n*sxx - sx*sx
	if den <= 0 {
		return 0, 0, false
	}
	slope = (n*sxy - sx*sy) / den
	return slope, (sy - slope*sx) / n, true
}
