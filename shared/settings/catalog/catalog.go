// Package catalog gathers every stage's knobs, in documentation order: the
// tables of docs/configuration.md and settings.Keys are generated from it
// (go test ./shared/settings/catalog -update-docs), and its test fails
// when either is out of date. It imports both stages, so no binary links
// it.
package catalog

import (
	"github.com/inferscale/inferscale/shared/decide/knobs"
	"github.com/inferscale/inferscale/shared/gather"
	"github.com/inferscale/inferscale/shared/settings"
)

// All lists every knob: those both stages read, then evaluate's, then
// metric's, each in declaration order.
func All() []settings.Knob {
	var out []settings.Knob
	out = append(out, settings.Describe("both", &settings.Files{})...)
	out = append(out, settings.Describe("evaluate", &knobs.Evaluate{})...)
	return append(out, settings.Describe("metric", &gather.Knobs{})...)
}
