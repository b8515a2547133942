package kube

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// apiClient is an in-cluster client of srv with token "s3cret".
func apiClient(t *testing.T, srv *httptest.Server) *Client {
	t.Helper()
	u, _ := url.Parse(srv.URL)
	host, port, _ := net.SplitHostPort(u.Host)
	env := map[string]string{"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port}
	c, err := InCluster(func(k string) string { return env[k] }, writeServiceAccount(t, srv, "s3cret"), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// N3 (issue 15): an API answer redirecting to the same host on another
// port (or plain HTTP) got the service-account token (Go strips it only
// when the host name changes), and a 307/308 replayed a pod PATCH there.
// The client follows no redirect: the call fails naming it, and nothing
// reaches the other server. metric and evaluate share this client.
func TestRedirectsAreNotFollowedWithTheToken(t *testing.T) {
	var mu sync.Mutex
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		leaked = append(leaked, r.Method+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Write([]byte(`{"items":[],"data":{}}`))
	}))
	defer other.Close()
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+r.URL.RequestURI(), code)
		}))
		c := apiClient(t, api)
		ctx := context.Background()
		_, lerr := c.ListPods(ctx, "inference", "app=vllm")
		perr := c.PatchPodAnnotations(ctx, "inference", "vllm-0", map[string]*string{DeletionCostAnnotation: nil})
		_, gerr := c.GetConfigMap(ctx, "inference", "inferscale-state")
		for _, err := range []error{lerr, perr, gerr} {
			if err == nil || !strings.Contains(err.Error(), "redirected") {
				t.Errorf("HTTP %d: %v, want the redirect refused", code, err)
			}
		}
		api.Close()
	}
	if len(leaked) > 0 {
		t.Fatalf("the redirect target got %q", leaked)
	}
}

// N7 (issue 15): every answer was read up to 64 MiB (a 200 MiB body cost
// 334–409 MB RSS, over the CPA pod's 256 Mi). Each call reads what it
// needs: a ConfigMap up to MaxConfigMapResponseBytes, a pod list up to
// MaxPodListResponseBytes, anything else up to MaxResponseBytes; beyond,
// a clear error.
func TestAnswersAreBoundedByWhatTheCallNeeds(t *testing.T) {
	sizes := map[string]int{} // path prefix -> body size
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for prefix, n := range sizes {
			if strings.HasPrefix(r.URL.Path, prefix) {
				w.Write([]byte(`{"data":{"k":"`))
				w.Write(bytes.Repeat([]byte("x"), n))
				w.Write([]byte(`"},"items":[]}`))
				return
			}
		}
	}))
	defer api.Close()
	c := apiClient(t, api)
	ctx := context.Background()
	sizes["/api/v1/namespaces/inference/configmaps"] = 8 << 20
	sizes["/api/v1/namespaces/inference/pods"] = 40 << 20
	if _, err := c.GetConfigMap(ctx, "inference", "s"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("an 8 MiB ConfigMap answer: %v, want refused", err)
	}
	if _, err := c.ListPods(ctx, "inference", "app=vllm"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a 40 MiB pod list: %v, want refused", err)
	}
	if err := c.PatchPodAnnotations(ctx, "inference", "p", map[string]*string{DeletionCostAnnotation: nil}); err == nil {
		t.Error("a 40 MiB answer to a pod PATCH was read")
	}
	// What a call needs still passes: a ConfigMap of 1 MiB data, a pod
	// list of 16 MiB.
	sizes["/api/v1/namespaces/inference/configmaps"] = 1 << 20
	sizes["/api/v1/namespaces/inference/pods"] = 16 << 20
	if cm, err := c.GetConfigMap(ctx, "inference", "s"); err != nil || len(cm.Data["k"]) != 1<<20 {
		t.Errorf("a 1 MiB ConfigMap: %v", err)
	}
	if _, err := c.ListPods(ctx, "inference", "app=vllm"); err != nil {
		t.Errorf("a 16 MiB pod list: %v", err)
	}
}
