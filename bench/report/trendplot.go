package report

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// TrendLine is one sampled series with its fitted line.
type TrendLine struct {
	Name  string
	X, Y  []float64 // X in seconds since the start
	Trend Trend
}

// TrendPanel is one quantity (RSS, goroutines, ...) for several processes.
type TrendPanel struct {
	Title, YLabel string
	Lines         []TrendLine
}

// TrendPlot draws the panels one above the other, each line's samples as
// points and its fitted line dashed, into one SVG.
func TrendPlot(path string, panels []TrendPanel) error {
	const w, rowH = 16 * vg.Centimeter, 7 * vg.Centimeter
	plots := make([][]*plot.Plot, len(panels))
	for r, panel := range panels {
		p := plot.New()
		p.BackgroundColor = color.White
		p.Title.Text = panel.Title
		p.X.Label.Text = "minutes"
		p.Y.Label.Text = panel.YLabel
		p.Y.Min = 0
		p.Add(plotter.NewGrid())
		for i, l := range panel.Lines {
			pts := make(plotter.XYs, len(l.X))
			for k := range l.X {
				pts[k] = plotter.XY{X: l.X[k] / 60, Y: l.Y[k]}
			}
			line, points, err := plotter.NewLinePoints(pts)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", path, l.Name, err)
			}
			line.Color, points.Color = plotutil.Color(i), plotutil.Color(i)
			points.Shape = plotutil.Shape(i)
			p.Add(line, points)
			p.Legend.Add(fmt.Sprintf("%s (%+.3g/h)", l.Name, l.Trend.Slope), line, points)
			if l.Trend.Samples >= MinTrendSamples && len(l.X) > 1 {
				fit := plotter.XYs{}
				for _, x := range []float64{l.X[0], l.X[len(l.X)-1]} {
					fit = append(fit, plotter.XY{X: x / 60, Y: l.Trend.Intercept + l.Trend.Slope/3600*x})
				}
				fl, err := plotter.NewLine(fit)
				if err != nil {
					return err
				}
				fl.Color = plotutil.Color(i)
				fl.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
				p.Add(fl)
			}
		}
		p.Legend.Top = false
		p.Legend.Left = true
		plots[r] = []*plot.Plot{p}
	}
	img := vgsvg.New(w, rowH*vg.Length(len(panels)))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadX: vg.Millimeter, PadY: 2 * vg.Millimeter,
		PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
	canvases := plot.Align(plots, tiles, dc)
	for r := range plots {
		plots[r][0].Draw(canvases[r][0])
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := img.WriteTo(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
