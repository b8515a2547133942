package bar

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Delta is what moved between two bar runs of the same cells: the cells
// whose figures or verdict differ, the cells only one run has, and the
// cells passing each criterion in each run.
type Delta struct {
	Old, New Report
	Moved    []Move   // in the new run's order
	Same     int      // cells in both runs that did not move
	OnlyOld  []string // cells the new run lacks
	OnlyNew  []string // cells the old run lacks
	Before   Summary  // the old run's counts, all its cells
	After    Summary  // the new run's
}

// Move is one cell in both runs whose row differs.
type Move struct{ Old, New Row }

// Diff compares two reports cell by cell (by name).
func Diff(old, new Report) Delta {
	d := Delta{Old: old, New: new, Before: Summarise(old.Rows), After: Summarise(new.Rows)}
	byName := make(map[string]Row, len(old.Rows))
	for _, r := range old.Rows {
		byName[r.Case] = r
	}
	inNew := make(map[string]bool, len(new.Rows))
	for _, r := range new.Rows {
		inNew[r.Case] = true
		o, ok := byName[r.Case]
		switch {
		case !ok:
			d.OnlyNew = append(d.OnlyNew, r.Case)
		case sameRow(o, r):
			d.Same++
		default:
			d.Moved = append(d.Moved, Move{Old: o, New: r})
		}
	}
	for _, r := range old.Rows {
		if !inNew[r.Case] {
			d.OnlyOld = append(d.OnlyOld, r.Case)
		}
	}
	return d
}

// Unchanged reports whether no cell moved and both runs have the same cells.
func (d Delta) Unchanged() bool {
	return len(d.Moved) == 0 && len(d.OnlyOld) == 0 && len(d.OnlyNew) == 0
}

// sameRow compares every figure and criterion of two rows exactly.
func sameRow(a, b Row) bool {
	va, vb := a.Verdict, b.Verdict
	a.Verdict, b.Verdict = Verdict{}, Verdict{}
	return a == b && slices.Equal(verdictMarks(va), verdictMarks(vb)) && va.AttainmentBar == vb.AttainmentBar
}

// criterionNames label verdictMarks' entries and Summary.counts'.
var criterionNames = []string{"att", "<static", "≤1.15×orc", "0 killed", "flaps", "no down@breach", "all"}

// verdictMarks are a verdict's criteria as pass, FAIL or n/a.
func verdictMarks(v Verdict) []string {
	near := "n/a"
	if v.NearOracle != nil {
		near = mark(*v.NearOracle)
	}
	return []string{mark(v.Attainment), mark(v.BelowStatic), near, mark(v.NoKills), mark(v.FewFlaps), mark(v.NoDownInBreach), mark(v.All())}
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
		{s.FewFlaps, s.Rows}, {s.NoDownInBreach, s.Rows}, {s.All, s.Rows}}
}

var deltaHeader = []string{"cell", "TTFT ok", "GPU-h", "new/old", "flaps/h", "killed", "down@breach", "static n", "criteria that changed"}

// WriteDelta prints the delta as Markdown, pasteable into a commit
// message: a heading line naming both runs, one row per moved cell, the
// cells only one run has, and per criterion the cells passing old → new.
func WriteDelta(w io.Writer, d Delta, oldLabel, newLabel string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "bar delta, %s → %s: policy %s, flags `%s`; %d cells in both, %d moved, %d unchanged\n",
		oldLabel, newLabel, fromTo(d.Old.Policy, d.New.Policy), fromTo(strings.Join(d.Old.Args, " "), strings.Join(d.New.Args, " ")),
		len(d.Moved)+d.Same, len(d.Moved), d.Same)
	if len(d.Moved) > 0 {
		b.WriteString("\n| " + strings.Join(deltaHeader, " | ") + " |\n|---|" + strings.Repeat("--:|", len(deltaHeader)-2) + "---|\n")
		for _, m := range d.Moved {
			b.WriteString("| " + strings.Join(moveCells(m), " | ") + " |\n")
		}
	}
	if len(d.OnlyOld) > 0 {
		fmt.Fprintf(&b, "\nonly in %s: %s\n", oldLabel, strings.Join(d.OnlyOld, ", "))
	}
	if len(d.OnlyNew) > 0 {
		fmt.Fprintf(&b, "\nonly in %s: %s\n", newLabel, strings.Join(d.OnlyNew, ", "))
	}
	b.WriteString("\ncells passing, old → new (each run's own cells):\n")
	before, after := d.Before.counts(), d.After.counts()
	for i, name := range criterionNames {
		o, n := before[i], after[i]
		eq := ""
		if o == n {
			eq = " (=)"
		}
		fmt.Fprintf(&b, "- %s: %d/%d → %d/%d%s\n", name, o[0], o[1], n[0], n[1], eq)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing the bar delta: %w", err)
	}
	return nil
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
	var changed []string
	om, nm := verdictMarks(o.Verdict), verdictMarks(n.Verdict)
	for i, name := range criterionNames {
		if om[i] != nm[i] {
			changed = append(changed, fmt.Sprintf("%s %s→%s", name, om[i], nm[i]))
		}
	}
	if len(changed) == 0 {
		changed = []string{"none"}
	}
	return []string{o.Case,
		fromTo(fmt.Sprintf("%.3f%%", 100*o.Attainment), fmt.Sprintf("%.3f%%", 100*n.Attainment)),
		fromTo(fmt.Sprintf("%.3f", o.GPUHours), fmt.Sprintf("%.3f", n.GPUHours)), ratio,
		fromTo(fmt.Sprintf("%.2f", o.FlapsPerHour), fmt.Sprintf("%.2f", n.FlapsPerHour)),
		fromTo(fmt.Sprint(o.Killed), fmt.Sprint(n.Killed)),
		fromTo(fmt.Sprint(o.DownsInBreach), fmt.Sprint(n.DownsInBreach)),
		fromTo(staticN(o), staticN(n)),
		strings.Join(changed, ", ")}
}

// fromTo is "a → b", or a alone where they are equal.
func fromTo(a, b string) string {
	if a == b {
		return a
	}
	return a + " → " + b
}
