package policy

import (
	"fmt"
	"time"

	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

// breach says which objective the fleet is missing now ("" when none):
// the TTFT or e2e p95 above its objective, over enough finished requests
// to have a quantile. Whatever caused it — waiting, prefills stretched by
// other requests' chunks, long prompts, a slow model — no scale-down
// happens while it lasts: a removal can only make it worse, and what the
// breach is attributed to is an estimate that may be wrong.
func breach(in Input, c Config) string {
	if q := in.Service.Queue; c.TTFTSLO > 0 && q.Count >= float64(max(c.LatencyMinRequests, 1)) {
		// TTFT is at least the time waited: a queue time past the
		// objective for more than 5 % of requests is a breach even where
		// no TTFT is exported.
		if waited := 1 - queueCDF(q, c.TTFTSLO.Seconds()); waited > 0.05 {
			return fmt.Sprintf("%.3g%% of requests waited longer than the TTFT objective %s", 100*waited, c.TTFTSLO)
		}
		if missed := estimatedTTFTMiss(in, c); missed > 0.05 {
			return fmt.Sprintf("the model puts %.3g%% of requests past the TTFT objective %s (time in the queue and isolated prefill: the server exports no TTFT)", 100*missed, c.TTFTSLO)
		}
	}
	if in.LatencyRequests < c.LatencyMinRequests {
		return ""
	}
	if c.TTFTSLO > 0 && in.TTFTP95 != nil && *in.TTFTP95 > c.TTFTSLO.Seconds() {
		return fmt.Sprintf("TTFT p95 %.3gs above the objective %s", *in.TTFTP95, c.TTFTSLO)
	}
	if c.E2ESLO > 0 && in.E2EP95 != nil && *in.E2EP95 > c.E2ESLO.Seconds() {
		return fmt.Sprintf("e2e p95 %.3gs above the objective %s", *in.E2EP95, c.E2ESLO)
	}
	if c.ITLSLO > 0 && in.ITLP95 != nil && *in.ITLP95 > c.ITLSLO.Seconds() {
		return fmt.Sprintf("inter-token p95 %.3gs above the objective %s", *in.ITLP95, c.ITLSLO)
	}
	return ""
}

// estimatedTTFTMiss is, on a tick that read queue times but no first
// token (the server exports no TTFT: TGI's preset), the plan's reading of
// the share of requests past the TTFT objective: their time in the queue
// and their isolated prefill together (0 otherwise, or without a plan).
// Read on the queue time alone, a missing TTFT read as no prefill at all:
// long prompts that waited little missed the objective and nothing held a
// scale-down.
func estimatedTTFTMiss(in Input, c Config) float64 {
	if p := in.Plan; ttftUnexported(in, c) && p != nil && p.TTFTMissEstimate != nil {
		return *p.TTFTMissEstimate
	}
	return 0
}

// BreachCalm is how long after a tick that read an objective breached a
// scale-down still waits. The objective is met or missed over a window,
// not a tick: a tick's p95 falls back under the objective while the
// requests of the minute before still mostly missed it, and removing pods
// the first tick the backlog has drained (two of 60 at once, on the demo
// ×4's flash crowd with less headroom) scales down in a breach as the
// minute's requests saw it. A minute matches the floor's step after a
// breach (FloorStepSeconds in shared/sizing).
const BreachCalm = time.Minute

// holdInBreach keeps target at current while an objective is breached,
// and for BreachCalm after the last tick that read one, whatever asked
// for fewer pods (only maxReplicas may still lower it). It records the
// breach in d for the state.
func holdInBreach(d *Decision, in Input, c Config, st *state.State, target int, now time.Time) int {
	d.Breach = breach(in, c)
	if target >= in.Current {
		return target
	}
	if d.Breach != "" {
		d.because("no scale-down while an objective is breached: %s", d.Breach)
	} else if since, ok := sinceBreach(st, now); ok {
		d.because("no scale-down within %s of a breach: the last tick in breach was %s ago", BreachCalm, since.Round(time.Second))
	} else {
		return target
	}
	return d.changed(StepBreachHold, target, min(in.Current, max(c.MaxReplicas, 1)))
}

// sinceBreach is how long ago the state's last breach was, and whether
// that is within BreachCalm (one dated after now, a clock stepped back,
// is not: it must not hold scale-downs until the clock catches up).
func sinceBreach(st *state.State, now time.Time) (time.Duration, bool) {
	if st == nil || st.LastBreach == nil {
		return 0, false
	}
	since := now.Sub(*st.LastBreach)
	return since, since >= 0 && since < BreachCalm
}

// queueCDF is the share of the queue-time histogram's requests that
// waited at most t seconds (linear within a bucket; what lies beyond the
// last finite bound counts as above t).
func queueCDF(h signal.Histogram, t float64) float64 {
	if h.Count <= 0 || len(h.Buckets) == 0 {
		return 1 // no buckets: nothing known about the wait
	}
	lo, loC := 0.0, 0.0
	for _, b := range h.Buckets {
		if t <= b.UpperBound {
			if b.UpperBound == lo {
				return b.Count / h.Count
			}
			return (loC + (b.Count-loC)*(t-lo)/(b.UpperBound-lo)) / h.Count
		}
		lo, loC = b.UpperBound, b.Count
	}
	return loC / h.Count
}
