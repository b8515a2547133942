package main

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/pd"
	"github.com/inferscale/inferscale/sim/runner"
	"github.com/inferscale/inferscale/sim/workload"
)

// dynamoPolicy is the Dynamo SLA planner peer of either pool (pd.Dynamo):
// "dynamo", "dynamo:interval=60" (seconds, or a duration such as 3m),
// "dynamo:correction=false".
const dynamoPolicy = "dynamo"

// dynamoConfig reads and checks a dynamo spec for the pool of role whose
// engine is cfg; the profile is left to dynamoReplayer.
func dynamoConfig(sp runner.Spec, role pd.DynamoRole, cfg engine.Config) (pd.DynamoConfig, error) {
	dc := pd.DynamoConfig{Role: role, Interval: pd.DefaultDynamoInterval, ITL: cfg.TPOTSLOSeconds, Correction: true}
	for k, v := range sp.Params {
		var err error
		want := ""
		switch k {
		case "interval":
			dc.Interval, err = secondsOrDuration(v)
			want = "interval=<seconds ≥ 15, or a duration such as 3m>"
		case "correction":
			dc.Correction, err = strconv.ParseBool(v)
			want = "correction=<true|false>"
		default:
			return dc, fmt.Errorf("%s: unknown parameter %q (dynamo takes interval, correction)", sp, k)
		}
		if err != nil {
			return dc, fmt.Errorf("%s: %s=%q: want %s", sp, k, v, want)
		}
	}
	if err := dc.Check(); err != nil {
		return dc, fmt.Errorf("%s: %w", sp, err)
	}
	return dc, nil
}

// secondsOrDuration reads "180" (seconds) or "3m".
func secondsOrDuration(v string) (time.Duration, error) {
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if math.IsNaN(s) || math.IsInf(s, 0) || math.Abs(s) > 1e9 {
			return 0, fmt.Errorf("%g seconds", s)
		}
		return time.Duration(s * float64(time.Second)), nil
	}
	return time.ParseDuration(v)
}

// dynamoReplayer replays a pool under a fresh Dynamo planner, profiled
// offline on the pool's own engine model before the replay.
func (s *pdSetup) dynamoReplayer(sp runner.Spec, role pd.DynamoRole, cfg engine.Config) (pd.Replay, error) {
	dc, err := dynamoConfig(sp, role, cfg)
	if err != nil {
		return nil, err
	}
	if dc.Profile, err = pd.ProfileDynamo(cfg.Model); err != nil {
		return nil, err
	}
	if _, err := pd.NewDynamo(dc); err != nil {
		return nil, fmt.Errorf("%s: %w", sp, err)
	}
	return func(ctx context.Context, reqs []workload.Request) (*engine.Result, error) {
		pol, err := pd.NewDynamo(dc)
		if err != nil {
			return nil, err
		}
		return runner.Run(ctx, cfg, reqs, &runner.Built{Policy: pol, Close: func() error { return nil }})
	}, nil
}
