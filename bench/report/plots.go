package report

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Series is one line of a plot: a measurement at several x values, each
// summarized over its runs (a single run has Min = Median = Max).
type Series struct {
	Name string
	X    []float64
	Y    []Stats
}

// withErrors is a line's points with their min..max spread, the shape
// plotter.NewYErrorBars takes.
type withErrors struct {
	plotter.XYs
	plotter.YErrors
}

// LinePlot draws each series as a line through its medians, with error bars
// from min to max where runs spread, and saves it as an SVG.
func LinePlot(path, title, xLabel, yLabel string, series []Series) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	for i, s := range series {
		pts := withErrors{XYs: make(plotter.XYs, len(s.X)), YErrors: make(plotter.YErrors, len(s.X))}
		spread := false
		for k := range s.X {
			y := s.Y[k]
			pts.XYs[k] = plotter.XY{X: s.X[k], Y: y.Median}
			pts.YErrors[k].Low, pts.YErrors[k].High = y.Median-y.Min, y.Max-y.Median
			spread = spread || y.Max > y.Min
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", path, s.Name, err)
		}
		line.Color, points.Color = plotutil.Color(i), plotutil.Color(i)
		points.Shape = plotutil.Shape(i)
		p.Add(line, points)
		p.Legend.Add(s.Name, line, points)
		if spread {
			bars, err := plotter.NewYErrorBars(pts)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", path, s.Name, err)
			}
			bars.Color = plotutil.Color(i)
			p.Add(bars)
		}
	}
	p.Legend.Top, p.Legend.Left = true, true
	return save(p, path, 14*vg.Centimeter, 9*vg.Centimeter)
}

// Bar is one bar of a bar chart.
type Bar struct {
	Label string
	Value float64
}

// BarPlot draws one horizontal bar per value (the labels are phrases), each
// labeled with its number, since values differ by orders of magnitude (a
// batched 51 next to an unbatched 5,000), and saves it as an SVG.
func BarPlot(path, title, valueLabel string, bars []Bar) error {
	if len(bars) == 0 {
		return nil
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = valueLabel
	p.X.Min = 0
	p.X.Tick.Marker = wholeTicks{}
	values := make(plotter.Values, len(bars))
	names := make([]string, len(bars))
	labels := plotter.XYLabels{XYs: make(plotter.XYs, len(bars)), Labels: make([]string, len(bars))}
	top := 0.0
	for i, b := range bars {
		k := len(bars) - 1 - i // the first bar on top
		values[k], names[k] = b.Value, b.Label
		labels.XYs[k] = plotter.XY{X: b.Value, Y: float64(k)}
		labels.Labels[k] = fmt.Sprintf("%.0f", b.Value)
		top = max(top, b.Value)
	}
	chart, err := plotter.NewBarChart(values, vg.Points(28))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	chart.Color = plotutil.Color(0)
	chart.LineStyle.Width = 0
	chart.Horizontal = true
	text, err := plotter.NewLabels(labels)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for k := range text.TextStyle {
		text.TextStyle[k].XAlign = 0    // right of the bar's end
		text.TextStyle[k].YAlign = -0.5 // centered on it
	}
	text.Offset.X = vg.Points(3)
	p.Add(plotter.NewGrid(), chart, text)
	p.NominalY(names...)
	p.X.Max = top * 1.15 // room for the longest bar's label
	height := 3*vg.Centimeter + vg.Length(len(bars))*0.9*vg.Centimeter
	return save(p, path, 16*vg.Centimeter, height)
}

// wholeTicks labels an axis of counts without decimals.
type wholeTicks struct{}

func (wholeTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for k := range ticks {
		if ticks[k].Label != "" {
			ticks[k].Label = strconv.FormatFloat(ticks[k].Value, 'f', -1, 64)
		}
	}
	return ticks
}

// CDFPlot draws the empirical distribution of each named sample (seconds)
// as a step line, and saves it as an SVG.
func CDFPlot(path, title, xLabel string, samples []Series) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = "fraction of nodes"
	p.Y.Min, p.Y.Max = 0, 1
	p.Add(plotter.NewGrid())
	for i, s := range samples {
		xs := slices.Clone(s.X)
		slices.Sort(xs)
		pts := make(plotter.XYs, 0, len(xs)+1)
		pts = append(pts, plotter.XY{X: 0, Y: 0})
		for k, x := range xs {
			pts = append(pts, plotter.XY{X: x, Y: float64(k+1) / float64(len(xs))})
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", path, s.Name, err)
		}
		line.StepStyle = plotter.PostStep
		line.Color = plotutil.Color(i)
		line.Dashes = plotutil.Dashes(i)
		p.Add(line)
		p.Legend.Add(s.Name, line)
	}
	p.Legend.Top = false
	return save(p, path, 14*vg.Centimeter, 9*vg.Centimeter)
}

func save(p *plot.Plot, path string, w, h vg.Length) error {
	p.BackgroundColor = color.White
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return p.Save(w, h, path)
}
