// Command bench is `make bench`: every benchmark section, one after the
// other, each against its own real kube-apiserver and etcd, cloudsim with its
// documented limits, and the cloud-controller-manager as its own process.
//
//   - nodes (bench/nodes): node initialization, status sync and lifecycle
//     calls, against a bare-PATCH floor and an unbatched baseline;
//   - routes (bench/routes): the route controller on a TKE route table;
//   - lb (bench/lb): many LoadBalancer Services at once, then an unchanged
//     resync and a drift check;
//   - fanout (bench/lb, fanout.go): LoadBalancer Services on initialized
//     nodes, then a burst of nodes joining: the time until every CLB has
//     every new node, and the CLB writes, against the writes CLB's limits
//     force;
//   - burst (bench/nodes, burst.go): nodes joining a running cluster at a
//     steady rate, each node's time from registration to initialized,
//     against a bare client patching each node as it appears;
//   - oci-nodes (bench/nodes, oci.go): the OCI provider initializing N
//     nodes, against the same bare-PATCH floor: OCI calls by action, HTTP
//     429 answers, peak RSS;
//   - oci-fanout (bench/lb, fanout_oci.go): the fan-out on OCI Load
//     Balancing (the fanout section's sizes), against one UpdateBackendSet
//     per backend set at cloudsim's work-request pace;
//   - lb-scale (bench/lb, scale.go): the lb section at a fleet's size
//     (1,000 Services on 200 nodes) on both clouds, plus a node joining and
//     the CCM's peak RSS, with the clouds' quotas raised.
//
// It prints each section's table and writes one JSON file (default
// bench/results/latest.json): the node section's keys at the top level, as
// before the other sections joined, and one object per other section. Every
// section has its target and whether it was met.
//
//	make build && go run ./bench --sections=nodes,routes --nodes=1000
//	go run ./bench --quick      # a small version of every section
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ccmkit/ccm/bench/lb"
	"github.com/ccmkit/ccm/bench/nodes"
	"github.com/ccmkit/ccm/bench/report"
	"github.com/ccmkit/ccm/bench/routes"
)

var allSections = []string{"nodes", "routes", "lb", "fanout", "burst", "oci-nodes", "oci-fanout", "lb-scale"}

// runTarget is the time budget of a run of every section: 25 minutes, or
// 5 with --quick (the issue's); 0 for a run of some sections.
func runTarget(sections []string, quick bool) float64 {
	for _, s := range allSections {
		if !slices.Contains(sections, s) {
			return 0
		}
	}
	if quick {
		return 5 * 60
	}
	return 25 * 60
}

// document is latest.json.
type document struct {
	// The node section (its largest size) is the top level: its keys
	// (nodes, init_seconds, floor_seconds, ...) predate the other sections,
	// and files are compared across commits.
	*nodes.Result
	// NodeSizes summarizes the node section at each --sizes value (the
	// largest is also the top level); init-vs-nodes.svg draws it.
	NodeSizes []sizeSummary       `json:"node_sizes,omitempty"`
	Routes    *routes.Result      `json:"routes,omitempty"`
	LB        *lb.Result          `json:"lb,omitempty"`
	Fanout    *lb.FanoutResult    `json:"fanout,omitempty"`
	Burst     *nodes.BurstResult  `json:"burst,omitempty"`
	OCINodes  *nodes.OCIResult    `json:"oci_nodes,omitempty"`
	OCIFanout *lb.OCIFanoutResult `json:"oci_fanout,omitempty"`
	LBScale   *lb.ScaleResult     `json:"lb-scale,omitempty"`
	Run       runInfo             `json:"run"`
}

