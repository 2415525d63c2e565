package report

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// MinTrendSamples is the fewest samples a trend is judged on: with fewer,
// the line's slope says nothing (two points always fit exactly) and the
// soak fails rather than pass on no evidence.
const MinTrendSamples = 5

// Tolerance is the growth a series may show over a soak and still be flat:
// the larger of Abs (in the series' unit) and Rel × the series' mean. A
// leak costs something per operation; a soak runs hundreds of operations,
// so a leak of one goroutine, descriptor or a few kilobytes per operation
// grows the series far beyond it.
type Tolerance struct {
	Abs float64 `json:"abs"`
	Rel float64 `json:"rel"`
}

// Trend is the least-squares line through a series sampled over time, and
// the judgement of a soak that a resource (memory, goroutines, file
// descriptors) does not grow.
//
// A series fails (Leak) only when both hold:
//   - the slope's 95 % confidence interval lies above 0: growth the
//     samples tell from noise;
//   - the growth the line fits over the sampled span is more than the
//     tolerance.
//
// The interval alone is not enough: samples of a live process are not
// independent (a GC cycle or a sync burst spans several), so the interval
// is narrower than it should be and can exclude 0 for a drift of a few
// hundred kilobytes. The tolerance alone is not enough either: a noisy
// series can fit a large slope by chance. A shrinking series is no leak.
type Trend struct {
	Samples int `json:"samples"`
	// Slope is per hour, in the series' unit; SlopeCI95 its 95 %
	// confidence interval (Student's t, n-2 degrees of freedom).
	Slope     float64    `json:"slope_per_hour"`
	SlopeCI95 [2]float64 `json:"slope_ci95_per_hour"`
	Intercept float64    `json:"intercept"` // at x = 0
	Mean      float64    `json:"mean"`
	// Growth is the fitted growth over the sampled span (slope × span);
	// Allowed is what the tolerance allows over it.
	Growth    float64   `json:"fitted_growth"`
	Allowed   float64   `json:"allowed_growth"`
	Tolerance Tolerance `json:"tolerance"`
	Pass      bool      `json:"pass"`
	Verdict   string    `json:"verdict"`
}

// FitTrend fits y over x (seconds) and judges it.
func FitTrend(x, y []float64, tol Tolerance) Trend {
	n := len(x)
	tr := Trend{Samples: n, Tolerance: tol}
	if len(y) != n {
		tr.Verdict = fmt.Sprintf("%d times but %d values", n, len(y))
		return tr
	}
	if n < MinTrendSamples {
		tr.Verdict = fmt.Sprintf("too few samples: %d, need %d", n, MinTrendSamples)
		return tr
	}
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxx, sxy float64
	for i := range x {
		sxx += (x[i] - mx) * (x[i] - mx)
		sxy += (x[i] - mx) * (y[i] - my)
	}
	tr.Mean = my
	tr.Allowed = math.Max(tol.Abs, tol.Rel*math.Abs(my))
	if sxx == 0 {
		tr.Verdict = "every sample at the same time"
		return tr
	}
	b := sxy / sxx
	a := my - b*mx
	var sse float64
	for i := range x {
		r := y[i] - (a + b*x[i])
		sse += r * r
	}
	se := math.Sqrt(sse / float64(n-2) / sxx)
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 2)}.Quantile(0.975)
	const hour = 3600
	tr.Slope = b * hour
	tr.Intercept = a
	tr.SlopeCI95 = [2]float64{(b - q*se) * hour, (b + q*se) * hour}
	tr.Growth = b * (x[n-1] - x[0])
	significant := tr.SlopeCI95[0] > 0
	material := tr.Growth > tr.Allowed
	tr.Pass = !significant || !material
	switch {
	case tr.Pass && !significant:
		tr.Verdict = "flat: the slope's 95% interval holds 0 or lies below it"
	case tr.Pass:
		tr.Verdict = fmt.Sprintf("flat: grows, but %.4g over the run is within the tolerance %.4g", tr.Growth, tr.Allowed)
	default:
		tr.Verdict = fmt.Sprintf("leak: grows %.4g over the run (95%% interval above 0), more than the tolerance %.4g", tr.Growth, tr.Allowed)
	}
	return tr
}
