package kube

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

func TestSelectorFromTarget(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "metric", "deployment.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := SelectorFromTarget([]byte(gjson.GetBytes(b, "resource").Raw))
	if err != nil {
		t.Fatal(err)
	}
	if want := "app=llm,tier in (gpu,edge),!canary"; got != want {
		t.Errorf("selector = %q, want %q", got, want)
	}
	got, err = SelectorFromTarget([]byte(`{"spec":{"selector":{"matchLabels":{"b":"2","a":"1"},"matchExpressions":[{"key":"x","operator":"NotIn","values":["y"]},{"key":"z","operator":"Exists"}]}}}`))
	if err != nil || got != "a=1,b=2,x notin (y),z" {
		t.Errorf("selector = %q %v", got, err)
	}
}

func TestSelectorFromTargetRejects(t *testing.T) {
	for _, s := range []string{
		`{}`, `{"spec":{}}`, `{"spec":{"selector":{}}}`,
		`{"spec":{"selector":{"matchLabels":{"a":"1,b=2"}}}}`,
		`{"spec":{"selector":{"matchLabels":{"a b":"1"}}}}`,
		`{"spec":{"selector":{"matchExpressions":[{"key":"a","operator":"In","values":[]}]}}}`,
		`{"spec":{"selector":{"matchExpressions":[{"key":"a","operator":"Gt","values":["1"]}]}}}`,
		`{"spec":{"selector":{"matchExpressions":[{"key":"a)","operator":"Exists"}]}}}`,
	} {
		if got, err := SelectorFromTarget([]byte(s)); err == nil {
			t.Errorf("%s: want error, got %q", s, got)
		}
	}
}

func TestListPods(t *testing.T) {
	var gotPath, gotAuth string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotAuth = r.URL.RequestURI(), r.Header.Get("Authorization")
		if r.URL.Query().Get("labelSelector") == "bad" {
			http.Error(w, `{"message":"forbidden"}`, http.StatusForbidden)
			return
		}
		_, _ = w.Write([]byte(`{"kind":"PodList","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`))
	}))
	defer srv.Close()
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := New(srv.URL, tok, nil, 2*time.Second, "")
	c.http = srv.Client()
	pods, err := c.ListPods(context.Background(), "inference", "app=llm,tier in (gpu)")
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 2 || gjson.GetBytes(pods[1], "metadata.name").String() != "b" {
		t.Errorf("pods = %q", pods)
	}
	if !strings.HasPrefix(gotPath, "/api/v1/namespaces/inference/pods?labelSelector=app%3Dllm%2Ctier+in+%28gpu%29") || gotAuth != "Bearer secret" {
		t.Errorf("request = %s auth %q", gotPath, gotAuth)
	}
	if _, err := c.ListPods(context.Background(), "inference", "bad"); !strings.Contains(err.Error(), "403") {
		t.Errorf("forbidden: %v", err)
	}
	if _, err := c.ListPods(context.Background(), "", "a=b"); err == nil {
		t.Error("empty namespace: want error")
	}
}
