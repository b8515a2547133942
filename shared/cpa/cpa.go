// Package cpa holds our own types for the Custom Pod Autoscaler (v2.12.2)
// stdin/stdout contract of the metric and evaluate stages.
//
// CPA's own metric.Info and evaluate.Info cannot be unmarshalled (their
// resource field is an interface), so the resource is kept as raw JSON here
// for the caller to read the few fields it needs. Everything is plain
// encoding/json.
package cpa

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Run types CPA passes in runType.
const (
	RunTypeScaler    = "scaler"
	RunTypeAPI       = "api"
	RunTypeAPIDryRun = "api_dry_run"
)

// MaxInputBytes bounds what either stage reads from stdin. A 1,000-pod
// evaluate input is well under 8 MiB.
const MaxInputBytes = 32 << 20

// MetricInput is the JSON CPA writes to the metric command's stdin.
// In per-pod mode Resource is a Pod without kind/apiVersion; in per-resource
// mode it is the whole scale target.
type MetricInput struct {
	Resource          json.RawMessage `json:"resource"`
	RunType           string          `json:"runType"`
	KubernetesMetrics json.RawMessage `json:"kubernetesMetrics,omitempty"`
}

// ResourceMetric is one metric-stage result: the pod (or target) name and
// the verbatim stdout of that metric run. Value is missing when stdout was empty.
type ResourceMetric struct {
	Resource string `json:"resource,omitempty"`
	Value    string `json:"value,omitempty"`
}

// EvaluateInput is the JSON CPA writes to the evaluate command's stdin.
// Metrics may be null (no pods matched the selector).
type EvaluateInput struct {
	Metrics  []*ResourceMetric `json:"metrics"`
	Resource json.RawMessage   `json:"resource"`
	RunType  string            `json:"runType"`
}

// EvaluateOutput is what evaluate prints. CPA reads only targetReplicas and
// ignores (and drops) every other field.
type EvaluateOutput struct {
	TargetReplicas int32 `json:"targetReplicas"`
	// Explanation fields, for people and logs.
	CurrentReplicas int32 `json:"currentReplicas"`
	// Mode is "active", or "advisory" when targetReplicas is the current
	// count and AdvisedReplicas (and the reasons) what would have been done.
	Mode            string   `json:"mode"`
	AdvisedReplicas *int32   `json:"advisedReplicas,omitempty"`
	Reasons         []string `json:"reasons,omitempty"`
	Alerts          []string `json:"alerts,omitempty"`
	// Victims are the pods evaluate marked for removal (pod-deletion-cost)
	// before asking for fewer replicas.
	Victims  []string `json:"victims,omitempty"`
	Decision any      `json:"decision,omitempty"`
}

// ErrInputTooLarge is returned when stdin exceeds MaxInputBytes.
var ErrInputTooLarge = errors.New("input exceeds the size limit")

// ReadAll reads r up to limit bytes and fails if there is more.
func ReadAll(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading stdin: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w (%d bytes)", ErrInputTooLarge, limit)
	}
	return b, nil
}

// ValidRunType reports whether s is one of the run types CPA sends.
func ValidRunType(s string) bool {
	return s == RunTypeScaler || s == RunTypeAPI || s == RunTypeAPIDryRun
}

// ParseMetricInput decodes and checks the metric stdin.
func ParseMetricInput(b []byte) (*MetricInput, error) {
	var in MetricInput
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("metric input is not valid JSON: %w", err)
	}
	if len(in.Resource) == 0 || bytes.Equal(in.Resource, []byte("null")) {
		return nil, errors.New("metric input: missing field \"resource\"")
	}
	if in.Resource[0] != '{' {
		return nil, errors.New("metric input: \"resource\" must be an object")
	}
	if !ValidRunType(in.RunType) {
		return nil, fmt.Errorf("metric input: unknown runType %q (want scaler, api or api_dry_run)", in.RunType)
	}
	return &in, nil
}

// ParseEvaluateInput decodes and checks the evaluate stdin.
func ParseEvaluateInput(b []byte) (*EvaluateInput, error) {
	var in EvaluateInput
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("evaluate input is not valid JSON: %w", err)
	}
	if len(in.Resource) == 0 || bytes.Equal(in.Resource, []byte("null")) {
		return nil, errors.New("evaluate input: missing field \"resource\"")
	}
	if in.Resource[0] != '{' {
		return nil, errors.New("evaluate input: \"resource\" must be an object")
	}
	if !ValidRunType(in.RunType) {
		return nil, fmt.Errorf("evaluate input: unknown runType %q (want scaler, api or api_dry_run)", in.RunType)
	}
	for i, m := range in.Metrics {
		if m == nil {
			return nil, fmt.Errorf("evaluate input: metrics[%d] is null", i)
		}
	}
	return &in, nil
}
