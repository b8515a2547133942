// Package settings is the one strict decoder of inferscale's knobs. Each
// stage declares its own knobs once, as tagged struct fields, the way KEDA
// declares its scalers' metadata: the metric stage in package gather, the
// evaluate stage (and the exporter, which reads the same) in package
// decide/knobs, whose policy.Config carries its tags itself; this package
// declares only Files, which both read. It imports neither stage.
//
// A knob's value comes from the first of: the environment (CPA turns the
// CustomPodAutoscaler's `config` list into environment variables), the
// optional YAML file named by policyFile, CPA's own config.yaml (only the
// knobs tagged cpa:"true": minReplicas and maxReplicas, as CPA resolves
// them), and the default in the tag. The value is parsed for the field's
// type and checked against its range or choices; then the struct's
// Validate checks what spans several keys. Every error names its key, and
// a key in the policy file that no knob declares is an error too (CPA
// itself silently ignores a typo; we do not).
//
// Tags:
//
//	setting:"key"       the knob's name (setting:"-" skips a field)
//	default:"..."       its value when nothing sets it
//	min:"..." max:"..." the inclusive range (numbers and durations)
//	enum:"a,b"          the allowed values (strings)
//	cpa:"true"          also read from CPA's config.yaml
//	doc:"..."           one sentence for docs/configuration.md
//
// Fields of nested and embedded structs are knobs of their own, so the
// pure policy.Config carries its tags itself and imports nothing for it.
// A knob of a type the decoder does not know is parsed by the knob
// struct's ParseKnob (TypeParser).
//
// A policy file is shared by both stages, so a key in it that no knob of
// either stage declares is an error, though neither stage links the
// other's knobs: Keys is the generated list of every stage's keys, and
// the test of package settings/catalog fails when it is out of date.
package settings

import (
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// LookupFunc is os.LookupEnv's shape.
type LookupFunc func(string) (string, bool)

// Source is where knobs are read from: the environment, the policy file
// and, for the cpa-tagged knobs, CPA's config.yaml.
type Source struct {
	env      LookupFunc
	file     map[string]any
	fileName string
	// cpaPath is CPA's config.yaml ("": none); it is read on first use,
	// so a stage that has no cpa-tagged knob never opens it.
	cpaPath string
	cpa     map[string]any
	cpaErr  error
	cpaRead bool
}

// Load builds the Source of a process: its environment, the policy file
// when policyFile is set, and CPA's config.yaml at configPath.
func Load(env LookupFunc) (*Source, error) {
	s := &Source{env: env}
	if name, ok := env(KeyPolicyFile); ok && strings.TrimSpace(name) != "" {
		name = strings.TrimSpace(name)
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", KeyPolicyFile, err)
		}
		if err := yaml.Unmarshal(b, &s.file); err != nil {
			return nil, fmt.Errorf("%s %s: not valid YAML: %w", KeyPolicyFile, name, err)
		}
		s.fileName = name
	}
	var f Files
	if err := s.decode(&f); err != nil {
		return nil, err
	}
	s.cpaPath = f.ConfigPath
	return s, nil
}

// FromMap builds a Source over fixed values, with no policy file and no
// CPA config.yaml (tests, the simulator).
func FromMap(m map[string]string) *Source {
	return &Source{env: func(k string) (string, bool) { v, ok := m[k]; return v, ok }}
}

// FileKeys lists the keys present in the policy file, sorted.
func (s *Source) FileKeys() []string {
	keys := make([]string, 0, len(s.file))
	for k := range s.file {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// raw returns the text of key and whether something set it to a
// non-empty value: the environment, then the policy file, then (cpa)
// CPA's config.yaml.
func (s *Source) raw(key string, cpa bool) (string, bool, error) {
	if v, ok := s.env(key); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v), true, nil
	}
	if v, ok := s.file[key]; ok && v != nil {
		if t := text(v); t != "" {
			return t, true, nil
		}
	}
	if !cpa {
		return "", false, nil
	}
	m, err := s.cpaConfig()
	if err != nil {
		return "", false, err
	}
	if v, ok := m[key]; ok && v != nil {
		return text(v), text(v) != "", nil
	}
	return "", false, nil
}

