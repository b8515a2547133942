package kube

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestScalePathNamesTheSubresource(t *testing.T) {
	for _, c := range []struct {
		ns, apiVersion, kind, name, want string
	}{
		{"inference", "apps/v1", "Deployment", "llm-prefill", "/apis/apps/v1/namespaces/inference/deployments/llm-prefill/scale"},
		{"inference", "apps/v1", "StatefulSet", "llm", "/apis/apps/v1/namespaces/inference/statefulsets/llm/scale"},
		{"inference", "leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "llm", "/apis/leaderworkerset.x-k8s.io/v1/namespaces/inference/leaderworkersets/llm/scale"},
		{"ns", "v1", "ReplicationController", "rc", "/api/v1/namespaces/ns/replicationcontrollers/rc/scale"},
	} {
		got, err := ScalePath(c.ns, c.apiVersion, c.kind, c.name)
		if err != nil || got != c.want {
			t.Errorf("ScalePath(%q, %q, %q, %q) = %q, %v; want %q", c.ns, c.apiVersion, c.kind, c.name, got, err, c.want)
		}
	}
	for _, bad := range [][4]string{
		{"", "apps/v1", "Deployment", "x"},
		{"ns", "apps/v1", "Deployment", ""},
		{"ns", "apps/v1", "", "x"},
		{"ns", "apps/v1", "deployments/scale", "x"},
		{"ns", "", "Deployment", "x"},
		{"ns", "a/b/c", "Deployment", "x"},
	} {
		if p, err := ScalePath(bad[0], bad[1], bad[2], bad[3]); err == nil {
			t.Errorf("ScalePath(%q) = %q, want an error", bad, p)
		}
	}
}

func TestReadScale(t *testing.T) {
	answers := map[string]string{
		"/apis/apps/v1/namespaces/ns/deployments/good/scale":     `{"kind":"Scale","spec":{"replicas":3},"status":{"replicas":2}}`,
		"/apis/apps/v1/namespaces/ns/deployments/zero/scale":     `{"kind":"Scale","spec":{},"status":{}}`,
		"/apis/apps/v1/namespaces/ns/deployments/negative/scale": `{"kind":"Scale","spec":{"replicas":-1}}`,
		"/apis/apps/v1/namespaces/ns/deployments/half/scale":     `{"kind":"Scale","spec":{"replicas":1.5}}`,
		"/apis/apps/v1/namespaces/ns/deployments/status/scale":   `{"kind":"Status","status":"Failure"}`,
		"/apis/apps/v1/namespaces/ns/deployments/garbage/scale":  `not json`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			t.Errorf("method %s, want GET", r.Method)
		}
		a, ok := answers[r.URL.Path]
		if !ok {
			http.Error(w, `{"reason":"NotFound"}`, http.StatusNotFound)
			return
		}
		io.WriteString(w, a)
	}))
	defer srv.Close()
	c := New(srv.URL, "", nil, time.Second, "ns")
	ctx := context.Background()

	s, err := c.ReadScale(ctx, "ns", "apps/v1", "Deployment", "good")
	if err != nil || s != (Scale{Replicas: 3}) {
		t.Errorf("good: %+v, %v; want 3 asked for", s, err)
	}
	// A Scale omits spec.replicas at zero: a target scaled to zero.
	if s, err := c.ReadScale(ctx, "ns", "apps/v1", "Deployment", "zero"); err != nil || s != (Scale{}) {
		t.Errorf("zero: %+v, %v; want 0 asked for", s, err)
	}
	for name, want := range map[string]string{
		"negative": "is not a replica count",
		"half":     "is not a replica count",
		"status":   `a "Status", not a Scale`,
		"garbage":  "not JSON",
		"missing":  "HTTP 404",
	} {
		if s, err := c.ReadScale(ctx, "ns", "apps/v1", "Deployment", name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %+v, %v; want an error with %q", name, s, err, want)
		}
	}
}
