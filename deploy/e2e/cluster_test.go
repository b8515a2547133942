//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// process is one child the harness started; it is stopped by its recorded PID only.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// cluster is a control plane on loopback plus the processes around it.
type cluster struct {
	t          *testing.T
	root       string // scratch folder for this run
	bin        string // folder with the control-plane binaries
	pki        *pki
	apiPort    int
	kubeconfig string
	http       *http.Client // admin client for the apiserver
	audit      string       // the apiserver's audit log (service-account requests)
	mu         sync.Mutex
	procs      []*process // in start order; stopped in reverse
}

// freePorts returns n distinct free loopback ports: all listeners stay open until every port is picked, so
// the kernel cannot hand the same one out twice.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("finding a free port: %v", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

func freePort(t *testing.T) int { return freePorts(t, 1)[0] }

// start runs a child with its output in root/logs/<name>.log.
func (c *cluster) start(name string, env []string, dir string, argv ...string) *process {
	c.t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = env
	}
	p, err := c.startCmd(name, filepath.Join(c.root, "logs", name+".log"), cmd, false)
	if err != nil {
		c.t.Fatal(err)
	}
	return p
}

// startCmd starts cmd with its output appended to logPath (in the CRI log format a kubelet writes, which kwok
// serves to `kubectl logs`, when cri). The child gets SIGKILL if the test process dies (Pdeathsig) and is in its own
// process group; Cleanup stops it by PID.
func (c *cluster) startCmd(name, logPath string, cmd *exec.Cmd, cri bool) (*process, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", logPath, err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if cri {
		var mu sync.Mutex
		cmd.Stdout, cmd.Stderr = &criLog{f: f, mu: &mu, stream: "stdout"}, &criLog{f: f, mu: &mu, stream: "stderr"}
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig, cmd.SysProcAttr.Setpgid = syscall.SIGKILL, true
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); f.Close(); close(p.done) }()
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	c.t.Logf("started %s (pid %d), log %s", name, cmd.Process.Pid, logPath)
	return p, nil
}

// criLog writes a stream in the CRI container log format: "<RFC 3339 time> <stream> F <line>" per line.
type criLog struct {
	f       *os.File
	mu      *sync.Mutex
	stream  string
	partial []byte
}

func (w *criLog) Write(b []byte) (int, error) {
	w.partial = append(w.partial, b...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(b), nil
		}
		w.mu.Lock()
		_, err := fmt.Fprintf(w.f, "%s %s F %s\n", time.Now().UTC().Format(time.RFC3339Nano), w.stream, w.partial[:i])
		w.mu.Unlock()
		w.partial = w.partial[i+1:]
		if err != nil {
			return len(b), err
		}
	}
}

// stop sends SIGTERM to the recorded PID, then SIGKILL after grace.
func (p *process) stop(grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (c *cluster) stopAll() {
	c.mu.Lock()
	procs := append([]*process{}, c.procs...)
	c.mu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].stop(5 * time.Second)
	}
}

// dumpLogs prints the tail of every child's log; called when the test failed.
func (c *cluster) dumpLogs(maxBytes int) {
	c.mu.Lock()
	procs := append([]*process{}, c.procs...)
	c.mu.Unlock()
	seen := map[string]bool{}
	for _, p := range procs {
		if seen[p.log] {
			continue
		}
		seen[p.log] = true
		b, err := os.ReadFile(p.log)
		if err != nil {
			continue
		}
		if len(b) > maxBytes {
			b = b[len(b)-maxBytes:]
		}
		c.t.Logf("---- tail of %s (%s) ----\n%s", p.name, p.log, b)
	}
}

// waitFor polls check every 200 ms until it returns nil or timeout passes.
func waitFor(timeout time.Duration, what string, check func() error) error {
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if err = check(); err == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("timed out after %s waiting for %s: %w", timeout, what, err)
}

func httpGetOK(client *http.Client, url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s %s", url, resp.Status, body)
	}
	return nil
}