// sizeSummary is the node section at one size.
type sizeSummary struct {
	Nodes           int          `json:"nodes"`
	Init            report.Stats `json:"init_seconds"`
	Floor           report.Stats `json:"floor_seconds"`
	Ratio           report.Stats `json:"init_vs_floor"`
	BaselineSeconds float64      `json:"baseline_init_seconds"` // 0: not measured at this size
	// BaselineBound is N over cloudsim's DescribeInstances limit: the
	// least time one call per node can take. The baseline runs at the
	// largest size only (--baseline-all-sizes for every size): at 1,000
	// and 2,000 nodes it measured within 3% of this bound (25.8 s, 51.1 s).
	BaselineBound    float64 `json:"baseline_bound_seconds"`
	DescribeCalls    int64   `json:"describe_instances_calls_init"`
	BaselineDescribe int64   `json:"baseline_describe_instances_calls_init"`
	InitOnly         bool    `json:"init_only"`
	Met              bool    `json:"met"`
}

func summarizeSize(r *nodes.Result) sizeSummary {
	return sizeSummary{Nodes: r.Nodes, Init: r.InitStats, Floor: r.FloorStats, Ratio: r.RatioStats,
		BaselineSeconds: r.BaselineInitSeconds, DescribeCalls: r.DescribeCallsInit, BaselineDescribe: r.BaselineDescribeCallsInit,
		InitOnly: r.InitOnly, Met: r.Met}
}

// baselineBound is the least time the unbatched baseline can take at n
// nodes: one DescribeInstances per node at cloudsim's limit.
func baselineBound(n int, qps float64) float64 {
	if qps <= 0 {
		return 0
	}
	return math.Round(float64(n)/qps*10) / 10
}

type runInfo struct {
	Sections []string `json:"sections"`
	// Kept are the sections an --update run took over from the file it
	// updated, each with the start of the run that measured it.
	Kept  []keptSection `json:"kept,omitempty"`
	Quick bool          `json:"quick"`
	// SectionSeconds is each section's wall time (kept sections keep
	// theirs); WholeRunSeconds is this invocation's.
	SectionSeconds  map[string]float64 `json:"section_seconds"`
	Started         string             `json:"started"`
	WholeRunSeconds float64            `json:"whole_run_seconds"`
	// TargetSeconds is the budget for a run of every section (25
	// minutes; 5 with --quick), 0 when some section is left out;
	// WithinTarget says whether the whole run kept to it.
	TargetSeconds float64 `json:"target_seconds,omitempty"`
	WithinTarget  bool    `json:"within_target"`
	// AllMet: every section's own target was met (not the run time).
	AllMet bool `json:"all_met"`
	CPUs   int  `json:"cpus"`
}

type keptSection struct {
	Section string `json:"section"`
	Started string `json:"started"`
}

// previous reads the document at path for --update: the sections this run
// does not run stay as they were, and say when they ran. A missing file is
// an empty document.
func previous(path string, run []string) (document, []keptSection, error) {
	var doc document
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return doc, nil, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &doc)
	}
	if err != nil {
		return doc, nil, fmt.Errorf("--update: %s: %w", path, err)
	}
	started := func(name string) keptSection {
		for _, k := range doc.Run.Kept {
			if k.Section == name {
				return k // kept before: it keeps its own date
			}
		}
		return keptSection{Section: name, Started: doc.Run.Started}
	}
	var kept []keptSection
	present := map[string]bool{"nodes": doc.Result != nil, "routes": doc.Routes != nil, "lb": doc.LB != nil,
		"fanout": doc.Fanout != nil, "burst": doc.Burst != nil, "oci-nodes": doc.OCINodes != nil, "oci-fanout": doc.OCIFanout != nil,
		"lb-scale": doc.LBScale != nil}
	for _, name := range allSections {
		if present[name] && !slices.Contains(run, name) {
			kept = append(kept, started(name))
		}
	}
	return doc, kept, nil
}

// keptSeconds is the durations of the kept sections, from the file an
// --update run updates.
func keptSeconds(previous map[string]float64, kept []keptSection) map[string]float64 {
	took := map[string]float64{}
	for _, k := range kept {
		if v, ok := previous[k.Section]; ok {
			took[k.Section] = v
		}
	}
	return took
}

