package report

import (
	"math"
	"os"
	"strings"
	"testing"
)

func TestFitTrend(t *testing.T) {
	// 61 samples every 30 s: half an hour.
	xs := make([]float64, 61)
	for i := range xs {
		xs[i] = float64(i * 30)
	}
	series := func(f func(i int) float64) []float64 {
		ys := make([]float64, len(xs))
		for i := range ys {
			ys[i] = f(i)
		}
		return ys
	}
	// noise is a fixed pattern around 0 (amplitude 1), so that the cases
	// are deterministic.
	noise := func(i int) float64 { return []float64{0.8, -0.6, 0.3, -1, 0.5, -0.2, 1, -0.7}[i%8] }
	tol := Tolerance{Abs: 2, Rel: 0.05}
	cases := []struct {
		name      string
		xs, ys    []float64
		wantPass  bool
		wantSlope float64 // per hour, roughly
		verdict   string
	}{
		{"constant", xs, series(func(int) float64 { return 100 }), true, 0, "flat"},
		{"flat noise", xs, series(func(i int) float64 { return 100 + 5*noise(i) }), true, 0, "holds 0"},
		// A leak: one unit per sample, 60 over the run on a mean of 130.
		{"a real leak", xs, series(func(i int) float64 { return 100 + float64(i) + noise(i) }), false, 120, "leak"},
		// A leak of one unit every 10 samples (a goroutine per few
		// operations) on a small series: beyond the absolute floor.
		{"a slow leak", xs, series(func(i int) float64 { return 20 + float64(i/10) }), false, 12, "leak"},
		// Growth the interval sees, but 1 % of the mean over the run.
		{"tiny drift", xs, series(func(i int) float64 { return 1000 + float64(i)/6 + 0.1*noise(i) }), true, 20, "within the tolerance"},
		// Memory given back: no leak.
		{"shrinking", xs, series(func(i int) float64 { return 200 - float64(i) + noise(i) }), true, -120, "lies below"},
		{"too few samples", xs[:4], []float64{1, 2, 3, 4}, false, 0, "too few samples"},
		{"lengths differ", xs[:6], []float64{1, 2, 3}, false, 0, "values"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := FitTrend(tc.xs, tc.ys, tol)
			if tr.Pass != tc.wantPass {
				t.Errorf("pass = %v, want %v: %+v", tr.Pass, tc.wantPass, tr)
			}
			if !strings.Contains(tr.Verdict, tc.verdict) {
				t.Errorf("verdict %q, want it to say %q", tr.Verdict, tc.verdict)
			}
			if math.Abs(tr.Slope-tc.wantSlope) > 5 {
				t.Errorf("slope = %.2f/h, want about %.0f/h", tr.Slope, tc.wantSlope)
			}
			if tr.Samples >= MinTrendSamples && (tr.SlopeCI95[0] > tr.Slope || tr.SlopeCI95[1] < tr.Slope) {
				t.Errorf("the interval %v does not hold the slope %.2f", tr.SlopeCI95, tr.Slope)
			}
		})
	}
}

func TestTrendPlot(t *testing.T) {
	xs := []float64{0, 30, 60, 90, 120, 150}
	ys := []float64{10, 11, 10, 12, 11, 10}
	tr := FitTrend(xs, ys, Tolerance{Abs: 1})
	path := t.TempDir() + "/soak.svg"
	panels := []TrendPanel{{Title: "RSS", YLabel: "MiB", Lines: []TrendLine{{Name: "a", X: xs, Y: ys, Trend: tr}}},
		{Title: "fds", YLabel: "fds", Lines: []TrendLine{{Name: "b", X: xs, Y: ys, Trend: tr}}}}
	if err := TrendPlot(path, panels); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "<svg") || !strings.Contains(string(data), "RSS") {
		t.Errorf("not an SVG with the panel titles: %.200s", data)
	}
}