// startCluster brings up etcd, the apiserver, the controller manager, the scheduler and kwok on loopback and
// waits until each is healthy.
func startCluster(t *testing.T, bin string) *cluster {
	root, err := os.MkdirTemp("", "inferscale-e2e-")
	if err != nil {
		t.Fatalf("scratch folder: %v", err)
	}
	c := &cluster{t: t, root: root, bin: bin}
	t.Cleanup(func() {
		c.stopAll()
		if t.Failed() {
			c.dumpLogs(6000)
			t.Logf("scratch folder kept for inspection: %s", root)
			return
		}
		_ = os.RemoveAll(root)
	})
	for _, d := range []string{"logs", "pki", "etcd", "kwok-home"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatalf("mkdir: %v", err)
		}
	}
	if c.pki, err = writePKI(filepath.Join(root, "pki")); err != nil {
		t.Fatalf("certificates: %v", err)
	}
	ports := freePorts(t, 5)
	etcdPort, peerPort, cmPort, schedPort, kwokPort := ports[0], ports[1], ports[2], ports[3], ports[4]
	// The apiserver listens on the `kubernetes` Service's address and port, so that the pods' in-cluster config
	// (KUBERNETES_SERVICE_HOST/PORT from that Service) reaches it as through kube-proxy.
	c.apiPort = 443
	c.audit = filepath.Join(root, "logs", "audit.log")
	auditPolicy := filepath.Join(root, "audit-policy.yaml")
	if err := os.WriteFile(auditPolicy, []byte(auditPolicyYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)

	c.start("etcd", nil, root, filepath.Join(bin, "etcd"), "--name", "default", "--data-dir", filepath.Join(root, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL, "--listen-peer-urls", peerURL,
		"--initial-advertise-peer-urls", peerURL, "--initial-cluster", "default="+peerURL, "--listen-metrics-urls", "",
		"--unsafe-no-fsync", "--log-level", "warn")
	if err := waitFor(30*time.Second, "etcd /health", func() error { return httpGetOK(http.DefaultClient, etcdURL+"/health") }); err != nil {
		t.Fatal(err)
	}

	c.start("kube-apiserver", nil, root, filepath.Join(bin, "kube-apiserver"), "--etcd-servers="+etcdURL,
		"--bind-address=0.0.0.0", "--advertise-address="+apiServerIP, fmt.Sprintf("--secure-port=%d", c.apiPort),
		"--tls-cert-file="+c.pki.ServerCert, "--tls-private-key-file="+c.pki.ServerKey, "--client-ca-file="+c.pki.CACert,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local", "--service-account-key-file="+c.pki.SAPub,
		"--service-account-signing-key-file="+c.pki.SAKey, "--service-cluster-ip-range="+serviceCIDR,
		"--authorization-mode=RBAC", "--endpoint-reconciler-type=none", "--allow-privileged=true",
		"--audit-policy-file="+auditPolicy, "--audit-log-path="+c.audit, "--audit-log-maxsize=0",
		"--kubelet-preferred-address-types=InternalIP", "--kubelet-client-certificate="+c.pki.AdminCert,
		"--kubelet-client-key="+c.pki.AdminKey,
		"--cert-dir="+filepath.Join(root, "apiserver-certs"))
	c.http, err = c.adminClient()
	if err != nil {
		t.Fatal(err)
	}
	if err := waitFor(90*time.Second, "kube-apiserver /readyz", func() error { return httpGetOK(c.http, c.apiURL("/readyz")) }); err != nil {
		t.Fatal(err)
	}
	if c.kubeconfig, err = c.writeKubeconfig(); err != nil {
		t.Fatal(err)
	}
	kc := c.kubeconfig
	c.start("kube-controller-manager", nil, root, filepath.Join(bin, "kube-controller-manager"), "--kubeconfig="+kc,
		"--authentication-kubeconfig="+kc, "--authorization-kubeconfig="+kc, "--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", cmPort), "--leader-elect=false", "--service-account-private-key-file="+c.pki.SAKey,
		"--root-ca-file="+c.pki.CACert, "--use-service-account-credentials=true", "--service-cluster-ip-range="+serviceCIDR)
	c.start("kube-scheduler", nil, root, filepath.Join(bin, "kube-scheduler"), "--kubeconfig="+kc,
		"--authentication-kubeconfig="+kc, "--authorization-kubeconfig="+kc, "--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", schedPort), "--leader-elect=false")
	insecure := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for name, port := range map[string]int{"kube-controller-manager": cmPort, "kube-scheduler": schedPort} {
		url := fmt.Sprintf("https://127.0.0.1:%d/healthz", port)
		if err := waitFor(60*time.Second, name+" /healthz", func() error { return httpGetOK(insecure, url) }); err != nil {
			t.Fatal(err)
		}
	}
	// kwok also serves the nodes' kubelet API (node IP and port in each Node's status) for `kubectl logs`: a Logs
	// object per pod names the file holding its container's output (the emulated kubelet writes them).
	if _, err := c.kubectl("", "apply", "--server-side", "-f", filepath.Join(bin, "..", "kwok", "kwok.x-k8s.io_logs.yaml")); err != nil {
		t.Fatal(err)
	}
	kwokEnv := append(os.Environ(), "HOME="+filepath.Join(root, "kwok-home"))
	kwokStages := filepath.Join(root, "kwok-stages.yaml")
	if err := os.WriteFile(kwokStages, []byte(kwokPodStagesYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	c.start("kwok", kwokEnv, root, filepath.Join(bin, "kwok"), "--kubeconfig="+kc, "--config="+kwokStages, "--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake", "--cidr=10.244.255.0/24", "--node-ip="+nodeIP,
		"--node-lease-duration-seconds=40", fmt.Sprintf("--node-port=%d", kwokPort),
		fmt.Sprintf("--server-address=%s:%d", nodeIP, kwokPort), "--tls-cert-file="+c.pki.KubeletCert,
		"--tls-private-key-file="+c.pki.KubeletKey, "--enable-crds=Logs")
	if err := waitFor(60*time.Second, "the default ServiceAccount", func() error {
		return httpGetOK(c.http, c.apiURL("/api/v1/namespaces/default/serviceaccounts/default"))
	}); err != nil {
		t.Fatal(err)
	}
	return c
}

// kwokPodStagesYAML are kwok's default pod stages (kustomize/stage/pod/fast of kwok v0.7.0: ready at once, Jobs
// complete, deleted at once) for every pod but the emulated vLLM ones, whose lifecycle the emulated kubelet owns
// as a kubelet does: kwok only starts them (a pod IP, phase Running, not Ready); the kubelet runs the container,
// sets Ready from the readiness probe, and on deletion runs preStop, sends SIGTERM, waits for the container to exit
// (up to the grace period) and then removes the pod object.
var kwokPodStagesYAML = strings.ReplaceAll(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: pod-ready}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: .metadata.deletionTimestamp, operator: DoesNotExist}
    - {key: .status.podIP, operator: DoesNotExist}
    - {key: '.spec.containers.[0].image', operator: NotIn, values: ['EMULATOR']}
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: Initialized}
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: Ready}
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: ContainersReady}
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        state: {running: {startedAt: {{ $now | Quote }}}}
      {{ end }}
      hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
      podIP: {{ PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}
      phase: Running
      startTime: {{ $now | Quote }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: pod-start-emulated}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: .metadata.deletionTimestamp, operator: DoesNotExist}
    - {key: .status.podIP, operator: DoesNotExist}
    - {key: '.spec.containers.[0].image', operator: In, values: ['EMULATOR']}
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: Initialized}
      - {lastTransitionTime: {{ $now | Quote }}, status: "False", type: Ready, reason: ContainersNotReady}
      - {lastTransitionTime: {{ $now | Quote }}, status: "False", type: ContainersReady, reason: ContainersNotReady}
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        started: true
        restartCount: 0
        state: {running: {startedAt: {{ $now | Quote }}}}
      {{ end }}
      hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
      podIP: {{ PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}
      phase: Running
      startTime: {{ $now | Quote }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: pod-complete}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: .metadata.deletionTimestamp, operator: DoesNotExist}
    - {key: .status.phase, operator: In, values: [Running]}
    - {key: '.metadata.ownerReferences.[].kind', operator: In, values: [Job]}
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $root := . }}
      containerStatuses:
      {{ range $index, $item := .spec.containers }}
      - image: {{ $item.image | Quote }}
        name: {{ $item.name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state: {terminated: {exitCode: 0, finishedAt: {{ $now | Quote }}, reason: Completed, startedAt: {{ $now | Quote }}}}
      {{ end }}
      phase: Succeeded
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: pod-delete}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: .metadata.deletionTimestamp, operator: Exists}
    - {key: '.spec.containers.[0].image', operator: NotIn, values: ['EMULATOR']}
  next:
    finalizers: {empty: true}
    delete: true
