package settings

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/inferscale/inferscale/shared/policy"
)

// Keys that name where the other knobs come from.
const (
	KeyPolicyFile = "policyFile"
	KeyConfigPath = "configPath"
)

// Files says where knobs are read from besides the environment.
type Files struct {
	// PolicyFile is read from the environment only.
	PolicyFile string `setting:"policyFile" doc:"YAML file of further knobs (env vars win over it); an unknown key in it is an error"`
	ConfigPath string `setting:"configPath" default:"/config.yaml" doc:"CPA's config.yaml, read for minReplicas and maxReplicas as CPA resolves them; a missing file is no error"`
}

// Evaluate is everything the evaluate stage reads.
type Evaluate struct {
	Policy  policy.Config
	Store   Store
	Cluster Cluster
}

// Cluster says what evaluate does in the cluster besides answering CPA.
type Cluster struct {
	Mode   string `setting:"mode" default:"active" enum:"active,advisory" doc:"active: CPA gets the target; advisory: evaluate decides, logs and remembers as usual but returns the current replica count (run it beside an HPA or KEDA to see what it would do)"`
	Events bool   `setting:"events" default:"true" doc:"record Kubernetes Events on the scale target when the target changes and on alerts (needs create, patch and get on events); an API failure never fails the tick"`
}

// Store says where evaluate keeps its state between ticks.
type Store struct {
	Backend   string `setting:"stateBackend" default:"file" enum:"file,configmap,none" doc:"where the state lives between ticks: a file in the CPA pod, a ConfigMap (survives the pod), or none (every tick starts fresh: no scale-down, no cooldown)"`
	File      string `setting:"stateFile" default:"/tmp/inferscale-state.json" doc:"the state file (file backend); also the lock that queues evaluate processes of one pod (configmap backend)"`
	ConfigMap string `setting:"stateConfigMap" default:"inferscale-state" doc:"the state ConfigMap's name (configmap backend); it holds the state of one scale target: a tick for another target does not use it nor write over it (StateReset warning), so give each CPA of a namespace a name of its own"`
	Namespace string `setting:"namespace" doc:"the state ConfigMap's namespace (default: the CPA pod's own)"`
}

// Validate checks the policy across its keys and derives what follows
// from it.
func (e *Evaluate) Validate() error {
	p := &e.Policy
	var errs []error
	if p.MinReplicas > p.MaxReplicas {
		errs = append(errs, fmt.Errorf("config key minReplicas: minReplicas %d is above maxReplicas %d", p.MinReplicas, p.MaxReplicas))
	}
	if p.KVTarget > p.KVHigh {
		errs = append(errs, fmt.Errorf("config key kvTarget: kvTarget %g is above kvHigh %g", p.KVTarget, p.KVHigh))
	}
	if p.KVLowWater > p.KVTarget {
		errs = append(errs, fmt.Errorf("config key kvLowWater: kvLowWater %g is above kvTarget %g", p.KVLowWater, p.KVTarget))
	}
	// End-to-end histograms double the state; they are kept only for an e2e SLO.
	p.TrackE2E = p.E2ESLO > 0
	return errors.Join(errs...)
}

// ForEvaluate reads the evaluate stage's knobs.
func ForEvaluate(s *Source) (Evaluate, error) {
	var e Evaluate
	err := Decode(s, &e)
	return e, err
}

// Policy reads the policy from fixed values (the simulator, tests): the
// same keys and checks as evaluate, no files, and every key must be a
// knob.
func Policy(m map[string]string) (policy.Config, error) {
	var errs []error
	known := knownKeys()
	for k := range m {
		if !known[k] {
			errs = append(errs, fmt.Errorf("config key %s: no such knob", k))
		}
	}
	e, err := ForEvaluate(FromMap(m))
	return e.Policy, errors.Join(append(errs, err)...)
}

// Defaults is the policy with every knob at its default.
func Defaults() policy.Config {
	c, err := Policy(nil)
	if err != nil {
		panic("settings: the defaults do not decode: " + err.Error())
	}
	return c
}

