package report

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/inferscale/inferscale/shared/decisionlog"
	"github.com/inferscale/inferscale/sim/engine"
)

// GapFactor: an interval between two decisions longer than this many
// median ticks is a gap in the log (evaluate down, a lost log chunk); the
// summary does not integrate replicas or latency across it.
const GapFactor = 4

// MaxDecisionSpan bounds the time one summary covers: durations past a few
// centuries overflow (a log from year 1 to 9999 printed "over -2ns" and
// 1e25 GPU-hours).
const MaxDecisionSpan = 10 * 365 * 24 * time.Hour

// DecisionSummary is what a decision log says about an autoscaler's run.
type DecisionSummary struct {
	Decisions  int
	Duplicates int // lines with the time of an earlier line, dropped
	Start, End time.Time
	Tick       time.Duration // median interval between decisions
	Modes      []string      // distinct modes, sorted
	SLOSeconds float64

	// Target changes are what inferscale decided (in advisory mode, what it
	// would have done); current changes are what the fleet did.
	TargetUps, TargetDowns   int
	TargetFlaps              int // direction reversals within FlapWindowSeconds
	CurrentUps, CurrentDowns int
	CurrentFlaps             int

	// Covered is the time the log covers (gaps excluded: the decision
	// before one counts for a tick); Gaps counts them.
	Covered time.Duration
	Gaps    int
	// TTFTKnown is the covered time with a TTFT p95 reading; AboveSLO the
	// part of it where the p95 was above the SLO.
	TTFTKnown, AboveSLO time.Duration
	// GPU-hours the targets would have cost, and the current replicas did
	// (replicas × GPUs per pod, integrated over the covered time).
	TargetGPUHours, CurrentGPUHours float64
	// RulesOver counts, per rule, the decisions where it was over threshold.
	RulesOver map[string]int
	// AlertTicks counts decisions that raised an alert.
	AlertTicks int
	// Plan is what the targets cost beyond policy v2's need, where the
	// lines carry its plan.
	Plan PlanCost
}

// PlanCost splits the GPU-hours of the targets in the ticks with a plan:
// those of the plan's need, and those above it by what kept them. A tick's
// excess goes to the floor of a reactive scale-up where the floor reaches
// the target, else to the hold's window where the hold does, else to the
// other rules (a reactive step over the need).
type PlanCost struct {
	Covered                      time.Duration
	TargetGPUHours, NeedGPUHours float64
	FloorGPUHours, HoldGPUHours  float64
	StepGPUHours                 float64
}

// add counts one tick of dt hours (× GPUs per pod) at target pods.
func (c *PlanCost) add(p *decisionlog.Plan, target int, dt time.Duration, h float64) {
	c.Covered += dt
	c.TargetGPUHours += float64(target) * h
	c.NeedGPUHours += float64(min(p.Need, target)) * h
	over := float64(target-p.Need) * h
	switch {
	case over <= 0:
	case p.Floor >= target:
		c.FloorGPUHours += over
	case p.Hold >= target:
		c.HoldGPUHours += over
	default:
		c.StepGPUHours += over
	}
}

// SortDecisions orders lines by time and drops repeats of a time (the same
// log read twice); it returns how many were dropped.
func SortDecisions(lines []decisionlog.Line) ([]decisionlog.Line, int) {
	out := slices.Clone(lines)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	kept := out[:0]
	for i, l := range out {
		if i > 0 && l.Time.Equal(out[i-1].Time) {
			continue
		}
		kept = append(kept, l)
	}
	return kept, len(out) - len(kept)
}