`, "EMULATOR", emulatorImage)

func (c *cluster) apiURL(path string) string {
	return fmt.Sprintf("https://%s:%d%s", apiServerIP, c.apiPort, path)
}

// auditPolicyYAML records, at Metadata level, every request of the service accounts the scenarios run as (the
// autoscaler's and the operator's), so that a test can compare what they really call with what their RBAC grants.
const auditPolicyYAML = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    users:
      - system:serviceaccount:inference:inferscale-vllm
      - system:serviceaccount:inference:inferscale-llm-prefill
      - system:serviceaccount:inference:inferscale-llm-decode
      - system:serviceaccount:default:custom-pod-autoscaler-operator-cluster
  - level: None
`

func (c *cluster) adminClient() (*http.Client, error) {
	caPEM, err := os.ReadFile(c.pki.CACert)
	if err != nil {
		return nil, fmt.Errorf("reading CA: %w", err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	cert, err := tls.LoadX509KeyPair(c.pki.AdminCert, c.pki.AdminKey)
	if err != nil {
		return nil, fmt.Errorf("admin certificate: %w", err)
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}},
	}}, nil
}

func (c *cluster) writeKubeconfig() (string, error) {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			c.t.Fatalf("reading %s: %v", p, err)
		}
		return base64.StdEncoding.EncodeToString(b)
	}
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://%s:%d
    certificate-authority-data: %s
