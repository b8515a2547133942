//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// prometheusServer is a real Prometheus (Debian's `prometheus` package) scraping the vLLM pods, as the Prometheus
// of a cluster does, with each series labelled with the pod's `namespace` and `pod` (what inferscale's default
// matchers select on). Debian builds Prometheus without Kubernetes service discovery, so the test hands it the
// targets through file-based discovery (the same pods' IPs and names, rewritten whenever they change).
type prometheusServer struct {
	url     string
	targets string // the file_sd file
	last    string
	// pods: the targets are every pod of the namespace as Kubernetes service discovery's pod role gives them, and
	// the pods ask to be scraped by their prometheus.io annotations (startPodPrometheus); else the vLLM pods.
	pods bool
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

// prometheusPodsConfig scrapes every second the pods of the file that ask for it, with the relabelling of the
// annotation-based kubernetes-pods job of Prometheus's example configuration (documentation/examples/
// prometheus-kubernetes.yml): keep a pod annotated prometheus.io/scrape "true", scrape prometheus.io/path on the
// port prometheus.io/port, and label each series with the pod's namespace and name.
const prometheusPodsConfig = `global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: kubernetes-pods
    file_sd_configs:
      - files: [%q]
        refresh_interval: 1s
    relabel_configs:
      - source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_scrape]
        action: keep
        regex: "true"
      - source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_path]
        action: replace
        target_label: __metrics_path__
        regex: (.+)
      - source_labels: [__address__, __meta_kubernetes_pod_annotation_prometheus_io_port]
        action: replace
        regex: '([^:]+)(?::\d+)?;(\d+)'
        replacement: '$1:$2'
        target_label: __address__
      - source_labels: [__meta_kubernetes_namespace]
        target_label: namespace
      - source_labels: [__meta_kubernetes_pod_name]
        target_label: pod
`

// startPrometheus runs Prometheus scraping the vLLM pods of namespace ns and waits until it is ready. It fails the
// test when the binary is missing (.ci/run installs it).
func (c *cluster) startPrometheus(t *testing.T, ns string) *prometheusServer {
	t.Helper()
	return c.runPrometheus(t, "prometheus-"+ns, prometheusConfig, &prometheusServer{})
}

// startPodPrometheus runs Prometheus scraping the pods of namespace ns that ask for it by their annotations, as a
// cluster's Prometheus with the kubernetes-pods job does; deployScraped keeps its targets.
func (c *cluster) startPodPrometheus(t *testing.T, ns string) *prometheusServer {
	t.Helper()
	return c.runPrometheus(t, "prometheus-pods-"+ns, prometheusPodsConfig, &prometheusServer{pods: true})
}

// runPrometheus runs Prometheus as name (its folder and log under the cluster's root) on config, whose one %q is the
// file_sd file, and waits until it is ready.
func (c *cluster) runPrometheus(t *testing.T, name, config string, srv *prometheusServer) *prometheusServer {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("prometheus is not installed (apt-get install prometheus; .ci/run does): %v", err)
	}
	dir := filepath.Join(c.root, name)
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	srv.targets = filepath.Join(dir, "targets.json")
	if err := srv.writeTargets([]targetGroup{}); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(config, srv.targets)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p := c.start(name, nil, dir, bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--storage.tsdb.retention.time=1h", "--log.level=warn")
	t.Cleanup(func() { p.stop(10 * time.Second) })
	srv.url = "http://" + addr
	if err := waitFor(60*time.Second, "Prometheus ready", func() error { return httpGetOK(http.DefaultClient, srv.url+"/-/ready") }); err != nil {
		t.Fatal(err)
	}
	return srv
}

// targetGroup is one entry of a file_sd file.
type targetGroup struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels"`
}

// setTargets writes the scrape targets: each pod's IP on port, labelled with its namespace and name.
func (p *prometheusServer) setTargets(ns string, pods []podAddr, port int) error {
	groups := []targetGroup{}
	for _, pod := range pods {
		groups = append(groups, targetGroup{Targets: []string{fmt.Sprintf("%s:%d", pod.ip, port)}, Labels: map[string]string{"namespace": ns, "pod": pod.name}})
	}
	return p.writeTargets(groups)
}

// setPodTargets writes the targets Kubernetes service discovery's pod role gives for the Running pods (Debian
// builds Prometheus without it): one per container port, podIP:port, and podIP alone for a container without
// ports, each with the pod's __meta_kubernetes_* labels (namespace, name, IP, annotations, the container's name
// and port). The relabelling turns a pod's targets into one per annotated port.
func (p *prometheusServer) setPodTargets(pods []corev1.Pod) error {
	groups := []targetGroup{}
	for _, pod := range pods {
		if pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" || pod.DeletionTimestamp != nil {
			continue
		}
		meta := map[string]string{"__meta_kubernetes_namespace": pod.Namespace, "__meta_kubernetes_pod_name": pod.Name,
			"__meta_kubernetes_pod_ip": pod.Status.PodIP}
		for k, v := range pod.Annotations {
			meta["__meta_kubernetes_pod_annotation_"+labelName(k)] = v
			meta["__meta_kubernetes_pod_annotationpresent_"+labelName(k)] = "true"
		}
		for _, c := range pod.Spec.Containers {
			if len(c.Ports) == 0 {
				groups = append(groups, targetGroup{Targets: []string{pod.Status.PodIP}, Labels: withLabels(meta, "__meta_kubernetes_pod_container_name", c.Name)})
			}
			for _, port := range c.Ports {
				groups = append(groups, targetGroup{Targets: []string{net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(port.ContainerPort)))},
					Labels: withLabels(meta, "__meta_kubernetes_pod_container_name", c.Name, "__meta_kubernetes_pod_container_port_name", port.Name,
						"__meta_kubernetes_pod_container_port_number", strconv.Itoa(int(port.ContainerPort)))})
			}
		}
	}
	return p.writeTargets(groups)
}

// labelName is an annotation's name as service discovery writes it into a label name: every character other than
// a letter, a digit or _ becomes _.
func labelName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

// withLabels is a copy of m with the name, value pairs kv added.
func withLabels(m map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(m)+len(kv)/2)
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// writeTargets replaces the file_sd file (by a rename, so Prometheus never reads half of it) when it changed.
func (p *prometheusServer) writeTargets(groups []targetGroup) error {
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
	s, err := p.query(query)
	return len(s), err
}

// sample is one series of an instant query's answer: its labels and value.
type sample struct {
	labels map[string]string
	value  float64
}

// query runs an instant PromQL query through Prometheus's HTTP API (/api/v1/query) and returns its series.
func (p *prometheusServer) query(query string) ([]sample, error) {
	var out struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"` // [unix time, "value"]
			} `json:"result"`
		} `json:"data"`
	}
	resp, err := http.Get(p.url + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if err := decodeJSON(resp.Body, &out); err != nil {
		return nil, err
	}
	if out.Status != "success" {
		return nil, fmt.Errorf("query %q: status %s: %s", query, out.Status, out.Error)
	}
	var samples []sample
	for _, r := range out.Data.Result {
		str, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			return nil, fmt.Errorf("query %q: value %v: %w", query, r.Value[1], err)
		}
		samples = append(samples, sample{labels: r.Metric, value: v})
	}
	return samples, nil
}
