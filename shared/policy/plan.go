package policy

import (
	"fmt"

	"github.com/inferscale/inferscale/shared/sizing"
)

// RuleSizing is policy v2's plan as a rule.
const RuleSizing = "sizing"

// sizingRule is policy v2's plan (package sizing): the smallest fleet
// whose expected TTFT misses over the forecast horizon stay within the
// objective, by the learned service model and staffing curve. It is over
// when that fleet is larger than the replicas already asked for (pods
// starting count: their capacity is on its way), and low when the largest
// need of the hold is smaller. Without a demand reading it is neither: an
// unknown load never reads as low.
func sizingRule(in Input, c Config) Rule {
	r := Rule{Name: RuleSizing}
	p := in.Plan
	if p == nil || !p.Valid {
		r.Note = "no demand reading this tick: nothing sized"
		return r
	}
	avail := in.avail()
	r.Value = new(float64(p.Need))
	r.Threshold = float64(avail)
	r.Over = p.Need > avail
	r.Low = p.Warm && p.Hold < avail
	r.Note = planNote(p)
	if r.Over {
		r.Proposal = p.Need + in.Stuck
	}
	return r
}

// planNote is the sentence that explains a plan.
func planNote(p *sizing.Assessment) string {
	f := p.Forecast
	bound := fmt.Sprintf("at q%.3g", f.Quantile)
	if p.StandIn {
		bound = "(the warm-up's stand-in for the unranked bound; the surge reserve is over the point)"
	}
	reserve := "the prior"
	if p.ReserveLearned {
		reserve = "learned from the last hour's horizons"
	}
	return fmt.Sprintf("demand %.3g pods of work ((%.3g req/s + backlog %.3g) × %.3g GPU-s); arrivals forecast %.3g req/s over H=%.0fs (level %.3g, trend %+.3g/s), "+
		"upper %.3g %s; one pod carries %.3g (%s-bound, %.3g req/s; %s model, %d samples); "+
		"R=%.3g pods + headroom β %.2g·√R (least %.2g, the %s margin, %.2gs of slack to wait, arrivals' peakedness z %.3g), surge reserve %.0f%% (%s) -> %d pods, hold %d for %.0fs",
		p.Demand, p.ArrivalRate, p.Backlog, p.WorkPerRequest, f.Point, f.Horizon, f.Level, f.Trend, f.Upper, bound,
		p.Ceiling.Utilisation, p.Ceiling.Bound, p.Ceiling.RequestsPerSecond, p.ParamsSource, p.Samples,
		p.Offered, p.Beta, p.LeastBeta, p.LeastBy, p.QueueSlack, p.Peakedness, 100*p.Reserve, reserve, p.Need, p.Hold, p.HoldSeconds)
}

// queueingMiss is the plan's reading of the share of this tick's
// requests that load pushed past the objective — waiting, and in a breach
// prefills stretched by other requests' chunks (nil without a plan or a
// reading).
func queueingMiss(p *sizing.Assessment) *float64 {
	if p == nil || !p.Valid {
		return nil
	}
	return p.LoadMiss
}
