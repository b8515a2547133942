// Package scaler is the contract between the simulator and the autoscaling
// policies it compares: inferscale itself, the baselines (HPA, KEDA, Knative
// KPA, AIBrix APA, llm-d WVA, seed rules, static) and anything else.
//
// Each tick of a policy's control loop, the simulator hands it an
// Observation — what a real controller could see at that moment, metric
// pipeline lag included — and applies the replica count it returns.
package scaler

import (
	"fmt"
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
	Draining Phase = "Draining" // deleted (terminating): out of the load balancer, finishing what it holds until empty or its grace period ends
)

// DeletionCostAnnotation is the pod annotation a ReplicaSet reads to pick
// which pods to delete first on a scale-down (lower cost first, after the
// unscheduled and not-Ready pods; Kubernetes ≥ 1.22, best effort).
const DeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

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
	// DeletionCost is the pod's DeletionCostAnnotation (0 when unset).
	DeletionCost int32
	// DeletionGraceSeconds is the pod's terminationGracePeriodSeconds as
	// its deletion set it; zero unless Draining.
	DeletionGraceSeconds float64
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

// DeletionCoster is optional for an Autoscaler: after each successful
// Recommend the simulator asks it for pod-deletion-cost annotations and
// writes them on the named pods before it applies the replica count, as a
// controller that patches pods just before lowering spec.replicas would.
// Annotations persist on the pod (as in Kubernetes); pods not named keep
// theirs; names of pods that no longer exist are ignored. Nil or empty
// changes nothing.
type DeletionCoster interface {
	DeletionCosts() map[string]int32
}

// PodUID is the metadata.uid of the simulated pod with the given serial:
// a version-4-shaped UUID drawn from a hash of the serial, so that UIDs
// are unordered as the API server's random ones are (a ReplicaSet breaks
// some scale-down ties by UID) and the same in every run.
func PodUID(serial int) string {
	x := uint64(serial) + 0x9e3779b97f4a7c15 // splitmix64
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	y := x*0x9e3779b97f4a7c15 + uint64(serial)
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", uint32(x>>32), uint16(x>>16), uint16(x)&0xfff, 0x8000|uint16(y>>48)&0x3fff, y&0xffffffffffff)
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
