package runner

import (
	"fmt"
	"strconv"

	"github.com/inferscale/inferscale/sim/baseline"
	"github.com/inferscale/inferscale/sim/tune"
)

// inferscaleTunables are the settings of policy v2 (the default) that the
// tuner searches: the config keys of the evaluate binary, durations in
// seconds. The others either state a goal (ttftSLO, sloAttainment), describe
// the fleet (maxNumSeqs, profile) or are learned (capacity, headroom β);
// policy v1's knobs can still be fixed in a spec ("inferscale:serviceModel=false,queueTarget=2").
func inferscaleTunables() []tune.Param {
	return []tune.Param{
		// Share of horizons the forecast's upper bound may miss: lower plans
		// for more of the burst tail.
		{Name: "forecastMiss", Min: 0.05, Max: 0.5, Default: 0.3},
		// How long a scale-down waits below the recent needs.
		{Name: "scaleDownHold", Min: 0, Max: 1800, Default: 480, Integer: true},
		// The least square-root-staffing headroom besides the learned one.
		{Name: "minHeadroom", Min: 0, Max: 3, Default: 0},
		// Waiting requests per ready pod that scale up at once.
		{Name: "queueTarget", Min: 0.5, Max: 20, Default: 3},
	}
}

// Tunables lists the searchable parameters of a policy; only restricts to
// the named ones when not empty.
func Tunables(policyName string, only []string) ([]tune.Param, error) {
	var all []tune.Param
	if policyName == "inferscale" {
		all = append(all, inferscaleTunables()...)
	} else {
		ts, ok := baseline.Tunables(policyName)
		if !ok {
			return nil, fmt.Errorf("unknown policy %q (have: %v)", policyName, Names())
		}
		for _, t := range ts {
			all = append(all, tune.Param{Name: t.Name, Min: t.Min, Max: t.Max, Default: t.Default, Integer: t.Integer})
		}
	}
	if len(only) == 0 {
		return all, nil
	}
	var out []tune.Param
	for _, n := range only {
		found := false
		for _, p := range all {
			if p.Name == n {
				out = append(out, p)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("policy %s has no tunable %q", policyName, n)
		}
	}
	return out, nil
}

// SpecWith is the spec of a policy with numeric parameters.
func SpecWith(name string, params map[string]float64) Spec {
	sp := Spec{Name: name, Params: map[string]string{}}
	for k, v := range params {
		sp.Params[k] = strconv.FormatFloat(v+0, 'g', -1, 64) // exact, so the spec replays what was measured; +0 turns -0 into 0
	}
	return sp
}
