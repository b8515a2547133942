package decide

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/inferscale/inferscale/shared/cpa"
	"github.com/inferscale/inferscale/shared/signal"
)

// Input is a parsed evaluate stdin.
type Input struct {
	RunType         string
	CurrentReplicas int
	Entries         []Entry
	// Target is the scale target's object as CPA passed it (for the
	// Events on it and the namespace of its pods).
	Target []byte
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
	replicas, err := specReplicas(in.Resource)
	if err != nil {
		return nil, nil, err
	}
	out := &Input{RunType: in.RunType, CurrentReplicas: replicas, Entries: make([]Entry, 0, len(in.Metrics)), Target: in.Resource}
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

// specReplicas reads resource.spec.replicas out of the scale target (a
// large object of which only this field matters here).
func specReplicas(resource []byte) (int, error) {
	rep := gjson.GetBytes(resource, "spec.replicas")
	if !rep.Exists() {
		return 0, errors.New("evaluate input: missing field \"resource.spec.replicas\"")
	}
	if rep.Type != gjson.Number || rep.Num != float64(int64(rep.Num)) || rep.Num < 0 || rep.Num > 1e6 {
		return 0, fmt.Errorf("evaluate input: \"resource.spec.replicas\" must be a non-negative integer, got %s", rep.Raw)
	}
	return int(rep.Num), nil
}

// displayName is a resource name for an error message: quoted, or
// "no resource name" when CPA gave none.
func displayName(resource string) string {
	if resource == "" {
		return "no resource name"
	}
	return fmt.Sprintf("pod %q", resource)
}
