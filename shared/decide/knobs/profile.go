package knobs

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/inferscale/inferscale/shared/model"
)

// ParseProfile reads a service-model prior: alpha=,beta=,gammaSeq=,gammaKv=
// (seconds per step, per prompt token, per running sequence, per full KV
// cache), every key once, each a positive number.
func ParseProfile(raw string) (model.Params, error) {
	var p model.Params
	fields := map[string]*float64{"alpha": &p.Alpha, "beta": &p.Beta, "gammaSeq": &p.GammaSeq, "gammaKv": &p.GammaKV}
	seen := map[string]bool{}
	for _, kv := range strings.Split(raw, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		dst, known := fields[strings.TrimSpace(k)]
		if !ok || !known {
			return p, fmt.Errorf("%q: want alpha=,beta=,gammaSeq=,gammaKv= (seconds)", kv)
		}
		if seen[k] {
			return p, fmt.Errorf("%s given twice", k)
		}
		seen[k] = true
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return p, fmt.Errorf("%s=%q: not a number", k, v)
		}
		*dst = f
	}
	if len(seen) != len(fields) {
		return p, fmt.Errorf("%q: want all of alpha, beta, gammaSeq, gammaKv", raw)
	}
	return p, p.Validate()
}

// FormatProfile writes p the way ParseProfile reads it.
func FormatProfile(p model.Params) string {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	return "alpha=" + g(p.Alpha) + ",beta=" + g(p.Beta) + ",gammaSeq=" + g(p.GammaSeq) + ",gammaKv=" + g(p.GammaKV)
}
