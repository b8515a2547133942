package gather

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/inferscale/inferscale/shared/settings"
)

// Knobs are the metric stage's knobs, declared here, decoded by package
// settings.
type Knobs struct {
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

	RatioPeer string `setting:"ratioPeer" doc:"the ratio guard's other pool: the name of a scale target of this one's kind in its namespace, whose scale subresource metric reads each tick (per-pod mode: each pod's run; RBAC: get on its <resource>/scale) for ratioMin (docs/roles.md); empty: off"`
}

// defaultPrometheusMatchers is prometheusMatchers' default.
func defaultPrometheusMatchers() string {
	f, _ := reflect.TypeFor[Knobs]().FieldByName("PrometheusMatchers")
	return f.Tag.Get("default")
}

// Validate checks the metric knobs across their keys.
func (m *Knobs) Validate() error {
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
	if m.RatioPeer != "" {
		if bad := validation.IsDNS1123Subdomain(m.RatioPeer); len(bad) > 0 {
			errs = append(errs, fmt.Errorf("config key ratioPeer: %q is not a Kubernetes object name: %s", m.RatioPeer, strings.Join(bad, "; ")))
		}
	}
	return errors.Join(errs...)
}

// ReadKnobs reads the metric stage's knobs.
func ReadKnobs(s *settings.Source) (Knobs, error) {
	var m Knobs
	err := settings.Decode(s, &m)
	return m, err
}
