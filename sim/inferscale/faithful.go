package inferscale

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/inferscale/inferscale/shared/clock"
	"github.com/inferscale/inferscale/shared/cpa"
	"github.com/inferscale/inferscale/shared/decisionlog"
	"github.com/inferscale/inferscale/shared/signal"
	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/scaler"
)

// FaithfulOptions configure the binary-driven mode.
type FaithfulOptions struct {
	Name string
	// BinDir holds metric and evaluate (as built by make build).
	BinDir string
	// Env is the CPA config list the binaries see as environment
	// variables (minReplicas, maxReplicas, queueTarget, ...).
	Env map[string]string
	CPA CPA
	// Base is the simulation's trace origin (unused but for messages).
	Base time.Time
	// Timeout per process run, like CPA's per-method timeout (default 5 s).
	Timeout time.Duration
	// Model names the served model in the metrics text.
	Model string
	// DecisionLog, when set, gets the decision lines evaluate writes on
	// stderr, one a tick (a `kubectl logs` of the CPA pod, as it were).
	DecisionLog io.Writer
}

// Faithful runs bin/metric once per pod and bin/evaluate once per tick,
// exactly as CPA v2.12.2 does in per-pod mode.
type Faithful struct {
	opt      FaithfulOptions
	metric   string
	evaluate string
	stateDir string
	post     postEvaluate

	block   byte // pods live in 127.block.0.0/16
	mu      sync.Mutex
	servers map[int]*podServer
	closed  bool

	// MetricRuns counts metric processes run; ReadyScrapeErrors the
	// reports of serving pods that carried a scrape error.
	MetricRuns, ReadyScrapeErrors int

	// marked are the last victims; costs the pod-deletion costs of the
	// last tick.
	marked []string
	costs  map[string]int32
}

// podServer is one simulated pod's /metrics endpoint on its loopback IP.
type podServer struct {
	srv  *http.Server
	body []byte
	ok   bool
	mu   sync.Mutex
}

func (p *podServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/metrics" {
		http.NotFound(w, r)
		return
	}
	p.mu.Lock()
	body, ok := p.body, p.ok
	p.mu.Unlock()
	if !ok {
		http.Error(w, "no scrape delivered yet", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write(body)
}

// NewFaithful checks the binaries and prepares a private state file.
func NewFaithful(opt FaithfulOptions) (*Faithful, error) {
	if opt.Timeout <= 0 {
		opt.Timeout = 5 * time.Second
	}
	if opt.CPA.Interval <= 0 {
		opt.CPA.Interval = DefaultCPA().Interval
	}
	if opt.Model == "" {
		opt.Model = "meta-llama/Llama-3.1-8B-Instruct"
	}
	if opt.Name == "" {
		opt.Name = "inferscale"
	}
	f := &Faithful{opt: opt, servers: map[int]*podServer{}, post: postEvaluate{window: opt.CPA.DownscaleStabilization}}
	for _, b := range []struct {
		dst  *string
		name string
	}{{&f.metric, "metric"}, {&f.evaluate, "evaluate"}} {
		p, err := filepath.Abs(filepath.Join(opt.BinDir, b.name))
		if err != nil {
			return nil, fmt.Errorf("faithful mode: %w", err)
		}
		st, err := os.Stat(p)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("faithful mode needs the built %s binary at %s (run make build): %w", b.name, p, errOr(err))
		}
		*b.dst = p
	}
	block, err := freeBlock()
	if err != nil {
		return nil, err
	}
	f.block = block
	dir, err := os.MkdirTemp("", "inferscale-sim-state-")
	if err != nil {
		return nil, fmt.Errorf("faithful mode: state directory: %w", err)
	}
	f.stateDir = dir
	return f, nil
}

// freeBlock finds a 127.b.0.0/16 block whose first pod address is free on
// the metrics port, so that concurrent faithful runs (tests, demos) do not
// collide. It starts from a block derived from the process id.
func freeBlock() (byte, error) {
	start := os.Getpid() % 250
	var last error
	for i := 0; i < 250; i++ {
		b := byte(1 + (start+i)%250)
		ln, err := net.Listen("tcp", net.JoinHostPort(PodIPIn(b, 0).String(), strconv.Itoa(MetricsPort)))
		if err != nil {
			last = err
			continue
		}
		if err := ln.Close(); err != nil {
			return 0, fmt.Errorf("faithful mode: %w", err)
		}
		return b, nil
	}
	return 0, fmt.Errorf("faithful mode: no free 127.x.0.1:%d address for the simulated pods: %w", MetricsPort, last)
}

