package bar

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
)

// Delta is what moved between two bar runs of the same cells: the cells
// whose figures or verdict differ, the cells only one run has, and the
// cells passing each criterion in each run; unified and P/D cells apart.
type Delta struct {
	Old, New Report
	Moved    []Move   // in the new run's order
	Same     int      // cells in both runs that did not move
	OnlyOld  []string // cells the new run lacks
	OnlyNew  []string // cells the old run lacks
	Before   Summary  // the old run's counts, all its cells
	After    Summary  // the new run's

	PDMoved           []PDMove
	PDSame            int
	PDBefore, PDAfter PDSummary
}

// Move is one cell in both runs whose row differs.
type Move struct{ Old, New Row }

// PDMove is one P/D cell in both runs whose row differs.
type PDMove struct{ Old, New PDRow }

// Diff compares two reports cell by cell (by name).
func Diff(old, new Report) Delta {
	d := Delta{Old: old, New: new, Before: Summarise(old.Rows), After: Summarise(new.Rows),
		PDBefore: SummarisePD(old.PDRows), PDAfter: SummarisePD(new.PDRows)}
	var moved [][2]Row
	moved, d.Same, d.OnlyOld, d.OnlyNew = diffRows(old.Rows, new.Rows, func(r Row) string { return r.Case }, sameRow)
	for _, m := range moved {
		d.Moved = append(d.Moved, Move{Old: m[0], New: m[1]})
	}
	pdMoved, pdSame, pdOld, pdNew := diffRows(old.PDRows, new.PDRows, func(r PDRow) string { return r.Case },
		func(a, b PDRow) bool { return reflect.DeepEqual(a, b) })
	for _, m := range pdMoved {
		d.PDMoved = append(d.PDMoved, PDMove{Old: m[0], New: m[1]})
	}
	d.PDSame, d.OnlyOld, d.OnlyNew = pdSame, append(d.OnlyOld, pdOld...), append(d.OnlyNew, pdNew...)
	return d
}

// diffRows matches two runs' rows by name: the pairs that differ (in the
// new run's order), how many do not, and the names only one run has.
func diffRows[R any](old, new []R, name func(R) string, same func(a, b R) bool) (moved [][2]R, unmoved int, onlyOld, onlyNew []string) {
	byName := make(map[string]R, len(old))
	for _, r := range old {
		byName[name(r)] = r
	}
	inNew := make(map[string]bool, len(new))
	for _, r := range new {
		inNew[name(r)] = true
		o, ok := byName[name(r)]
		switch {
		case !ok:
			onlyNew = append(onlyNew, name(r))
		case same(o, r):
			unmoved++
		default:
			moved = append(moved, [2]R{o, r})
		}
	}
	for _, r := range old {
		if !inNew[name(r)] {
			onlyOld = append(onlyOld, name(r))
		}
	}
	return moved, unmoved, onlyOld, onlyNew
}

// Unchanged reports whether no cell moved and both runs have the same cells.
func (d Delta) Unchanged() bool {
	return len(d.Moved) == 0 && len(d.PDMoved) == 0 && len(d.OnlyOld) == 0 && len(d.OnlyNew) == 0
}

// sameRow compares every figure and criterion of two rows exactly.
func sameRow(a, b Row) bool {
	va, vb := a.Verdict, b.Verdict
	a.Verdict, b.Verdict = Verdict{}, Verdict{}
	return a == b && slices.Equal(verdictMarks(va), verdictMarks(vb)) && va.AttainmentBar == vb.AttainmentBar
}

// criterionNames label verdictMarks' entries and Summary.counts': the
// criteria, then the cost against the static fleet of both objectives
// (reported beside them).
var criterionNames = []string{"att", "<static", "≤1.15×orc", "0 killed", "flaps", "no down@breach", "all", "<static (E2E)", "≤1.15×orc (E2E)"}

// verdictMarks are a verdict's criteria as pass, FAIL or n/a.
func verdictMarks(v Verdict) []string {
	return []string{mark(v.Attainment), mark(v.BelowStatic), optMark(v.NearOracle), mark(v.NoKills), mark(v.FewFlaps), mark(v.NoDownInBreach), mark(v.All()),
		mark(v.BelowStaticE2E), optMark(v.NearOracleE2E)}
}

