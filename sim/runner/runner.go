// Package runner is what the simulate command and the tuner share: loading
// a trace into memory, building policies by name (the baselines, inferscale
// in fast or faithful mode, the oracle) and replaying them.
package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/inferscale/inferscale/shared/decide/knobs"
	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/sim/baseline"
	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/inferscale"
	"github.com/inferscale/inferscale/sim/scaler"
	"github.com/inferscale/inferscale/sim/workload"
)

// Trace says which requests to replay.
type Trace struct {
	Spec string // workload.Open spec: "synthetic:demo" or a trace file
	Seed int64
	// RateFactor and TimeFactor go to workload.Scale (1 = as recorded).
	RateFactor, TimeFactor float64
	// Start and Duration cut a window (Duration 0: to the end).
	Start, Duration time.Duration
	// ServeGenTopClients keeps the N busiest ServeGen clients (0: all).
	ServeGenTopClients int
}

// Load reads the whole trace into memory (the oracle is clairvoyant and
// every policy replays the same requests).
func Load(t Trace) ([]workload.Request, error) {
	var src workload.Source
	var err error
	if t.ServeGenTopClients > 0 || isServeGen(t.Spec) {
		src, err = workload.OpenServeGen(t.Spec, workload.ServeGenOptions{Seed: t.Seed, TopClients: t.ServeGenTopClients,
			Start: t.Start, Duration: t.Duration, RateFactor: t.RateFactor})
		t.Start, t.Duration, t.RateFactor = 0, 0, 1
	} else {
		src, err = workload.Open(t.Spec, t.Seed)
	}
	if err != nil {
		return nil, err
	}
	defer src.Close()
	if t.Start > 0 || t.Duration > 0 {
		src = workload.Window(src, t.Start, t.Duration)
	}
	if (t.RateFactor != 0 && t.RateFactor != 1) || (t.TimeFactor != 0 && t.TimeFactor != 1) {
		rf, tf := t.RateFactor, t.TimeFactor
		if rf == 0 {
			rf = 1
		}
		if tf == 0 {
			tf = 1
		}
		src = workload.Scale(src, tf, rf)
	}
	reqs, err := workload.All(src)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", t.Spec, err)
	}
	if len(reqs) == 0 {
		return nil, fmt.Errorf("trace %s has no requests in the chosen window", t.Spec)
	}
	return reqs, nil
}

func isServeGen(spec string) bool {
	return strings.HasSuffix(spec, ".tar.gz") || strings.HasSuffix(spec, ".tgz")
}

// Spec names a policy and its parameters: "hpa-queue", "kpa:target=50",
// "inferscale:queueTarget=2,downStabilization=120", "static:replicas=8".
type Spec struct {
	Name   string
	Params map[string]string
}

// ParseSpec reads NAME[:k=v,k=v].
func ParseSpec(s string) (Spec, error) {
	name, rest, _ := strings.Cut(strings.TrimSpace(s), ":")
	if name == "" {
		return Spec{}, fmt.Errorf("policy %q: empty name", s)
	}
	sp := Spec{Name: name, Params: map[string]string{}}
	if rest == "" {
		return sp, nil
	}
	for _, kv := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return Spec{}, fmt.Errorf("policy %q: parameter %q is not key=value", s, kv)
		}
		sp.Params[k] = v
	}
	return sp, nil
}

// ParseSpecs reads a list separated by ';' or by ' ' (and ',' between
// bare names without parameters).
func ParseSpecs(list string) ([]Spec, error) {
	var out []Spec
	for _, part := range strings.FieldsFunc(list, func(r rune) bool { return r == ';' || r == ' ' }) {
		if !strings.Contains(part, ":") && strings.Contains(part, ",") {
			for _, n := range strings.Split(part, ",") {
				if n != "" {
					out = append(out, Spec{Name: n, Params: map[string]string{}})
				}
			}
			continue
		}
		sp, err := ParseSpec(part)
		if err != nil {
			return nil, err
		}
		out = append(out, sp)
	}
	if len(out) == 0 {
		return nil, errors.New("no policies named")
	}
	return out, nil
}

// String prints the spec back.
func (s Spec) String() string {
	if len(s.Params) == 0 {
		return s.Name
	}
	keys := make([]string, 0, len(s.Params))
	for k := range s.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + s.Params[k]
	}
	return s.Name + ":" + strings.Join(parts, ",")
}

// Mode picks how inferscale runs.
type Mode string

// Modes.
const (
	Fast     Mode = "fast"
	Faithful Mode = "faithful"
)