func errOr(err error) error {
	if err != nil {
		return err
	}
	return errors.New("not an executable file")
}

// Name implements scaler.Autoscaler.
func (f *Faithful) Name() string { return f.opt.Name }

// Period implements scaler.Autoscaler.
func (f *Faithful) Period() time.Duration { return f.opt.CPA.Interval }

// Close stops the pod endpoints and removes the state file.
func (f *Faithful) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	var errs []error
	for _, s := range f.servers {
		if err := s.srv.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	f.servers = nil
	if err := os.RemoveAll(f.stateDir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// serve publishes pv's delivered scrape on its endpoint, starting the
// endpoint when the pod first serves.
func (f *Faithful) serve(pv scaler.PodView) error {
	s, ok := f.servers[pv.Serial]
	if !ok {
		addr := net.JoinHostPort(PodIPIn(f.block, pv.Serial).String(), strconv.Itoa(MetricsPort))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("pod %s endpoint %s: %w", pv.Name, addr, err)
		}
		s = &podServer{}
		s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = s.srv.Serve(ln) }()
		f.servers[pv.Serial] = s
	}
	var body bytes.Buffer
	okBody := pv.Metrics != nil
	if okBody {
		if err := engine.WritePrometheus(&body, pv.Metrics, f.opt.Model); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.body, s.ok = body.Bytes(), okBody
	s.mu.Unlock()
	return nil
}

// Recommend implements scaler.Autoscaler: one CPA tick.
func (f *Faithful) Recommend(obs scaler.Observation) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, fmt.Errorf("%w: faithful runner used after Close", engine.ErrFatal)
	}
	live := map[int]bool{}
	for _, pv := range obs.Pods {
		live[pv.Serial] = true
		if pv.Phase == scaler.Ready || pv.Phase == scaler.Draining {
			if err := f.serve(pv); err != nil {
				return 0, fmt.Errorf("%w: %v", engine.ErrFatal, err)
			}
		}
	}
	for serial, s := range f.servers {
		if !live[serial] {
			_ = s.srv.Close()
			delete(f.servers, serial)
		}
	}
	now := obs.Now.UTC().Format(time.RFC3339Nano)
	env := f.env(now)
	// Metric stage: once per pod, in list (name) order.
	var metrics []*cpa.ResourceMetric
	for _, pv := range obs.Pods {
		pod, err := PodJSONIn(f.block, pv)
		if err != nil {
			return 0, err
		}
		in, err := json.Marshal(struct {
			Resource json.RawMessage `json:"resource"`
			RunType  string          `json:"runType"`
		}{pod, cpa.RunTypeScaler})
		if err != nil {
			return 0, fmt.Errorf("encoding metric input: %w", err)
		}
		out, _, err := f.exec(f.metric, in, env)
		if err != nil {
			return 0, fmt.Errorf("metric for pod %s: %w", pv.Name, err)
		}
		f.MetricRuns++
		if pv.Phase == scaler.Ready && pv.Metrics != nil {
			if rep, err := signal.Decode(string(out)); err != nil || len(rep.Pods) != 1 || rep.Pods[0].Error != "" {
				f.ReadyScrapeErrors++
			}
		}
		metrics = append(metrics, &cpa.ResourceMetric{Resource: pv.Name, Value: string(out)})
	}
	dep, err := DeploymentJSON(obs.SpecReplicas)
	if err != nil {
		return 0, err
	}
	in, err := json.Marshal(struct {
		Metrics  []*cpa.ResourceMetric `json:"metrics"`
		Resource json.RawMessage       `json:"resource"`
		RunType  string                `json:"runType"`
	}{metrics, dep, cpa.RunTypeScaler})
	if err != nil {
		return 0, fmt.Errorf("encoding evaluate input: %w", err)
	}
	out, stderr, err := f.exec(f.evaluate, in, env)
	if err != nil {
		return 0, fmt.Errorf("evaluate: %w", err)
	}
	if err := f.logDecisions(stderr); err != nil {
		return 0, err
	}
	target, err := ParseEvaluation(out)
	if err != nil {
		return 0, err
	}
	// evaluate names the pods it would mark for removal (in a cluster it
	// patches their pod-deletion cost itself); the simulator plays the
	// patch, as evaluate's edge would from its state.
	victims := parseVictims(out)
	f.costs, f.marked = Marks(f.marked, victims), victims
	return f.post.apply(target, obs.SpecReplicas, obs.MinReplicas, obs.MaxReplicas, obs.Now), nil
}

