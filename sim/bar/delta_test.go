package bar

import (
	"bytes"
	"testing"
)

func TestReportRoundTripsAndDiffComparesVerdictsByValue(t *testing.T) {
	near := true
	r := Row{Case: "demo-x4/s1/gpu×1/60s", Attainment: 0.995, GPUHours: 12.5, StaticN: 14, StaticGPUHours: 14,
		OracleOK: true, OracleMeanFleet: 9, OracleGPUHours: 11}
	DefaultSettings().Judge(&r)
	r.Verdict.NearOracle = &near
	var b bytes.Buffer
	if err := WriteReport(&b, Report{Policy: "inferscale", Args: []string{"-quick=true"}, Rows: []Row{r}}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadReport(&b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Format != ReportFormat || got.Rows[0].Verdict.NearOracle == nil || !*got.Rows[0].Verdict.NearOracle {
		t.Fatalf("round trip lost the format or the ≤1.15×oracle verdict: %+v", got)
	}
	// A different pointer to the same verdict is no move.
	if d := Diff(Report{Rows: []Row{r}}, got); !d.Unchanged() || d.Same != 1 {
		t.Errorf("a row against its own round trip moved: %+v", d)
	}
	moved := got.Rows[0]
	off := false
	moved.Verdict.NearOracle = &off
	if d := Diff(Report{Rows: []Row{r}}, Report{Rows: []Row{moved}}); len(d.Moved) != 1 {
		t.Errorf("a flipped ≤1.15×oracle verdict did not move the row: %+v", d)
	}
}
