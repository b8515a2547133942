package gather

import (
	"errors"
	"fmt"

	"github.com/inferscale/inferscale/shared/preset"
	"github.com/inferscale/inferscale/shared/source"
)

// Values of the server and source knobs.
const (
	serverAuto       = "auto"
	serverCustom     = "custom"
	sourceDirect     = "direct"
	sourcePrometheus = "prometheus"
)

// config is the metric knobs with the presets loaded and the values that
// need the sources' own checks checked.
type config struct {
	Knobs
	presets []*preset.Preset
	fixed   *preset.Preset // nil: detect per scrape
	prom    source.PrometheusOptions
}

func configure(m Knobs) (*config, error) {
	c := &config{Knobs: m}
	var errs []error
	if err := c.loadPresets(); err != nil {
		errs = append(errs, err)
	}
	if err := source.ValidatePath(m.MetricsPath); err != nil {
		errs = append(errs, fmt.Errorf("config key metricsPath: %w", err))
	}
	if err := source.ValidatePath(m.DCGMExporterPath); err != nil {
		errs = append(errs, fmt.Errorf("config key dcgmExporterPath: %w", err))
	}
	// Only a configured value is checked: the default is valid (a test
	// says so), and compiling the syntax regexp is a visible share of a
	// per-pod run that never queries Prometheus.
	if m.PrometheusMatchers != defaultPrometheusMatchers() {
		if err := source.ValidateMatchers(source.RenderMatchers(m.PrometheusMatchers, "ns", "name")); err != nil {
			errs = append(errs, fmt.Errorf("config key prometheusMatchers: %w", err))
		}
	}
	c.prom = source.PrometheusOptions{URL: m.PrometheusURL, BearerTokenFile: m.PrometheusBearerTokenFile,
		CAFile: m.PrometheusCAFile, InsecureSkipVerify: m.PrometheusInsecureSkipVerify, Timeout: m.ScrapeTimeout,
		MaxResponseBytes: int64(m.PrometheusMaxResponseBytes)}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// loadPresets loads the presets the server knob names: every built-in
// (a custom mapping first) for detection, the custom mapping alone, or
// one built-in.
func (c *config) loadPresets() error {
	var custom *preset.Preset
	if c.CustomMapping != "" {
		p, err := preset.Parse([]byte(c.CustomMapping))
		if err != nil {
			return fmt.Errorf("config key customMapping: %w", err)
		}
		custom = p
	}
	switch c.Server {
	case serverCustom:
		c.fixed = custom
	case serverAuto:
		builtins, err := preset.Builtins()
		if err != nil {
			return err
		}
		if custom != nil {
			c.presets = append(c.presets, custom)
		}
		c.presets = append(c.presets, builtins...)
	default:
		p, err := preset.Builtin(c.Server)
		if err != nil {
			return fmt.Errorf("config key server: %w", err)
		}
		c.fixed = p
		c.presets = []*preset.Preset{p}
	}
	return nil
}

func (c *config) collector() *source.Collector {
	scraper := source.NewScraper(c.ScrapeTimeout, int64(c.MetricsMaxBytes), c.ScrapeConcurrency)
	return &source.Collector{
		Direct: &source.Direct{Scraper: scraper, Port: c.MetricsPort, PortName: c.MetricsPortName, Path: c.MetricsPath,
			Preset: c.fixed, Presets: c.presets},
		GPU:      c.gpuReader(scraper),
		NoGPU:    c.GPUSource == source.GPUNone,
		Timeout:  c.ScrapeTimeout,
		Parallel: c.ScrapeConcurrency,
	}
}

// gpuReader builds the configured GPU source (nil: keep the server's own).
func (c *config) gpuReader(scraper *source.Scraper) source.GPUReader {
	switch c.GPUSource {
	case source.GPUDCGMExporter:
		return &source.DCGMExporter{Scraper: scraper, Port: c.DCGMExporterPort, Path: c.DCGMExporterPath}
	case source.GPUDCGM:
		return &source.DCGM{Address: c.DCGMAddress, GPUs: c.DCGMGPUs}
	}
	return nil
}
