package baseline

import (
	"errors"
	"time"

	"github.com/inferscale/inferscale/sim/scaler"
)

// Static provisions a fixed number of replicas (the caller sizes it for
// the peak): the upper bound on cost.
type Static struct {
	replicas int
	period   time.Duration
}

// NewStatic returns a policy that always asks for replicas (0: MaxReplicas).
func NewStatic(replicas int) (*Static, error) {
	if replicas < 0 {
		return nil, errors.New("static: negative replica count")
	}
	return &Static{replicas: replicas, period: 15 * time.Second}, nil
}

// Name implements scaler.Autoscaler.
func (s *Static) Name() string { return "static" }

// Period implements scaler.Autoscaler.
func (s *Static) Period() time.Duration { return s.period }

// Recommend returns the fixed count within the bounds.
func (s *Static) Recommend(obs scaler.Observation) (int, error) {
	n := s.replicas
	if n == 0 {
		n = obs.MaxReplicas
	}
	return clamp(n, obs.MinReplicas, obs.MaxReplicas), nil
}

func staticPreset() preset {
	return preset{
		tunables: []Tunable{{Name: "replicas", Default: 0, Min: 0, Max: 10000, Integer: true,
			Doc: "fixed replica count; 0 means maxReplicas"}},
		build: func(v Params) (scaler.Autoscaler, error) { return NewStatic(int(v["replicas"])) },
	}
}
