package bar

import (
	"fmt"
	"io"
	"strings"
)

// PDSummary counts the P/D rows passing each criterion.
type PDSummary struct {
	Rows, UserAttainment, ITLAttainment, BelowStatic, BelowPeers, NoKills, FewFlaps, All int
	// OracleNoCheaper counts the rows over their static pair where the
	// oracle's pair, searched for no more than the policy pair's
	// attainments, costs at least as much (Summary.OracleNoCheaper).
	OracleNoCheaper int
}

// SummarisePD counts P/D rows.
func SummarisePD(rows []PDRow) PDSummary {
	s := PDSummary{Rows: len(rows)}
	for _, r := range rows {
		v := r.Verdict
		s.UserAttainment += b2i(v.UserAttainment)
		s.ITLAttainment += b2i(v.ITLAttainment)
		s.BelowStatic += b2i(v.BelowStatic)
		s.BelowPeers += b2i(v.BelowPeers)
		s.NoKills += b2i(v.NoKills)
		s.FewFlaps += b2i(v.FewFlaps)
		s.All += b2i(v.All())
		reached := r.UserAttainment >= r.OracleTarget && r.ITLAttainment >= r.OracleTarget
		s.OracleNoCheaper += b2i(!v.BelowStatic && r.StaticPrefill > 0 && reached && noCheaperOracle(r.OracleOK, r.Oracle.GPUHours(), r.Static.GPUHours()))
	}
	return s
}

// String is the summary line.
func (s PDSummary) String() string {
	return fmt.Sprintf("P/D cells passing: user TTFT attainment %d/%d, decode ITL attainment %d/%d, GPU-h below the static pair %d/%d (%s), below the peers of the same attainment %d/%d, 0 killed %d/%d, flaps ≤1/h per pool %d/%d; all criteria %d/%d",
		s.UserAttainment, s.Rows, s.ITLAttainment, s.Rows, s.BelowStatic, s.Rows, noCheaperNote(s.Rows-s.BelowStatic, s.OracleNoCheaper), s.BelowPeers, s.Rows, s.NoKills, s.Rows, s.FewFlaps, s.Rows, s.All, s.Rows)
}

// pdCriterionNames label pdVerdictMarks' entries and PDSummary.counts'.
var pdCriterionNames = []string{"user att", "itl att", "<static", "<peers", "0 killed", "flaps", "all"}

// pdVerdictMarks are a P/D verdict's criteria as pass or FAIL.
func pdVerdictMarks(v PDVerdict) []string {
	return []string{mark(v.UserAttainment), mark(v.ITLAttainment), mark(v.BelowStatic), mark(v.BelowPeers), mark(v.NoKills), mark(v.FewFlaps), mark(v.All())}
}

// counts are the summary's passing/applicable per pdCriterionNames.
func (s PDSummary) counts() [][2]int {
	return [][2]int{{s.UserAttainment, s.Rows}, {s.ITLAttainment, s.Rows}, {s.BelowStatic, s.Rows}, {s.BelowPeers, s.Rows},
		{s.NoKills, s.Rows}, {s.FewFlaps, s.Rows}, {s.All, s.Rows}}
}

var pdHeader = []string{"P/D case", "user TTFT ok", "ITL ok", "GPU-h (P+D)", "killed (P+D)", "flaps/h (P+D)", "oracle ok (TTFT/ITL)", "oracle GPU-h",
	"static pair", "static GPU-h", "peers: GPU-h (TTFT/ITL)", "user att", "itl att", "<static", "<peers", "0 killed", "flaps", "all"}

// attMark is a criterion's mark with its bar where that is below 99%.
func attMark(ok bool, bar float64) string {
	if bar < 0.99 {
		return mark(ok) + fmt.Sprintf(" (≥%s)", pct(bar))
	}
	return mark(ok)
}

func pdCells(r PDRow) []string {
	orcOK, orcGPU := "-", "-"
	if r.OracleOK {
		orcOK = pct(r.Oracle.UserAttainment) + "/" + pct(r.Oracle.ITLAttainment)
		orcGPU = fmt.Sprintf("%.2f", r.Oracle.GPUHours())
	}
	stN, stGPU := "none", "-"
	if r.StaticPrefill > 0 {
		stN, stGPU = fmt.Sprintf("%d+%d", r.StaticPrefill, r.StaticDecode), fmt.Sprintf("%.2f", r.Static.GPUHours())
	}
	peers := make([]string, len(r.Peers))
	for i, p := range r.Peers {
		peers[i] = fmt.Sprintf("%s: %.2f (%s/%s)", p.Name, p.GPUHours(), pct(p.UserAttainment), pct(p.ITLAttainment))
		if p.Compared {
			peers[i] += " *"
		}
	}
	if len(peers) == 0 {
		peers = []string{"-"}
	}
	v := r.Verdict
	return []string{r.Case, pct(r.UserAttainment), pct(r.ITLAttainment),
		fmt.Sprintf("%.2f (%.2f+%.2f)", r.GPUHours(), r.PrefillGPUHours, r.DecodeGPUHours),
		fmt.Sprintf("%d+%d", r.PrefillKilled, r.DecodeKilled), fmt.Sprintf("%.2f+%.2f", r.PrefillFlapsPerHour, r.DecodeFlapsPerHour),
		orcOK, orcGPU, stN, stGPU, strings.Join(peers, "; "),
		attMark(v.UserAttainment, v.UserBar), attMark(v.ITLAttainment, v.ITLBar), mark(v.BelowStatic), mark(v.BelowPeers),
		mark(v.NoKills), mark(v.FewFlaps), mark(v.All())}
}

// pdFootnote explains the peers column's mark.
const pdFootnote = "peers marked * reach the policy pair's user TTFT and ITL attainments, so <peers compares it with them"

// WritePDTable prints one aligned row per P/D cell, the peers' note and
// the summary line.
func WritePDTable(w io.Writer, rows []PDRow) error {
	return writeAligned(w, pdHeader, mapRows(rows, pdCells), pdFootnote+"\n"+SummarisePD(rows).String())
}

// WritePDMarkdown prints the same as a Markdown table.
func WritePDMarkdown(w io.Writer, rows []PDRow) error {
	return writeMarkdown(w, pdHeader, mapRows(rows, pdCells), pdFootnote+".\n\n"+SummarisePD(rows).String())
}
