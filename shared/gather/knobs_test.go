package gather

import (
	"strings"
	"testing"

	"github.com/inferscale/inferscale/shared/settings"
)

// The metric knobs decode from nothing: the tags' defaults and ranges
// parse, and the defaults pass Validate.
func TestEveryDefaultDecodes(t *testing.T) {
	if _, err := ReadKnobs(settings.FromMap(nil)); err != nil {
		t.Fatal(err)
	}
}

func TestMetricChecks(t *testing.T) {
	for name, c := range map[string]struct {
		m    map[string]string
		want string
	}{
		"custom without mapping": {map[string]string{"server": "custom"}, "customMapping"},
		"quantile out of range":  {map[string]string{"prometheusQuantiles": "0.5,0.95,1"}, "prometheusQuantiles"},
		"prometheus without URL": {map[string]string{"source": "prometheus"}, "prometheusURL"},
		"bad gpu ids":            {map[string]string{"dcgmGPUs": "0,x"}, "dcgmGPUs"},
		"bad source":             {map[string]string{"gpuSource": "nvml"}, "gpuSource"},
	} {
		if _, err := ReadKnobs(settings.FromMap(c.m)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
	m, err := ReadKnobs(settings.FromMap(map[string]string{"dcgmGPUs": "0, 3", "prometheusQuantiles": "0.5,0.95"}))
	if err != nil || len(m.DCGMGPUs) != 2 || m.DCGMGPUs[1] != 3 || m.PrometheusQuantiles[1] != 0.95 || m.MetricsPort != 8000 {
		t.Fatalf("%+v %v", m, err)
	}
}
