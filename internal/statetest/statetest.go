// Package statetest builds evaluate states for tests.
package statetest

import (
	"time"

	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

// Sample is a state with something in every part, recorded at at: two
// pods (one with a TTFT histogram), a startup, a rate, a recommendation,
// an hourly peak, the observed replicas and a GPU EWMA that is not exactly
// representable (a round trip must keep it bit for bit).
func Sample(at time.Time) *state.State {
	st := state.New()
	st.Record(state.Tick{At: at,
		Observed: state.Observed{
			Pods: []state.PodCounters{
				{Name: "b", ScrapeTime: at, SeenAt: at, RequestsTotal: signal.F(1e6 / 3)},
				{Name: "a", ScrapeTime: at, SeenAt: at,
					TTFT: state.HistOf(&signal.Histogram{Buckets: []signal.Bucket{{UpperBound: 0.1, Count: 3}}, Sum: 0.123456789, Count: 4})},
			},
			Startups:    []state.Startup{{Pod: "a", Seconds: 61.5, At: at}},
			GPUUtilEWMA: signal.F(0.1 + 0.2),
			Rate:        &state.RateSample{At: at, RPS: 7.25}, RateKeep: time.Minute,
		},
		Decided: state.Decided{Replicas: 3, Recommendation: 3, RecommendationKeep: time.Minute, Need: 5},
	})
	return st
}
