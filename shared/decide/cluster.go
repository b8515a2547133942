package decide

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/inferscale/inferscale/shared/decisionlog"
	"github.com/inferscale/inferscale/shared/kube"
	"github.com/inferscale/inferscale/shared/policy"
)

// The cluster-side effects of a tick: marking the victims of a scale-down
// (pod-deletion cost) and recording Events on the scale target. Both are
// best effort: a failure is logged, the tick goes on (a missing mark only
// lets the ReplicaSet choose; a missing Event only loses an explanation).

// podPatcher is the API call marking pods.
type podPatcher interface {
	PatchPodAnnotations(ctx context.Context, namespace, pod string, annotations map[string]*string) error
}

// eventRecorder is the API call recording Events.
type eventRecorder interface {
	Record(ctx context.Context, obj kube.ObjectRef, ev kube.Event, now time.Time, mem *kube.EventMemory) (kube.RecordResult, error)
}

// cluster is the API evaluate talks to (nil fields: not in a cluster, or
// switched off).
type cluster struct {
	pods   podPatcher
	events eventRecorder
	log    *slog.Logger
}

// effectTimeout bounds each API call and effectsTimeout all of a tick's,
// so the tick stays well within CPA's evaluate timeout (10 s in
// config/config.yaml): a hanging API server costs marks and Events, never
// the tick or its state.
const (
	effectTimeout  = 2 * time.Second
	effectsTimeout = 4 * time.Second
)

// mark gives the victims the victim cost and clears the marks of the
// previous victims that are not victims again. It returns the pods that
// may carry a mark now, for the state to keep: those marked, and those
// whose PATCH failed or timed out (set or not, a later tick clears them:
// issue 15, N5). A pod that is gone (404) carries nothing. Without an API
// for pods, every previous mark is kept for a tick that has one.
func (c cluster) mark(ctx context.Context, namespace string, marked, victims []string) []string {
	if c.pods == nil || namespace == "" {
		return marked
	}
	cost := strconv.Itoa(policy.VictimDeletionCost)
	var left []string
	for _, p := range policy.Unmarked(marked, victims) {
		if c.patch(ctx, namespace, p, nil) == patchFailed {
			left = append(left, p)
		}
	}
	for _, v := range victims {
		if c.patch(ctx, namespace, v, &cost) != patchGone {
			left = append(left, v)
		}
	}
	return left
}

// unmark clears the marks of pods (best effort): those this tick set when
// its state could not be saved, so that no tick would know of them.
func (c cluster) unmark(ctx context.Context, namespace string, pods []string) {
	if c.pods == nil || namespace == "" {
		return
	}
	for _, p := range pods {
		c.patch(ctx, namespace, p, nil)
	}
}

// patchOutcome is what one pod PATCH did.
type patchOutcome int

const (
	patched     patchOutcome = iota
	patchGone                // 404: the pod is gone
	patchFailed              // anything else: the pod may or may not carry the change
)

func (c cluster) patch(ctx context.Context, namespace, pod string, cost *string) patchOutcome {
	ctx, cancel := context.WithTimeout(ctx, effectTimeout)
	defer cancel()
	err := c.pods.PatchPodAnnotations(ctx, namespace, pod, map[string]*string{kube.DeletionCostAnnotation: cost})
	var se *kube.StatusError
	switch {
	case err == nil:
		return patched
	case errors.As(err, &se) && se.Code == 404:
		// Gone already (deleted, or a pod name of an old tick): nothing to mark.
		return patchGone
	default:
		c.log.Warn("pod-deletion cost not written", "pod", pod, "err", err)
		return patchFailed
	}
}

// record writes the tick's Events: ScaledUp or ScaledDown (AdvisoryScaleUp
// or AdvisoryScaleDown in advisory mode) when the target differs from the
// current count, and a Warning per alert reason. It returns the
// recorder's memory to keep (nil: unchanged).
func (c cluster) record(ctx context.Context, target kube.ObjectRef, d policy.Decision, mode string, now time.Time, memory json.RawMessage) json.RawMessage {
	if c.events == nil {
		return nil
	}
	var mem kube.EventMemory
	if len(memory) > 0 && json.Unmarshal(memory, &mem) != nil {
		mem = kube.EventMemory{} // a damaged memory only costs dedupe precision
	}
	for _, ev := range events(d, mode) {
		ctx, cancel := context.WithTimeout(ctx, effectTimeout)
		if _, err := c.events.Record(ctx, target, ev, now, &mem); err != nil {
			c.log.Warn("event not recorded", "reason", ev.Reason, "err", err)
		}
		cancel()
	}
	b, err := json.Marshal(&mem)
	if err != nil {
		return nil
	}
	return b
}

// Event reasons of advisory mode: what inferscale would have done.
const (
	ReasonAdvisoryScaleUp   = "AdvisoryScaleUp"
	ReasonAdvisoryScaleDown = "AdvisoryScaleDown"
)

// events are the Events a decision calls for.
func events(d policy.Decision, mode string) []kube.Event {
	var out []kube.Event
	if d.Target != d.Current {
		up, down := kube.ReasonScaledUp, kube.ReasonScaledDown
		if mode == decisionlog.Advisory {
			up, down = ReasonAdvisoryScaleUp, ReasonAdvisoryScaleDown
		}
		reason := up
		if d.Target < d.Current {
			reason = down
		}
		line := DecisionLine(d, time.Time{}, mode, policy.Config{})
		out = append(out, kube.Event{Type: kube.EventNormal, Reason: reason, Message: line.EventMessage()})
	}
	seen := map[string]bool{}
	for _, w := range d.Warnings {
		if seen[w.Reason] {
			continue
		}
		seen[w.Reason] = true
		out = append(out, kube.Event{Type: kube.EventWarning, Reason: w.Reason, Message: w.Message})
	}
	return out
}

// connect is the in-cluster API for the effects the settings ask for
// (marking pods also to clear marks a previous tick left); off the cluster
// (no service account), none.
func connect(lookup func(string) (string, bool), markPods, withEvents bool, log *slog.Logger) cluster {
	c := cluster{log: log}
	if !markPods && !withEvents {
		return c
	}
	getenv := func(k string) string { v, _ := lookup(k); return v }
	if getenv("KUBERNETES_SERVICE_HOST") == "" {
		return c
	}
	api, err := kube.InCluster(getenv, "", effectTimeout)
	if err != nil {
		log.Warn("no Kubernetes API for pod marks and Events", "err", err)
		return c
	}
	if markPods {
		c.pods = api
	}
	if withEvents {
		c.events = kube.NewEventRecorder(api, "inferscale", getenv("HOSTNAME"))
	}
	return c
}
