package pd

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/oracle"
	"github.com/inferscale/inferscale/sim/runner"
	"github.com/inferscale/inferscale/sim/workload"
)

// The pool policies that are not runner policies: NVIDIA Dynamo's SLA
// planner in either pool ("dynamo", "dynamo:interval=60",
// "dynamo:correction=false"), and the decode pool's fixed-ratio peer
// ("ratio:k=0.2" keeps ⌈0.2 × the prefill pool's replicas⌉).
const (
	DynamoPolicy = "dynamo"
	RatioPolicy  = "ratio"
)

// Pools is a P/D pair's fleet: each pool's engine (its TTFT objective the
// leg's), the KV transfer between them, the user's TTFT objective and how
// inferscale runs.
type Pools struct {
	Prefill, Decode  engine.Config
	TransferPerToken float64 // seconds per prompt token
	SLO              float64 // the user's TTFT objective, seconds
	Options          runner.Options
}

// ParseDynamo reads and checks a dynamo spec for the pool of role whose
// inter-token objective is itl seconds; the profile is left to the
// replay.
func ParseDynamo(sp runner.Spec, role DynamoRole, itl float64) (DynamoConfig, error) {
	dc := DynamoConfig{Role: role, Interval: DefaultDynamoInterval, ITL: itl, Correction: true}
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

// ParseRatio reads a ratio spec's k.
func ParseRatio(sp runner.Spec) (float64, error) {
	for k := range sp.Params {
		if k != "k" {
			return 0, fmt.Errorf("%s: unknown parameter %q (ratio takes k)", sp, k)
		}
	}
	k, err := strconv.ParseFloat(sp.Params["k"], 64)
	if err != nil || !(k > 0) || math.IsInf(k, 0) {
		return 0, fmt.Errorf("%s: want k=<decode pods per prefill pod, > 0>", sp)
	}
	return k, nil
}

// WithITL gives every inferscale spec of list (';'-separated) without an
// itlSLO the decode pool's inter-token objective, itl seconds; a list
// that does not parse is returned as it is (its check reports it).
func WithITL(list string, itl float64) string {
	specs, err := runner.ParseSpecs(list)
	if err != nil {
		return list
	}
	parts := make([]string, len(specs))
	for i, sp := range specs {
		if sp.Name == "inferscale" && sp.Params["itlSLO"] == "" {
			sp.Params["itlSLO"] = strconv.FormatFloat(itl, 'g', -1, 64) + "s"
		}
		parts[i] = sp.String()
	}
	return strings.Join(parts, ";")
}

// ScaleOutputs multiplies every request's output tokens by f (at least 1),
// in place: a decode-heavy variant of a trace.
func ScaleOutputs(reqs []workload.Request, f float64) []workload.Request {
	if f == 1 {
		return reqs
	}
	for i := range reqs {
		reqs[i].OutputTokens = max(1, int(math.Round(float64(reqs[i].OutputTokens)*f)))
	}
	return reqs
}

// StaticSpec is an n-pod static fleet.
func StaticSpec(n int) runner.Spec {
	return runner.Spec{Name: "static", Params: map[string]string{"replicas": strconv.Itoa(n)}}
}

// replay is a runner policy's replay of a pool whose engine is cfg; a
// decision log it writes is named logName, after Options.LogName where
// that is set.
func (p Pools) replay(cfg engine.Config, sp runner.Spec, logName string) Replay {
	opts := p.Options
	if logName != "" && opts.LogName != "" {
		// The caller's name (a bar cell's) first: one file a cell and pool.
		logName = opts.LogName + "-" + logName
	}
	opts.LogName = logName
	return func(ctx context.Context, reqs []workload.Request) (*engine.Result, error) {
		b, err := runner.Build(sp, cfg, opts)
		if err != nil {
			return nil, err
		}
		res, err := runner.Run(ctx, cfg, reqs, b)
		if cerr := b.Close(); err == nil && cerr != nil {
			err = cerr
		}
		return res, err
	}
}

// PrefillReplay is the prefill pool's replay under sp (a runner policy or
// dynamo).
func (p Pools) PrefillReplay(sp runner.Spec) (Replay, error) {
	switch sp.Name {
	case DynamoPolicy:
		return p.dynamoReplay(sp, DynamoPrefill, p.Prefill)
	case RatioPolicy:
		return nil, fmt.Errorf("%s follows the prefill pool: a decode policy", sp)
	}
	return p.replay(p.Prefill, sp, "prefill-"+sp.String()), nil
}

// DecodeReplay is the decode pool's replay under sp after the prefill
// replay pre, which the ratio peer follows.
func (p Pools) DecodeReplay(sp runner.Spec, pre *engine.Result) (Replay, error) {
	switch sp.Name {
	case DynamoPolicy:
		return p.dynamoReplay(sp, DynamoDecode, p.Decode)
	case RatioPolicy:
		k, err := ParseRatio(sp)
		if err != nil {
			return nil, err
		}
		pol, err := NewRatio(k, pre)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, reqs []workload.Request) (*engine.Result, error) {
			return runner.Run(ctx, p.Decode, reqs, &runner.Built{Policy: pol, Close: func() error { return nil }})
		}, nil
	}
	return p.replay(p.Decode, sp, "decode-"+sp.String()+"-after-"+pre.Policy), nil
}