// Options are the shared settings of policy construction.
type Options struct {
	Mode Mode
	// BinDir holds the built metric and evaluate binaries (faithful mode).
	BinDir string
	// CPA post-evaluate settings for inferscale.
	CPA inferscale.CPA
	// DecisionLogs, when set, is a directory: every inferscale replay
	// writes its decision lines there, one file a replay (decisionlog.go;
	// in faithful mode the lines evaluate wrote on stderr).
	DecisionLogs string
	// LogName names the replay's decision log file (the policy's label
	// when empty).
	LogName string
}

// Built is a ready-to-run policy.
type Built struct {
	Policy scaler.Autoscaler
	// InitialReplicas overrides the engine's warm fleet (static fleets
	// exist before the trace starts); 0 keeps it.
	InitialReplicas int
	Close           func() error
}

// Oracle is the reserved policy name of the clairvoyant oracle.
const Oracle = "oracle"

// Names lists every policy name Build accepts (besides the oracle).
func Names() []string {
	return append([]string{"inferscale"}, baseline.PresetNames()...)
}

// Build makes the named policy for a run with cfg.
func Build(sp Spec, cfg engine.Config, opt Options) (*Built, error) {
	label := sp.String()
	if sp.Name == "inferscale" {
		pc, env, err := InferscaleConfig(sp.Params, cfg)
		if err != nil {
			return nil, err
		}
		if opt.Mode == Faithful {
			return faithful(label, env, cfg, opt)
		}
		fast := inferscale.NewFast(label, pc, opt.CPA)
		if opt.DecisionLogs != "" {
			return logged(fast, opt)
		}
		return &Built{Policy: fast, Close: func() error { return nil }}, nil
	}
	factory, ok := baseline.Presets()[sp.Name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q (have: %s, %s)", sp.Name, strings.Join(Names(), ", "), Oracle)
	}
	params := baseline.Params{}
	for k, v := range sp.Params {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("policy %s: parameter %s=%q is not a number", sp.Name, k, v)
		}
		params[k] = f
	}
	if sp.Name == "static" && params["replicas"] == 0 {
		params["replicas"] = float64(cfg.MaxReplicas)
	}
	pol, err := factory(params)
	if err != nil {
		return nil, err
	}
	b := &Built{Policy: named{pol, label}, Close: func() error { return nil }}
	if sp.Name == "static" {
		b.InitialReplicas = min(max(int(params["replicas"]), cfg.MinReplicas), cfg.MaxReplicas)
	}
	return b, nil
}

// named relabels a policy with its spec (so tuned variants are told apart).
type named struct {
	scaler.Autoscaler
	label string
}

func (n named) Name() string { return n.label }

// DeletionCosts passes the wrapped policy's pod-deletion costs on
// (scaler.DeletionCoster), or none.
func (n named) DeletionCosts() map[string]int32 {
	if dc, ok := n.Autoscaler.(scaler.DeletionCoster); ok {
		return dc.DeletionCosts()
	}
	return nil
}

// InferscaleConfig resolves inferscale's policy from key=value settings
// (the same keys as the CPA config / env vars), with the replica bounds
// and TTFT SLO of the simulation. It also returns the environment the
// binaries get in faithful mode.
func InferscaleConfig(params map[string]string, cfg engine.Config) (policy.Config, map[string]string, error) {
	env := map[string]string{
		"minReplicas": strconv.Itoa(cfg.MinReplicas),
		"maxReplicas": strconv.Itoa(cfg.MaxReplicas),
		"ttftSLO":     strconv.FormatFloat(cfg.TTFTSLOSeconds, 'g', -1, 64) + "s",
		// No CPA config file: the bounds come from the variables above.
		"configPath": "/nonexistent/inferscale-sim/config.yaml",
	}
	for k, v := range params {
		env[k] = v
	}
	pc, err := knobs.Policy(env)
	if err != nil {
		return policy.Config{}, nil, fmt.Errorf("inferscale settings: %w", err)
	}
	return pc, env, nil
}

// Run replays reqs through one built policy.
func Run(ctx context.Context, cfg engine.Config, reqs []workload.Request, b *Built) (*engine.Result, error) {
	if b.InitialReplicas > 0 {
		cfg.InitialReplicas = b.InitialReplicas
	}
	start := time.Now()
	res, err := engine.Run(ctx, cfg, workload.FromRequests(reqs), b.Policy)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Policy.Name(), err)
	}
	res.Wall = time.Since(start)
	return res, nil
}
