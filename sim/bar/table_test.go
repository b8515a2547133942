package bar

import (
	"strings"
	"testing"
)

// A cell over its static fleet whose oracle costs no less is one no policy
// without foresight can pass: the summary counts them apart, and only them.
func TestTheSummaryCountsTheCellsWhoseOracleIsNoCheaper(t *testing.T) {
	row := func(below, oracleOK bool, oracle float64, staticN int, attainment float64) Row {
		return Row{Attainment: attainment, OracleOK: oracleOK, OracleTarget: 0.99, OracleGPUHours: oracle,
			StaticN: staticN, StaticGPUHours: 10, Verdict: Verdict{BelowStatic: below}}
	}
	rows := []Row{
		row(true, true, 12, 5, 0.995),   // below static: not counted
		row(false, true, 10, 5, 0.99),   // the oracle costs the static fleet's: counted
		row(false, true, 11, 5, 0.995),  // the oracle costs more: counted
		row(false, true, 9.5, 5, 0.995), // a cheaper oracle: room left
		row(false, false, 0, 5, 0.995),  // no oracle found
		row(false, true, 12, 0, 0.995),  // no static fleet reaches the attainment
		// The policy missed the oracle's target: its static fleet is one
		// of a lower attainment, which a policy might beat.
		row(false, true, 12, 5, 0.97),
	}
	s := Summarise(rows)
	if s.OracleNoCheaper != 2 {
		t.Fatalf("OracleNoCheaper = %d, want 2", s.OracleNoCheaper)
	}
	if want := "GPU-h below static 1/7 (the oracle no cheaper than static in 2 of the 6 over it)"; !strings.Contains(s.String(), want) {
		t.Errorf("summary %q lacks %q", s.String(), want)
	}
}

// Beside the criteria, the summary counts the cells the oracle rule
// applies to that cost within 1.3 × the oracle, and the cells below the
// static fleet of both objectives.
func TestTheSummaryCountsTheLooseOracleBarAndTheStaticFleetOfBothObjectives(t *testing.T) {
	yes, no := true, false
	rows := []Row{
		{GPUHours: 11, OracleGPUHours: 10, Verdict: Verdict{NearOracle: &yes, BelowStaticE2E: true}}, // 1.1×
		{GPUHours: 13, OracleGPUHours: 10, Verdict: Verdict{NearOracle: &no}},                        // 1.3×: within
		{GPUHours: 13.1, OracleGPUHours: 10, Verdict: Verdict{NearOracle: &no}},                      // over
		{GPUHours: 30, OracleGPUHours: 10, Verdict: Verdict{BelowStaticE2E: true}},                   // a small oracle fleet: n/a
		// Against the oracle held to the end-to-end objective too: 1.2 ×.
		{GPUHours: 12, OracleGPUHours: 6, OracleE2EGPUHours: 10, Verdict: Verdict{NearOracle: &no, NearOracleE2E: &no}},
	}
	s := Summarise(rows)
	if s.NearOracle != 1 || s.NearOracleOf != 4 || s.NearOracleLoose != 2 || s.BelowStaticE2E != 2 ||
		s.NearOracleE2E != 0 || s.NearOracleE2ELoose != 1 || s.NearOracleE2EOf != 1 {
		t.Fatalf("summary %+v: want 1 of 4 within 1.15 ×, 2 within 1.3 ×, 2 below the static fleet of both objectives, "+
			"and 1 of 1 within 1.3 × the oracle of both", s)
	}
	for _, want := range []string{"GPU-h below the static fleet that meets the end-to-end objective too 2/5, ≤1.3×oracle 2/4",
		"against the oracle that meets the end-to-end objective too, ≤1.15× 0 and ≤1.3× 1 of 1"} {
		if !strings.Contains(s.String(), want) {
			t.Errorf("summary %q lacks %q", s.String(), want)
		}
	}
}

func TestThePDSummaryCountsThePairsWhoseOracleIsNoCheaper(t *testing.T) {
	pair := func(p, d float64) PDFigures { return PDFigures{PrefillGPUHours: p, DecodeGPUHours: d} }
	rows := []PDRow{
		{OracleOK: true, Oracle: pair(10.81, 1.97), StaticPrefill: 11, Static: pair(10.81, 1.97)}, // equal: counted
		{OracleOK: true, Oracle: pair(13.79, 3.71), StaticPrefill: 16, Static: pair(15.76, 3.95)}, // cheaper: room
		{OracleOK: true, Oracle: pair(1, 1), StaticPrefill: 1, Static: pair(5, 5), Verdict: PDVerdict{BelowStatic: true}},
	}
	s := SummarisePD(rows)
	if s.OracleNoCheaper != 1 || !strings.Contains(s.String(), "GPU-h below the static pair 1/3 (the oracle no cheaper than static in 1 of the 2 over it)") {
		t.Errorf("OracleNoCheaper = %d, summary %q", s.OracleNoCheaper, s.String())
	}
}