users:
- name: admin
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: e2e
  context: {cluster: e2e, user: admin}
current-context: e2e
`, apiServerIP, c.apiPort, read(c.pki.CACert), read(c.pki.AdminCert), read(c.pki.AdminKey))
	path := filepath.Join(c.root, "kubeconfig")
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		return "", fmt.Errorf("writing kubeconfig: %w", err)
	}
	return path, nil
}

// kubectl runs the built kubectl against the cluster and returns its stdout.
func (c *cluster) kubectl(stdin string, args ...string) (string, error) {
	out, _, err := c.kubectlStderr(stdin, args...)
	return out, err
}

// kubectlStderr runs kubectl and returns its stdout and stderr (where it prints the API server's warnings).
func (c *cluster) kubectlStderr(stdin string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, "kubectl"), append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		return out.String(), errb.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), errb.String(), nil
}

// getJSON GETs an API path as the admin and decodes it into v.
func (c *cluster) getJSON(path string, v any) error {
	return c.call(http.MethodGet, path, "", nil, v)
}

// postJSON POSTs a JSON body to an API path as the admin and decodes the answer into v.
func (c *cluster) postJSON(path string, body io.Reader, v any) error {
	return c.call(http.MethodPost, path, "application/json", body, v)
}

// call sends one request as the admin; a non-2xx answer is an *apiError.
func (c *cluster) call(method, path, contentType string, body io.Reader, v any) error {
	req, err := http.NewRequest(method, c.apiURL(path), body)
	if err != nil {
		return err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return &apiError{code: resp.StatusCode, msg: fmt.Sprintf("%s %s: %s: %s", method, path, resp.Status, b)}
	}
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s %s: decoding: %w", method, path, err)
	}
	return nil
}

// apiError is a non-2xx answer of the API server.
type apiError struct {
	code int
	msg  string
}

func (e *apiError) Error() string { return e.msg }

func isNotFound(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.code == http.StatusNotFound
}

var errNotYet = errors.New("not yet")

// addFakeNodes creates n kwok-managed nodes with podCIDRs 10.244.<i>.0/24 (local addresses in the test's network
// namespace) and waits until they are Ready.
func (c *cluster) addFakeNodes(n int) {
	c.t.Helper()
	var docs []string
	for i := range n {
		docs = append(docs, fmt.Sprintf(`apiVersion: v1
kind: Node
metadata:
  name: kwok-node-%d
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: kwok-node-%d, type: kwok}
spec:
  podCIDR: 10.244.%d.0/24
  podCIDRs: [10.244.%d.0/24]
status:
  capacity: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}
`, i, i, i, i))
	}
	if _, err := c.kubectl(strings.Join(docs, "---\n"), "apply", "-f", "-"); err != nil {
		c.t.Fatal(err)
	}
	if err := waitFor(60*time.Second, "kwok nodes Ready", func() error {
		var nodes struct {
			Items []struct {
				Metadata struct{ Name string }
				Status   struct {
					Conditions []struct{ Type, Status string }
				}
			}
		}
		if err := c.getJSON("/api/v1/nodes?labelSelector=type%3Dkwok", &nodes); err != nil {
			return err
		}
		ready := 0
		for _, nd := range nodes.Items {
			for _, cond := range nd.Status.Conditions {
				if cond.Type == "Ready" && cond.Status == "True" {
					ready++
				}
			}
		}
		if ready < n {
			return fmt.Errorf("%d of %d nodes Ready: %w", ready, n, errNotYet)
		}
		return nil
	}); err != nil {
		c.t.Fatal(err)
	}
}