// text renders a YAML value as the text an environment variable would hold.
func text(v any) string {
	switch t := v.(type) {
	case string:
		return strings.TrimSpace(t)
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(t)
	}
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// cpaConfig reads CPA's config.yaml once. A missing file is no error
// (evaluate piped by hand); an unreadable or invalid one is.
func (s *Source) cpaConfig() (map[string]any, error) {
	if s.cpaRead {
		return s.cpa, s.cpaErr
	}
	s.cpaRead = true
	if s.cpaPath == "" {
		return nil, nil
	}
	b, err := os.ReadFile(s.cpaPath)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case err != nil:
		s.cpaErr = fmt.Errorf("config key %s: %w", KeyConfigPath, err)
	default:
		if err := yaml.Unmarshal(b, &s.cpa); err != nil {
			s.cpaErr = fmt.Errorf("config key %s: %s is not valid YAML: %v", KeyConfigPath, s.cpaPath, err)
		}
	}
	return s.cpa, s.cpaErr
}

// validator is a knob struct with checks across its keys.
type validator interface{ Validate() error }

// A TypeParser is a knob struct with knobs of types of its own (the
// decoder itself reads strings, bools, ints, floats, durations and lists
// of floats or uints). ParseKnob parses raw into dst, a pointer to such a
// field, and says whether it knows dst's type; its error need not name
// the key.
type TypeParser interface {
	ParseKnob(dst any, raw string) (known bool, err error)
}

// Decode fills v (a pointer to a knob struct) from s, then runs v's
// Validate, and checks that every policy-file key is a knob of some stage
// (Keys). The error joins every problem, each naming its key.
func Decode(s *Source, v any) error {
	err := s.decode(v)
	var unknown []error
	known := keySet()
	for _, k := range s.FileKeys() {
		if !known[k] {
			unknown = append(unknown, fmt.Errorf("config key %s: unknown key in %s %s", k, KeyPolicyFile, s.fileName))
		}
	}
	return errors.Join(append([]error{err}, unknown...)...)
}

func (s *Source) decode(v any) error {
	var errs []error
	parser, _ := v.(TypeParser)
	for _, k := range knobsOf(reflect.ValueOf(v).Elem()) {
		raw, set, err := s.raw(k.key, k.cpa)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !set {
			raw = k.def
		}
		if raw == "" {
			continue
		}
		if err := k.set(raw, parser); err != nil {
			errs = append(errs, err)
		}
	}
	// The checks across keys run on what did decode (a bad value leaves
	// its default), so one run names every problem.
	if val, ok := v.(validator); ok {
		errs = append(errs, val.Validate())
	}
	return errors.Join(errs...)
}

// knob is one tagged field.
type knob struct {
	key, def, min, max, doc string
	enum                    []string
	cpa                     bool
	field                   reflect.Value
}

// knobsOf lists the knobs of a struct value, nested structs included, in
// field order.
func knobsOf(v reflect.Value) []knob {
	var out []knob
	t := v.Type()
	for i := range t.NumField() {
		f, fv := t.Field(i), v.Field(i)
		key := f.Tag.Get("setting")
		switch {
		case key == "-" || !f.IsExported():
			continue
		case key == "" && f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeFor[time.Time]():
			out = append(out, knobsOf(fv)...)
			continue
		case key == "":
			panic(fmt.Sprintf("settings: field %s.%s has no setting tag", t, f.Name))
		}
		k := knob{key: key, def: f.Tag.Get("default"), min: f.Tag.Get("min"), max: f.Tag.Get("max"),
			doc: f.Tag.Get("doc"), cpa: f.Tag.Get("cpa") == "true", field: fv}
		if e := f.Tag.Get("enum"); e != "" {
			k.enum = strings.Split(e, ",")
		}
		out = append(out, k)
	}
	return out
}

// set parses raw into the knob's field, checking its range or choices;
// parser (nil: none) reads the types set does not know.
func (k knob) set(raw string, parser TypeParser) error {
	switch p := k.field.Addr().Interface().(type) {
	case *string:
		if len(k.enum) > 0 && !slices.Contains(k.enum, raw) {
			return k.fail(raw, "one of "+strings.Join(k.enum, ", "))
		}
		*p = raw
	case *bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return k.fail(raw, "true or false")
		}
		*p = b
	case *int:
		return k.setInt(p, raw)
	case *float64:
		return k.setFloat(p, raw)
	case *time.Duration:
		return k.setDuration(p, raw)
	case *[]float64:
		return k.setFloats(p, raw)
	case *[]uint:
		var out []uint
		for _, f := range strings.Split(raw, ",") {
			id, err := strconv.ParseUint(strings.TrimSpace(f), 10, 32)
			if err != nil {
				return k.fail(raw, "non-negative integers separated by commas (e.g. 0,1)")
			}
			out = append(out, uint(id))
		}
		*p = out
	default:
		return k.setOther(p, raw, parser)
	}
	return nil
}

