package knobs

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/internal/testenv"
	"github.com/inferscale/inferscale/shared/settings"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func lookup(m map[string]string) settings.LookupFunc {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// The evaluate knobs decode from nothing: the tags' defaults and ranges
// parse, every type has a parser, and the defaults pass Validate.
func TestEveryDefaultDecodes(t *testing.T) {
	if _, err := Read(settings.FromMap(nil)); err != nil {
		t.Fatal(err)
	}
}

func TestBadValuesNameTheirKeys(t *testing.T) {
	_, err := Policy(map[string]string{"queueTarget": "abc", "kvTarget": "0.95", "scheduleFloors": "[{start: nope}]",
		"tolerance": "2", "scaleUpCooldown": "forever", "latencyNeedsLoad": "maybe", "decisiveMaxPods": "1.5"})
	if err == nil {
		t.Fatal("want an error")
	}
	for _, key := range []string{"queueTarget", "kvTarget", "scheduleFloors", "tolerance", "scaleUpCooldown", "latencyNeedsLoad", "decisiveMaxPods"} {
		if !strings.Contains(err.Error(), "config key "+key) {
			t.Errorf("error %q does not name %s", err, key)
		}
	}
	cfg, err := Policy(map[string]string{"queueTarget": "5", "scaleUpCooldown": "30s", "downStabilization": "120",
		"minReplicas": "2", "maxReplicas": "20", "e2eSLO": "10s"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.QueueTarget != 5 || cfg.ScaleUpCooldown != 30*time.Second || cfg.DownStabilization != 2*time.Minute ||
		cfg.MinReplicas != 2 || cfg.MaxReplicas != 20 || !cfg.TrackE2E {
		t.Fatalf("config not read: %+v", cfg)
	}
	if _, err := Policy(map[string]string{"minReplicas": "5", "maxReplicas": "3"}); err == nil || !strings.Contains(err.Error(), "minReplicas") {
		t.Errorf("min above max: %v", err)
	}
	for _, c := range []struct {
		knobs map[string]string
		want  string // "" for no error
	}{
		{map[string]string{"role": "decode"}, "role decode is judged by its streaming speed"},
		{map[string]string{"role": "decode", "itlSLO": "50ms"}, ""},
		{map[string]string{"role": "prefill", "itlSLO": "50ms"}, "streams no tokens"},
		{map[string]string{"role": "prefill"}, ""},
		{map[string]string{"role": "mixed"}, "config key role"},
		{map[string]string{"itlSLO": "40ms"}, ""},
	} {
		cfg, err := Policy(c.knobs)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.knobs, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: error %v, want one saying %q", c.knobs, err, c.want)
		case c.want == "" && cfg.TrackITL != (cfg.ITLSLO > 0):
			t.Errorf("%v: TrackITL %v with itlSLO %s", c.knobs, cfg.TrackITL, cfg.ITLSLO)
		}
	}
	if _, err := Policy(map[string]string{"queueTraget": "5"}); err == nil || !strings.Contains(err.Error(), "queueTraget") {
		t.Errorf("a typo in the simulator's settings: %v", err)
	}
}

// The environment wins over the policy file, which wins over CPA's
// config.yaml, which wins over the default; a typo in the policy file is
// an error.
func TestPrecedenceAndStrictPolicyFile(t *testing.T) {
	dir := t.TempDir()
	pf := filepath.Join(dir, "policy.yaml")
	cpaCfg := filepath.Join(dir, "config.yaml")
	write(t, pf, "queueTarget: 4\nkvHigh: 0.95\nmaxReplicas: 30\nscheduleFloors:\n- {start: \"0 8 * * *\", end: \"0 9 * * *\", replicas: 3}\n")
	write(t, cpaCfg, "minReplicas: 2\nmaxReplicas: 20\ninterval: 15000\n")
	src, err := settings.Load(lookup(map[string]string{settings.KeyPolicyFile: pf, settings.KeyConfigPath: cpaCfg, "queueTarget": "6"}))
	if err != nil {
		t.Fatal(err)
	}
	e, err := Read(src)
	if err != nil {
		t.Fatal(err)
	}
	p := e.Policy
	if p.QueueTarget != 6 || p.KVHigh != 0.95 || p.MaxReplicas != 30 || p.MinReplicas != 2 || p.KVTarget != 0.8 || len(p.ScheduleFloors) != 1 {
		t.Fatalf("precedence: %+v", p)
	}
	write(t, pf, "queueTarget: 4\nqueueTraget: 5\n")
	src, err = settings.Load(lookup(map[string]string{settings.KeyPolicyFile: pf, settings.KeyConfigPath: cpaCfg}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Read(src); err == nil || !strings.Contains(err.Error(), "queueTraget") {
		t.Fatalf("policy-file typo: %v", err)
	}
	// A metric knob in the shared policy file is no typo for evaluate.
	write(t, pf, "queueTarget: 4\nmetricsPort: 9000\n")
	src, _ = settings.Load(lookup(map[string]string{settings.KeyPolicyFile: pf, settings.KeyConfigPath: cpaCfg}))
	if _, err := Read(src); err != nil {
		t.Fatal(err)
	}
	write(t, cpaCfg, "minReplicas: [\n")
	src, _ = settings.Load(lookup(map[string]string{settings.KeyConfigPath: cpaCfg}))
	if _, err := Read(src); err == nil || !strings.Contains(err.Error(), "configPath") {
		t.Fatalf("invalid CPA config: %v", err)
	}
	if _, err := settings.Load(lookup(map[string]string{settings.KeyPolicyFile: filepath.Join(dir, "absent.yaml")})); err == nil {
		t.Fatal("a missing policy file is an error")
	}
}

// The example policy files in config/policy-examples must load.
func TestPolicyExamplesLoad(t *testing.T) {
	root := testenv.ModuleRoot(t)
	for _, name := range []string{"seed000.yaml", "vllm-h100-slo2s.yaml"} {
		src, err := settings.Load(lookup(map[string]string{settings.KeyPolicyFile: filepath.Join(root, "config", "policy-examples", name),
			settings.KeyConfigPath: "/nonexistent/config.yaml"}))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		e, err := Read(src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cfg := e.Policy
		if name == "seed000.yaml" && (cfg.QueueTarget != 5 || cfg.MinReplicas != 2 || cfg.P99Baseline != 500*time.Millisecond || cfg.ServiceModel) {
			t.Errorf("%s not applied: %+v", name, cfg)
		}
		if name == "vllm-h100-slo2s.yaml" && (cfg.Profile == nil || cfg.Profile.Beta != 1.54089e-05 || cfg.Options.DefaultStartup != time.Minute || len(cfg.ScheduleFloors) != 1) {
			t.Errorf("%s not applied: %+v", name, cfg)
		}
	}
}

func TestScheduleFloorsAreActiveInTheirWindow(t *testing.T) {
	floors, err := ParseScheduleFloors(`[{start: "30 8 * * 1-5", end: "0 10 * * 1-5", replicas: 6, timezone: "Asia/Shanghai"}]`)
	if err != nil {
		t.Fatal(err)
	}
	// Monday 2026-11-30 09:00 in Shanghai is 01:00 UTC.
	in := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	if !floors[0].Active(in) || floors[0].Active(in.Add(2*time.Hour)) || floors[0].Replicas != 6 {
		t.Fatalf("floor %+v", floors[0])
	}
	for _, bad := range []string{`[{start: nope}]`, `[{start: "0 8 * * *", end: "0 9 * * *", replicas: -1}]`,
		`[{start: "0 8 * * *", end: "0 9 * * *", replicas: 1, timezone: "Mars/Olympus"}]`, `[{start: "0 8 * * *", stop: "x"}]`} {
		if _, err := ParseScheduleFloors(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func FuzzParseScheduleFloors(f *testing.F) {
	f.Add(`[{start: "30 8 * * 1-5", end: "0 10 * * 1-5", replicas: 6, timezone: "Asia/Shanghai"}]`)
	f.Add(`[{"start":"0 13 * * *","end":"0 15 * * *","replicas":8}]`)
	f.Add(`- {start: "@daily", end: "x", replicas: -1}`)
	f.Fuzz(func(t *testing.T, raw string) {
		floors, err := ParseScheduleFloors(raw)
		if err != nil {
			return
		}
		for _, fl := range floors {
			if fl.Replicas < 0 {
				t.Fatalf("negative replicas accepted: %+v", fl)
			}
			fl.Active(t0) // must not panic
		}
	})
}

// A near miss never changes what decodes: the misspelt value is not read.
func TestNearMissDoesNotChangeTheSettings(t *testing.T) {
	plain, err := Read(settings.FromMap(nil))
	if err != nil {
		t.Fatal(err)
	}
	typo, err := Read(settings.FromMap(map[string]string{"queueTargte": "50"}))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(plain, typo) {
		t.Fatal("a misspelt key changed the decoded settings")
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
