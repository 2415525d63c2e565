package main

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/ccmkit/ccm/bench/nodes"
	"github.com/ccmkit/ccm/bench/report"
	"github.com/ccmkit/ccm/internal/oci/computelookup"
)

// The plots' file names, next to latest.json; docs/scale.md links them.
const (
	plotInitVsNodes = "init-vs-nodes.svg"
	plotCallsNodes  = "calls-nodes.svg"
	plotCallsRoutes = "calls-routes.svg"
	plotCallsLB     = "calls-lb.svg"
	plotBurstCDF    = "burst-join-cdf.svg"
	plotFanout      = "fanout.svg"
	plotOCIFanout   = "oci-fanout.svg"
	plotCallsOCI    = "calls-oci-nodes.svg"
)

// writePlots draws what the document holds into dir and returns the files
// written. Every figure was measured against cloudsim's default (realistic)
// answer times, which the titles say.
func writePlots(dir string, doc document) ([]string, error) {
	var written []string
	draw := func(name string, f func(path string) error) error {
		path := filepath.Join(dir, name)
		if err := f(path); err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		written = append(written, path)
		return nil
	}
	if len(doc.NodeSizes) >= 2 {
		var ours, floor, baseline, bound report.Series
		ours.Name, floor.Name, baseline.Name = "ours (median, min-max)", "floor: bare PATCH (median, min-max)", "baseline: inventory off"
		bound.Name = "baseline bound: one call per node at the cloud's limit"
		for _, s := range doc.NodeSizes {
			x := float64(s.Nodes)
			ours.X, ours.Y = append(ours.X, x), append(ours.Y, s.Init)
			floor.X, floor.Y = append(floor.X, x), append(floor.Y, s.Floor)
			if s.BaselineBound > 0 {
				bound.X = append(bound.X, x)
				bound.Y = append(bound.Y, report.Stats{Min: s.BaselineBound, Median: s.BaselineBound, Max: s.BaselineBound, Runs: 1})
			}
			if s.BaselineSeconds > 0 {
				baseline.X = append(baseline.X, x)
				baseline.Y = append(baseline.Y, report.Stats{Min: s.BaselineSeconds, Median: s.BaselineSeconds, Max: s.BaselineSeconds, Runs: 1})
			}
		}
		series := []report.Series{ours, floor}
		if len(baseline.X) > 0 {
			series = append(series, baseline)
		}
		if len(bound.X) > 0 {
			series = append(series, bound)
		}
		if err := draw(plotInitVsNodes, func(path string) error {
			return report.LinePlot(path, "Time to initialize N nodes (cloudsim default latency)", "nodes", "seconds", series)
		}); err != nil {
			return written, err
		}
	}
	if r := doc.Result; r != nil {
		bars := []report.Bar{{Label: "init, ours", Value: float64(r.DescribeCallsInit)}}
		if r.BaselineInitSeconds > 0 {
			bars = append(bars, report.Bar{Label: "init, baseline", Value: float64(r.BaselineDescribeCallsInit)})
		}
		if !r.InitOnly {
			bars = append(bars,
				report.Bar{Label: "full status sync", Value: float64(r.SyncCalls)},
				report.Bar{Label: fmt.Sprintf("%d NotReady, %.0fs", r.LifecycleNotReady, r.LifecycleSeconds), Value: float64(r.LifecycleCalls)})
		}
		if err := draw(plotCallsNodes, func(path string) error {
			return report.BarPlot(path, fmt.Sprintf("Node section: DescribeInstances calls, %d nodes", r.Nodes), "calls", bars)
		}); err != nil {
			return written, err
		}
	}
	if r := doc.Routes; r != nil {
		var bars []report.Bar
		for _, m := range r.Modes {
			bars = append(bars,
				report.Bar{Label: m.Mode + ": Describe", Value: float64(m.CallsToRoutes["DescribeClusterRoutes"])},
				report.Bar{Label: m.Mode + ": Create", Value: float64(m.CallsToRoutes["CreateClusterRoute"])},
				report.Bar{Label: m.Mode + ": churn Delete", Value: float64(m.ChurnCalls["DeleteClusterRoute"])})
		}
		if err := draw(plotCallsRoutes, func(path string) error {
			return report.BarPlot(path, fmt.Sprintf("Route section: TKE calls until %d routes exist, and for churn", r.Nodes), "calls", bars)
		}); err != nil {
			return written, err
		}
	}
	if r := doc.LB; r != nil {
		var bars []report.Bar
		for _, s := range r.Runs {
			p := fmt.Sprintf("syncs=%d: ", s.ConcurrentServiceSyncs)
			bars = append(bars,
				report.Bar{Label: p + "create", Value: float64(sumCalls(s.CreateCalls))},
				report.Bar{Label: p + "resync reads", Value: float64(s.Resync.Reads)},
				report.Bar{Label: p + "resync writes", Value: float64(s.Resync.Writes)},
				report.Bar{Label: p + "drift reads", Value: float64(s.Drift.Reads)},
				report.Bar{Label: p + "drift writes", Value: float64(s.Drift.Writes)})
		}
		if err := draw(plotCallsLB, func(path string) error {
			return report.BarPlot(path, fmt.Sprintf("LB section: CLB calls, %d Services", r.Services), "calls", bars)
		}); err != nil {
			return written, err
		}
	}
	if r := doc.Burst; r != nil {
		var samples []report.Series
		for _, run := range r.Runs {
			samples = append(samples,
				report.Series{Name: fmt.Sprintf("ours, %.0f nodes/s", run.RatePerSecond), X: run.Ours.Samples},
				report.Series{Name: fmt.Sprintf("floor, %.0f nodes/s", run.RatePerSecond), X: run.Floor.Samples})
		}
		if err := draw(plotBurstCDF, func(path string) error {
			return report.CDFPlot(path, fmt.Sprintf("Burst: %d nodes join, registration to taint removed", r.Nodes), "seconds", samples)
		}); err != nil {
			return written, err
		}
	}
	if r := doc.Fanout; r != nil {
		if err := draw(plotFanout, func(path string) error {
			return fanoutPlot(path, fmt.Sprintf("LB fan-out: %d nodes join %d Services' CLBs (cloudsim default latency)", r.BurstNodes, r.Services),
				"CLB writes", r.Seconds.Median, r.FloorSeconds, r.Writes.Median, r.FloorWrites)
		}); err != nil {
			return written, err
		}
	}
	if r := doc.OCIFanout; r != nil {
		if err := draw(plotOCIFanout, func(path string) error {
			return fanoutPlot(path, fmt.Sprintf("OCI LB fan-out: %d nodes join %d Services' load balancers (cloudsim default latency)", r.BurstNodes, r.Services),
				"UpdateBackendSet", r.Seconds.Median, r.FloorSeconds, r.Writes.Median, r.FloorWrites)
		}); err != nil {
			return written, err
		}
	}
	if r := doc.OCINodes; r != nil {
		var bars []report.Bar
		for _, action := range slices.Sorted(maps.Keys(r.CallsByAction)) {
			bars = append(bars, report.Bar{Label: action, Value: float64(r.CallsByAction[action])})
		}
		bars = append(bars, report.Bar{Label: fmt.Sprintf("budget %d*ceil(N/%d)+10", nodes.OCIListings, computelookup.PageSize), Value: float64(r.CallBudget)})
		if err := draw(plotCallsOCI, func(path string) error {
			return report.BarPlot(path, fmt.Sprintf("OCI node section: calls to initialize %d nodes", r.Nodes), "calls", bars)
		}); err != nil {
			return written, err
		}
	}
	return written, nil
}

// fanoutPlot is the fan-out sections' bars: seconds and writes, ours
// (median) beside the floor.
func fanoutPlot(path, title, writes string, seconds, floorSeconds, writesMedian float64, floorWrites int) error {
	return report.BarPlot(path, title, "seconds / writes", []report.Bar{
		{Label: "seconds, ours (median)", Value: seconds},
		{Label: "seconds, floor", Value: floorSeconds},
		{Label: writes + ", ours (median)", Value: writesMedian},
		{Label: writes + ", floor", Value: float64(floorWrites)},
	})
}

func sumCalls(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
