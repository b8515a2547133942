package cpaconfig

import (
	"strings"
	"testing"
)

const goodConfig = `
metric:
  type: shell
  timeout: 5000
  shell: {entrypoint: /metric, logStderr: true}
evaluate:
  type: shell
  timeout: 5000
  shell: {entrypoint: /evaluate}
runMode: per-pod
interval: 15000
minReplicas: 1
maxReplicas: 10
downscaleStabilization: 300
apiConfig: {enabled: true, host: 0.0.0.0, port: 5000}
`

func TestParseConfigAcceptsAValidConfig(t *testing.T) {
	c, err := ParseConfig([]byte(goodConfig))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	if c.Metric.Shell.Entrypoint != "/metric" || c.Evaluate.Timeout != 5000 || *c.MaxReplicas != 10 {
		t.Fatalf("decoded wrong values: %+v", c)
	}
	if got := len(c.Methods()); got != 2 {
		t.Fatalf("Methods() = %d entries, want 2", got)
	}
	if c.EffectiveInterval() != 15000 {
		t.Fatalf("EffectiveInterval = %d", c.EffectiveInterval())
	}
}

func TestParseConfigRejects(t *testing.T) {
	cases := map[string]struct{ yaml, want string }{
		"typo at the top":      {goodConfig + "downscaleStabilisation: 60\n", "unknown field"},
		"typo in a method":     {strings.Replace(goodConfig, "logStderr", "logStdrr", 1), "unknown field"},
		"zero timeout":         {strings.Replace(goodConfig, "timeout: 5000", "timeout: 0", 1), "times out at once"},
		"no entrypoint":        {strings.Replace(goodConfig, "entrypoint: /evaluate", "command: [/evaluate]", 1), "entrypoint: missing"},
		"bad run mode":         {strings.Replace(goodConfig, "per-pod", "perpod", 1), "runMode"},
		"no evaluate":          {"metric: {type: shell, timeout: 1, shell: {entrypoint: /m}}\n", "evaluate: missing"},
		"wrong type":           {strings.Replace(goodConfig, "interval: 15000", "interval: soon", 1), "interval"},
		"duplicate key":        {goodConfig + "interval: 2000\n", "interval"},
		"unknown method type":  {strings.Replace(goodConfig, "type: shell", "type: exec", 1), "neither shell nor http"},
		"negative stabilising": {strings.Replace(goodConfig, "downscaleStabilization: 300", "downscaleStabilization: -1", 1), "negative"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
