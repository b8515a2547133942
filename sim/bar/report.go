package bar

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
)

// ReportFormat names the layout of a Report; bump its version when a
// field changes meaning (adding one does not).
const ReportFormat = "inferscale-bar/1"

// Report is a bar run as data (simulate bar -json): what bar-diff
// compares across two revisions.
type Report struct {
	Format string   `json:"format"`
	Policy string   `json:"policy"`
	Args   []string `json:"args"` // the bar command's flags
	Rows   []Row    `json:"rows"`
	// PDPolicy is the P/D cells' policy pair under test, "prefill +
	// decode"; PDRows are those cells (simulate bar -pd).
	PDPolicy string  `json:"pdPolicy,omitempty"`
	PDRows   []PDRow `json:"pdRows,omitempty"`
}

// WriteReport writes r as indented JSON.
func WriteReport(w io.Writer, r Report) error {
	r.Format = ReportFormat
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the bar report: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing the bar report: %w", err)
	}
	return nil
}

// ReadReport decodes and checks a report: its format, at least one row
// (unified or P/D), every row named once, attainments in [0, 1] and
// GPU-hours ≥ 0. Fields
// it does not know are ignored (a later revision's additions).
func ReadReport(rd io.Reader) (Report, error) {
	var r Report
	if err := json.NewDecoder(rd).Decode(&r); err != nil {
		return Report{}, fmt.Errorf("not a bar report (simulate bar -json): %w", err)
	}
	if r.Format != ReportFormat {
		return Report{}, fmt.Errorf("bar report format %q, want %q", r.Format, ReportFormat)
	}
	if len(r.Rows)+len(r.PDRows) == 0 {
		return Report{}, errors.New("bar report has no rows")
	}
	seen := map[string]bool{}
	for i, row := range r.Rows {
		switch {
		case row.Case == "":
			return Report{}, fmt.Errorf("bar report row %d has no case name", i)
		case seen[row.Case]:
			return Report{}, fmt.Errorf("bar report names cell %s twice", row.Case)
		case !unit(row.Attainment):
			return Report{}, fmt.Errorf("bar report cell %s: attainment %g outside [0, 1]", row.Case, row.Attainment)
		case row.GPUHours < 0 || row.FlapsPerHour < 0:
			return Report{}, fmt.Errorf("bar report cell %s: negative GPU-hours or flaps", row.Case)
		}
		seen[row.Case] = true
	}
	for i, row := range r.PDRows {
		if err := checkPDRow(i, row, seen); err != nil {
			return Report{}, err
		}
		seen[row.Case] = true
	}
	return r, nil
}

// checkPDRow checks one P/D row of a report (seen: the cells before it).
func checkPDRow(i int, row PDRow, seen map[string]bool) error {
	switch {
	case row.Case == "":
		return fmt.Errorf("bar report P/D row %d has no case name", i)
	case seen[row.Case]:
		return fmt.Errorf("bar report names cell %s twice", row.Case)
	case !unit(row.UserAttainment) || !unit(row.ITLAttainment):
		return fmt.Errorf("bar report cell %s: attainment %g or %g outside [0, 1]", row.Case, row.UserAttainment, row.ITLAttainment)
	case row.PrefillGPUHours < 0 || row.DecodeGPUHours < 0 || row.PrefillFlapsPerHour < 0 || row.DecodeFlapsPerHour < 0:
		return fmt.Errorf("bar report cell %s: negative GPU-hours or flaps", row.Case)
	}
	return nil
}

func unit(v float64) bool { return v >= 0 && v <= 1 && !math.IsNaN(v) }
