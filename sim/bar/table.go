package bar

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Summary counts the rows passing each criterion.
type Summary struct {
	Rows, Attainment, BelowStatic, NoKills, FewFlaps, NoDownInBreach, All int
	NearOracle, NearOracleOf                                              int // passing, applicable
	// OracleNoCheaper counts the rows over their static fleet where the
	// clairvoyant oracle, searched for no more than the policy's
	// attainment, costs at least as much as that fleet: a cost no policy
	// that does not know the trace in advance can beat.
	OracleNoCheaper int
	// BelowStaticE2E counts the rows below the static fleet that meets
	// the end-to-end objective too (Verdict.BelowStaticE2E).
	BelowStaticE2E int
	// NearOracleLoose counts the rows NearOracle applies to whose
	// GPU-hours are within LooseNearOracle × the oracle's.
	NearOracleLoose int
	// The same against the oracle held to the end-to-end objective too
	// (Verdict.NearOracleE2E): passing, within LooseNearOracle ×, and
	// applicable.
	NearOracleE2E, NearOracleE2ELoose, NearOracleE2EOf int
}

// LooseNearOracle is the project's standing cost bar against the oracle
// on fleets of 8 pods or more (README, "Where it stands"), counted beside
// the matrix's own, stricter 1.15.
const LooseNearOracle = 1.3

// Summarise counts rows.
func Summarise(rows []Row) Summary {
	s := Summary{Rows: len(rows)}
	for _, r := range rows {
		v := r.Verdict
		s.Attainment += b2i(v.Attainment)
		s.BelowStatic += b2i(v.BelowStatic)
		s.BelowStaticE2E += b2i(v.BelowStaticE2E)
		s.NoKills += b2i(v.NoKills)
		s.FewFlaps += b2i(v.FewFlaps)
		s.NoDownInBreach += b2i(v.NoDownInBreach)
		s.All += b2i(v.All())
		s.OracleNoCheaper += b2i(!v.BelowStatic && r.StaticN > 0 && r.Attainment >= r.OracleTarget &&
			noCheaperOracle(r.OracleOK, r.OracleGPUHours, r.StaticGPUHours))
		if v.NearOracle != nil {
			s.NearOracleOf++
			s.NearOracle += b2i(*v.NearOracle)
			s.NearOracleLoose += b2i(r.GPUHours <= LooseNearOracle*r.OracleGPUHours)
		}
		if v.NearOracleE2E != nil {
			s.NearOracleE2EOf++
			s.NearOracleE2E += b2i(*v.NearOracleE2E)
			s.NearOracleE2ELoose += b2i(r.GPUHours <= LooseNearOracle*r.OracleE2EGPUHours)
		}
	}
	return s
}