// SummariseDecisions computes the summary; slo (seconds) of 0 takes the
// lines' own sloSeconds. gpusPerPod converts replicas to GPUs.
func SummariseDecisions(lines []decisionlog.Line, slo, gpusPerPod float64) (DecisionSummary, error) {
	if len(lines) == 0 {
		return DecisionSummary{}, errors.New("no decisions")
	}
	if !(gpusPerPod > 0) || math.IsInf(gpusPerPod, 0) {
		return DecisionSummary{}, fmt.Errorf("GPUs per pod %g: want a finite number > 0", gpusPerPod)
	}
	ls, dup := SortDecisions(lines)
	s := DecisionSummary{Decisions: len(ls), Duplicates: dup, Start: ls[0].Time, End: ls[len(ls)-1].Time, RulesOver: map[string]int{}}
	if span := s.End.Sub(s.Start); span > MaxDecisionSpan {
		return s, fmt.Errorf("the decisions span %s to %s, more than %.0f years: not one autoscaler's log (a clock far off?)",
			s.Start.Format(time.RFC3339), s.End.Format(time.RFC3339), MaxDecisionSpan.Hours()/24/365)
	}
	if slo == 0 {
		slo = ls[len(ls)-1].SLOSeconds
	}
	if !(slo > 0) || math.IsInf(slo, 0) {
		return s, errors.New("no TTFT SLO: the lines carry none and none was given")
	}
	s.SLOSeconds = slo
	s.Tick = medianTick(ls)
	modes := map[string]bool{}
	var targetEv, currentEv []engine.ScaleEvent
	for i, l := range ls {
		modes[l.Mode] = true
		t := l.Time.Sub(s.Start).Seconds()
		if i > 0 {
			prev := ls[i-1]
			if l.Target != prev.Target {
				targetEv = append(targetEv, engine.ScaleEvent{T: t, From: prev.Target, To: l.Target})
			}
			if l.Current != prev.Current {
				currentEv = append(currentEv, engine.ScaleEvent{T: t, From: prev.Current, To: l.Current})
			}
		}
		for _, r := range l.Rules {
			if r.Over {
				s.RulesOver[r.Name]++
			}
		}
		if len(l.Alerts) > 0 {
			s.AlertTicks++
		}
		dt := s.Tick
		if i+1 < len(ls) {
			dt = ls[i+1].Time.Sub(l.Time)
		}
		if dt > GapFactor*s.Tick {
			s.Gaps++ // the decision before a gap counts for one tick
			dt = s.Tick
		}
		s.Covered += dt
		h := dt.Hours() * gpusPerPod
		s.TargetGPUHours += float64(l.Target) * h
		s.CurrentGPUHours += float64(l.Current) * h
		if l.Plan != nil {
			s.Plan.add(l.Plan, l.Target, dt, h)
		}
		if p := l.Fleet.TTFTP95; p != nil {
			s.TTFTKnown += dt
			if *p > slo {
				s.AboveSLO += dt
			}
		}
	}
	s.TargetUps, s.TargetDowns = upsDowns(targetEv)
	s.CurrentUps, s.CurrentDowns = upsDowns(currentEv)
	s.TargetFlaps, s.CurrentFlaps = Flaps(targetEv), Flaps(currentEv)
	for m := range modes {
		s.Modes = append(s.Modes, m)
	}
	sort.Strings(s.Modes)
	return s, nil
}

// medianTick is the median interval between consecutive decisions (CPA's
// interval; 15 s when there is only one decision).
func medianTick(ls []decisionlog.Line) time.Duration {
	if len(ls) < 2 {
		return 15 * time.Second
	}
	d := make([]time.Duration, 0, len(ls)-1)
	for i := 1; i < len(ls); i++ {
		d = append(d, ls[i].Time.Sub(ls[i-1].Time))
	}
	slices.Sort(d)
	return d[len(d)/2]
}

func upsDowns(ev []engine.ScaleEvent) (int, int) {
	up, down := 0, 0
	for _, e := range ev {
		if e.To > e.From {
			up++
		} else {
			down++
		}
	}
	return up, down
}

