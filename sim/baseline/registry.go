package baseline

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/inferscale/inferscale/sim/scaler"
)

// Params are a preset's tunables by name. Missing names take the
// default; unknown names and values outside the range are errors.
type Params map[string]float64

// Factory builds a fresh controller (no history) from tunables.
type Factory func(p Params) (scaler.Autoscaler, error)

// Tunable is one searchable parameter of a preset.
type Tunable struct {
	Name     string
	Default  float64
	Min, Max float64
	// Integer tunables take whole values only.
	Integer bool
	Doc     string
}

type preset struct {
	tunables []Tunable
	build    func(v Params) (scaler.Autoscaler, error)
}

func presets() map[string]preset {
	return map[string]preset{
		"hpa-queue":          hpaQueuePreset(),
		"hpa-kv":             hpaKVPreset(),
		"hpa-seed002":        hpaSeed002Preset(),
		"hpa-external-value": hpaExternalValuePreset(),
		"keda-queue":         kedaQueuePreset(),
		"keda-cron":          kedaCronPreset(),
		"kpa":                kpaPreset(),
		"aibrix-apa":         apaPreset(apaKV),
		"aibrix-apa-queue":   apaPreset(apaWaiting),
		"wva":                wvaPreset(),
		"seed000":            seed000Preset(),
		"seed004":            seed004Preset(),
		"static":             staticPreset(),
	}
}

// Presets returns every named baseline configuration.
func Presets() map[string]Factory {
	out := map[string]Factory{}
	for name, p := range presets() {
		p := p
		out[name] = func(in Params) (scaler.Autoscaler, error) {
			v, err := resolve(name, p.tunables, in)
			if err != nil {
				return nil, err
			}
			return p.build(v)
		}
	}
	return out
}

// Tunables returns the searchable parameters of a preset, sorted by name;
// ok is false for an unknown preset.
func Tunables(preset string) (ts []Tunable, ok bool) {
	p, ok := presets()[preset]
	if !ok {
		return nil, false
	}
	ts = append([]Tunable(nil), p.tunables...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	return ts, true
}

// PresetNames lists the presets in order.
func PresetNames() []string {
	var names []string
	for n := range presets() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// resolve fills defaults and checks names and ranges.
func resolve(preset string, defs []Tunable, in Params) (Params, error) {
	out := Params{}
	known := map[string]Tunable{}
	for _, t := range defs {
		known[t.Name] = t
		out[t.Name] = t.Default
	}
	for k, v := range in {
		t, ok := known[k]
		if !ok {
			names := make([]string, 0, len(known))
			for n := range known {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("preset %s: unknown parameter %q (known: %s)", preset, k, strings.Join(names, ", "))
		}
		if math.IsNaN(v) || v < t.Min || v > t.Max {
			return nil, fmt.Errorf("preset %s: parameter %s=%g is outside [%g, %g]", preset, k, v, t.Min, t.Max)
		}
		if t.Integer && v != math.Trunc(v) {
			return nil, fmt.Errorf("preset %s: parameter %s=%g must be a whole number", preset, k, v)
		}
		out[k] = v
	}
	return out, nil
}