// noCheaperOracle reports an oracle found that costs at least the static
// fleet's GPU-hours (within a rounding's 1e-9).
func noCheaperOracle(found bool, oracle, static float64) bool {
	return found && oracle >= static*(1-1e-9)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// String is the summary line, and beside it the cost against the static
// fleet and the oracle that meet the end-to-end objective too, and
// against 1.3 × the oracle.
func (s Summary) String() string {
	return s.criteria() + fmt.Sprintf("\nbeside the criteria: GPU-h below the static fleet that meets the end-to-end objective too %d/%d, ≤%.1f×oracle %d/%d; "+
		"against the oracle that meets the end-to-end objective too, ≤1.15× %d and ≤%.1f× %d of %d (where its fleet ≥ 8)",
		s.BelowStaticE2E, s.Rows, LooseNearOracle, s.NearOracleLoose, s.NearOracleOf, s.NearOracleE2E, LooseNearOracle, s.NearOracleE2ELoose, s.NearOracleE2EOf)
}

// criteria is the summary line of the criteria.
func (s Summary) criteria() string {
	return fmt.Sprintf("cases passing: attainment %d/%d, GPU-h below static %d/%d (%s), ≤1.15×oracle %d/%d (where the oracle's fleet ≥ 8), 0 killed %d/%d, flaps ≤1/h %d/%d, no scale-down in a breach %d/%d; all criteria %d/%d",
		s.Attainment, s.Rows, s.BelowStatic, s.Rows, noCheaperNote(s.Rows-s.BelowStatic, s.OracleNoCheaper), s.NearOracle, s.NearOracleOf, s.NoKills, s.Rows, s.FewFlaps, s.Rows, s.NoDownInBreach, s.Rows, s.All, s.Rows)
}

// noCheaperNote says how many of the cells over their static fleet
// have an oracle no cheaper than it.
func noCheaperNote(over, noCheaper int) string {
	return fmt.Sprintf("the oracle no cheaper than static in %d of the %d over it", noCheaper, over)
}

var header = []string{"case", "TTFT ok", "GPU-h", "killed", "unfin.", "flaps/h", "oracle ok", "oracle GPU-h", "oracle fleet",
	"static n", "static GPU-h", "E2E ok", "static n (E2E)", "static GPU-h (E2E)", "oracle GPU-h (E2E)", "down@breach", "att", "<static", "<static (E2E)",
	"≤1.15×orc", "≤1.15×orc (E2E)", "0 killed", "flaps", "no down@breach", "all"}

func cells(r Row) []string {
	orcOK, orcGPU, orcFleet := "-", "-", "-"
	if r.OracleOK {
		orcOK = pct(r.OracleAttainment)
		orcGPU = fmt.Sprintf("%.2f", r.OracleGPUHours)
		orcFleet = fmt.Sprintf("%.1f", r.OracleMeanFleet)
	}
	stN, stGPU := staticCells(r.StaticN, r.StaticGPUHours)
	e2eN, e2eGPU := staticCells(r.StaticE2EN, r.StaticE2EGPUHours)
	near, nearE2E := optMark(r.Verdict.NearOracle), optMark(r.Verdict.NearOracleE2E)
	orcE2E := "-"
	if r.OracleE2EOK {
		orcE2E = fmt.Sprintf("%.2f", r.OracleE2EGPUHours)
	}
	att := mark(r.Verdict.Attainment)
	if r.Verdict.AttainmentBar < 0.99 {
		att += fmt.Sprintf(" (≥%s)", pct(r.Verdict.AttainmentBar))
	}
	return []string{r.Case, pct(r.Attainment), fmt.Sprintf("%.2f", r.GPUHours), fmt.Sprint(r.Killed), fmt.Sprint(r.Unfinished),
		fmt.Sprintf("%.2f", r.FlapsPerHour), orcOK, orcGPU, orcFleet, stN, stGPU, pct(r.E2EAttainment), e2eN, e2eGPU, orcE2E, fmt.Sprint(r.DownsInBreach),
		att, mark(r.Verdict.BelowStatic), mark(r.Verdict.BelowStaticE2E), near, nearE2E, mark(r.Verdict.NoKills), mark(r.Verdict.FewFlaps), mark(r.Verdict.NoDownInBreach), mark(r.Verdict.All())}
}

// staticCells is a static fleet's size and GPU-hours ("none" when no
// fleet up to the maximum qualifies).
func staticCells(n int, gpuHours float64) (string, string) {
	if n == 0 {
		return "none", "-"
	}
	return fmt.Sprint(n), fmt.Sprintf("%.2f", gpuHours)
}

func pct(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) }

// WriteTable prints one aligned row per cell and the summary line.
func WriteTable(w io.Writer, rows []Row) error {
	return writeAligned(w, header, mapRows(rows, cells), Summarise(rows).String())
}

// WriteMarkdown prints the same as a Markdown table and summary line.
func WriteMarkdown(w io.Writer, rows []Row) error {
	return writeMarkdown(w, header, mapRows(rows, cells), Summarise(rows).String())
}

// mapRows is each row's cells.
func mapRows[R any](rows []R, cells func(R) []string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = cells(r)
	}
	return out
}

// writeAligned prints the header and rows aligned, then the tail lines.
func writeAligned(w io.Writer, header []string, rows [][]string, tail string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the bar table: %w", err)
	}
	if _, err := fmt.Fprintln(w, tail); err != nil {
		return fmt.Errorf("writing the bar table: %w", err)
	}
	return nil
}

// writeMarkdown prints the header and rows as a Markdown table, then the
// tail after a blank line.
func writeMarkdown(w io.Writer, header []string, rows [][]string, tail string) error {
	var b strings.Builder
	b.WriteString(markdownHead(header))
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	// Each line of the tail is a paragraph of its own.
	b.WriteString("\n" + strings.ReplaceAll(tail, "\n", "\n\n") + "\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing the bar table: %w", err)
	}
	return nil
}

// markdownHead is a Markdown table's header and alignment lines: the
// first column left, the others right.
func markdownHead(cols []string) string {
	return "| " + strings.Join(cols, " | ") + " |\n|---|" + strings.Repeat("--:|", len(cols)-1) + "\n"
}
