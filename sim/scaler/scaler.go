// Package scaler is the contract between the simulator and the autoscaling
// policies it compares: inferscale itself, the baselines (HPA, KEDA, Knative
// KPA, AIBrix APA, llm-d WVA, seed rules, static) and anything else.
//
// Each tick of a policy's control loop, the simulator hands it an
// Observation — what a real controller could see at that moment, metric
// pipeline lag included — and applies the replica count it returns.
package scaler

import (
	"time"

	"github.com/inferscale/inferscale/shared/signal"
)

// Phase is a simulated pod's lifecycle stage.
type Phase string

// Pod lifecycle as a controller sees it.
const (
	Pending  Phase = "Pending"  // waiting for a node; no container yet
	Starting Phase = "Starting" // Running but not Ready: image pull, weights, warm-up; no metrics
	Ready    Phase = "Ready"    // serving
	Draining Phase = "Draining" // terminating; still finishing in-flight requests until its grace period ends
)

// PodView is one pod as the control plane and metric pipeline show it.
type PodView struct {
	Name      string
	Phase     Phase
	CreatedAt time.Time
	ReadyAt   time.Time // zero until Ready
	// DeletedAt is when the pod was deleted (its deletionTimestamp); zero
	// unless Draining.
	DeletedAt time.Time
	// Serial is the pod's creation number within the run (0, 1, ...); the
	// simulator derives its IP address from it.
	Serial int
	// Metrics is the newest scrape the metric pipeline has delivered for
	// this pod (lagged), in the same schema the metric binary prints (vLLM
	// names mapped). Nil when no scrape has been delivered: Pending and
	// Starting pods have no /metrics endpoint.
	Metrics *signal.Pod
}

// Observation is everything a controller may look at on one tick.
type Observation struct {
	Now time.Time
	// SpecReplicas is the target's spec.replicas (what was last asked for).
	SpecReplicas int
	// Pods are all pods of the target, terminating ones included, sorted by name.
	Pods []PodView
	// MinReplicas and MaxReplicas bound every policy alike.
	MinReplicas, MaxReplicas int
}

// Autoscaler is one policy under test. Implementations keep whatever state
// their real counterpart keeps between ticks (windows, cooldowns, events).
type Autoscaler interface {
	// Name is the label used in reports ("hpa-queue", "kpa", ...).
	Name() string
	// Period is the control-loop interval (HPA 15 s, KPA 2 s, CPA 15 s, ...).
	Period() time.Duration
	// Recommend returns the desired spec.replicas. An error means the
	// controller could not decide this tick (like a failed HPA sync): the
	// simulator leaves replicas unchanged and counts the error.
	Recommend(obs Observation) (int, error)
}

// Ready counts pods in the Ready phase.
func (o Observation) Ready() int {
	n := 0
	for _, p := range o.Pods {
		if p.Phase == Ready {
			n++
		}
	}
	return n
}