// dynamoReplay replays a pool under a fresh Dynamo planner, profiled
// offline on the pool's own engine model before the replay.
func (p Pools) dynamoReplay(sp runner.Spec, role DynamoRole, cfg engine.Config) (Replay, error) {
	dc, err := ParseDynamo(sp, role, cfg.TPOTSLOSeconds)
	if err != nil {
		return nil, err
	}
	if dc.Profile, err = ProfileDynamo(cfg.Model); err != nil {
		return nil, err
	}
	if _, err := NewDynamo(dc); err != nil {
		return nil, fmt.Errorf("%s: %w", sp, err)
	}
	return func(ctx context.Context, reqs []workload.Request) (*engine.Result, error) {
		pol, err := NewDynamo(dc)
		if err != nil {
			return nil, err
		}
		return runner.Run(ctx, cfg, reqs, &runner.Built{Policy: pol, Close: func() error { return nil }})
	}, nil
}

// Pair replays the prefill pool under prefill and the decode pool under
// decode.
func (p Pools) Pair(ctx context.Context, reqs []workload.Request, prefill, decode runner.Spec) (*Result, error) {
	rep, err := p.PrefillReplay(prefill)
	if err != nil {
		return nil, err
	}
	pre, err := rep(ctx, PrefillRequests(reqs))
	if err != nil {
		return nil, fmt.Errorf("prefill pool: %w", err)
	}
	dec, err := p.DecodeReplay(decode, pre)
	if err != nil {
		return nil, err
	}
	return RunDecode(ctx, reqs, pre, dec, p.TransferPerToken, p.SLO)
}

// StaticDecode is RunDecode with an n-pod static decode pool after the
// prefill replay pre.
func (p Pools) StaticDecode(ctx context.Context, reqs []workload.Request, pre *engine.Result, n int) (*Result, error) {
	return RunDecode(ctx, reqs, pre, p.replay(p.Decode, StaticSpec(n), ""), p.TransferPerToken, p.SLO)
}

// StaticPrefill replays an n-pod static prefill pool.
func (p Pools) StaticPrefill(ctx context.Context, reqs []workload.Request, n int) (*engine.Result, error) {
	return p.replay(p.Prefill, StaticSpec(n), "")(ctx, PrefillRequests(reqs))
}

// OraclePair is the oracle per pool: sim/oracle for target on the prefill
// pool's one-token workload, then on the decode workload its replay
// produces, holding the ITL objective too, composed into the user's view.
// It returns each pool's cheapest static count meeting target on its own
// leg as well (0: none does).
func (p Pools) OraclePair(ctx context.Context, reqs []workload.Request, target float64) (res *Result, prefillStatic, decodeStatic int, err error) {
	porc, err := oracle.Search(ctx, p.Prefill, PrefillRequests(reqs), oracle.Options{Target: target})
	if err != nil {
		return nil, 0, 0, fmt.Errorf("prefill pool oracle: %w", err)
	}
	dreqs, from, err := DecodeRequests(reqs, porc.Run.TTFT, p.TransferPerToken)
	if err != nil {
		return nil, 0, 0, err
	}
	dorc, err := oracle.Search(ctx, p.Decode, dreqs, oracle.Options{Target: target, ITL: true})
	if err != nil {
		return nil, 0, 0, fmt.Errorf("decode pool oracle: %w", err)
	}
	res, err = Compose(reqs, porc.Run, dorc.Run, from, p.TransferPerToken, p.SLO)
	return res, porc.Static, dorc.Static, err
}

// Infeasible is the requests of reqs no pair of these pools serves in
// time (the package's Infeasible on the prefill pool's model).
func (p Pools) Infeasible(reqs []workload.Request) int {
	return Infeasible(reqs, p.Prefill.Model, p.TransferPerToken, p.SLO)
}
