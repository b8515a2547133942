package evaluator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/inferscale/inferscale/shared/clock"
	"github.com/inferscale/inferscale/shared/config"
	"github.com/inferscale/inferscale/shared/cpa"
	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/shared/state"
)

// State backend keys and defaults.
const (
	KeyStateBackend   = "stateBackend"
	KeyStateFile      = "stateFile"
	KeyStateConfigMap = "stateConfigMap"
	DefaultStateFile  = "/tmp/inferscale-state.json"
	DefaultConfigMap  = "inferscale-state"
)

// Input is a parsed evaluate stdin.
type Input struct {
	RunType         string
	CurrentReplicas int
	Entries         []Entry
}

// ParseInput checks the whole CPA evaluate stdin. An error means the input
// is unusable as a whole (the process must exit non-zero and touch
// nothing). An empty metric value (the metric run printed nothing, so CPA
// left "value" out) makes that pod missing, never a reason to scale down;
// the warning says so. A value that is present but is not a valid signal
// report (not JSON, wrong types, NaN/Inf, negative counts, fractions above
// 1, another signal version) is an error naming the pod: metric and
// evaluate are out of step, or something else wrote the value.
func ParseInput(b []byte) (*Input, []string, error) {
	in, err := cpa.ParseEvaluateInput(b)
	if err != nil {
		return nil, nil, err
	}
	rep := gjson.GetBytes(in.Resource, "spec.replicas")
	if !rep.Exists() {
		return nil, nil, errors.New("evaluate input: missing field \"resource.spec.replicas\"")
	}
	if rep.Type != gjson.Number || rep.Num != float64(int64(rep.Num)) || rep.Num < 0 || rep.Num > 1e6 {
		return nil, nil, fmt.Errorf("evaluate input: \"resource.spec.replicas\" must be a non-negative integer, got %s", rep.Raw)
	}
	out := &Input{RunType: in.RunType, CurrentReplicas: int(rep.Num), Entries: make([]Entry, 0, len(in.Metrics))}
	var warnings []string
	for i, m := range in.Metrics {
		name := m.Resource
		if name == "" {
			name = fmt.Sprintf("metrics[%d]", i)
		}
		if strings.TrimSpace(m.Value) == "" {
			warnings = append(warnings, fmt.Sprintf("%s: empty metric value, pod counted as missing", name))
			out.Entries = append(out.Entries, Entry{Resource: name})
			continue
		}
		r, err := signal.Decode(m.Value)
		if err != nil {
			return nil, nil, fmt.Errorf("evaluate input: metrics[%d] (%s): %w", i, displayName(m.Resource), err)
		}
		out.Entries = append(out.Entries, Entry{Resource: name, Report: r})
	}
	return out, warnings, nil
}

// displayName is a resource name for an error message: quoted, or
// "no resource name" when CPA gave none.
func displayName(resource string) string {
	if resource == "" {
		return "no resource name"
	}
	return fmt.Sprintf("pod %q", resource)
}

// StoreOpener builds the state store named by the configuration; it lets
// the binary add the ConfigMap backend without this package importing the
// API client.
type StoreOpener func(backend string, src *config.Source) (state.Store, error)

// FileStoreOpener opens the file backend (and "none"), the default.
func FileStoreOpener(backend string, src *config.Source) (state.Store, error) {
	switch backend {
	case "file":
		return state.FileStore{Path: src.String(KeyStateFile, DefaultStateFile)}, nil
	case "none":
		return state.MemoryStore{}, nil
	}
	return nil, fmt.Errorf("config key %s=%q: this build has no such backend", KeyStateBackend, backend)
}

// Run is the whole evaluate process: read stdin, decide, persist unless
// dry-run, print exactly one JSON object. Nothing but that object is ever
// written to stdout; on error nothing is.
func Run(ctx context.Context, stdin io.Reader, stdout io.Writer, env config.LookupFunc, open StoreOpener, log *slog.Logger) error {
	b, err := cpa.ReadAll(stdin, cpa.MaxInputBytes)
	if err != nil {
		return err
	}
	in, warnings, err := ParseInput(b)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		log.Warn("metric value unusable", "detail", w)
	}
	src, err := config.Load(env)
	if err != nil {
		return err
	}
	cfg, err := policy.FromSource(src)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	backend := src.Enum(KeyStateBackend, "file", "file", "configmap", "none")
	checkFileKeys(src)
	if err := src.Err(); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	now, err := clock.Now(func(k string) string { v, _ := env(k); return v })
	if err != nil {
		return err
	}
	store, err := open(backend, src)
	if err != nil {
		return err
	}
	txn, err := store.Begin(ctx)
	if err != nil {
		return fmt.Errorf("opening state: %w", err)
	}
	defer txn.Close()
	st := txn.State()
	if w := txn.Warning(); w != nil {
		log.Warn("state discarded", "err", w)
	}
	d := Step(cfg, st, in.CurrentReplicas, in.Entries, now)
	if w := txn.Warning(); w != nil {
		d.Alerts = append(d.Alerts, "state was unusable and was reset: "+w.Error())
	}
	out, err := json.Marshal(cpa.EvaluateOutput{TargetReplicas: int32(d.Target), CurrentReplicas: int32(d.Current),
		Reasons: d.Reasons, Alerts: d.Alerts, Decision: d})
	if err != nil {
		return fmt.Errorf("encoding the decision: %w", err)
	}
	if in.RunType != cpa.RunTypeAPIDryRun {
		if err := txn.Save(ctx, st); err != nil {
			return fmt.Errorf("saving state: %w", err)
		}
	}
	if err := txn.Close(); err != nil {
		return err
	}
	log.Info("decision", "runType", in.RunType, "current", d.Current, "target", d.Target, "signals", d.Signals,
		"ready", d.Fleet.Ready, "starting", d.Fleet.Starting, "missing", d.Fleet.Missing)
	if _, err := stdout.Write(append(out, '\n')); err != nil {
		return fmt.Errorf("writing the decision: %w", err)
	}
	return nil
}

// Timeout bounds one evaluate run (CPA's timeout kills it anyway).
const Timeout = 20 * time.Second

// checkFileKeys rejects keys in the policy file that nothing reads (CPA
// itself silently ignores typos in its config; we do not).
func checkFileKeys(src *config.Source) {
	known := map[string]bool{KeyStateBackend: true, KeyStateFile: true, KeyStateConfigMap: true, "namespace": true}
	for _, k := range policy.Keys {
		known[k] = true
	}
	keys := src.FileKeys()
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] {
			src.Failf(k, "unknown key in %s", config.KeyPolicyFile)
		}
	}
}