// Write prints the summary for an SRE.
func (s DecisionSummary) Write(w io.Writer) error {
	span := s.End.Sub(s.Start)
	var b strings.Builder
	fmt.Fprintf(&b, "decisions: %d from %s to %s (%s), mode %s, tick %s\n", s.Decisions,
		s.Start.UTC().Format(time.RFC3339), s.End.UTC().Format(time.RFC3339), span, strings.Join(s.Modes, "+"), s.Tick)
	fmt.Fprintf(&b, "scale events (target): %d (%d up, %d down), flaps %d (reversals within %ds)\n",
		s.TargetUps+s.TargetDowns, s.TargetUps, s.TargetDowns, s.TargetFlaps, FlapWindowSeconds)
	fmt.Fprintf(&b, "scale events (current replicas): %d (%d up, %d down), flaps %d\n",
		s.CurrentUps+s.CurrentDowns, s.CurrentUps, s.CurrentDowns, s.CurrentFlaps)
	share := 0.0
	if s.TTFTKnown > 0 {
		share = 100 * s.AboveSLO.Seconds() / s.TTFTKnown.Seconds()
	}
	fmt.Fprintf(&b, "TTFT p95 above the %gs SLO: %s of %s with a reading (%.1f%%)\n", s.SLOSeconds, s.AboveSLO, s.TTFTKnown, share)
	ratio := math.NaN()
	if s.CurrentGPUHours > 0 {
		ratio = s.TargetGPUHours / s.CurrentGPUHours
	}
	fmt.Fprintf(&b, "GPU-hours: targets %.2f, current replicas %.2f (targets ÷ current %.3f) over %s\n",
		s.TargetGPUHours, s.CurrentGPUHours, ratio, s.Covered)
	if len(s.RulesOver) > 0 {
		names := make([]string, 0, len(s.RulesOver))
		for n := range s.RulesOver {
			names = append(names, n)
		}
		sort.Strings(names)
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = fmt.Sprintf("%s %d", n, s.RulesOver[n])
		}
		fmt.Fprintf(&b, "rules over threshold (decisions): %s\n", strings.Join(parts, ", "))
	}
	if c := s.Plan; c.Covered > 0 {
		fmt.Fprintf(&b, "plan (policy v2, %s of it): targets %.2f GPU-hours, its need %.2f; above the need, kept by the floor of reactive scale-ups %.2f, by the hold's window %.2f, asked by other rules %.2f\n",
			c.Covered, c.TargetGPUHours, c.NeedGPUHours, c.FloorGPUHours, c.HoldGPUHours, c.StepGPUHours)
	}
	fmt.Fprintf(&b, "alerts: %d decisions; gaps: %d (intervals over %d ticks, not integrated); duplicate times dropped: %d\n",
		s.AlertTicks, s.Gaps, GapFactor, s.Duplicates)
	_, err := io.WriteString(w, b.String())
	return err
}