func main() {
	opts, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	// envtest logs through controller-runtime, which warns (with a stack
	// trace) when no logger is set.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	begin := time.Now()
	var doc document
	var kept []keptSection
	if o.update {
		var err error
		if doc, kept, err = previous(o.out, o.sections); err != nil {
			return err
		}
	}
	doc.Run = runInfo{Sections: o.sections, Kept: kept, Quick: o.quick, Started: begin.UTC().Format(time.RFC3339), CPUs: runtime.NumCPU(),
		SectionSeconds: keptSeconds(doc.Run.SectionSeconds, kept)}
	// Written after every section, so that a later section's failure keeps
	// the earlier numbers.
	write := func() error {
		doc.Run.WholeRunSeconds = time.Since(begin).Seconds()
		doc.Run.TargetSeconds = runTarget(o.sections, o.quick)
		doc.Run.WithinTarget = doc.Run.TargetSeconds > 0 && doc.Run.WholeRunSeconds <= doc.Run.TargetSeconds
		doc.Run.AllMet = (doc.Result == nil || doc.Result.Met) && (doc.Routes == nil || doc.Routes.Met) && (doc.LB == nil || doc.LB.Met) &&
			(doc.Fanout == nil || doc.Fanout.Met) &&
			(doc.Burst == nil || doc.Burst.Met) &&
			(doc.OCINodes == nil || doc.OCINodes.Met) &&
			(doc.OCIFanout == nil || doc.OCIFanout.Met) &&
			(doc.LBScale == nil || doc.LBScale.Met)
		for _, s := range doc.NodeSizes {
			doc.Run.AllMet = doc.Run.AllMet && s.Met
		}
		if err := report.WriteJSON(o.out, doc); err != nil {
			return err
		}
		plots, err := writePlots(filepath.Dir(o.out), doc)
		for _, p := range plots {
			fmt.Printf("bench: plot %s\n", p)
		}
		return err
	}
	for _, section := range o.sections {
		start := time.Now()
		fmt.Printf("bench: section %s\n", section)
		switch section {
		case "nodes":
			doc.NodeSizes = nil // an --update run replaces the whole curve
			// One control plane for the smaller sizes: each run leaves no
			// Nodes and starts without the last one's Events; a start
			// costs 5-10 s. The largest size gets a fresh one: on the
			// shared one, after 18,000 Nodes came and went, its pairs
			// varied most (floor 16.3-27.2 s at 5,000; 2026-11-26).
			var cp *nodes.ControlPlane
			defer func() { // at exit: nothing is left to do about a failed stop
				if cp != nil {
					_ = cp.Stop()
				}
			}()
			for _, size := range o.sizes {
				cfg := o.nodes
				cfg.Nodes = size
				largest := size == o.sizes[len(o.sizes)-1]
				if largest && cp != nil {
					_ = cp.Stop()
					cp = nil
				}
				if !largest && cp == nil {
					var err error
					if cp, err = nodes.StartControlPlane(ctx, o.nodes.WorkDir, os.Stdout); err != nil {
						return fmt.Errorf("nodes: %w", err)
					}
				}
				cfg.ControlPlane = cp
				// Smaller sizes are for the init-vs-N curve: initialization
				// only, which is what they plot.
				cfg.InitOnly = cfg.InitOnly || !largest
				// The baseline is one DescribeInstances per node at the
				// cloud's 40/s: its time is about N/40 s and says nothing
				// about ours. Measured once, at the largest size (where the
				// apiserver's load shows most); the smaller sizes report
				// the bound (baseline_bound_seconds).
				cfg.SkipBaseline = cfg.SkipBaseline || (!largest && !o.baselineAllSizes)
				if cfg.WorkDir != "" {
					cfg.WorkDir = filepath.Join(cfg.WorkDir, strconv.Itoa(size))
				}
				res, err := nodes.Run(ctx, cfg, os.Stdout)
				if err != nil {
					return fmt.Errorf("nodes (%d): %w", size, err)
				}
				res.Print(os.Stdout)
				sum := summarizeSize(res)
				sum.BaselineBound = baselineBound(size, res.CloudsimDescribeQPS)
				doc.NodeSizes = append(doc.NodeSizes, sum)
				doc.Result = res
			}
			if len(doc.NodeSizes) > 1 {
				printSizes(os.Stdout, doc.NodeSizes)
			}
		case "routes":
			res, err := routes.Run(ctx, o.routes, os.Stdout)
			if err != nil {
				return fmt.Errorf("routes: %w", err)
			}
			res.Print(os.Stdout)
			doc.Routes = res
		case "lb":
			res, err := lb.Run(ctx, o.lb, os.Stdout)
			if err != nil {
				return fmt.Errorf("lb: %w", err)
			}
			res.Print(os.Stdout)
			doc.LB = res
		case "fanout":
			res, err := lb.RunFanout(ctx, o.fanout, os.Stdout)
			if err != nil {
				return fmt.Errorf("fanout: %w", err)
			}
			res.Print(os.Stdout)
			doc.Fanout = res
		case "burst":
			res, err := nodes.RunBurst(ctx, o.burst, os.Stdout)
			if err != nil {
				return fmt.Errorf("burst: %w", err)
			}
			res.Print(os.Stdout)
			doc.Burst = res
		case "oci-nodes":
			res, err := nodes.RunOCI(ctx, o.ociNodes, os.Stdout)
			if err != nil {
				return fmt.Errorf("oci-nodes: %w", err)
			}
			res.Print(os.Stdout)
			doc.OCINodes = res
		case "oci-fanout":
			res, err := lb.RunOCIFanout(ctx, o.ociFanout, os.Stdout)
			if err != nil {
				return fmt.Errorf("oci-fanout: %w", err)
			}
			res.Print(os.Stdout)
			doc.OCIFanout = res
		case "lb-scale":
			res, err := lb.RunScale(ctx, o.lbScale, os.Stdout)
			if err != nil {
				return fmt.Errorf("lb-scale: %w", err)
			}
			res.Print(os.Stdout)
			doc.LBScale = res
		}
		doc.Run.SectionSeconds[section] = math.Round(time.Since(start).Seconds())
		fmt.Printf("bench: section %s took %s\n", section, time.Since(start).Round(time.Second))
		if err := write(); err != nil {
			return err
		}
	}
	fmt.Printf("\nwrote %s (whole run %s, within its %.0f s: %v; every section's target met: %v)\n", o.out,
		time.Since(begin).Round(time.Second), doc.Run.TargetSeconds, doc.Run.WithinTarget, doc.Run.AllMet)
	return nil
}

// printSizes writes the init-vs-N table: seconds as median (min-max) of
// the interleaved runs.
func printSizes(w io.Writer, sizes []sizeSummary) {
	fmt.Fprintf(w, "\nNode initialization by size (median (min-max) of the interleaved runs)\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "nodes\tours (s)\tfloor (s)\tours / floor\tbaseline (s)\tbaseline bound N/limit (s)\tDescribeInstances ours / baseline\tmet")
	for _, s := range sizes {
		baseline, calls := "not run", "-"
		if s.BaselineSeconds > 0 {
			baseline, calls = fmt.Sprintf("%.1f", s.BaselineSeconds), fmt.Sprint(s.BaselineDescribe)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%.1f\t%d / %s\t%v\n", s.Nodes, s.Init.Spread("%.1f"), s.Floor.Spread("%.1f"),
			s.Ratio.Spread("%.2fx"), baseline, s.BaselineBound, s.DescribeCalls, calls, s.Met)
	}
	_ = tw.Flush()
}
