package decide

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/inferscale/inferscale/shared/clock"
	"github.com/inferscale/inferscale/shared/cpa"
	"github.com/inferscale/inferscale/shared/decide/knobs"
	"github.com/inferscale/inferscale/shared/decisionlog"
	"github.com/inferscale/inferscale/shared/kube"
	"github.com/inferscale/inferscale/shared/policy"
	"github.com/inferscale/inferscale/shared/settings"
	"github.com/inferscale/inferscale/shared/state"
	"github.com/inferscale/inferscale/shared/state/store"
)

// The deadlines of one evaluate run, below CPA's evaluate timeout (10 s in
// config/config.yaml) so that a slow API server costs the tick's effects
// or its save, never a kill halfway (issue 15, N8: GET 4.8 s + effects 4 s
// + PUT 5 s was 13.8 s). TickTimeout is the one deadline the state's read,
// the cluster effects and the state's write share: the read gets at most
// readTimeout of it, the effects end saveReserve before it, so the write
// always has that long. Timeout bounds the whole run: the tick, and then
// the clearing of marks a failed save would leave.
const (
	Timeout     = 9 * time.Second
	TickTimeout = 8 * time.Second
	readTimeout = 3 * time.Second
	saveReserve = 2 * time.Second
)

// Process is what an evaluate run gets from its process.
type Process struct {
	Stdin  io.Reader
	Stdout io.Writer
	// Stderr gets one decision-log line per tick (nil: none); CPA's
	// logStderr forwards it to the pod log.
	Stderr io.Writer
	// Lookup reads the environment (os.LookupEnv).
	Lookup settings.LookupFunc
	// Environ lists the environment (os.Environ) to find misspelt
	// settings; nil: not checked.
	Environ func() []string
	// Version is the binary's build version, for the decision log.
	Version string
	Log     *slog.Logger

	// api stands in for the in-cluster API (tests); nil: connect.
	api *cluster
	// store stands in for the settings' store (tests); nil: OpenStore.
	store store.Store
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
func prepare(p Process) (*Input, knobs.Evaluate, time.Time, error) {
	var cfg knobs.Evaluate
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
		cfg, err = knobs.Read(src)
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

// tick decides under the state's transaction, acts in the cluster (the
// victims' marks, Events), records the tick and saves the state, unless
// the run is a dry run or autoscaling is disabled; it returns the output.
func tick(ctx context.Context, p Process, in *Input, cfg knobs.Evaluate, now time.Time) ([]byte, error) {
	run := ctx
	ctx, cancel := context.WithTimeout(ctx, TickTimeout)
	defer cancel()
	st := p.store
	if st == nil {
		var err error
		if st, err = OpenStore(cfg.Store, p.Lookup); err != nil {
			return nil, err
		}
	}
	txn, err := begin(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("opening state: %w", err)
	}
	defer txn.Close()
	if w := txn.Warning(); w != nil {
		p.Log.Warn("state discarded", "err", w)
	}
	target := targetOf(in.Target)
	s, foreign, save := claim(txn.State(), target)
	if foreign != "" {
		p.Log.Warn("state discarded", "err", foreign)
	}
	if len(s.Repairs) > 0 {
		p.Log.Warn("state values out of range: those parts start fresh", "reset", strings.Join(s.Repairs, "; "))
	}
	marked := append([]string(nil), s.Marked...)
	d, rec, ok := decideTick(cfg.Policy, s, in.CurrentReplicas, in.Entries, now)
	if w := txn.Warning(); w != nil {
		d.Warn(policy.WarnStateReset, "state was unusable and was reset: "+w.Error())
	}
	if foreign != "" {
		d.Warn(policy.WarnStateReset, "state was not this target's and was not used: "+foreign)
	}
	if len(s.Repairs) > 0 {
		d.Warn(policy.WarnStateReset, "state values out of range were reset: "+strings.Join(s.Repairs, "; "))
	}
	warnNearMisses(p, &d)
	mode, answer := cfg.Cluster.Mode, d.Target
	if mode == decisionlog.Advisory {
		// Decide and remember as usual, but leave the replicas alone.
		answer, rec.Decided.Marked = d.Current, nil
		rec.Decided.Advisory = &state.AdvisoryTick{At: rec.At, Current: d.Current, Target: d.Target}
	}
	if p.Stderr != nil {
		line := DecisionLine(d, now, mode, cfg.Policy)
		line.Build = p.Version
		if err := decisionlog.Write(p.Stderr, line); err != nil {
			p.Log.Warn("decision line not written", "err", err)
		}
	}
	out, err := json.Marshal(output(d, mode, answer))
	if err != nil {
		return nil, fmt.Errorf("encoding the decision: %w", err)
	}
	if in.RunType != cpa.RunTypeAPIDryRun && ok {
		// The summary again, with the mode and the alerts raised since.
		rec.Decided.Last = Summary(d, mode, cfg.Policy)
		undo := act(ctx, p, in, cfg, d, mode, marked, s.Events, &rec)
		rec.Target = target
		if trim := s.Record(rec); trim.Began {
			p.Log.Warn("state over its byte budget: shed what the next scrapes rebuild (said once until it fits again)",
				"limit", state.MaxStateBytes, "shed", strings.Join(trim.Shed, "; "))
		}
		if err := saveUnlessForeign(ctx, txn, s, save); err != nil {
			undo(run)
			return nil, err
		}
	}
	if err := txn.Close(); err != nil {
		return nil, err
	}
	p.Log.Info("decision", "runType", in.RunType, "mode", mode, "current", d.Current, "target", d.Target, "signals", d.Signals,
		"ready", d.Fleet.Ready, "starting", d.Fleet.Starting, "missing", d.Fleet.Missing)
	return out, nil
}

// act does the tick's cluster-side effects and notes in rec what the
// state must remember of them: the pods that may carry a mark, the
// recorder's memory. Victims are marked only in active mode with
// deletionCost on; otherwise the marks a previous tick left are cleared.
// It returns undo, which clears the marks this tick set where the previous
// state does not know of them: for a tick whose state is not saved.
func act(ctx context.Context, p Process, in *Input, cfg knobs.Evaluate, d policy.Decision, mode string, marked []string, memory json.RawMessage, rec *state.Tick) (undo func(context.Context)) {
	ctx, cancel := effectsContext(ctx)
	defer cancel()
	marking := cfg.Policy.DeletionCost && mode == decisionlog.Active
	var c cluster
	if p.api != nil {
		c = *p.api
	} else {
		c = connect(p.Lookup, marking || len(marked) > 0, cfg.Cluster.Events, p.Log)
	}
	target, err := kube.ObjectRefFromTarget(in.Target)
	if err != nil {
		p.Log.Warn("no scale target reference for pod marks and Events", "err", err)
		rec.Decided.Marked = marked // kept for a tick that can clear them
		return func(context.Context) {}
	}
	victims := d.Victims
	if !marking {
		victims = nil
	}
	rec.Decided.Marked = c.mark(ctx, target.Namespace, marked, victims)
	if ev := c.record(ctx, target, d, mode, rec.At, memory); ev != nil {
		rec.Decided.Events = ev
	}
	set := policy.Unmarked(rec.Decided.Marked, marked)
	return func(ctx context.Context) { c.unmark(ctx, target.Namespace, set) }
}

// begin opens the state's transaction within readTimeout of the tick.
func begin(ctx context.Context, st store.Store) (store.Txn, error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	return st.Begin(ctx)
}

// effectsContext bounds the cluster effects to effectsTimeout and to
// saveReserve before the tick's deadline, whichever comes first.
func effectsContext(ctx context.Context) (context.Context, context.CancelFunc) {
	end := time.Now().Add(effectsTimeout)
	if d, ok := ctx.Deadline(); ok && d.Add(-saveReserve).Before(end) {
		end = d.Add(-saveReserve)
	}
	return context.WithDeadline(ctx, end)
}

// saveUnlessForeign saves s unless the stored state is another target's
// (claim), which is left as it is.
func saveUnlessForeign(ctx context.Context, txn store.Txn, s *state.State, save bool) error {
	if !save {
		return nil
	}
	if err := txn.Save(ctx, s); err != nil {
		return fmt.Errorf("saving state: %w", err)
	}
	return nil
}

// OpenStore opens the store the settings name: the file, a ConfigMap
// through the in-cluster API, or none.
func OpenStore(s knobs.Store, lookup settings.LookupFunc) (store.Store, error) {
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

// ReasonUnknownSetting is the Warning Event of a setting that no stage
// reads but that is a near miss of one that does (settings.NearMisses).
const ReasonUnknownSetting = "UnknownSetting"

// warnNearMisses reports each misspelt setting once a tick on stderr and
// as a Warning; it never changes the decision.
func warnNearMisses(p Process, d *policy.Decision) {
	if p.Environ == nil {
		return
	}
	for _, m := range settings.NearMisses(p.Environ()) {
		p.Log.Warn("unknown setting ignored", "name", m.Name, "didYouMean", m.Key)
		d.Warn(ReasonUnknownSetting, fmt.Sprintf("setting %s is not read by inferscale (did you mean %s?); it was ignored", m.Name, m.Key))
	}
}

// AdvicePrefix starts every reason of advisory mode's output, whose
// targetReplicas is the current count: the reasons say what would have
// been done.
const AdvicePrefix = "advice, not applied: "

// output is what stdout gets: in advisory mode the answer is the current
// count, advisedReplicas the decided target and each reason marked as
// advice.
func output(d policy.Decision, mode string, answer int) cpa.EvaluateOutput {
	o := cpa.EvaluateOutput{TargetReplicas: int32(answer), CurrentReplicas: int32(d.Current), Mode: mode,
		Reasons: d.Reasons, Alerts: d.Alerts, Victims: d.Victims, Decision: d}
	if mode == decisionlog.Advisory {
		advised := int32(d.Target)
		o.AdvisedReplicas = &advised
		o.Reasons = make([]string, len(d.Reasons))
		for i, r := range d.Reasons {
			o.Reasons[i] = AdvicePrefix + r
		}
	}
	return o
}
