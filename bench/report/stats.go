// Package report is what every benchmark section shares: summary statistics
// of repeated runs, the results file, and the SVG plots drawn next to it.
package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Stats summarizes repeated measurements of one quantity. The benchmark
// machine is shared, so a single run can be off by a third; the median of
// interleaved runs is what targets are checked against, and min and max
// show how far the runs spread.
type Stats struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
	Runs   int     `json:"runs"`
}

// Summarize returns the min, median and max of xs (the mean of the middle
// two for an even count); the zero Stats for none.
func Summarize(xs []float64) Stats {
	if len(xs) == 0 {
		return Stats{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	mid := s[len(s)/2]
	if len(s)%2 == 0 {
		mid = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Stats{Min: s[0], Median: mid, Max: s[len(s)-1], Runs: len(s)}
}

// Spread formats s as "median (min-max)" with the given verb for each, e.g.
// "%.1f"; a single run is its value alone.
func (s Stats) Spread(verb string) string {
	if s.Runs <= 1 {
		return fmt.Sprintf(verb, s.Median)
	}
	return fmt.Sprintf(verb+" ("+verb+"-"+verb+")", s.Median, s.Min, s.Max)
}

// Percentile returns the p-quantile (0..1) of xs by the nearest-rank
// method; 0 for none.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	k := int(p*float64(len(s))+0.999999) - 1
	return s[min(max(k, 0), len(s)-1)]
}

// WriteJSON writes v, indented, to path, creating its directory.
func WriteJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
