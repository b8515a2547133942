// Package inferscale runs the inferscale policy inside the simulator, in
// two ways that must decide alike:
//
//   - fast: decide.Step in-process, with pod reports built from the
//     simulated pods (for sweeps and tuning);
//   - faithful: the built bin/metric and bin/evaluate, fed exactly what CPA
//     v2.12.2 feeds them (per-pod metric runs against a loopback /metrics
//     endpoint per pod, then one evaluate run with the CPA evaluate JSON,
//     INFERSCALE_NOW set to the simulated time and a per-run state file),
//     followed by CPA's own post-evaluate clamping and downscale
//     stabilisation.
package inferscale

import (
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"time"

	"github.com/inferscale/inferscale/sim/scaler"
)

// MetricsPort is the vLLM port the simulated pods serve /metrics on.
const MetricsPort = 8000

// Namespace and app label of the simulated Deployment.
const (
	Namespace = "sim"
	AppName   = "llm"
)

// DefaultBlock is the second octet of the simulated pods' addresses.
const DefaultBlock = 1

// PodIP gives pod number idx (its name's serial) the loopback address
// 127.DefaultBlock.x.y: every 127/8 address is local on Linux.
func PodIP(idx int) netip.Addr { return PodIPIn(DefaultBlock, idx) }

// PodIPIn is PodIP within 127.block.0.0/16 (65,535 pods; a faithful run
// picks a block no other run is using).
func PodIPIn(block byte, idx int) netip.Addr {
	idx = idx%65535 + 1
	return netip.AddrFrom4([4]byte{127, block, byte(idx / 256), byte(idx % 256)})
}

// kubeTime is how the API server writes timestamps: RFC 3339, whole seconds.
func kubeTime(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

// PodJSON is the pod object CPA hands the metric stage (a Pod without
// kind/apiVersion), its addresses in 127.DefaultBlock/16.
func PodJSON(pv scaler.PodView) ([]byte, error) { return PodJSONIn(DefaultBlock, pv) }

// PodJSONIn is PodJSON with addresses in 127.block/16.
func PodJSONIn(block byte, pv scaler.PodView) ([]byte, error) {
	idx := pv.Serial
	type cond struct {
		Type               string `json:"type"`
		Status             string `json:"status"`
		LastTransitionTime string `json:"lastTransitionTime"`
	}
	meta := map[string]any{
		"name":              pv.Name,
		"namespace":         Namespace,
		"uid":               scaler.PodUID(idx),
		"creationTimestamp": kubeTime(pv.CreatedAt),
		"labels":            map[string]string{"app": AppName},
	}
	if pv.DeletionCost != 0 {
		meta["annotations"] = map[string]string{scaler.DeletionCostAnnotation: strconv.FormatInt(int64(pv.DeletionCost), 10)}
	}
	status := map[string]any{"phase": "Pending", "qosClass": "Guaranteed"}
	spec := map[string]any{
		"containers": []any{map[string]any{
			"name":  "vllm",
			"image": "vllm/vllm-openai:v0.11.0",
			"ports": []any{map[string]any{"name": "http", "containerPort": MetricsPort, "protocol": "TCP"}},
		}},
	}
	if pv.Phase != scaler.Pending {
		started := pv.CreatedAt
		spec["nodeName"] = fmt.Sprintf("gpu-node-%03d", idx)
		status["phase"] = "Running"
		status["podIP"] = PodIPIn(block, idx).String()
		// Every simulated pod has a node (and so a dcgm-exporter) of its
		// own, on its own loopback address.
		status["hostIP"] = PodIPIn(block, idx).String()
		status["startTime"] = kubeTime(started)
		ready := cond{Type: "Ready", Status: "False", LastTransitionTime: kubeTime(started)}
		if !pv.ReadyAt.IsZero() {
			ready = cond{Type: "Ready", Status: "True", LastTransitionTime: kubeTime(pv.ReadyAt)}
		}
		if pv.Phase == scaler.Draining {
			// A terminating pod is taken out of its Service: not Ready.
			meta["deletionTimestamp"] = kubeTime(pv.DeletedAt)
			meta["deletionGracePeriodSeconds"] = int64(math.Ceil(pv.DeletionGraceSeconds))
			ready = cond{Type: "Ready", Status: "False", LastTransitionTime: kubeTime(pv.DeletedAt)}
		}
		status["conditions"] = []cond{{Type: "PodScheduled", Status: "True", LastTransitionTime: kubeTime(pv.CreatedAt)}, ready}
	} else {
		status["conditions"] = []cond{{Type: "PodScheduled", Status: "False", LastTransitionTime: kubeTime(pv.CreatedAt)}}
	}
	b, err := json.Marshal(map[string]any{"metadata": meta, "spec": spec, "status": status})
	if err != nil {
		return nil, fmt.Errorf("encoding pod %s: %w", pv.Name, err)
	}
	return b, nil
}

// DeploymentJSON is the scale target CPA hands the evaluate stage.
func DeploymentJSON(specReplicas int) ([]byte, error) {
	b, err := json.Marshal(map[string]any{
		"kind":       "Deployment",
		"apiVersion": "apps/v1",
		"metadata":   map[string]any{"name": AppName, "namespace": Namespace},
		"spec": map[string]any{
			"replicas": specReplicas,
			"selector": map[string]any{"matchLabels": map[string]string{"app": AppName}},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("encoding deployment: %w", err)
	}
	return b, nil
}
