// Package cpa holds our own types for the Custom Pod Autoscaler (v2.12.2)
// stdin/stdout contract of the metric and evaluate stages.
//
// CPA's own metric.Info and evaluate.Info cannot be unmarshalled (their
// resource field is an interface), so the resource is kept as raw JSON here
// and read with gjson or decoded by the caller.
package cpa

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tidwall/gjson"
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
	CurrentReplicas int32    `json:"currentReplicas"`
	Reasons         []string `json:"reasons,omitempty"`
	Alerts          []string `json:"alerts,omitempty"`
	Decision        any      `json:"decision,omitempty"`
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

// readHint is the buffer ReadString starts with: a 64-pod evaluate input
// is ~100 KB. Pages of it that are never written are never touched.
const readHint = 256 << 10

// ReadString is ReadAll into a string, without the copy that converting
// the bytes would make (evaluate parses its stdin as a string).
func ReadString(r io.Reader, limit int64) (string, error) {
	var sb strings.Builder
	sb.Grow(int(min(limit+1, readHint)))
	n, err := io.Copy(&sb, io.LimitReader(r, limit+1))
	if err != nil {
		return "", fmt.Errorf("reading stdin: %w", err)
	}
	if n > limit {
		return "", fmt.Errorf("%w (%d bytes)", ErrInputTooLarge, limit)
	}
	return sb.String(), nil
}

// ValidRunType reports whether s is one of the run types CPA sends.
func ValidRunType(s string) bool {
	return s == RunTypeScaler || s == RunTypeAPI || s == RunTypeAPIDryRun
}

// DecodeStrict decodes exactly one JSON value from b into v, rejecting
// trailing data. It is json.Unmarshal (one validating pass, no copy of b)
// rather than a json.Decoder, whose buffering copies the whole input: that
// copy was a third of everything evaluate allocated on a 64-pod tick.
func DecodeStrict(b []byte, v any) error {
	err := json.Unmarshal(b, v)
	var syn *json.SyntaxError
	if errors.As(err, &syn) && strings.Contains(syn.Error(), "after top-level value") {
		return fmt.Errorf("trailing data after the JSON document (offset %d)", syn.Offset)
	}
	return err
}

// ParseMetricInput decodes and checks the metric stdin.
func ParseMetricInput(b []byte) (*MetricInput, error) {
	var in MetricInput
	if err := DecodeStrict(b, &in); err != nil {
		return nil, fmt.Errorf("metric input is not valid JSON: %w", err)
	}
	if len(in.Resource) == 0 || bytes.Equal(in.Resource, []byte("null")) {
		return nil, errors.New("metric input: missing field \"resource\"")
	}
	if bytes.TrimSpace(in.Resource)[0] != '{' {
		return nil, errors.New("metric input: \"resource\" must be an object")
	}
	if !ValidRunType(in.RunType) {
		return nil, fmt.Errorf("metric input: unknown runType %q (want scaler, api or api_dry_run)", in.RunType)
	}
	return &in, nil
}

// ParseEvaluateInput decodes and checks the evaluate stdin.
func ParseEvaluateInput(b []byte) (*EvaluateInput, error) {
	return ParseEvaluateInputString(string(b))
}

// ParseEvaluateInputString is ParseEvaluateInput on a string (no copy:
// metric values that need no unescaping share its memory).
func ParseEvaluateInputString(b string) (*EvaluateInput, error) {
	in, err := decodeEvaluateInput(b)
	if err != nil {
		return nil, fmt.Errorf("evaluate input is not valid JSON: %w", err)
	}
	if len(in.Resource) == 0 || string(in.Resource) == "null" {
		return nil, errors.New("evaluate input: missing field \"resource\"")
	}
	if bytes.TrimSpace(in.Resource)[0] != '{' {
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
	return in, nil
}

// decodeEvaluateInput is json.Unmarshal into an EvaluateInput without
// reflection (one gjson validation pass, then the three fields): a 64-pod
// input is ~100 KB of escaped metric values and this runs once per tick in
// a fresh process. Keys are matched exactly (encoding/json would also take
// "Metrics"); CPA writes them exactly.
func decodeEvaluateInput(s string) (*EvaluateInput, error) {
	if !gjson.Valid(s) {
		var raw json.RawMessage
		if err := DecodeStrict([]byte(s), &raw); err != nil {
			return nil, err
		}
		return nil, errors.New("malformed JSON")
	}
	in := &EvaluateInput{}
	v := gjson.Parse(s)
	if v.Type == gjson.Null {
		return in, nil
	}
	if !v.IsObject() {
		return nil, fmt.Errorf("want an object, got %.40s", v.Raw)
	}
	var err error
	v.ForEach(func(k, x gjson.Result) bool {
		switch k.Str {
		case "metrics":
			in.Metrics, err = decodeMetrics(x)
		case "resource":
			in.Resource = json.RawMessage(x.Raw)
		case "runType":
			err = stringField("runType", x, &in.RunType)
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	return in, nil
}

func decodeMetrics(x gjson.Result) ([]*ResourceMetric, error) {
	if x.Type == gjson.Null {
		return nil, nil
	}
	if !x.IsArray() {
		return nil, fmt.Errorf("metrics: want an array, got %.40s", x.Raw)
	}
	out := make([]*ResourceMetric, 0, 64)
	var err error
	x.ForEach(func(_, m gjson.Result) bool {
		i := len(out)
		switch {
		case m.Type == gjson.Null:
			out = append(out, nil)
			return true
		case !m.IsObject():
			err = fmt.Errorf("metrics[%d]: want an object, got %.40s", i, m.Raw)
			return false
		}
		rm := &ResourceMetric{}
		members(m.Raw, func(k, raw string) bool {
			switch k {
			case "resource":
				err = rawStringField("resource", raw, &rm.Resource)
			case "value":
				err = rawStringField("value", raw, &rm.Value)
			}
			if err != nil {
				err = fmt.Errorf("metrics[%d].%w", i, err)
			}
			return err == nil
		})
		out = append(out, rm)
		return err == nil
	})
	return out, err
}

// rawStringField sets *dst from a raw JSON string literal; null leaves it
// unchanged.
func rawStringField(name, raw string, dst *string) error {
	switch {
	case raw[0] == '"':
		*dst = unquote(raw)
	case raw == "null":
	default:
		return fmt.Errorf("%s: want a string, got %.40s", name, raw)
	}
	return nil
}

// stringField sets *dst from a JSON string; null leaves it unchanged.
func stringField(name string, x gjson.Result, dst *string) error {
	switch x.Type {
	case gjson.String:
		*dst = x.Str
	case gjson.Null:
	default:
		return fmt.Errorf("%s: want a string, got %.40s", name, x.Raw)
	}
	return nil
}
