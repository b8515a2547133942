// Package preset maps the metric names of each inference server onto the
// inferscale signals. Every built-in server is one JSON file under
// servers/ (adding a server is adding a file); a fully custom mapping uses
// the same schema, in YAML or JSON, through configuration. Detect picks the preset whose
// marker families are present in a scrape.
package preset

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/inferscale/inferscale/shared/expo"
)

//go:embed servers/*.json
var serverFiles embed.FS

// Signal names a mapping may set. Gauges and counters are combined with
// Reading.Agg; histograms are merged bucket by bucket.
const (
	Waiting               = "waiting"
	Running               = "running"
	KVCacheUsage          = "kvCacheUsage"
	GPUUtilization        = "gpuUtilization"
	TTFT                  = "ttft"
	E2E                   = "e2e"
	QueueTime             = "queueTime"
	InterToken            = "interToken"
	PromptLength          = "promptLength"
	GenerationLength      = "generationLength"
	RequestsTotal         = "requestsTotal"
	PromptTokensTotal     = "promptTokensTotal"
	GenerationTokensTotal = "generationTokensTotal"
	PreemptionsTotal      = "preemptionsTotal"
)

// signalNames lists every signal a mapping may name, in output order.
func signalNames() []string {
	return []string{Waiting, Running, KVCacheUsage, GPUUtilization, TTFT, E2E, QueueTime, InterToken,
		PromptLength, GenerationLength, RequestsTotal, PromptTokensTotal, GenerationTokensTotal, PreemptionsTotal}
}

// IsHistogram reports whether the signal is a histogram.
func IsHistogram(sig string) bool {
	switch sig {
	case TTFT, E2E, QueueTime, InterToken, PromptLength, GenerationLength:
		return true
	}
	return false
}

// Reading says where one signal comes from.
type Reading struct {
	// Families are candidate family names; the first one present wins
	// (e.g. a new name before its deprecated one).
	Families []string `json:"families"`
	// Labels keeps only series carrying these label values.
	Labels map[string]string `json:"labels,omitempty"`
	// Scale multiplies values (histograms: bounds and sum) into the
	// signal's unit: 0.01 for percent, 1e-3 for ms, 1e-6 for µs. 0 means 1.
	Scale float64 `json:"scale,omitempty"`
	// Agg combines the series of a gauge or counter: sum (default), mean or max.
	Agg expo.Agg `json:"agg,omitempty"`
}

// Factor is Scale with its default applied.
func (r Reading) Factor() float64 {
	if r.Scale == 0 {
		return 1
	}
	return r.Scale
}

// Preset is one server's mapping.
type Preset struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Detect lists marker families; the preset with most of them present wins.
	Detect []string `json:"detect"`
	// Signals maps signal names (Waiting, TTFT, ...) to readings.
	Signals map[string]Reading `json:"signals"`
	// Notes says what this server cannot tell; copied into every pod report.
	Notes []string `json:"notes,omitempty"`
}

// Parse reads one preset document (YAML or JSON) and validates it.
func Parse(doc []byte) (*Preset, error) {
	var p Preset
	if err := yaml.UnmarshalStrict(doc, &p); err != nil {
		return nil, fmt.Errorf("preset is not valid: %w", err)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// Validate checks names, scales and aggregations.
func (p *Preset) Validate() error {
	if strings.TrimSpace(p.Name) == "" {
		return errors.New("preset: missing name")
	}
	if len(p.Signals) == 0 {
		return fmt.Errorf("preset %s: no signals mapped", p.Name)
	}
	known := map[string]bool{}
	for _, s := range signalNames() {
		known[s] = true
	}
	var errs []error
	for sig, r := range p.Signals {
		if !known[sig] {
			errs = append(errs, fmt.Errorf("preset %s: unknown signal %q (known: %s)", p.Name, sig, strings.Join(signalNames(), ", ")))
			continue
		}
		if len(r.Families) == 0 {
			errs = append(errs, fmt.Errorf("preset %s: signal %s lists no families", p.Name, sig))
		}
		for _, f := range r.Families {
			if strings.TrimSpace(f) == "" {
				errs = append(errs, fmt.Errorf("preset %s: signal %s has an empty family name", p.Name, sig))
			}
		}
		if r.Scale < 0 {
			errs = append(errs, fmt.Errorf("preset %s: signal %s: negative scale %g", p.Name, sig, r.Scale))
		}
		if !expo.ValidAgg(r.Agg) {
			errs = append(errs, fmt.Errorf("preset %s: signal %s: unknown agg %q (sum, mean or max)", p.Name, sig, r.Agg))
		}
		if IsHistogram(sig) && r.Agg != "" {
			errs = append(errs, fmt.Errorf("preset %s: signal %s is a histogram; agg does not apply", p.Name, sig))
		}
	}
	return errors.Join(errs...)
}

// decodeBuiltin reads a built-in preset file; unknown keys are rejected as
// in Parse.
func decodeBuiltin(name string) (*Preset, error) {
	b, err := serverFiles.ReadFile(path.Join("servers", name+".json"))
	if err != nil {
		return nil, fmt.Errorf("reading preset %s: %w", name, err)
	}
	var p Preset
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("built-in preset %s: %w", name, err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("built-in preset %s: %w", name, err)
	}
	return &p, nil
}

// BuiltinNames lists the built-in presets' names (the servers/ file
// names), sorted, without parsing them.
func BuiltinNames() []string {
	entries, err := fs.ReadDir(serverFiles, "servers")
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Builtin loads the built-in preset called name.
func Builtin(name string) (*Preset, error) {
	for _, n := range BuiltinNames() {
		if n == name {
			return decodeBuiltin(name)
		}
	}
	return nil, fmt.Errorf("unknown server preset %q (known: %s)", name, strings.Join(BuiltinNames(), ", "))
}

// Builtins returns the built-in presets, sorted by name.
func Builtins() ([]*Preset, error) {
	names := BuiltinNames()
	out := make([]*Preset, 0, len(names))
	for _, n := range names {
		p, err := decodeBuiltin(n)
		if err != nil {
			return nil, err
		}
		if p.Name != n {
			return nil, fmt.Errorf("built-in preset file %s.json names itself %q", n, p.Name)
		}
		out = append(out, p)
	}
	return out, nil
}

// Names lists the presets' names.
func Names(ps []*Preset) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

// Find returns the preset called name, or an error listing the choices.
func Find(ps []*Preset, name string) (*Preset, error) {
	for _, p := range ps {
		if p.Name == name {
			return p, nil
		}
	}
	return nil, fmt.Errorf("unknown server preset %q (known: %s)", name, strings.Join(Names(ps), ", "))
}

// Wanted is the set of family names the presets read or detect with:
// what a scrape must keep.
func Wanted(ps ...*Preset) expo.Wanted {
	w := expo.Wanted{}
	for _, p := range ps {
		for _, n := range p.Detect {
			w[n] = true
		}
		for _, r := range p.Signals {
			for _, n := range r.Families {
				w[n] = true
			}
		}
	}
	return w
}

// ErrNotDetected is returned when no preset's marker families are present.
var ErrNotDetected = errors.New("no known inference-server metrics in the exposition")

// Detect returns the preset with the most marker families present in fams
// (ties go to the first by name).
func Detect(ps []*Preset, has func(string) bool) (*Preset, error) {
	var best *Preset
	bestScore := 0
	for _, p := range ps {
		score := 0
		for _, m := range p.Detect {
			if has(m) {
				score++
			}
		}
		if score > bestScore {
			best, bestScore = p, score
		}
	}
	if best == nil {
		return nil, ErrNotDetected
	}
	return best, nil
}
