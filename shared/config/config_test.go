package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) LookupFunc {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestEnvWinsOverFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(file, []byte("queueTarget: 4\nsloSeconds: 2.5\nscaleUpCooldown: 90s\nenabled: true\nschedule:\n  - cron: '0 8 * * 1-5'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load(envOf(map[string]string{KeyPolicyFile: file, "queueTarget": "6"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Float("queueTarget", 5, 0, 100); got != 6 {
		t.Errorf("env should win: got %v", got)
	}
	if got := s.Float("sloSeconds", 2, 0, 100); got != 2.5 {
		t.Errorf("file value: got %v", got)
	}
	if got := s.Duration("scaleUpCooldown", time.Minute, 0, time.Hour); got != 90*time.Second {
		t.Errorf("duration: got %v", got)
	}
	if !s.Bool("enabled", false) {
		t.Error("bool from file")
	}
	if raw, ok := s.Raw("schedule"); !ok || !strings.Contains(raw, "cron") {
		t.Errorf("nested value: %q %v", raw, ok)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestErrorsNameTheKey(t *testing.T) {
	s := FromMap(map[string]string{"queueTarget": "lots", "kvTarget": "1.5", "cooldown": "soon", "maxStep": "2.5", "mode": "wild", "flag": "maybe"})
	s.Float("queueTarget", 5, 0, 100)
	s.Float("kvTarget", 0.8, 0, 1)
	s.Duration("cooldown", time.Minute, 0, time.Hour)
	s.Int("maxStep", 4, 1, 100)
	s.Enum("mode", "a", "a", "b")
	s.Bool("flag", false)
	err := s.Err()
	if err == nil {
		t.Fatal("want errors")
	}
	for _, key := range []string{"queueTarget", "kvTarget", "cooldown", "maxStep", "mode", "flag"} {
		if !strings.Contains(err.Error(), "config key "+key) {
			t.Errorf("error does not name %s: %v", key, err)
		}
	}
}

func TestDefaultsAndSeconds(t *testing.T) {
	s := FromMap(map[string]string{"window": "300"})
	if got := s.Duration("window", 0, 0, time.Hour); got != 5*time.Minute {
		t.Errorf("plain seconds: %v", got)
	}
	if got := s.Int("absent", 7, 0, 10); got != 7 {
		t.Errorf("default: %v", got)
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
}

func TestLoadBadFile(t *testing.T) {
	if _, err := Load(envOf(map[string]string{KeyPolicyFile: "/nonexistent/policy.yaml"})); err == nil || !strings.Contains(err.Error(), KeyPolicyFile) {
		t.Fatalf("missing file: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("a: [1,\n"), 0o600)
	if _, err := Load(envOf(map[string]string{KeyPolicyFile: bad})); err == nil || !strings.Contains(err.Error(), "not valid YAML") {
		t.Fatalf("bad yaml: %v", err)
	}
}

func TestReplicaBounds(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(cfg, []byte("minReplicas: 2\nmaxReplicas: 20\ninterval: 15000\n"), 0o600)

	minR, maxR := ReplicaBounds(FromMap(map[string]string{"configPath": cfg}))
	if minR != 2 || maxR != 20 {
		t.Errorf("from CPA config: %d %d", minR, maxR)
	}
	s := FromMap(map[string]string{"configPath": cfg, "maxReplicas": "8"})
	if minR, maxR = ReplicaBounds(s); minR != 2 || maxR != 8 || s.Err() != nil {
		t.Errorf("env override: %d %d %v", minR, maxR, s.Err())
	}
	s = FromMap(map[string]string{"configPath": filepath.Join(t.TempDir(), "absent.yaml")})
	if minR, maxR = ReplicaBounds(s); minR != 1 || maxR != 10 || s.Err() != nil {
		t.Errorf("CPA defaults: %d %d %v", minR, maxR, s.Err())
	}
	s = FromMap(map[string]string{"configPath": cfg, "minReplicas": "30"})
	ReplicaBounds(s)
	if s.Err() == nil || !strings.Contains(s.Err().Error(), "minReplicas") {
		t.Errorf("min above max must fail naming minReplicas: %v", s.Err())
	}
}