// optMark is a criterion that may not apply: pass, FAIL or n/a (nil).
func optMark(ok *bool) string {
	if ok == nil {
		return "n/a"
	}
	return mark(*ok)
}

// mark is a criterion's pass or FAIL.
func mark(ok bool) string {
	if ok {
		return "pass"
	}
	return "FAIL"
}

// counts are the summary's passing/applicable per criterionNames.
func (s Summary) counts() [][2]int {
	return [][2]int{{s.Attainment, s.Rows}, {s.BelowStatic, s.Rows}, {s.NearOracle, s.NearOracleOf}, {s.NoKills, s.Rows},
		{s.FewFlaps, s.Rows}, {s.NoDownInBreach, s.Rows}, {s.All, s.Rows}, {s.BelowStaticE2E, s.Rows}, {s.NearOracleE2E, s.NearOracleE2EOf}}
}

var deltaHeader = []string{"cell", "TTFT ok", "GPU-h", "new/old", "flaps/h", "killed", "down@breach", "static n", "criteria that changed"}

// WriteDelta prints the delta as Markdown, pasteable into a commit
// message: a heading line naming both runs, one row per moved cell, the
// cells only one run has, and per criterion the cells passing old → new
// (the P/D cells' apart, where either run has them).
func WriteDelta(w io.Writer, d Delta, oldLabel, newLabel string) error {
	var b strings.Builder
	moved, same := len(d.Moved)+len(d.PDMoved), d.Same+d.PDSame
	var policy []string
	if d.Old.Policy != "" || d.New.Policy != "" {
		policy = append(policy, "policy "+fromTo(d.Old.Policy, d.New.Policy))
	}
	if d.Old.PDPolicy != "" || d.New.PDPolicy != "" {
		policy = append(policy, "P/D pair "+fromTo(d.Old.PDPolicy, d.New.PDPolicy))
	}
	fmt.Fprintf(&b, "bar delta, %s → %s: %s, flags `%s`; %d cells in both, %d moved, %d unchanged\n",
		oldLabel, newLabel, strings.Join(policy, ", "), fromTo(strings.Join(d.Old.Args, " "), strings.Join(d.New.Args, " ")), moved+same, moved, same)
	if len(d.Moved) > 0 {
		b.WriteString("\n" + deltaHead(deltaHeader))
		for _, m := range d.Moved {
			b.WriteString("| " + strings.Join(moveCells(m), " | ") + " |\n")
		}
	}
	if len(d.PDMoved) > 0 {
		b.WriteString("\n" + deltaHead(pdDeltaHeader))
		for _, m := range d.PDMoved {
			b.WriteString("| " + strings.Join(pdMoveCells(m), " | ") + " |\n")
		}
	}
	if len(d.OnlyOld) > 0 {
		fmt.Fprintf(&b, "\nonly in %s: %s\n", oldLabel, strings.Join(d.OnlyOld, ", "))
	}
	if len(d.OnlyNew) > 0 {
		fmt.Fprintf(&b, "\nonly in %s: %s\n", newLabel, strings.Join(d.OnlyNew, ", "))
	}
	if len(d.Old.Rows)+len(d.New.Rows) > 0 {
		b.WriteString("\ncells passing, old → new (each run's own cells):\n")
		writeCounts(&b, criterionNames, d.Before.counts(), d.After.counts())
	}
	if len(d.Old.PDRows)+len(d.New.PDRows) > 0 {
		b.WriteString("\nP/D cells passing, old → new (each run's own cells):\n")
		writeCounts(&b, pdCriterionNames, d.PDBefore.counts(), d.PDAfter.counts())
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing the bar delta: %w", err)
	}
	return nil
}

// deltaHead is a delta table's header: the first and last columns left.
func deltaHead(cols []string) string {
	return "| " + strings.Join(cols, " | ") + " |\n|---|" + strings.Repeat("--:|", len(cols)-2) + "---|\n"
}