// PlotDecisions writes a PNG of a decision log: the arrival rate, current
// and target replicas, TTFT p95 against the SLO (log scale) and, per rule,
// the decisions where it was over threshold (and those with alerts).
func PlotDecisions(path, title string, lines []decisionlog.Line, slo float64) error {
	ls, _ := SortDecisions(lines)
	if len(ls) == 0 {
		return fmt.Errorf("plot %s: no decisions", path)
	}
	start := ls[0].Time
	hours := ls[len(ls)-1].Time.Sub(start) >= 6*time.Hour
	xOf := func(t time.Time) float64 {
		if hours {
			return t.Sub(start).Hours()
		}
		return t.Sub(start).Minutes()
	}
	xlabel := "time since " + start.UTC().Format("2006-01-02 15:04:05Z") + " (min)"
	if hours {
		xlabel = strings.Replace(xlabel, "(min)", "(h)", 1)
	}

	var load, cur, tgt, lat, need, hold plotter.XYs
	rows := ruleRows(ls)
	marks := make([]plotter.XYs, len(rows))
	for _, l := range ls {
		x := xOf(l.Time)
		if p := l.Fleet.ArrivalRate; p != nil {
			load = append(load, plotter.XY{X: x, Y: *p})
		}
		cur = append(cur, plotter.XY{X: x, Y: float64(l.Current)})
		tgt = append(tgt, plotter.XY{X: x, Y: float64(l.Target)})
		if p := l.Plan; p != nil {
			need = append(need, plotter.XY{X: x, Y: float64(p.Need)})
			hold = append(hold, plotter.XY{X: x, Y: float64(p.Hold)})
		}
		if p := l.Fleet.TTFTP95; p != nil {
			lat = append(lat, plotter.XY{X: x, Y: math.Min(math.Max(*p, 0.01), 1000)})
		}
		for i, name := range rows {
			if over(l, name) {
				marks[i] = append(marks[i], plotter.XY{X: x, Y: float64(i)})
			}
		}
	}
	first, last := 0.0, xOf(ls[len(ls)-1].Time)

	pLoad := plot.New()
	pLoad.Title.Text = title
	pLoad.Y.Label.Text = "arrival rate (req/s)"
	if err := addLine(pLoad, load, color.Black, "", plotter.NoStep); err != nil {
		return err
	}

	pRep := plot.New()
	pRep.Y.Label.Text = "replicas"
	if err := addLine(pRep, cur, color.Black, "current", plotter.PostStep); err != nil {
		return err
	}
	if err := addLine(pRep, tgt, palette()[0], "target", plotter.PostStep); err != nil {
		return err
	}
	// Policy v2's plan: what it needs now, and the least a scale-down
	// keeps (the hold's window and the floor); a target above both was a
	// reactive step.
	if err := addLine(pRep, need, palette()[2], "plan's need", plotter.PostStep); err != nil {
		return err
	}
	if err := addLine(pRep, hold, palette()[4], "plan's hold", plotter.PostStep); err != nil {
		return err
	}
	if err := addBound(pRep, ls, xOf, math.Max(last, first+1e-9)); err != nil {
		return err
	}
	pRep.Legend.Top, pRep.Legend.Left = true, true
	pRep.Y.Min = 0

	pLat := plot.New()
	pLat.Y.Label.Text = "TTFT p95 (s, log)"
	pLat.Y.Scale = plot.LogScale{}
	pLat.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	if err := addLine(pLat, lat, palette()[1], "", plotter.NoStep); err != nil {
		return err
	}
	sl, err := plotter.NewLine(plotter.XYs{{X: first, Y: slo}, {X: math.Max(last, first+1e-9), Y: slo}})
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	sl.Color = color.Gray{Y: 0x80}
	sl.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	pLat.Add(sl)
	pLat.Legend.Add(fmt.Sprintf("SLO %gs", slo), sl)
	pLat.Y.Min, pLat.Y.Max = 0.01, 1000
	if len(lat) == 0 {
		// An empty panel must not read as "no latency": there were no readings.
		pLat.Title.Text = "no TTFT readings in this log"
	}

	pRules := plot.New()
	pRules.Y.Label.Text = "over threshold"
	pRules.X.Label.Text = xlabel
	var ticks plot.ConstantTicks
	for i, name := range rows {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: name})
		if len(marks[i]) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(marks[i])
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		sc.GlyphStyle.Color = palette()[(i+2)%len(palette())]
		sc.GlyphStyle.Shape = draw.BoxGlyph{}
		sc.GlyphStyle.Radius = vg.Points(1.5)
		pRules.Add(sc)
	}
	pRules.Y.Tick.Marker = ticks
	pRules.Y.Min, pRules.Y.Max = -0.5, math.Max(float64(len(rows))-0.5, 0.5)
	for _, p := range []*plot.Plot{pLoad, pRep, pLat, pRules} {
		p.X.Min, p.X.Max = first, math.Max(last, first+1e-9)
	}

	const w, h = 12 * vg.Inch, 13 * vg.Inch
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 4, Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8), PadY: vg.Points(6)}
	plots := [][]*plot.Plot{{pLoad}, {pRep}, {pLat}, {pRules}}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	return savePNG(img, path)
}

