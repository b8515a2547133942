package report

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferscale/inferscale/shared/decisionlog"
)

// A hand-made log with known answers: a tick of 15 s, an up-down flap, a
// later scale-down, one 10-minute gap, one duplicated line.
func TestSummariseDecisionsOnAKnownLog(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	type tick struct {
		at              time.Duration
		current, target int
		ttft            float64 // NaN: no reading
		over            bool
	}
	ticks := []tick{
		{0, 2, 2, 0.5, false},
		{15 * time.Second, 2, 4, 3.0, true}, // up
		{30 * time.Second, 4, 4, 2.5, true},
		{45 * time.Second, 4, 3, 1.0, false}, // down 30 s after an up: a flap
		{60 * time.Second, 3, 3, math.NaN(), false},
		{75 * time.Second, 3, 3, 0.4, false},
		// evaluate was down for 10 minutes
		{75*time.Second + 10*time.Minute, 3, 2, 0.3, false}, // down: not a flap
		{90*time.Second + 10*time.Minute, 2, 2, 0.3, false},
	}
	var lines []decisionlog.Line
	for _, k := range ticks {
		l := decisionlog.Line{Time: t0.Add(k.at), Mode: decisionlog.Advisory, Current: k.current, Target: k.target, SLOSeconds: 2,
			Rules: []decisionlog.Rule{{Name: "queue", Over: k.over}}, Fleet: decisionlog.Fleet{TTFTP95: decisionlog.F(k.ttft)}}
		if k.over {
			l.Alerts = []string{"x"}
		}
		lines = append(lines, l)
	}
	lines = append([]decisionlog.Line{lines[3]}, lines...) // out of order and duplicated
	s, err := SummariseDecisions(lines, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s.Decisions != 8 || s.Duplicates != 1 || s.Tick != 15*time.Second || s.Gaps != 1 || s.SLOSeconds != 2 {
		t.Errorf("counts: %+v", s)
	}
	if s.TargetUps != 1 || s.TargetDowns != 2 || s.TargetFlaps != 1 || s.CurrentUps != 1 || s.CurrentDowns != 2 || s.CurrentFlaps != 1 {
		t.Errorf("scale events: %+v", s)
	}
	// 8 ticks of 15 s each are covered (the one before the gap counts once).
	if s.Covered != 120*time.Second || s.TTFTKnown != 105*time.Second || s.AboveSLO != 30*time.Second {
		t.Errorf("covered %s, TTFT known %s, above SLO %s", s.Covered, s.TTFTKnown, s.AboveSLO)
	}
	// Targets 2+4+4+3+3+3+2+2 = 23 ticks·pods, current 2+2+4+4+3+3+3+2 = 23.
	if math.Abs(s.TargetGPUHours-23*15.0/3600) > 1e-12 || math.Abs(s.CurrentGPUHours-23*15.0/3600) > 1e-12 {
		t.Errorf("GPU-hours %g / %g", s.TargetGPUHours, s.CurrentGPUHours)
	}
	if s.RulesOver["queue"] != 2 || s.AlertTicks != 2 || len(s.Modes) != 1 || s.Modes[0] != "advisory" {
		t.Errorf("rules %v alerts %d modes %v", s.RulesOver, s.AlertTicks, s.Modes)
	}
	if s2, _ := SummariseDecisions(lines, 0.45, 8); s2.AboveSLO != 60*time.Second || math.Abs(s2.TargetGPUHours-8*s.TargetGPUHours) > 1e-12 {
		t.Errorf("explicit SLO 0.45 s and 8 GPUs per pod: above %s, GPU-h %g", s2.AboveSLO, s2.TargetGPUHours)
	}
	var b strings.Builder
	if err := s.Write(&b); err != nil || !strings.Contains(b.String(), "scale events (target): 3 (1 up, 2 down), flaps 1") {
		t.Errorf("written summary:\n%s", b.String())
	}
	b.Reset()
	if err := WriteTargetChanges(&b, lines, 2); err != nil {
		t.Fatal(err)
	}
	if want := "target changes (3, last 2 shown):\n  2026-12-01T12:00:45Z  4 → 3 (current 4)  \n  2026-12-01T12:11:15Z  3 → 2 (current 3)  \n"; b.String() != want {
		t.Errorf("target changes:\n%q\nwant\n%q", b.String(), want)
	}
	png := filepath.Join(t.TempDir(), "d.png")
	if err := PlotDecisions(png, "known", lines, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := SummariseDecisions(nil, 2, 1); err == nil {
		t.Error("no decisions: accepted")
	}
	lines[0].SLOSeconds, lines[len(lines)-1].SLOSeconds = 0, 0
	if _, err := SummariseDecisions(lines, 0, 1); err == nil {
		t.Error("no SLO anywhere: accepted")
	}
}

// The picture's marker rows name each alert reason the lines carry; an
// alert without a reason (an older line) keeps the unnamed row.
func TestRuleRowsNameTheAlerts(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	named := decisionlog.Line{Time: t0, Rules: []decisionlog.Rule{{Name: "queue", Over: true}},
		Alerts: []string{"maxReplicas blocks"}, AlertReasons: []string{"MaxReplicasReached"}}
	old := decisionlog.Line{Time: t0.Add(15 * time.Second), Alerts: []string{"stuck"}}
	rows := ruleRows([]decisionlog.Line{named, old})
	want := []string{"queue", "alert: MaxReplicasReached", alertsRow}
	if !slices.Equal(rows, want) {
		t.Fatalf("rows %q, want %q", rows, want)
	}
	if !over(named, "alert: MaxReplicasReached") || over(old, "alert: MaxReplicasReached") || !over(old, alertsRow) || over(named, alertsRow) {
		t.Error("alert rows marked on the wrong lines")
	}
	if rows := ruleRows([]decisionlog.Line{named}); slices.Contains(rows, alertsRow) {
		t.Errorf("an unnamed alerts row with every alert named: %q", rows)
	}
	path := filepath.Join(t.TempDir(), "d.png")
	named.MaxReplicas, old.MaxReplicas = 10, 10
	if err := PlotDecisions(path, "t", []decisionlog.Line{named, old}, 2); err != nil {
		t.Fatal(err)
	}
}

// N14 (issue 15): decisions centuries apart overflowed the summary's
// durations ("over -2ns") and gave 1e25 GPU-hours. A log spanning more
// than MaxDecisionSpan is refused; one just inside sums sensibly.
func TestDecisionsFarApartAreRefused(t *testing.T) {
	at := func(y int) decisionlog.Line {
		return decisionlog.Line{Time: time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC), Mode: decisionlog.Active, Current: 3, Target: 3, SLOSeconds: 2}
	}
	if _, err := SummariseDecisions([]decisionlog.Line{at(decisionlog.MinYear), at(decisionlog.MaxYear)}, 0, 1); err == nil || !strings.Contains(err.Error(), "years") {
		t.Errorf("a log over %d years: %v", decisionlog.MaxYear-decisionlog.MinYear, err)
	}
	s, err := SummariseDecisions([]decisionlog.Line{at(2026), at(2030), at(2034)}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s.Covered <= 0 || s.CurrentGPUHours <= 0 || s.CurrentGPUHours > 3*24*366*12 {
		t.Errorf("covered %s, GPU-hours %g", s.Covered, s.CurrentGPUHours)
	}
	var b strings.Builder
	if err := s.Write(&b); err != nil || strings.Contains(b.String(), "over -") {
		t.Errorf("summary: %v\n%s", err, b.String())
	}
}

// The targets' GPU-hours beyond policy v2's need are split by what kept
// them: the floor of a reactive scale-up, the hold's window, or another
// rule's step; lines without a plan count for none of it.
func TestThePlansCostIsSplitByWhatKeptTheFleet(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	plans := []struct {
		target int
		plan   *decisionlog.Plan
	}{
		{18, &decisionlog.Plan{Need: 7, Hold: 18, Floor: 18}}, // 11 over, the floor's
		{18, &decisionlog.Plan{Need: 7, Hold: 18, Floor: 12}}, // 11 over, the hold's
		{9, &decisionlog.Plan{Need: 7, Hold: 7}},              // 2 over, a step's
		{5, &decisionlog.Plan{Need: 7, Hold: 7}},              // under the need: its target
		{30, nil},                                             // policy v1: no plan
	}
	var lines []decisionlog.Line
	for i, p := range plans {
		lines = append(lines, decisionlog.Line{Time: t0.Add(time.Duration(i) * 15 * time.Second), Mode: decisionlog.Active,
			Current: p.target, Target: p.target, SLOSeconds: 2, Plan: p.plan})
	}
	s, err := SummariseDecisions(lines, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	h := 2 * 15.0 / 3600 // GPU-hours of one pod-tick at 2 GPUs per pod
	c := s.Plan
	for name, got := range map[string][2]float64{
		"targets": {c.TargetGPUHours, (18 + 18 + 9 + 5) * h},
		"need":    {c.NeedGPUHours, (7 + 7 + 7 + 5) * h},
		"floor":   {c.FloorGPUHours, 11 * h},
		"hold":    {c.HoldGPUHours, 11 * h},
		"steps":   {c.StepGPUHours, 2 * h},
	} {
		if math.Abs(got[0]-got[1]) > 1e-12 {
			t.Errorf("%s: %g GPU-hours, want %g", name, got[0], got[1])
		}
	}
	if c.Covered != 60*time.Second {
		t.Errorf("the plan covers %s, want the 4 ticks that carry one (60s)", c.Covered)
	}
	var b strings.Builder
	if err := s.Write(&b); err != nil || !strings.Contains(b.String(), "kept by the floor of reactive scale-ups 0.09") {
		t.Errorf("summary (%v):\n%s", err, b.String())
	}
	// The picture draws the need and the hold beside the target; a line
	// without a plan (policy v1) leaves a gap, not an error.
	png := filepath.Join(t.TempDir(), "plan.png")
	if err := PlotDecisions(png, "plan", lines, 2); err != nil {
		t.Fatal(err)
	}
}
