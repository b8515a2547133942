// Package config reads inferscale settings the CPA way: every knob is an
// environment variable (the CustomPodAutoscaler `config` list becomes env
// vars), optionally backed by a YAML file named by the key policyFile.
// Environment variables win over the file. Errors always name the key.
package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// KeyPolicyFile names the optional YAML file of settings.
const KeyPolicyFile = "policyFile"

// LookupFunc is os.LookupEnv's shape.
type LookupFunc func(string) (string, bool)

// Source resolves keys from the environment, then the policy file.
// Typed getters record the first error per key; Err joins them.
type Source struct {
	env      LookupFunc
	file     map[string]any
	fileName string
	errs     []error
}

// Load builds a Source from the environment, reading policyFile if set.
func Load(env LookupFunc) (*Source, error) {
	s := &Source{env: env}
	name, ok := env(KeyPolicyFile)
	if !ok || strings.TrimSpace(name) == "" {
		return s, nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", KeyPolicyFile, err)
	}
	if err := yaml.Unmarshal(b, &s.file); err != nil {
		return nil, fmt.Errorf("%s %s: not valid YAML: %w", KeyPolicyFile, name, err)
	}
	s.fileName = name
	return s, nil
}

// FromMap builds a Source over a fixed map (tests, the simulator).
func FromMap(m map[string]string) *Source {
	return &Source{env: func(k string) (string, bool) { v, ok := m[k]; return v, ok }}
}

// Raw returns the value of key as text and whether it was set.
func (s *Source) Raw(key string) (string, bool) {
	if v, ok := s.env(key); ok {
		return strings.TrimSpace(v), true
	}
	if v, ok := s.file[key]; ok && v != nil {
		switch t := v.(type) {
		case string:
			return strings.TrimSpace(t), true
		case float64:
			return strconv.FormatFloat(t, 'g', -1, 64), true
		case bool:
			return strconv.FormatBool(t), true
		default:
			b, err := yaml.Marshal(t)
			if err != nil {
				return fmt.Sprint(t), true
			}
			return string(b), true
		}
	}
	return "", false
}

// FileKeys lists the keys present in the policy file.
func (s *Source) FileKeys() []string {
	keys := make([]string, 0, len(s.file))
	for k := range s.file {
		keys = append(keys, k)
	}
	return keys
}

func (s *Source) fail(key, val, want string, err error) {
	msg := fmt.Sprintf("config key %s=%q: want %s", key, val, want)
	if err != nil {
		msg += ": " + err.Error()
	}
	s.errs = append(s.errs, errors.New(msg))
}

// Failf records a validation error for key (for checks across keys).
func (s *Source) Failf(key, format string, args ...any) {
	s.errs = append(s.errs, fmt.Errorf("config key %s: %s", key, fmt.Sprintf(format, args...)))
}

// Err returns every error recorded so far.
func (s *Source) Err() error { return errors.Join(s.errs...) }

// String returns key or def.
func (s *Source) String(key, def string) string {
	if v, ok := s.Raw(key); ok && v != "" {
		return v
	}
	return def
}

// Float returns key parsed as a finite float within [lo, hi], or def.
func (s *Source) Float(key string, def, lo, hi float64) float64 {
	v, ok := s.Raw(key)
	if !ok || v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		s.fail(key, v, "a number", nil)
		return def
	}
	if f < lo || f > hi {
		s.fail(key, v, fmt.Sprintf("a number in [%g, %g]", lo, hi), nil)
		return def
	}
	return f
}

// Int returns key parsed as an integer within [lo, hi], or def.
func (s *Source) Int(key string, def, lo, hi int) int {
	v, ok := s.Raw(key)
	if !ok || v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		s.fail(key, v, "an integer", nil)
		return def
	}
	if n < lo || n > hi {
		s.fail(key, v, fmt.Sprintf("an integer in [%d, %d]", lo, hi), nil)
		return def
	}
	return n
}

// Bool returns key parsed with strconv.ParseBool, or def.
func (s *Source) Bool(key string, def bool) bool {
	v, ok := s.Raw(key)
	if !ok || v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		s.fail(key, v, "true or false", nil)
		return def
	}
	return b
}

// Duration returns key as a duration: a Go duration ("90s", "5m") or plain
// seconds ("90"), within [lo, hi], or def.
func (s *Source) Duration(key string, def, lo, hi time.Duration) time.Duration {
	v, ok := s.Raw(key)
	if !ok || v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		f, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e9 {
			s.fail(key, v, `a duration ("90s", "5m") or seconds`, nil)
			return def
		}
		d = time.Duration(f * float64(time.Second))
	}
	if d < lo || d > hi {
		s.fail(key, v, fmt.Sprintf("a duration in [%s, %s]", lo, hi), nil)
		return def
	}
	return d
}

// Enum returns key if it is one of allowed, or def.
func (s *Source) Enum(key, def string, allowed ...string) string {
	v, ok := s.Raw(key)
	if !ok || v == "" {
		return def
	}
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	s.fail(key, v, "one of "+strings.Join(allowed, ", "), nil)
	return def
}

// ReplicaBounds returns minReplicas and maxReplicas the way CPA resolves
// them: env var, else the CPA config file (configPath, default
// /config.yaml), else CPA's defaults 1 and 10. A missing CPA config file is
// not an error here (local piping); an unreadable or invalid one is.
func ReplicaBounds(s *Source) (minR, maxR int) {
	minR, maxR = 1, 10
	path := s.String("configPath", "/config.yaml")
	if b, err := os.ReadFile(path); err == nil {
		var cpaCfg struct {
			MinReplicas *int `json:"minReplicas"`
			MaxReplicas *int `json:"maxReplicas"`
		}
		if err := yaml.Unmarshal(b, &cpaCfg); err != nil {
			s.Failf("configPath", "%s is not valid YAML: %v", path, err)
		} else {
			if cpaCfg.MinReplicas != nil {
				minR = *cpaCfg.MinReplicas
			}
			if cpaCfg.MaxReplicas != nil {
				maxR = *cpaCfg.MaxReplicas
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		s.Failf("configPath", "%v", err)
	}
	minR = s.Int("minReplicas", minR, 0, 100000)
	maxR = s.Int("maxReplicas", maxR, 1, 100000)
	if minR > maxR {
		s.Failf("minReplicas", "minReplicas %d is above maxReplicas %d", minR, maxR)
	}
	return minR, maxR
}
