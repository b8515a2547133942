package kube

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestConfigMapCalls(t *testing.T) {
	var methods []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		methods = append(methods, r.Method+" "+r.URL.Path)
		switch r.Method {
		case http.MethodGet:
			if r.URL.Path == "/api/v1/namespaces/ns/configmaps/missing" {
				http.Error(w, `{"reason":"NotFound"}`, http.StatusNotFound)
				return
			}
			io.WriteString(w, `{"metadata":{"name":"s","namespace":"ns","resourceVersion":"7"},"data":{"state.json":"{}"}}`)
		case http.MethodPost, http.MethodPut:
			var body map[string]any
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				t.Errorf("body: %v", err)
			}
			meta := body["metadata"].(map[string]any)
			if r.Method == http.MethodPut && meta["resourceVersion"] != "7" {
				http.Error(w, "conflict", http.StatusConflict)
				return
			}
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"metadata":{"name":"s","namespace":"ns","resourceVersion":"8"}}`)
		}
	}))
	defer srv.Close()
	c := New(srv.URL, "", nil, 2*time.Second, "ns")
	ctx := context.Background()
	cm, err := c.GetConfigMap(ctx, "ns", "s")
	if err != nil || cm.ResourceVersion != "7" || cm.Data["state.json"] != "{}" {
		t.Fatalf("get: %+v %v", cm, err)
	}
	if _, err := c.GetConfigMap(ctx, "ns", "missing"); !IsNotFound(err) {
		t.Fatalf("missing: %v", err)
	}
	if _, err := c.CreateConfigMap(ctx, &ConfigMap{Name: "s", Namespace: "ns"}); err != nil {
		t.Fatal(err)
	}
	if got, err := c.UpdateConfigMap(ctx, cm); err != nil || got.ResourceVersion != "8" {
		t.Fatalf("update: %+v %v", got, err)
	}
	cm.ResourceVersion = "6"
	if _, err := c.UpdateConfigMap(ctx, cm); !IsConflict(err) {
		t.Fatalf("stale update: %v, want conflict", err)
	}
	want := []string{"GET /api/v1/namespaces/ns/configmaps/s", "GET /api/v1/namespaces/ns/configmaps/missing",
		"POST /api/v1/namespaces/ns/configmaps", "PUT /api/v1/namespaces/ns/configmaps/s", "PUT /api/v1/namespaces/ns/configmaps/s"}
	if len(methods) != len(want) {
		t.Fatalf("calls %v", methods)
	}
	for i := range want {
		if methods[i] != want[i] {
			t.Errorf("call %d: %s, want %s", i, methods[i], want[i])
		}
	}
}
