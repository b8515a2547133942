package settings

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sample is a knob struct of its own: the decoder knows no stage. Its keys
// are real ones, so a policy file may hold them.
type sample struct {
	QueueTarget float64       `setting:"queueTarget" default:"3" min:"0.01" max:"100" doc:"d"`
	Min         int           `setting:"minReplicas" default:"1" min:"0" cpa:"true" doc:"d"`
	Max         int           `setting:"maxReplicas" default:"10" min:"1" cpa:"true" doc:"d"`
	Cooldown    time.Duration `setting:"scaleUpCooldown" default:"1m" doc:"d"`
	Mode        string        `setting:"mode" default:"active" enum:"active,advisory" doc:"d"`
	Profile     steps         `setting:"profile" doc:"d"`
}

// steps is a knob type the decoder does not know: sample parses it.
type steps int

func (s *sample) ParseKnob(dst any, raw string) (bool, error) {
	p, ok := dst.(*steps)
	if !ok {
		return false, nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(raw, "steps="))
	if err != nil {
		return true, errors.New("want steps=N")
	}
	*p = steps(n)
	return true, nil
}

func (s *sample) Validate() error {
	if s.Min > s.Max {
		return errors.New("config key minReplicas: above maxReplicas")
	}
	return nil
}

func lookup(m map[string]string) LookupFunc {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// The environment wins over the policy file, which wins over CPA's
// config.yaml (cpa-tagged knobs only), which wins over the default.
func TestPrecedence(t *testing.T) {
	dir := t.TempDir()
	pf, cpa := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "config.yaml")
	write(t, pf, "queueTarget: 4\nscaleUpCooldown: 30\nmaxReplicas: 30\nprofile: steps=7\n")
	write(t, cpa, "minReplicas: 2\nmaxReplicas: 20\nqueueTarget: 9\n")
	src, err := Load(lookup(map[string]string{KeyPolicyFile: pf, KeyConfigPath: cpa, "queueTarget": "6", "mode": " "}))
	if err != nil {
		t.Fatal(err)
	}
	var s sample
	if err := Decode(src, &s); err != nil {
		t.Fatal(err)
	}
	want := sample{QueueTarget: 6, Min: 2, Max: 30, Cooldown: 30 * time.Second, Mode: "active", Profile: 7}
	if s != want {
		t.Fatalf("decoded %+v, want %+v", s, want)
	}
}

// A policy-file key that no knob of any stage declares is an error; one
// that another stage declares is not, though the struct decoded lacks it.
func TestPolicyFileKeysMustBeSomeStagesKeys(t *testing.T) {
	pf := filepath.Join(t.TempDir(), "policy.yaml")
	write(t, pf, "queueTarget: 4\nmetricsPort: 9000\nqueueTraget: 5\n")
	src, err := Load(lookup(map[string]string{KeyPolicyFile: pf, KeyConfigPath: filepath.Join(t.TempDir(), "absent.yaml")}))
	if err != nil {
		t.Fatal(err)
	}
	var s sample
	err = Decode(src, &s)
	if err == nil || !strings.Contains(err.Error(), "config key queueTraget: unknown key") || strings.Contains(err.Error(), "metricsPort") {
		t.Fatalf("want queueTraget alone reported: %v", err)
	}
	if s.QueueTarget != 4 {
		t.Errorf("the known keys are still read: %+v", s)
	}
}

// Every bad value is reported with its key, its own type's too, and the
// checks across keys run on what did decode.
func TestBadValuesNameTheirKeys(t *testing.T) {
	var s sample
	err := Decode(FromMap(map[string]string{"queueTarget": "abc", "scaleUpCooldown": "forever", "mode": "loud",
		"profile": "seven", "minReplicas": "50"}), &s)
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{`config key queueTarget="abc"`, `config key scaleUpCooldown="forever"`,
		`config key mode="loud": want one of active, advisory`, "config key profile: want steps=N", "config key minReplicas: above"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// A knob of a type neither the decoder nor its struct parses is a
// programming error, caught by the stages' tests that decode their defaults.
func TestAnUnknownTypePanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "unsupported type") {
			t.Fatalf("recovered %v", r)
		}
	}()
	var v struct {
		C complex128 `setting:"c" default:"1"`
	}
	_ = Decode(FromMap(nil), &v)
}

// Keys is sorted and has no key twice (catalog's test checks it is current).
func TestKeysAreSortedAndUnique(t *testing.T) {
	keys := Keys()
	if !slices.IsSorted(keys) || len(slices.Compact(slices.Clone(keys))) != len(keys) {
		t.Fatalf("keys %v", keys)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