// Metric is everything the metric stage reads.
type Metric struct {
	Server        string `setting:"server" default:"auto" doc:"the inference server's metric names: auto (detect per scrape), custom (customMapping), or a built-in preset (vllm, sglang, tgi, triton, llamacpp, jetstream, ...)"`
	CustomMapping string `setting:"customMapping" doc:"a preset document (YAML or JSON) mapping another server's metrics; with server=auto it is tried first"`

	MetricsPort       int           `setting:"metricsPort" default:"8000" min:"1" max:"65535" doc:"the server's metrics port (unless metricsPortName names a container port)"`
	MetricsPortName   string        `setting:"metricsPortName" doc:"a container port name to scrape instead of metricsPort"`
	MetricsPath       string        `setting:"metricsPath" default:"/metrics" doc:"the server's metrics path"`
	ScrapeTimeout     time.Duration `setting:"scrapeTimeout" default:"2s" min:"50ms" max:"1m" doc:"time allowed for each scrape, query and pod list"`
	MetricsMaxBytes   int           `setting:"metricsMaxBytes" default:"8388608" min:"1024" max:"268435456" doc:"the largest metrics page read; a larger one fails that pod's scrape"`
	ScrapeConcurrency int           `setting:"scrapeConcurrency" default:"32" min:"1" max:"1024" doc:"pods scraped at once (per-resource direct mode)"`
	Source            string        `setting:"source" default:"direct" enum:"direct,prometheus" doc:"scrape each pod directly, or query Prometheus for fleet aggregates (per-resource mode)"`

	GPUSource        string `setting:"gpuSource" default:"server" enum:"server,dcgm-exporter,dcgm,none" doc:"where GPU activity comes from: the server's own gauge, dcgm-exporter on the pod's node, DCGM itself (metric built with -tags dcgm), or nowhere"`
	DCGMExporterPort int    `setting:"dcgmExporterPort" default:"9400" min:"1" max:"65535" doc:"dcgm-exporter's port on the pod's node"`
	DCGMExporterPath string `setting:"dcgmExporterPath" default:"/metrics" doc:"dcgm-exporter's metrics path"`
	DCGMAddress      string `setting:"dcgmAddress" doc:"a DCGM host engine to connect to (default: embedded)"`
	DCGMGPUs         []uint `setting:"dcgmGPUs" doc:"the GPU ids DCGM reads, e.g. 0,1 (default: all)"`

	PrometheusURL                string        `setting:"prometheusURL" doc:"the Prometheus API (source=prometheus)"`
	PrometheusBearerTokenFile    string        `setting:"prometheusBearerTokenFile" doc:"a file holding the bearer token sent to Prometheus"`
	PrometheusCAFile             string        `setting:"prometheusCAFile" doc:"the CA bundle that signs Prometheus' certificate"`
	PrometheusInsecureSkipVerify bool          `setting:"prometheusInsecureSkipVerify" default:"false" doc:"skip Prometheus' certificate check"`
	PrometheusMatchers           string        `setting:"prometheusMatchers" default:"namespace=\"{namespace}\",pod=~\"{name}-.*\"" doc:"the label matchers selecting the target's series; {namespace} and {name} are the scale target's"`
	PrometheusWindow             time.Duration `setting:"prometheusWindow" default:"1m" min:"10s" max:"1h" doc:"the range of Prometheus' rate and quantile queries"`
	PrometheusQuantiles          []float64     `setting:"prometheusQuantiles" default:"0.5,0.9,0.95,0.99" min:"0" max:"1" doc:"the latency quantiles queried, each in (0, 1); 0.95 and 0.99 (what evaluate reads) are always queried"`
	PrometheusMaxResponseBytes   int           `setting:"prometheusMaxResponseBytes" default:"4194304" min:"1024" max:"1073741824" doc:"the largest Prometheus answer read; a longer one is an error, not a reading"`
}

// DefaultPrometheusMatchers is prometheusMatchers' default.
func DefaultPrometheusMatchers() string {
	f, _ := reflect.TypeFor[Metric]().FieldByName("PrometheusMatchers")
	return f.Tag.Get("default")
}

// Validate checks the metric knobs across their keys.
func (m *Metric) Validate() error {
	var errs []error
	if m.Server == "custom" && m.CustomMapping == "" {
		errs = append(errs, errors.New("config key customMapping: server=custom needs a customMapping document"))
	}
	for _, q := range m.PrometheusQuantiles {
		if !(q > 0 && q < 1) {
			errs = append(errs, fmt.Errorf("config key prometheusQuantiles: %v: want quantiles in (0, 1) separated by commas", m.PrometheusQuantiles))
			break
		}
	}
	if m.Source == "prometheus" && m.PrometheusURL == "" {
		errs = append(errs, errors.New("config key prometheusURL: source=prometheus needs prometheusURL"))
	}
	return errors.Join(errs...)
}

// ForMetric reads the metric stage's knobs.
func ForMetric(s *Source) (Metric, error) {
	var m Metric
	err := Decode(s, &m)
	return m, err
}
