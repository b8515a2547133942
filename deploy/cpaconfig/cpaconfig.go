// Package cpaconfig mirrors the CPA v2.12.2 config.yaml schema for the
// deploy tests and the end-to-end harness: config/*.yaml must decode into
// it strictly and pass Validate. Neither binary reads it (evaluate takes
// only minReplicas and maxReplicas from config.yaml, through package
// settings).
package cpaconfig

import (
	"errors"
	"fmt"

	"sigs.k8s.io/yaml"
)

// Config mirrors the CPA v2.12.2 config.yaml schema (config/core.go,
// config/api.go, config/execute.go upstream). CPA itself silently ignores
// unknown keys, so ParseConfig decodes strictly: a typo is an error here.
// Only the fields inferscale uses are typed in detail; the rest are kept as
// raw JSON so that a valid upstream key is still accepted.
type Config struct {
	ScaleTargetRef           map[string]any `json:"scaleTargetRef,omitempty"`
	PreMetric                *Method        `json:"preMetric,omitempty"`
	PostMetric               *Method        `json:"postMetric,omitempty"`
	PreEvaluate              *Method        `json:"preEvaluate,omitempty"`
	PostEvaluate             *Method        `json:"postEvaluate,omitempty"`
	PreScale                 *Method        `json:"preScale,omitempty"`
	PostScale                *Method        `json:"postScale,omitempty"`
	Evaluate                 *Method        `json:"evaluate,omitempty"`
	Metric                   *Method        `json:"metric,omitempty"`
	Interval                 int            `json:"interval,omitempty"`
	Namespace                string         `json:"namespace,omitempty"`
	MinReplicas              *int32         `json:"minReplicas,omitempty"`
	MaxReplicas              *int32         `json:"maxReplicas,omitempty"`
	RunMode                  string         `json:"runMode,omitempty"`
	StartTime                int64          `json:"startTime,omitempty"`
	LogVerbosity             int32          `json:"logVerbosity,omitempty"`
	DownscaleStabilization   int            `json:"downscaleStabilization,omitempty"`
	APIConfig                *APIConfig     `json:"apiConfig,omitempty"`
	KubernetesMetricSpecs    []any          `json:"kubernetesMetricSpecs,omitempty"`
	RequireKubernetesMetrics bool           `json:"requireKubernetesMetrics,omitempty"`
	InitialReadinessDelay    int64          `json:"initialReadinessDelay,omitempty"`
	CPUInitializationPeriod  int64          `json:"cpuInitializationPeriod,omitempty"`
}

// APIConfig is CPA's REST API block.
type APIConfig struct {
	Enabled  bool   `json:"enabled"`
	UseHTTPS bool   `json:"useHTTPS,omitempty"`
	Port     int    `json:"port,omitempty"`
	Host     string `json:"host,omitempty"`
	CertFile string `json:"certFile,omitempty"`
	KeyFile  string `json:"keyFile,omitempty"`
}

// Method is one CPA stage or hook: a shell command or an HTTP call.
// Timeout is in milliseconds; CPA has no default and 0 times out at once.
type Method struct {
	Type    string `json:"type"`
	Timeout int    `json:"timeout"`
	Shell   *Shell `json:"shell,omitempty"`
	HTTP    *HTTP  `json:"http,omitempty"`
}

// Shell runs Entrypoint with Command as its arguments (a direct exec, not /bin/sh).
type Shell struct {
	Command    []string `json:"command,omitempty"`
	Entrypoint string   `json:"entrypoint"`
	LogStderr  *bool    `json:"logStderr,omitempty"`
}

// HTTP is CPA's HTTP method block.
type HTTP struct {
	Method        string            `json:"method"`
	URL           string            `json:"url"`
	Headers       map[string]string `json:"headers,omitempty"`
	SuccessCodes  []int             `json:"successCodes,omitempty"`
	ParameterMode string            `json:"parameterMode,omitempty"`
	CACert        *string           `json:"caCert,omitempty"`
	ClientCert    *string           `json:"clientCert,omitempty"`
	ClientKey     *string           `json:"clientKey,omitempty"`
}

// CPA run modes.
const (
	RunModePerPod      = "per-pod"
	RunModePerResource = "per-resource"
)

// ParseConfig decodes a CPA config.yaml strictly (unknown or duplicate keys
// fail) and checks what would make CPA panic or fail every tick.
func ParseConfig(b []byte) (*Config, error) {
	var c Config
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return nil, fmt.Errorf("CPA config: %w", err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Validate reports settings CPA v2.12.2 accepts but that cannot work:
// a missing metric/evaluate (nil dereference), a zero timeout (every call
// times out), a shell method without an entrypoint, an unknown run mode.
func (c *Config) Validate() error {
	var errs []error
	if c.Metric == nil {
		errs = append(errs, errors.New("metric: missing (CPA panics at the first tick)"))
	}
	if c.Evaluate == nil {
		errs = append(errs, errors.New("evaluate: missing (CPA panics at the first tick)"))
	}
	for name, m := range c.Methods() {
		errs = append(errs, m.validate(name))
	}
	switch c.RunMode {
	case "", RunModePerPod, RunModePerResource:
	default:
		errs = append(errs, fmt.Errorf("runMode: %q is neither %s nor %s", c.RunMode, RunModePerPod, RunModePerResource))
	}
	if c.Interval < 0 || c.DownscaleStabilization < 0 {
		errs = append(errs, errors.New("interval and downscaleStabilization must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("CPA config: %w", err)
	}
	return nil
}

// Methods returns the configured stages and hooks by their config key.
func (c *Config) Methods() map[string]*Method {
	all := map[string]*Method{
		"preMetric": c.PreMetric, "metric": c.Metric, "postMetric": c.PostMetric,
		"preEvaluate": c.PreEvaluate, "evaluate": c.Evaluate, "postEvaluate": c.PostEvaluate,
		"preScale": c.PreScale, "postScale": c.PostScale,
	}
	for k, m := range all {
		if m == nil {
			delete(all, k)
		}
	}
	return all
}

// EffectiveInterval is the tick interval in milliseconds, CPA's default 15000 when unset.
func (c *Config) EffectiveInterval() int {
	if c.Interval == 0 {
		return 15000
	}
	return c.Interval
}

func (m *Method) validate(name string) error {
	if m.Timeout <= 0 {
		return fmt.Errorf("%s.timeout: %d ms; CPA has no default and times out at once", name, m.Timeout)
	}
	switch m.Type {
	case "shell":
		if m.Shell == nil || m.Shell.Entrypoint == "" {
			return fmt.Errorf("%s.shell.entrypoint: missing (CPA fails with \"exec: no command\")", name)
		}
	case "http":
		if m.HTTP == nil || m.HTTP.URL == "" {
			return fmt.Errorf("%s.http.url: missing", name)
		}
	default:
		return fmt.Errorf("%s.type: %q is neither shell nor http", name, m.Type)
	}
	return nil
}
