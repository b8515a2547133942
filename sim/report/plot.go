package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/inferscale/inferscale/sim/engine"
)

// maxPoints bounds the points per line (long traces are re-binned).
const maxPoints = 1500

// palette is the policies' colours, inferscale's (the first) red; none
// of the others is a red or a brown that reads as it. The oracle is drawn
// apart (oracleStyle).
func palette() []color.RGBA {
	return []color.RGBA{
		{R: 0xd6, G: 0x27, B: 0x28, A: 255}, {R: 0x1f, G: 0x77, B: 0xb4, A: 255}, {R: 0x2c, G: 0xa0, B: 0x2c, A: 255},
		{R: 0xff, G: 0x7f, B: 0x0e, A: 255}, {R: 0x94, G: 0x67, B: 0xbd, A: 255}, {R: 0x17, G: 0xbe, B: 0xcf, A: 255},
		{R: 0xbc, G: 0xbd, B: 0x22, A: 255}, {R: 0x7f, G: 0x7f, B: 0x7f, A: 255}, {R: 0xe3, G: 0x77, B: 0xc2, A: 255},
	}
}

// oracleName is the clairvoyant oracle's policy name, drawn black and
// dashed so it is never mistaken for a policy.
const oracleName = "oracle"

// lineStyle is the colour and dashes of the pi-th result's lines.
func lineStyle(pi int, policy string) (color.Color, []vg.Length) {
	if policy == oracleName {
		return color.Black, []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return palette()[pi%len(palette())], nil
}

// legendLabel names a policy with its outcome, so the figure carries the
// result without the table.
func legendLabel(r *engine.Result) string {
	return fmt.Sprintf("%s  %.2f%% in SLO, %.2f GPU-h", r.Policy, 100*r.FeasibleTTFTAttainment(), r.GPUHours())
}

// Plot writes a PNG with three stacked panels sharing the time axis: the
// arrival rate, every policy's pods (starting and draining included) and
// every policy's p95 TTFT per time slice (log scale, SLO marked).
func Plot(path, title string, results []*engine.Result) error {
	if len(results) == 0 {
		return fmt.Errorf("plot %s: no results", path)
	}
	base := results[0]
	group := max(1, (len(base.Bins)+maxPoints-1)/maxPoints)
	step := base.Config.BinSeconds * float64(group)
	minutes := step*float64(max(1, len(base.Bins)/group)) < 6*3600

	xOf := func(i int) float64 {
		t := float64(i) * step
		if minutes {
			return t / 60
		}
		return t / 3600
	}
	xlabel := "time (h)"
	if minutes {
		xlabel = "time (min)"
	}

	load := plot.New()
	load.Title.Text = title
	load.Y.Label.Text = "arrivals (req/s)"
	var pts plotter.XYs
	for i := 0; i*group < len(base.Bins); i++ {
		n := 0
		for k := i * group; k < min((i+1)*group, len(base.Bins)); k++ {
			n += base.Bins[k].Arrivals
		}
		pts = append(pts, plotter.XY{X: xOf(i), Y: float64(n) / step})
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	l.Color = color.Black
	load.Add(l)

	pods := plot.New()
	pods.Y.Label.Text = "pods (incl. starting/draining)"
	lat := plot.New()
	lat.Y.Label.Text = "p95 TTFT (s, log)"
	lat.X.Label.Text = xlabel
	lat.Y.Scale = plot.LogScale{}
	lat.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	slo := base.Config.TTFTSLOSeconds
	const floor, ceil = 0.01, 1000.0
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	for pi, r := range results {
		col, dashes := lineStyle(pi, r.Policy)
		var pp, lp plotter.XYs
		idx := 0
		for i := 0; i*group < len(r.Bins); i++ {
			peak := 0
			var seg []float32
			for k := i * group; k < min((i+1)*group, len(r.Bins)); k++ {
				peak = max(peak, r.Bins[k].Pods)
				a := r.Bins[k].Arrivals
				seg = append(seg, r.TTFT[min(idx, len(r.TTFT)):min(idx+a, len(r.TTFT))]...)
				idx += a
			}
			pp = append(pp, plotter.XY{X: xOf(i), Y: float64(peak)})
			if len(seg) > 0 {
				slices.Sort(seg)
				v := float64(seg[min(len(seg)-1, int(math.Ceil(0.95*float64(len(seg))))-1)])
				v = math.Min(math.Max(v, floor), ceil)
				lp = append(lp, plotter.XY{X: xOf(i), Y: v})
			}
		}
		for _, add := range []struct {
			p   *plot.Plot
			xys plotter.XYs
		}{{pods, pp}, {lat, lp}} {
			if len(add.xys) == 0 {
				continue
			}
			ln, err := plotter.NewLine(add.xys)
			if err != nil {
				return fmt.Errorf("plot: %w", err)
			}
			ln.Color = col
			ln.Dashes = dashes
			ln.Width = vg.Points(1.2)
			add.p.Add(ln)
			if add.p == pods {
				legend.Add(legendLabel(r), ln)
			}
		}
	}
	if len(pts) > 0 {
		// The replica cap: a policy flat at it was held there, not idle.
		cap := float64(base.Config.MaxReplicas)
		if cl, err := plotter.NewLine(plotter.XYs{{X: 0, Y: cap}, {X: pts[len(pts)-1].X, Y: cap}}); err == nil {
			cl.Color = color.Gray{Y: 0x60}
			cl.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
			pods.Add(cl)
			legend.Add(fmt.Sprintf("maxReplicas %d (the cap)", base.Config.MaxReplicas), cl)
		}
	}
	if len(pts) > 0 {
		sl, err := plotter.NewLine(plotter.XYs{{X: 0, Y: slo}, {X: pts[len(pts)-1].X, Y: slo}})
		if err == nil {
			sl.Color = color.Gray{Y: 0x80}
			sl.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			lat.Add(sl)
			legend.Add(fmt.Sprintf("TTFT SLO %.1fs", slo), sl)
		}
	}
	lat.Y.Min, lat.Y.Max = floor, ceil

	// One time axis for the three panels (a policy's pods may outlast
	// the last arrival while they drain).
	for _, p := range []*plot.Plot{load, pods, lat} {
		p.X.Min = 0
		p.X.Max = max(load.X.Max, pods.X.Max, lat.X.Max)
	}
	const w, h, legendWidth = 16 * vg.Inch, 11 * vg.Inch, 4.6 * vg.Inch
	img := vgimg.New(w, h)
	dc := draw.New(img)
	// The panels on the left, the legend beside them: never over a line.
	panels := draw.Crop(dc, 0, -legendWidth, 0, 0)
	tiles := draw.Tiles{Rows: 3, Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8), PadY: vg.Points(6)}
	plots := [][]*plot.Plot{{load}, {pods}, {lat}}
	canvases := plot.Align(plots, tiles, panels)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	legend.Draw(draw.Crop(dc, w-legendWidth, 0, -h/3, -vg.Points(24)))
	if err := savePNG(img, path); err != nil {
		return err
	}
	return nil
}
