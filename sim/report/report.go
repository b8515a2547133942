// Package report turns simulation results into the comparison the
// simulator exists for: per policy SLO attainment, TTFT quantiles,
// GPU-hours and their ratio to the clairvoyant oracle, killed and rejected
// requests, scale events, flaps and the longest SLO-violation episode — as
// a table on a writer and a PNG of load, replicas and latency over time.
package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/inferscale/inferscale/sim/engine"
)

// FlapWindowSeconds is how close two opposite scale events must be to
// count as a flap (a direction reversal within 5 minutes).
const FlapWindowSeconds = 300

// Row is one policy's line of the comparison.
type Row struct {
	Policy         string
	Requests       int
	TTFTAttainment float64 // over all requests
	// FeasibleAttainment is over the requests an idle replica could serve
	// in time (engine.Result.FeasibleTTFTAttainment); targets use it.
	FeasibleAttainment float64
	E2EAttainment      float64
	// ITLAttainment is the share of inter-token gaps within the engine's
	// TPOT objective (engine.Result.ITLAttainment).
	ITLAttainment float64
	TTFTP50       float64
	TTFTP95       float64
	TTFTP99       float64
	GPUHours      float64
	VsOracle      float64 // GPU-hours ÷ the oracle's; NaN without an oracle
	// Killed counts requests lost to scale-down (a deleted pod's grace
	// period ran out); Unfinished those still in flight when the replay
	// stopped (engine.Result).
	Killed      int
	Unfinished  int
	Rejected    int
	ScaleEvents int
	Flaps       int
	// AbsorbSeconds is the longest run of consecutive bins whose TTFT
	// attainment is below the target: how long the worst overload (a step
	// or burst) took to absorb. 0 when no bin misses.
	AbsorbSeconds float64
	PolicyErrors  int
	MeetsTarget   bool
}

// Summarise computes a row. target is the attainment objective (0.99).
func Summarise(res *engine.Result, target float64) Row {
	r := Row{
		Policy:             res.Policy,
		Requests:           res.Requests,
		TTFTAttainment:     res.TTFTAttainment(),
		FeasibleAttainment: res.FeasibleTTFTAttainment(),
		E2EAttainment:      res.E2EAttainment(),
		ITLAttainment:      res.ITLAttainment(),
		GPUHours:           res.GPUHours(),
		VsOracle:           math.NaN(),
		Killed:             res.Killed,
		Unfinished:         res.Unfinished,
		Rejected:           res.Rejected,
		ScaleEvents:        len(res.ScaleEvents),
		Flaps:              Flaps(res.ScaleEvents),
		AbsorbSeconds:      Absorb(res, target),
		PolicyErrors:       res.PolicyErrors,
	}
	q := quantiles(res.TTFT, 0.50, 0.95, 0.99)
	r.TTFTP50, r.TTFTP95, r.TTFTP99 = q[0], q[1], q[2]
	r.MeetsTarget = r.FeasibleAttainment >= target
	return r
}

func quantiles(v []float32, qs ...float64) []float64 {
	out := make([]float64, len(qs))
	if len(v) == 0 {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	s := slices.Clone(v)
	slices.Sort(s)
	for i, q := range qs {
		k := int(math.Ceil(q*float64(len(s)))) - 1
		out[i] = float64(s[min(max(k, 0), len(s)-1)])
	}
	return out
}

// Flaps counts direction reversals of spec.replicas within
// FlapWindowSeconds of the previous change.
func Flaps(ev []engine.ScaleEvent) int {
	n := 0
	for i := 1; i < len(ev); i++ {
		a, b := ev[i-1], ev[i]
		up1, up2 := a.To > a.From, b.To > b.From
		if up1 != up2 && b.T-a.T <= FlapWindowSeconds {
			n++
		}
	}
	return n
}

// Absorb is the longest episode of consecutive bins whose requests' TTFT
// attainment falls below target, in seconds.
func Absorb(res *engine.Result, target float64) float64 {
	slo := float32(res.Config.TTFTSLOSeconds)
	longest, cur := 0, 0
	idx := 0
	for _, b := range res.Bins {
		seg := res.TTFT[min(idx, len(res.TTFT)):min(idx+b.Arrivals, len(res.TTFT))]
		idx += b.Arrivals
		if len(seg) == 0 {
			if cur > 0 {
				cur++ // an empty bin inside an episode does not end it
			}
			continue
		}
		met := 0
		for _, v := range seg {
			if v <= slo {
				met++
			}
		}
		if float64(met)/float64(len(seg)) < target {
			cur++
			longest = max(longest, cur)
		} else {
			cur = 0
		}
	}
	return float64(longest) * res.Config.BinSeconds
}

// SetOracle fills VsOracle from the oracle's GPU-hours.
func SetOracle(rows []Row, oracleGPUHours float64) {
	for i := range rows {
		if oracleGPUHours > 0 {
			rows[i].VsOracle = rows[i].GPUHours / oracleGPUHours
		}
	}
}

// WriteTable prints rows as an aligned text table.
func WriteTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tTTFT ok\tof feasible\tE2E ok\tITL ok\tp50 TTFT\tp95 TTFT\tp99 TTFT\tGPU-h\t×oracle\tkilled\tunfinished\trejected\tscale ev\tflaps\tabsorb\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t\n",
			r.Policy, pct(r.TTFTAttainment), pct(r.FeasibleAttainment), pct(r.E2EAttainment), pct(r.ITLAttainment), secs(r.TTFTP50), secs(r.TTFTP95), secs(r.TTFTP99),
			r.GPUHours, ratio(r.VsOracle), r.Killed, r.Unfinished, r.Rejected, r.ScaleEvents, r.Flaps, dur(r.AbsorbSeconds))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return nil
}

// WriteMarkdown prints rows as a Markdown table (for the README).
func WriteMarkdown(w io.Writer, rows []Row) error {
	var b strings.Builder
	b.WriteString("| policy | TTFT ok | of feasible | E2E ok | ITL ok | p50 TTFT | p95 TTFT | p99 TTFT | GPU-h | ×oracle | killed | unfinished | rejected | scale ev | flaps | absorb |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %.2f | %s | %d | %d | %d | %d | %d | %s |\n",
			r.Policy, pct(r.TTFTAttainment), pct(r.FeasibleAttainment), pct(r.E2EAttainment), pct(r.ITLAttainment), secs(r.TTFTP50), secs(r.TTFTP95), secs(r.TTFTP99),
			r.GPUHours, ratio(r.VsOracle), r.Killed, r.Unfinished, r.Rejected, r.ScaleEvents, r.Flaps, dur(r.AbsorbSeconds))
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return nil
}

func pct(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) }
func secs(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.IsInf(v, 1):
		return "lost"
	case v < 1:
		return fmt.Sprintf("%.0fms", v*1000)
	}
	return fmt.Sprintf("%.1fs", v)
}
func ratio(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}
func dur(s float64) string {
	if s == 0 {
		return "0"
	}
	if s < 120 {
		return fmt.Sprintf("%.0fs", s)
	}
	return fmt.Sprintf("%.1fm", s/60)
}
