package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/inferscale/inferscale/shared/config"
	"github.com/inferscale/inferscale/shared/preset"
	"github.com/inferscale/inferscale/shared/source"
)

// Config keys read by metric.
const (
	keyServer               = "server"
	keyCustomMapping        = "customMapping"
	keyMetricsPort          = "metricsPort"
	keyMetricsPortName      = "metricsPortName"
	keyMetricsPath          = "metricsPath"
	keyScrapeTimeout        = "scrapeTimeout"
	keyMaxBodyBytes         = "metricsMaxBytes"
	keyGPUSource            = "gpuSource"
	keyDCGMExporterPort     = "dcgmExporterPort"
	keyDCGMExporterPath     = "dcgmExporterPath"
	keyDCGMAddress          = "dcgmAddress"
	keyDCGMGPUs             = "dcgmGPUs"
	keySource               = "source"
	keyConcurrency          = "scrapeConcurrency"
	keyPromURL              = "prometheusURL"
	keyPromTokenFile        = "prometheusBearerTokenFile"
	keyPromCAFile           = "prometheusCAFile"
	keyPromInsecure         = "prometheusInsecureSkipVerify"
	keyPromMatchers         = "prometheusMatchers"
	keyPromWindow           = "prometheusWindow"
	keyPromQuantiles        = "prometheusQuantiles"
	defaultPromMatchers     = `namespace="{namespace}",pod=~"{name}-.*"`
	serverAuto              = "auto"
	serverCustom            = "custom"
	sourceDirect            = "direct"
	sourcePrometheus        = "prometheus"
	defaultMetricsPort      = 8000
	defaultDCGMExporterPort = 9400
)

// settings is metric's configuration, resolved and validated.
type settings struct {
	presets []*preset.Preset
	fixed   *preset.Preset // nil: detect per scrape

	port         int
	portName     string
	path         string
	timeout      time.Duration
	maxBytes     int64
	concurrency  int
	source       string
	gpuSource    string
	dcgmExpPort  int
	dcgmExpPath  string
	dcgmAddress  string
	dcgmGPUs     []uint
	prom         source.PrometheusOptions
	promMatchers string
	promWindow   time.Duration
	promQ        []float64
}

func loadSettings(c *config.Source) (*settings, error) {
	s := &settings{}
	names := append([]string{serverAuto, serverCustom}, preset.BuiltinNames()...)
	server := c.Enum(keyServer, serverAuto, names...)
	custom, hasCustom := c.Raw(keyCustomMapping)
	var customPreset *preset.Preset
	switch {
	case server == serverCustom && (!hasCustom || custom == ""):
		c.Failf(keyCustomMapping, "server=custom needs a customMapping document")
	case hasCustom && custom != "":
		p, err := preset.Parse([]byte(custom))
		if err != nil {
			c.Failf(keyCustomMapping, "%v", err)
		}
		customPreset = p
	}
	switch server {
	case serverCustom:
		s.fixed = customPreset
	case serverAuto:
		// Detection among every built-in, a custom mapping first.
		builtins, err := preset.Builtins()
		if err != nil {
			return nil, err
		}
		if customPreset != nil {
			s.presets = append(s.presets, customPreset)
		}
		s.presets = append(s.presets, builtins...)
	default:
		// Only the named preset is loaded.
		p, err := preset.Builtin(server)
		if err != nil {
			return nil, err
		}
		s.fixed = p
		s.presets = []*preset.Preset{p}
	}
	s.port = c.Int(keyMetricsPort, defaultMetricsPort, 1, 65535)
	s.portName = c.String(keyMetricsPortName, "")
	s.path = c.String(keyMetricsPath, "/metrics")
	if err := source.ValidatePath(s.path); err != nil {
		c.Failf(keyMetricsPath, "%v", err)
	}
	s.timeout = c.Duration(keyScrapeTimeout, 2*time.Second, 50*time.Millisecond, time.Minute)
	s.maxBytes = int64(c.Int(keyMaxBodyBytes, source.DefaultMaxBodyBytes, 1<<10, 256<<20))
	s.concurrency = c.Int(keyConcurrency, 32, 1, 1024)
	s.source = c.Enum(keySource, sourceDirect, sourceDirect, sourcePrometheus)
	s.gpuSource = c.Enum(keyGPUSource, source.GPUServer, source.GPUServer, source.GPUDCGMExporter, source.GPUDCGM, source.GPUNone)
	s.dcgmExpPort = c.Int(keyDCGMExporterPort, defaultDCGMExporterPort, 1, 65535)
	s.dcgmExpPath = c.String(keyDCGMExporterPath, "/metrics")
	if err := source.ValidatePath(s.dcgmExpPath); err != nil {
		c.Failf(keyDCGMExporterPath, "%v", err)
	}
	s.dcgmAddress = c.String(keyDCGMAddress, "")
	if v := c.String(keyDCGMGPUs, ""); v != "" {
		for _, f := range strings.Split(v, ",") {
			id, err := strconv.ParseUint(strings.TrimSpace(f), 10, 32)
			if err != nil {
				c.Failf(keyDCGMGPUs, "%q is not a GPU id list (e.g. 0,1)", v)
				break
			}
			s.dcgmGPUs = append(s.dcgmGPUs, uint(id))
		}
	}
	s.prom = source.PrometheusOptions{
		URL:                c.String(keyPromURL, ""),
		BearerTokenFile:    c.String(keyPromTokenFile, ""),
		CAFile:             c.String(keyPromCAFile, ""),
		InsecureSkipVerify: c.Bool(keyPromInsecure, false),
		Timeout:            s.timeout,
	}
	s.promMatchers = c.String(keyPromMatchers, defaultPromMatchers)
	// Only a configured value is checked: the default is valid (a test
	// says so), and compiling the syntax regexp is a visible share of a
	// per-pod run that never queries Prometheus.
	if s.promMatchers != defaultPromMatchers {
		if err := source.ValidateMatchers(source.RenderMatchers(s.promMatchers, "ns", "name")); err != nil {
			c.Failf(keyPromMatchers, "%v", err)
		}
	}
	s.promWindow = c.Duration(keyPromWindow, time.Minute, 10*time.Second, time.Hour)
	s.promQ = parseQuantiles(c, c.String(keyPromQuantiles, "0.5,0.9,0.99"))
	if s.source == sourcePrometheus && s.prom.URL == "" {
		c.Failf(keyPromURL, "source=prometheus needs prometheusURL")
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

func parseQuantiles(c *config.Source, v string) []float64 {
	var out []float64
	for _, f := range strings.Split(v, ",") {
		q, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(q > 0 && q < 1) {
			c.Failf(keyPromQuantiles, "%q: want quantiles in (0, 1) separated by commas", v)
			return nil
		}
		out = append(out, q)
	}
	return out
}

// gpuReader builds the configured GPU source (nil: keep the server's own).
func (s *settings) gpuReader(scraper *source.Scraper) source.GPUReader {
	switch s.gpuSource {
	case source.GPUDCGMExporter:
		return &source.DCGMExporter{Scraper: scraper, Port: s.dcgmExpPort, Path: s.dcgmExpPath}
	case source.GPUDCGM:
		return &source.DCGM{Address: s.dcgmAddress, GPUs: s.dcgmGPUs}
	}
	return nil
}

func (s *settings) String() string {
	return fmt.Sprintf("source=%s port=%d path=%s gpu=%s", s.source, s.port, s.path, s.gpuSource)
}
