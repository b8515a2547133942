package settings

import (
	"fmt"
	"reflect"
	"strings"
)

// Knob describes one knob, for the documentation and for tools that check
// configurations.
type Knob struct {
	Key     string
	Stage   string // "both", "evaluate" or "metric"
	Default string
	// Range is "[min, max]", the allowed values, or "".
	Range string
	// CPA is true when CPA's config.yaml may set the knob too.
	CPA bool
	Doc string
}

// stage is one knob struct and who reads it.
type stage struct {
	name  string
	knobs any // a pointer to the zero struct
}

// stages are the knob structs, in documentation order.
func stages() []stage {
	return []stage{{"both", &Files{}}, {"evaluate", &Evaluate{}}, {"metric", &Metric{}}}
}

// Catalog lists every knob, stage by stage, in declaration order.
func Catalog() []Knob {
	var out []Knob
	for _, st := range stages() {
		for _, k := range knobsOf(reflect.ValueOf(st.knobs).Elem()) {
			r := ""
			switch {
			case len(k.enum) > 0:
				r = strings.Join(k.enum, ", ")
			case k.min != "" || k.max != "":
				r = fmt.Sprintf("[%s, %s]", orDash(k.min), orDash(k.max))
			}
			out = append(out, Knob{Key: k.key, Stage: st.name, Default: k.def, Range: r, CPA: k.cpa, Doc: k.doc})
		}
	}
	return out
}

// Lookup returns the knob called key.
func Lookup(key string) (Knob, bool) {
	for _, k := range Catalog() {
		if k.Key == key {
			return k, true
		}
	}
	return Knob{}, false
}

func knownKeys() map[string]bool {
	out := map[string]bool{}
	for _, k := range Catalog() {
		out[k.Key] = true
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// Table renders the catalog as the Markdown tables of docs/configuration.md.
func Table() string {
	var b strings.Builder
	stage := ""
	for _, k := range Catalog() {
		if k.Stage != stage {
			stage = k.Stage
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "### Read by %s\n\n| key | default | range | meaning |\n|---|---|---|---|\n", map[string]string{
				"both": "both stages", "evaluate": "evaluate", "metric": "metric"}[stage])
		}
		doc := k.Doc
		if k.CPA {
			doc += " (also read from CPA's config.yaml)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.Key, code(k.Default), escape(k.Range), escape(doc))
	}
	return b.String()
}

func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + s + "`"
}

func escape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