// writeCounts prints per criterion the cells passing old → new.
func writeCounts(b *strings.Builder, names []string, before, after [][2]int) {
	for i, name := range names {
		o, n := before[i], after[i]
		eq := ""
		if o == n {
			eq = " (=)"
		}
		fmt.Fprintf(b, "- %s: %d/%d → %d/%d%s\n", name, o[0], o[1], n[0], n[1], eq)
	}
}

var pdDeltaHeader = []string{"P/D cell", "user TTFT ok", "ITL ok", "GPU-h", "new/old", "flaps/h (P+D)", "killed (P+D)", "static pair", "criteria that changed"}

// pdMoveCells is a moved P/D cell's row, as moveCells.
func pdMoveCells(m PDMove) []string {
	o, n := m.Old, m.New
	ratio := "-"
	if o.GPUHours() > 0 {
		ratio = fmt.Sprintf("%.3f", n.GPUHours()/o.GPUHours())
	}
	static := func(r PDRow) string {
		if r.StaticPrefill == 0 {
			return "none"
		}
		return fmt.Sprintf("%d+%d", r.StaticPrefill, r.StaticDecode)
	}
	changed := changedMarks(pdCriterionNames, pdVerdictMarks(o.Verdict), pdVerdictMarks(n.Verdict))
	return []string{o.Case,
		fromTo(fmt.Sprintf("%.3f%%", 100*o.UserAttainment), fmt.Sprintf("%.3f%%", 100*n.UserAttainment)),
		fromTo(fmt.Sprintf("%.3f%%", 100*o.ITLAttainment), fmt.Sprintf("%.3f%%", 100*n.ITLAttainment)),
		fromTo(fmt.Sprintf("%.3f", o.GPUHours()), fmt.Sprintf("%.3f", n.GPUHours())), ratio,
		fromTo(fmt.Sprintf("%.2f+%.2f", o.PrefillFlapsPerHour, o.DecodeFlapsPerHour), fmt.Sprintf("%.2f+%.2f", n.PrefillFlapsPerHour, n.DecodeFlapsPerHour)),
		fromTo(fmt.Sprintf("%d+%d", o.PrefillKilled, o.DecodeKilled), fmt.Sprintf("%d+%d", n.PrefillKilled, n.DecodeKilled)),
		fromTo(static(o), static(n)),
		changed}
}

// changedMarks lists the criteria whose mark changed ("none": none did).
func changedMarks(names, old, new []string) string {
	var changed []string
	for i, name := range names {
		if old[i] != new[i] {
			changed = append(changed, fmt.Sprintf("%s %s→%s", name, old[i], new[i]))
		}
	}
	if len(changed) == 0 {
		return "none"
	}
	return strings.Join(changed, ", ")
}

// moveCells is a moved cell's row: each figure as old → new where it
// moved, the GPU-hours' ratio, and the criteria whose mark changed.
func moveCells(m Move) []string {
	o, n := m.Old, m.New
	ratio := "-"
	if o.GPUHours > 0 {
		ratio = fmt.Sprintf("%.3f", n.GPUHours/o.GPUHours)
	}
	staticN := func(r Row) string {
		if r.StaticN == 0 {
			return "none"
		}
		return fmt.Sprint(r.StaticN)
	}
	changed := changedMarks(criterionNames, verdictMarks(o.Verdict), verdictMarks(n.Verdict))
	return []string{o.Case,
		fromTo(fmt.Sprintf("%.3f%%", 100*o.Attainment), fmt.Sprintf("%.3f%%", 100*n.Attainment)),
		fromTo(fmt.Sprintf("%.3f", o.GPUHours), fmt.Sprintf("%.3f", n.GPUHours)), ratio,
		fromTo(fmt.Sprintf("%.2f", o.FlapsPerHour), fmt.Sprintf("%.2f", n.FlapsPerHour)),
		fromTo(fmt.Sprint(o.Killed), fmt.Sprint(n.Killed)),
		fromTo(fmt.Sprint(o.DownsInBreach), fmt.Sprint(n.DownsInBreach)),
		fromTo(staticN(o), staticN(n)),
		changed}
}

// fromTo is "a → b", or a alone where they are equal.
func fromTo(a, b string) string {
	if a == b {
		return a
	}
	return a + " → " + b
}
