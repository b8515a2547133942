package report

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// SweepPoint is one policy's outcome at one value of the swept setting.
type SweepPoint struct {
	Value float64
	Row   Row
}

// PlotSweep writes a PNG of TTFT attainment (top) and GPU-hours ÷ oracle
// (bottom) against the swept setting, one line per policy: the picture of
// an SLA cliff as startup time or metric lag grows.
func PlotSweep(path, title, xlabel string, target float64, series map[string][]SweepPoint, order []string) error {
	att, cost, err := sweepPlots(title, xlabel, target, series, order)
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	const w, h = 10 * vg.Inch, 8 * vg.Inch
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8), PadY: vg.Points(6)}
	plots := [][]*plot.Plot{{att}, {cost}}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	return savePNG(img, path)
}

// sweepPlots builds the two panels over one x range.
func sweepPlots(title, xlabel string, target float64, series map[string][]SweepPoint, order []string) (att, cost *plot.Plot, err error) {
	att = plot.New()
	att.Title.Text = title
	att.Y.Label.Text = "TTFT attainment (%)"
	cost = plot.New()
	cost.Y.Label.Text = "GPU-hours ÷ oracle"
	cost.X.Label.Text = xlabel
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for i, name := range order {
		pts := series[name]
		var a, c plotter.XYs
		for _, p := range pts {
			a = append(a, plotter.XY{X: p.Value, Y: 100 * p.Row.FeasibleAttainment})
			if p.Row.VsOracle == p.Row.VsOracle { // not NaN
				c = append(c, plotter.XY{X: p.Value, Y: p.Row.VsOracle})
			}
			xmin, xmax = min(xmin, p.Value), max(xmax, p.Value)
		}
		col := palette()[i%len(palette())]
		for _, add := range []struct {
			p   *plot.Plot
			xys plotter.XYs
		}{{att, a}, {cost, c}} {
			if len(add.xys) == 0 {
				continue
			}
			l, s, err := plotter.NewLinePoints(add.xys)
			if err != nil {
				return nil, nil, err
			}
			l.Color, s.Color = col, col
			add.p.Add(l, s)
			if add.p == att {
				att.Legend.Add(name, l)
			}
		}
	}
	if math.IsInf(xmin, 0) {
		return nil, nil, fmt.Errorf("no sweep points")
	}
	if tl, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: 100 * target}, {X: xmax, Y: 100 * target}}); err == nil {
		tl.Color = color.Gray{Y: 0x80}
		tl.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		att.Add(tl)
		att.Legend.Add(fmt.Sprintf("target %.0f%%", 100*target), tl)
	}
	// Both panels over the swept values only, so they line up.
	for _, p := range []*plot.Plot{att, cost} {
		p.X.Min, p.X.Max = xmin, xmax
	}
	att.Legend.Left = true
	att.Legend.Top = false
	return att, cost, nil
}