// setOther hands a knob of a type of its own to the struct's parser.
func (k knob) setOther(dst any, raw string, parser TypeParser) error {
	known, err := false, error(nil)
	if parser != nil {
		known, err = parser.ParseKnob(dst, raw)
	}
	if !known {
		panic(fmt.Sprintf("settings: knob %s has unsupported type %s", k.key, k.field.Type()))
	}
	if err != nil {
		return fmt.Errorf("config key %s: %w", k.key, err)
	}
	return nil
}

func (k knob) setInt(p *int, raw string) error {
	n, err := strconv.Atoi(raw)
	if err != nil {
		return k.fail(raw, "an integer")
	}
	lo, hi := k.intRange()
	if n < lo || n > hi {
		return k.fail(raw, fmt.Sprintf("an integer in [%d, %d]", lo, hi))
	}
	*p = n
	return nil
}

func (k knob) setFloat(p *float64, raw string) error {
	f, err := parseFloat(raw)
	if err != nil {
		return k.fail(raw, "a number")
	}
	lo, hi := k.floatRange()
	if f < lo || f > hi {
		return k.fail(raw, fmt.Sprintf("a number in [%g, %g]", lo, hi))
	}
	*p = f
	return nil
}

func (k knob) setDuration(p *time.Duration, raw string) error {
	d, err := parseDuration(raw)
	if err != nil {
		return k.fail(raw, `a duration ("90s", "5m") or seconds`)
	}
	lo, hi := k.durationRange()
	if d < lo || d > hi {
		return k.fail(raw, fmt.Sprintf("a duration in [%s, %s]", lo, hi))
	}
	*p = d
	return nil
}

func (k knob) setFloats(p *[]float64, raw string) error {
	lo, hi := k.floatRange()
	var out []float64
	for _, f := range strings.Split(raw, ",") {
		x, err := parseFloat(strings.TrimSpace(f))
		if err != nil || x < lo || x > hi {
			return k.fail(raw, fmt.Sprintf("numbers in [%g, %g] separated by commas", lo, hi))
		}
		out = append(out, x)
	}
	*p = out
	return nil
}

func (k knob) fail(raw, want string) error {
	return fmt.Errorf("config key %s=%q: want %s", k.key, raw, want)
}

func (k knob) intRange() (lo, hi int) {
	lo, hi = math.MinInt, math.MaxInt
	if k.min != "" {
		lo = mustInt(k.key, k.min)
	}
	if k.max != "" {
		hi = mustInt(k.key, k.max)
	}
	return lo, hi
}

func (k knob) floatRange() (lo, hi float64) {
	lo, hi = math.Inf(-1), math.Inf(1)
	if k.min != "" {
		lo = mustFloat(k.key, k.min)
	}
	if k.max != "" {
		hi = mustFloat(k.key, k.max)
	}
	return lo, hi
}

func (k knob) durationRange() (lo, hi time.Duration) {
	lo, hi = math.MinInt64, math.MaxInt64
	if k.min != "" {
		lo = mustDuration(k.key, k.min)
	}
	if k.max != "" {
		hi = mustDuration(k.key, k.max)
	}
	return lo, hi
}

// parseFloat accepts finite numbers only.
func parseFloat(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
		err = errors.New("not finite")
	}
	return f, err
}

// parseDuration reads a Go duration ("90s", "5m") or plain seconds ("90").
func parseDuration(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	f, err := parseFloat(s)
	if err != nil || math.Abs(f) > 1e9 {
		return 0, errors.New("not a duration")
	}
	return time.Duration(f * float64(time.Second)), nil
}

// The must* helpers read a range from a tag: a bad tag is a programming
// error, caught by the tests that decode every knob struct.
func mustInt(key, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(fmt.Sprintf("settings: knob %s: bad range %q", key, s))
	}
	return n
}

func mustFloat(key, s string) float64 {
	f, err := parseFloat(s)
	if err != nil {
		panic(fmt.Sprintf("settings: knob %s: bad range %q", key, s))
	}
	return f
}

func mustDuration(key, s string) time.Duration {
	d, err := parseDuration(s)
	if err != nil {
		panic(fmt.Sprintf("settings: knob %s: bad range %q", key, s))
	}
	return d
}
