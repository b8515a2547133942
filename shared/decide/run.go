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
	// OpenStore opens the configured state store; nil means OpenStore.
	OpenStore func(settings.Store, settings.LookupFunc) (store.Store, error)
}

// Run is the whole evaluate process: read stdin, decide, persist unless
// dry-run, print exactly one JSON object. Nothing but that object is ever
// written to stdout; on error nothing is, and the state is untouched.
func Run(ctx context.Context, p Process) error {
	b, err := cpa.ReadAll(p.Stdin, cpa.MaxInputBytes)
	if err != nil {
		return err
	}
	in, warnings, err := ParseInput(b)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		p.Log.Warn("metric value unusable", "detail", w)
	}
	src, err := settings.Load(p.Lookup)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	cfg, err := settings.ForEvaluate(src)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	now, err := clock.Now(func(k string) string { v, _ := p.Lookup(k); return v })
	if err != nil {
		return err
	}
	open := p.OpenStore
	if open == nil {
		open = OpenStore
	}
	st, err := open(cfg.Store, p.Lookup)
	if err != nil {
		return err
	}
	txn, err := st.Begin(ctx)
	if err != nil {
		return fmt.Errorf("opening state: %w", err)
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
		Reasons: d.Reasons, Alerts: d.Alerts, Decision: d})
	if err != nil {
		return fmt.Errorf("encoding the decision: %w", err)
	}
	if in.RunType != cpa.RunTypeAPIDryRun && !Disabled(cfg.Policy, in.CurrentReplicas) {
		if err := txn.Save(ctx, txn.State()); err != nil {
			return fmt.Errorf("saving state: %w", err)
		}
	}
	if err := txn.Close(); err != nil {
		return err
	}
	p.Log.Info("decision", "runType", in.RunType, "current", d.Current, "target", d.Target, "signals", d.Signals,
		"ready", d.Fleet.Ready, "starting", d.Fleet.Starting, "missing", d.Fleet.Missing)
	if _, err := p.Stdout.Write(append(out, '\n')); err != nil {
		return fmt.Errorf("writing the decision: %w", err)
	}
	return nil
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
