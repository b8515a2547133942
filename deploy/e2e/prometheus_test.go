//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// prometheusServer is a real Prometheus (Debian's `prometheus` package) scraping the vLLM pods, as the Prometheus
// of a cluster does, with each series labelled with the pod's `namespace` and `pod` (what inferscale's default
// matchers select on). Debian builds Prometheus without Kubernetes service discovery, so the test hands it the
// targets through file-based discovery (the same pods' IPs and names, rewritten whenever they change).
type prometheusServer struct {
	url     string
	targets string // the file_sd file
	last    string
}

// prometheusConfig scrapes every target of the file every second.
const prometheusConfig = `global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: vllm
    file_sd_configs:
      - files: [%q]
        refresh_interval: 1s
`

// startPrometheus runs Prometheus for namespace ns and waits until it is ready. It fails the test when the binary
// is missing (.ci/run installs it).
func (c *cluster) startPrometheus(t *testing.T, ns string) *prometheusServer {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("prometheus is not installed (apt-get install prometheus; .ci/run does): %v", err)
	}
	dir := filepath.Join(c.root, "prometheus-"+ns)
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := &prometheusServer{targets: filepath.Join(dir, "targets.json")}
	if err := srv.setTargets(ns, nil, 0); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(prometheusConfig, srv.targets)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p := c.start("prometheus-"+ns, nil, dir, bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--storage.tsdb.retention.time=1h", "--log.level=warn")
	t.Cleanup(func() { p.stop(10 * time.Second) })
	srv.url = "http://" + addr
	if err := waitFor(60*time.Second, "Prometheus ready", func() error { return httpGetOK(http.DefaultClient, srv.url+"/-/ready") }); err != nil {
		t.Fatal(err)
	}
	return srv
}

// setTargets writes the scrape targets: each pod's IP on port, labelled with its namespace and name.
func (p *prometheusServer) setTargets(ns string, pods []podAddr, port int) error {
	type group struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	groups := []group{}
	for _, pod := range pods {
		groups = append(groups, group{Targets: []string{fmt.Sprintf("%s:%d", pod.ip, port)}, Labels: map[string]string{"namespace": ns, "pod": pod.name}})
	}
	b, err := json.Marshal(groups)
	if err != nil || string(b) == p.last {
		return err
	}
	tmp := p.targets + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	p.last = string(b)
	return os.Rename(tmp, p.targets)
}

// seriesCount runs an instant PromQL query and returns the number of series in its answer.
func (p *prometheusServer) seriesCount(query string) (int, error) {
	var out struct {
		Status string `json:"status"`
		Data   struct {
			Result []any `json:"result"`
		} `json:"data"`
	}
	resp, err := http.Get(p.url + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if err := decodeJSON(resp.Body, &out); err != nil {
		return 0, err
	}
	if out.Status != "success" {
		return 0, fmt.Errorf("query %q: status %s", query, out.Status)
	}
	return len(out.Data.Result), nil
}
