package policy

import "fmt"

// breach says which objective the fleet is missing now ("" when none):
// the TTFT or e2e p95 above its objective, over enough finished requests
// to have a quantile. Whatever caused it — waiting, prefills stretched by
// other requests' chunks, long prompts, a slow model — no scale-down
// happens while it lasts: a removal can only make it worse, and what the
// breach is attributed to is an estimate that may be wrong.
func breach(in Input, c Config) string {
	if in.LatencyRequests < c.LatencyMinRequests {
		return ""
	}
	if c.TTFTSLO > 0 && in.TTFTP95 != nil && *in.TTFTP95 > c.TTFTSLO.Seconds() {
		return fmt.Sprintf("TTFT p95 %.3gs above the objective %s", *in.TTFTP95, c.TTFTSLO)
	}
	if c.E2ESLO > 0 && in.E2EP95 != nil && *in.E2EP95 > c.E2ESLO.Seconds() {
		return fmt.Sprintf("e2e p95 %.3gs above the objective %s", *in.E2EP95, c.E2ESLO)
	}
	return ""
}

// holdInBreach keeps target at current while an objective is breached,
// whatever asked for fewer pods (only maxReplicas may still lower it).
func holdInBreach(d *Decision, in Input, c Config, target int) int {
	if target >= in.Current {
		return target
	}
	why := breach(in, c)
	if why == "" {
		return target
	}
	d.because("no scale-down while an objective is breached: %s", why)
	return min(in.Current, max(c.MaxReplicas, 1))
}
