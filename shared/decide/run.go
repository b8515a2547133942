package decide

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/inferscale/inferscale/shared/clock"
	"github.com/inferscale/inferscale/shared/cpa"
	"github.com/inferscale/inferscale/shared/kube"
	"github.com/inferscale/inferscale/shared/settings"
	"github.com/inferscale/inferscale/shared/state/store"
)

// Timeout bounds one evaluate run (CPA's timeout kills it anyway).
const Timeout = 20 * time.Second

// Process is what an evaluate run gets from its process.
type Process struct {
	Stdin  io.Reader
	Stdout io.Writer
	// Lookup reads the environment (os.LookupEnv).
	Lookup settings.LookupFunc
	Log    *slog.Logger
}

// Run is the whole evaluate process: read stdin, decide, persist unless
// dry-run, print exactly one JSON object. Nothing but that object is ever
// written to stdout; on error nothing is, and the state is untouched.
func Run(ctx context.Context, p Process) error {
	in, cfg, now, err := prepare(p)
	if err != nil {
		return err
	}
	out, err := tick(ctx, p, in, cfg, now)
	if err != nil {
		return err
	}
	if _, err := p.Stdout.Write(append(out, '\n')); err != nil {
		return fmt.Errorf("writing the decision: %w", err)
	}
	return nil
}

// prepare reads and checks everything a tick needs before it touches the
// state: the input, the settings and the clock.
func prepare(p Process) (*Input, settings.Evaluate, time.Time, error) {
	var cfg settings.Evaluate
	b, err := cpa.ReadAll(p.Stdin, cpa.MaxInputBytes)
	if err != nil {
		return nil, cfg, time.Time{}, err
	}
	in, warnings, err := ParseInput(b)
	if err != nil {
		return nil, cfg, time.Time{}, err
	}
	for _, w := range warnings {
		p.Log.Warn("metric value unusable", "detail", w)
	}
	src, err := settings.Load(p.Lookup)
	if err == nil {
		cfg, err = settings.ForEvaluate(src)
	}
	if err != nil {
		return nil, cfg, time.Time{}, fmt.Errorf("configuration: %w", err)
	}
	now, err := clock.Now(func(k string) string { v, _ := p.Lookup(k); return v })
	if err != nil {
		return nil, cfg, time.Time{}, err
	}
	return in, cfg, now, nil
}

// tick decides under the state's transaction and saves the state unless
// the run is a dry run or autoscaling is disabled; it returns the output.
func tick(ctx context.Context, p Process, in *Input, cfg settings.Evaluate, now time.Time) ([]byte, error) {
	st, err := OpenStore(cfg.Store, p.Lookup)
	if err != nil {
		return nil, err
	}
	txn, err := st.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("opening state: %w", err)
	}
	defer txn.Close()
	if w := txn.Warning(); w != nil {
		p.Log.Warn("state discarded", "err", w)
	}
	d := Step(cfg.Policy, txn.State(), in.CurrentReplicas, in.Entries, now)
	if w := txn.Warning(); w != nil {
		d.Alerts = append(d.Alerts, "state was unusable and was reset: "+w.Error())
	}
	out, err := json.Marshal(cpa.EvaluateOutput{TargetReplicas: int32(d.Target), CurrentReplicas: int32(d.Current),
		Reasons: d.Reasons, Alerts: d.Alerts, Victims: d.Victims, Decision: d})
	if err != nil {
		return nil, fmt.Errorf("encoding the decision: %w", err)
	}
	if in.RunType != cpa.RunTypeAPIDryRun && !Disabled(cfg.Policy, in.CurrentReplicas) {
		if err := txn.Save(ctx, txn.State()); err != nil {
			return nil, fmt.Errorf("saving state: %w", err)
		}
	}
	if err := txn.Close(); err != nil {
		return nil, err
	}
	p.Log.Info("decision", "runType", in.RunType, "current", d.Current, "target", d.Target, "signals", d.Signals,
		"ready", d.Fleet.Ready, "starting", d.Fleet.Starting, "missing", d.Fleet.Missing)
	return out, nil
}

// OpenStore opens the store the settings name: the file, a ConfigMap
// through the in-cluster API, or none.
func OpenStore(s settings.Store, lookup settings.LookupFunc) (store.Store, error) {
	switch s.Backend {
	case "none":
		return store.Memory{}, nil
	case "configmap":
		c, err := kube.InCluster(func(k string) string { v, _ := lookup(k); return v }, "", 5*time.Second)
		if err != nil {
			return nil, err
		}
		ns := s.Namespace
		if ns == "" {
			ns = c.Namespace
		}
		return store.ConfigMap{API: c, Namespace: ns, Name: s.ConfigMap, LockPath: s.File}, nil
	}
	return store.File{Path: s.File}, nil
}
