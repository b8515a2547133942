package history

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/inferscale/inferscale/sim/tune"
)

// Tuned is the outcome of tuning on a recorded history.
type Tuned struct {
	Options Options
	// SLO is the TTFT objective; Target the attainment aimed at.
	SLO    time.Duration
	Target float64
	// Params are the best settings (config keys, durations in seconds).
	Params map[string]float64
	// Best and Defaults are the simulated outcomes of the best settings and
	// of inferscale's defaults; Met says whether Best reaches Target.
	Best, Defaults tune.Outcome
	Met            bool
	Trials         int
	Fidelity       Fidelity
	// Sim describes the simulated fleet the outcomes are for.
	Sim string
}

// WritePolicy writes a policyFile (YAML) with the tuned settings and, as
// comments, what they are expected to give and how faithful the rebuilt
// load is.
func WritePolicy(w io.Writer, t Tuned) error {
	var b bytes.Buffer
	o := t.Options
	verdict := "met"
	if !t.Met {
		verdict = "NOT met"
	}
	fmt.Fprintf(&b, "# inferscale policyFile tuned by `simulate history` on recorded traffic:\n")
	fmt.Fprintf(&b, "#   %s%s at %s, %s .. %s, windows of %s\n", RequestsMetric, o.Selector, o.URL,
		o.Start.UTC().Format(time.RFC3339), o.End.UTC().Format(time.RFC3339), o.Step)
	fmt.Fprintf(&b, "# Expected on that traffic (simulated: %s):\n", t.Sim)
	fmt.Fprintf(&b, "#   TTFT attainment %.3f%% (target %.2f%% within %s: %s), %.2f GPU-hours, after %d trials\n",
		100*t.Best.Attainment, 100*t.Target, t.SLO, verdict, t.Best.GPUHours, t.Trials)
	fmt.Fprintf(&b, "#   inferscale's defaults: TTFT attainment %.3f%%, %.2f GPU-hours\n", 100*t.Defaults.Attainment, t.Defaults.GPUHours)
	fmt.Fprintf(&b, "# Rebuilt load vs recorded:%s\n", wrap(t.Fidelity.String(), "#   "))
	fmt.Fprintf(&b, "# Durations are in seconds. Check the figures on your own fleet in advisory mode first.\n")
	fmt.Fprintf(&b, "ttftSLO: %s\n", strconv.Quote(t.SLO.String()))
	keys := make([]string, 0, len(t.Params))
	for k := range t.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, strconv.FormatFloat(t.Params[k]+0, 'g', -1, 64))
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing the policy: %w", err)
	}
	return nil
}

// wrap breaks a long "a; b; c" account into comment lines.
func wrap(s, prefix string) string {
	parts := strings.Split(s, "; ")
	return "\n" + prefix + strings.Join(parts, "\n"+prefix)
}