// addBound draws maxReplicas as the decisions logged it (a step line, as
// it may change), so a target flat at the cap reads as held there.
func addBound(p *plot.Plot, ls []decisionlog.Line, xOf func(time.Time) float64, end float64) error {
	var xys plotter.XYs
	for _, l := range ls {
		if l.MaxReplicas > 0 {
			xys = append(xys, plotter.XY{X: xOf(l.Time), Y: float64(l.MaxReplicas)})
		}
	}
	if len(xys) == 0 {
		return nil
	}
	xys = append(xys, plotter.XY{X: end, Y: xys[len(xys)-1].Y})
	ln, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	ln.Color = color.Gray{Y: 0x60}
	ln.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	ln.StepStyle = plotter.PostStep
	p.Add(ln)
	p.Legend.Add("maxReplicas", ln)
	return nil
}

// alertsRow is the marker row of decisions that raised an alert whose
// reason the line does not name (written before reasons were logged);
// alertPrefix starts the row of each named alert reason.
const (
	alertsRow   = "(alerts)"
	alertPrefix = "alert: "
)

// ruleRows lists the rule names in first-seen order, then one row per
// alert reason, and the unnamed alerts row if any line needs it.
func ruleRows(ls []decisionlog.Line) []string {
	var rules, alerts []string
	unnamed := false
	for _, l := range ls {
		for _, r := range l.Rules {
			if !slices.Contains(rules, r.Name) {
				rules = append(rules, r.Name)
			}
		}
		for _, a := range l.AlertReasons {
			if !slices.Contains(alerts, alertPrefix+a) {
				alerts = append(alerts, alertPrefix+a)
			}
		}
		unnamed = unnamed || (len(l.Alerts) > 0 && len(l.AlertReasons) == 0)
	}
	rows := append(rules, alerts...)
	if unnamed || len(alerts) == 0 {
		rows = append(rows, alertsRow)
	}
	return rows
}

func over(l decisionlog.Line, name string) bool {
	if name == alertsRow {
		return len(l.Alerts) > 0 && len(l.AlertReasons) == 0
	}
	if reason, ok := strings.CutPrefix(name, alertPrefix); ok {
		return slices.Contains(l.AlertReasons, reason)
	}
	for _, r := range l.Rules {
		if r.Name == name && r.Over {
			return true
		}
	}
	return false
}

func addLine(p *plot.Plot, xys plotter.XYs, c color.Color, legend string, step plotter.StepKind) error {
	if len(xys) == 0 {
		return nil
	}
	ln, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	ln.Color = c
	ln.Width = vg.Points(1)
	ln.StepStyle = step
	p.Add(ln)
	if legend != "" {
		p.Legend.Add(legend, ln)
	}
	return nil
}

// WriteTargetChanges lists the decisions that changed the target (the
// last max of them) with what decided each, like `kubectl describe` lists
// an HPA's events.
func WriteTargetChanges(w io.Writer, lines []decisionlog.Line, maxShown int) error {
	ls, _ := SortDecisions(lines)
	var changes []decisionlog.Line
	for i := 1; i < len(ls); i++ {
		if ls[i].Target != ls[i-1].Target {
			changes = append(changes, ls[i])
		}
	}
	var b strings.Builder
	shown := changes[max(0, len(changes)-maxShown):]
	fmt.Fprintf(&b, "target changes (%d, last %d shown):\n", len(changes), len(shown))
	for _, l := range shown {
		prev := l.Current
		fmt.Fprintf(&b, "  %s  %d → %d (current %d)  %s\n", l.Time.UTC().Format(time.RFC3339), prevTarget(ls, l), l.Target, prev, l.Why())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// prevTarget is the target of the decision before l.
func prevTarget(ls []decisionlog.Line, l decisionlog.Line) int {
	i := sort.Search(len(ls), func(i int) bool { return !ls[i].Time.Before(l.Time) })
	if i == 0 {
		return l.Target
	}
	return ls[i-1].Target
}
