package history

import (
	"time"

	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/sim/scaler"
)

// Recorder wraps a policy under simulation and keeps every pod scrape the
// metric pipeline showed it, once each and in time order: the history a
// Prometheus scraping the pods at the policy's period would hold (see
// engine.WriteOpenMetrics to write it for a backfill).
type Recorder struct {
	scaler.Autoscaler
	Scrapes []*signal.Pod
	last    map[string]time.Time
}

// Recommend implements scaler.Autoscaler.
func (r *Recorder) Recommend(obs scaler.Observation) (int, error) {
	if r.last == nil {
		r.last = map[string]time.Time{}
	}
	for _, pv := range obs.Pods {
		m := pv.Metrics
		if m == nil || !m.ScrapeTime.After(r.last[pv.Name]) {
			continue
		}
		r.last[pv.Name] = m.ScrapeTime
		r.Scrapes = append(r.Scrapes, m)
	}
	return r.Autoscaler.Recommend(obs)
}
