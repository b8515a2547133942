package cpa

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseEvaluateInput(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string
		metrics int
	}{
		{name: "per-pod with empty value", in: `{"metrics":[{"resource":"web-abc","value":"{\"x\":1}\n"},{"resource":"web-def"}],"resource":{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":3}},"runType":"scaler"}`, metrics: 2},
		{name: "null metrics", in: `{"metrics":null,"resource":{"spec":{"replicas":0}},"runType":"api"}`, metrics: 0},
		{name: "dry run", in: `{"metrics":[],"resource":{},"runType":"api_dry_run"}`, metrics: 0},
		{name: "not json", in: `{"metrics":`, wantErr: "not valid JSON"},
		{name: "two documents", in: `{"metrics":null,"resource":{},"runType":"scaler"} {}`, wantErr: "after top-level value"},
		{name: "missing resource", in: `{"metrics":null,"runType":"scaler"}`, wantErr: `missing field "resource"`},
		{name: "resource not object", in: `{"metrics":null,"resource":3,"runType":"scaler"}`, wantErr: "must be an object"},
		{name: "bad run type", in: `{"metrics":null,"resource":{},"runType":"cron"}`, wantErr: "unknown runType"},
		{name: "metrics wrong type", in: `{"metrics":"x","resource":{},"runType":"scaler"}`, wantErr: "not valid JSON"},
		{name: "null metric entry", in: `{"metrics":[null],"resource":{},"runType":"scaler"}`, wantErr: "metrics[0] is null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseEvaluateInput([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if len(got.Metrics) != tt.metrics {
				t.Fatalf("got %d metrics, want %d", len(got.Metrics), tt.metrics)
			}
		})
	}
}

func TestParseEvaluateInputKeepsValueVerbatim(t *testing.T) {
	in, err := ParseEvaluateInput([]byte(`{"metrics":[{"resource":"p","value":"{\"v\":1}\n"}],"resource":{},"runType":"scaler"}`))
	if err != nil {
		t.Fatal(err)
	}
	if in.Metrics[0].Value != "{\"v\":1}\n" {
		t.Fatalf("value = %q", in.Metrics[0].Value)
	}
}

func TestParseMetricInput(t *testing.T) {
	in, err := ParseMetricInput([]byte(`{"resource":{"metadata":{"name":"web-abc"},"status":{"podIP":"10.0.0.5"}},"runType":"scaler"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(in.Resource, []byte("10.0.0.5")) {
		t.Fatalf("resource lost: %s", in.Resource)
	}
	for _, bad := range []string{``, `[]`, `{"runType":"scaler"}`, `{"resource":{},"runType":""}`, `{"resource":"x","runType":"scaler"}`} {
		if _, err := ParseMetricInput([]byte(bad)); err == nil {
			t.Errorf("ParseMetricInput(%q) accepted bad input", bad)
		}
	}
}

func TestReadAllLimit(t *testing.T) {
	if _, err := ReadAll(strings.NewReader("abcdef"), 5); !errors.Is(err, ErrInputTooLarge) {
		t.Fatalf("err = %v, want ErrInputTooLarge", err)
	}
	b, err := ReadAll(strings.NewReader("abcde"), 5)
	if err != nil || string(b) != "abcde" {
		t.Fatalf("got %q, %v", b, err)
	}
}

func TestEvaluateOutputIsWhatCPAParses(t *testing.T) {
	b, err := json.Marshal(EvaluateOutput{TargetReplicas: 4, CurrentReplicas: 2, Reasons: []string{"queue"}})
	if err != nil {
		t.Fatal(err)
	}
	// CPA unmarshals into struct{TargetReplicas int32 `json:"targetReplicas"`}.
	var cpaView struct {
		TargetReplicas int32 `json:"targetReplicas"`
	}
	if err := json.Unmarshal(b, &cpaView); err != nil || cpaView.TargetReplicas != 4 {
		t.Fatalf("CPA would read %d (%v) from %s", cpaView.TargetReplicas, err, b)
	}
}

func FuzzParseEvaluateInput(f *testing.F) {
	f.Add([]byte(`{"metrics":[{"resource":"a","value":"{}"}],"resource":{"spec":{"replicas":2}},"runType":"scaler"}`))
	f.Add([]byte(`{"metrics":null,"resource":{},"runType":"api_dry_run"}`))
	f.Add([]byte(`{"metrics":[null]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := ParseEvaluateInput(b)
		if err != nil {
			return
		}
		if !ValidRunType(in.RunType) || len(in.Resource) == 0 {
			t.Fatalf("accepted input without a valid runType/resource: %q", b)
		}
		for _, m := range in.Metrics {
			if m == nil {
				t.Fatal("accepted a null metric")
			}
		}
	})
}

func FuzzParseMetricInput(f *testing.F) {
	f.Add([]byte(`{"resource":{"metadata":{"name":"p"}},"runType":"scaler"}`))
	f.Add([]byte(`{"resource":{},"runType":"api","kubernetesMetrics":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := ParseMetricInput(b)
		if err != nil {
			return
		}
		if !ValidRunType(in.RunType) || len(in.Resource) == 0 {
			t.Fatalf("accepted input without a valid runType/resource: %q", b)
		}
	})
}
