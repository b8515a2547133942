package gather

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/inferscale/inferscale/internal/podtest"
	"github.com/inferscale/inferscale/shared/kube"
)

// fakePrometheus answers the series listing with the vLLM waiting and KV
// gauges and every other query with kvValue (or 7 for sums).
func fakePrometheus(t *testing.T, kvValue string) (string, *[]string) {
	t.Helper()
	var mu sync.Mutex
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		q := r.Form.Get("query")
		mu.Lock()
		queries = append(queries, q)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasPrefix(q, "count by (__name__)"):
			_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[`+
				`{"metric":{"__name__":"vllm:num_requests_waiting"},"value":[1700000000,"2"]},`+
				`{"metric":{"__name__":"vllm:kv_cache_usage_perc"},"value":[1700000000,"2"]}]}}`)
		case strings.Contains(q, "kv_cache"):
			_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,"`+kvValue+`"]}]}}`)
		default:
			_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,"7"]}]}}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &queries
}

func TestPerResourcePrometheus(t *testing.T) {
	target, err := os.ReadFile(filepath.Join("..", "..", "examples", "metric", "deployment.json"))
	if err != nil {
		t.Fatal(err)
	}
	url, queries := fakePrometheus(t, "0.25")
	l := &fakeLister{pods: [][]byte{[]byte(podtest.Pod("llm-a", "10.0.0.1", 1)), []byte(podtest.Pod("llm-b", "", 1))}}
	rep, err := runWith(t, string(target), map[string]string{"source": "prometheus", "prometheusURL": url}, l)
	if err != nil {
		t.Fatal(err)
	}
	f := rep.Fleet
	if f == nil || f.Source != "prometheus" || len(f.Errors) != 0 {
		t.Fatalf("fleet = %+v", f)
	}
	if *f.Waiting != 7 || *f.KVCacheMean != 0.25 || *f.KVCacheMax != 0.25 || f.Running != nil || f.TTFTQuantiles != nil {
		t.Errorf("fleet values = %+v", f)
	}
	if *f.ReadyPods != 2 || *f.StartingPods != 0 || len(rep.Pods) != 2 || rep.Pods[0].Error != "" || rep.Pods[0].Server != "" {
		t.Errorf("lifecycle-only pods = %+v", rep.Pods)
	}
	joined := strings.Join(*queries, "\n")
	if !strings.Contains(joined, `sum(vllm:num_requests_waiting{namespace="inference",pod=~"llm-.*"})`) {
		t.Errorf("queries:\n%s", joined)
	}

	// A KV reading above 1 fails the schema: the fleet keeps the reason, the output still encodes.
	url, _ = fakePrometheus(t, "1.7")
	rep, err = runWith(t, string(target), map[string]string{"source": "prometheus", "prometheusURL": url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Fleet.Waiting != nil || len(rep.Fleet.Errors) != 1 || !strings.Contains(rep.Fleet.Errors[0], "kvCache") {
		t.Errorf("rejected fleet = %+v", rep.Fleet)
	}
}

// N10 (issue 15): with the pod list refused (403) a Prometheus report had
// no ready count at all. It now carries the pods Prometheus holds series
// for (count of the waiting gauge) and the list's error, and no readyPods:
// the decide stage scales up on it, never down.
func TestPrometheusReportWithoutThePodListCountsServingPods(t *testing.T) {
	target, err := os.ReadFile(filepath.Join("..", "..", "examples", "metric", "deployment.json"))
	if err != nil {
		t.Fatal(err)
	}
	url, queries := fakePrometheus(t, "0.25")
	l := &fakeLister{err: &kube.StatusError{Code: 403, Message: "pods is forbidden"}}
	rep, err := runWith(t, string(target), map[string]string{"source": "prometheus", "prometheusURL": url}, l)
	if err != nil {
		t.Fatal(err)
	}
	f := rep.Fleet
	if f.ReadyPods != nil || f.ServingPods == nil || *f.ServingPods != 7 || *f.Waiting != 7 {
		t.Errorf("fleet = %+v, want servingPods 7 and no readyPods", f)
	}
	if len(f.Errors) != 1 || !strings.Contains(f.Errors[0], "pod list") || !strings.Contains(f.Errors[0], "403") {
		t.Errorf("errors = %q", f.Errors)
	}
	if !strings.Contains(strings.Join(*queries, "\n"), `count(vllm:num_requests_waiting{namespace="inference",pod=~"llm-.*"})`) {
		t.Errorf("no count query:\n%s", strings.Join(*queries, "\n"))
	}
}
