// Package podtest serves inference-server metrics and builds pod objects
// for the metric-stage tests and benchmarks.
package podtest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/inferscale/inferscale/internal/expotest"
)

// VLLMServer serves a full-size vLLM V1 page on loopback (3 waiting, 5
// running, KV 0.5, 40 requests) and returns its port.
func VLLMServer(tb testing.TB) int {
	tb.Helper()
	page := expotest.VLLMV1{Model: "meta-llama/Llama-3.1-8B-Instruct", Engines: 1, Waiting: 3, Running: 5, KV: 0.5, Requests: 40, HitBucket: 9}.Render()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = io.WriteString(w, page)
	}))
	tb.Cleanup(srv.Close)
	_, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(p)
	return port
}

// Pod is a ready pod object as CPA passes it (created 20:00, ready 20:02
// on 2026-11-29), with a container port "metrics"; ip "" gives a pod
// without an address.
func Pod(name, ip string, port int) string {
	status := `"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-29T20:02:00Z"}]`
	if ip != "" {
		status += `,"podIP":"` + ip + `","hostIP":"` + ip + `"`
	}
	return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"inference","creationTimestamp":"2026-11-29T20:00:00Z","labels":{"app":"llm"}},`+
		`"spec":{"containers":[{"name":"vllm","ports":[{"name":"metrics","containerPort":%d}]}]},"status":{%s}}`, name, port, status)
}