// DeletionCosts implements scaler.DeletionCoster.
func (f *Faithful) DeletionCosts() map[string]int32 { return f.costs }

// parseVictims reads the victims evaluate printed (none when absent or
// unreadable: a missing mark only makes the ReplicaSet choose).
func parseVictims(out []byte) []string {
	var v struct {
		Victims []string `json:"victims"`
	}
	if json.Unmarshal(out, &v) != nil {
		return nil
	}
	return v.Victims
}

// binaryDefaults point the metric binary at the simulated pods: the vLLM
// preset, and dcgm-exporter readings served on the pod's own endpoint.
func binaryDefaults() map[string]string {
	return map[string]string{
		"server":           "vllm",
		"metricsPort":      strconv.Itoa(MetricsPort),
		"gpuSource":        "dcgm-exporter",
		"dcgmExporterPort": strconv.Itoa(MetricsPort),
		"dcgmExporterPath": "/metrics",
	}
}

func (f *Faithful) env(now string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), clock.EnvNow + "=" + now,
		"stateFile=" + filepath.Join(f.stateDir, "state.json"), "configPath=" + filepath.Join(f.stateDir, "no-cpa-config.yaml")}
	for k, v := range binaryDefaults() {
		if _, set := f.opt.Env[k]; !set {
			env = append(env, k+"="+v)
		}
	}
	for k, v := range f.opt.Env {
		env = append(env, k+"="+v)
	}
	return env
}

// logDecisions copies the decision lines of evaluate's stderr to the
// decision log (none without one).
func (f *Faithful) logDecisions(stderr []byte) error {
	if f.opt.DecisionLog == nil {
		return nil
	}
	lines, errs, _ := decisionlog.Scan(bytes.NewReader(stderr))
	if len(errs) > 0 {
		return fmt.Errorf("evaluate's decision line: %w", errs[0])
	}
	for _, l := range lines {
		if err := decisionlog.Write(f.opt.DecisionLog, l); err != nil {
			return fmt.Errorf("decision log: %w", err)
		}
	}
	return nil
}

// exec runs one stage like CPA's shell method: direct exec, stdin piped,
// stdout captured (stderr too, for the decision log), killed at the
// timeout, non-zero exit an error.
func (f *Faithful) exec(bin string, stdin []byte, env []string) ([]byte, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), f.opt.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	ownGroup(cmd)
	cmd.WaitDelay = time.Second
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, nil, fmt.Errorf("%s timed out after %s", filepath.Base(bin), f.opt.Timeout)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s failed: %w; stderr: %s", filepath.Base(bin), err, strings.TrimSpace(lastLines(stderr.String(), 5)))
	}
	return stdout.Bytes(), stderr.Bytes(), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ParseEvaluation reads evaluate's stdout the way CPA does: one JSON
// object whose targetReplicas (key matched case-insensitively) is an
// integer; a missing key means 0.
func ParseEvaluation(out []byte) (int, error) {
	var v map[string]json.RawMessage
	if err := json.Unmarshal(out, &v); err != nil {
		return 0, fmt.Errorf("failed to parse JSON evaluation, got %q: %w", string(out), err)
	}
	for k, raw := range v {
		if !strings.EqualFold(k, "targetReplicas") {
			continue
		}
		var n int32
		if err := json.Unmarshal(raw, &n); err != nil {
			return 0, fmt.Errorf("failed to parse JSON evaluation, targetReplicas %s: %w", raw, err)
		}
		return int(n), nil
	}
	return 0, nil
}
