package main

import (
	"testing"

	"github.com/inferscale/inferscale/internal/testenv"
)

// The metric stage links nothing of evaluate's decision core (its knobs
// included: a policy file's evaluate keys are known by settings.Keys), and
// no test or simulator helper.
func TestMetricLinksNoDecisionCore(t *testing.T) {
	const mod = "github.com/inferscale/inferscale/"
	testenv.ForbidDeps(t, "./metric", mod+"shared/policy", mod+"shared/sizing", mod+"shared/fleet", mod+"shared/state",
		mod+"shared/forecast", mod+"shared/model", mod+"shared/decide", mod+"internal", mod+"sim")
}
