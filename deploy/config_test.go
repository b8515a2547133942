package deploy

import (
	"path"
	"strings"
	"testing"
	"time"
)

// metricScrapeTimeout is metric's default scrapeTimeout (docs/configuration.md).
const metricScrapeTimeout = 2 * time.Second

func TestCPAConfigsAreSafeToRun(t *testing.T) {
	for name, c := range cpaConfigFiles(t) {
		t.Run(name, func(t *testing.T) {
			interval := time.Duration(c.EffectiveInterval()) * time.Millisecond
			for method, m := range c.Methods() {
				if m.Type != "shell" || m.Shell == nil {
					t.Errorf("%s: type %s; our stages are binaries run by shell methods", method, m.Type)
					continue
				}
				ep := m.Shell.Entrypoint
				if !path.IsAbs(ep) || strings.HasSuffix(ep, "/sh") || strings.HasSuffix(ep, "/bash") || len(m.Shell.Command) > 0 {
					t.Errorf("%s: entrypoint %q command %q; want our binary as the entrypoint, no shell (CPA's timeout kills only its direct child)", method, ep, m.Shell.Command)
				}
				if m.Shell.LogStderr == nil || !*m.Shell.LogStderr {
					t.Errorf("%s: logStderr is not true; our logs and errors would be dropped", method)
				}
				timeout := time.Duration(m.Timeout) * time.Millisecond
				if timeout >= interval {
					t.Errorf("%s: timeout %s is not below the interval %s", method, timeout, interval)
				}
			}
			if m := c.Metric; m != nil && time.Duration(m.Timeout)*time.Millisecond < 2*metricScrapeTimeout {
				t.Errorf("metric timeout %d ms leaves no room over scrapeTimeout %s plus process start", m.Timeout, metricScrapeTimeout)
			}
			if c.APIConfig == nil || !c.APIConfig.Enabled {
				t.Error("apiConfig must be enabled (the dry-run evaluation of docs/deploy.md goes through it)")
			}
		})
	}
}
