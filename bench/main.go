// Command bench is `make bench`: every benchmark section, one after the
// other, each against its own real kube-apiserver and etcd, cloudsim with its
// documented limits, and the cloud-controller-manager as its own process.
//
//   - nodes (bench/nodes): node initialization, status sync and lifecycle
//     calls, against a bare-PATCH floor and an unbatched baseline;
//   - routes (bench/routes): the route controller on a TKE route table;
//   - lb (bench/lb): many LoadBalancer Services at once, then an unchanged
//     resync and a drift check;
//   - burst (bench/nodes, burst.go): nodes joining a running cluster at a
//     steady rate, each node's time from registration to initialized,
//     against a bare client patching each node as it appears.
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
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
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

var allSections = []string{"nodes", "routes", "lb", "burst"}

// document is latest.json.
type document struct {
	// The node section (its largest size) is the top level: its keys
	// (nodes, init_seconds, floor_seconds, ...) predate the other sections,
	// and files are compared across commits.
	*nodes.Result
	// NodeSizes summarizes the node section at each --sizes value (the
	// largest is also the top level); init-vs-nodes.svg draws it.
	NodeSizes []sizeSummary      `json:"node_sizes,omitempty"`
	Routes    *routes.Result     `json:"routes,omitempty"`
	LB        *lb.Result         `json:"lb,omitempty"`
	Burst     *nodes.BurstResult `json:"burst,omitempty"`
	Run       runInfo            `json:"run"`
}

// sizeSummary is the node section at one size.
type sizeSummary struct {
	Nodes            int          `json:"nodes"`
	Init             report.Stats `json:"init_seconds"`
	Floor            report.Stats `json:"floor_seconds"`
	Ratio            report.Stats `json:"init_vs_floor"`
	BaselineSeconds  float64      `json:"baseline_init_seconds"`
	DescribeCalls    int64        `json:"describe_instances_calls_init"`
	BaselineDescribe int64        `json:"baseline_describe_instances_calls_init"`
	InitOnly         bool         `json:"init_only"`
	Met              bool         `json:"met"`
}

func summarizeSize(r *nodes.Result) sizeSummary {
	return sizeSummary{Nodes: r.Nodes, Init: r.InitStats, Floor: r.FloorStats, Ratio: r.RatioStats,
		BaselineSeconds: r.BaselineInitSeconds, DescribeCalls: r.DescribeCallsInit, BaselineDescribe: r.BaselineDescribeCallsInit,
		InitOnly: r.InitOnly, Met: r.Met}
}

type runInfo struct {
	Sections        []string `json:"sections"`
	Quick           bool     `json:"quick"`
	Started         string   `json:"started"`
	WholeRunSeconds float64  `json:"whole_run_seconds"`
	AllMet          bool     `json:"all_met"`
	CPUs            int      `json:"cpus"`
}

// options are the command line: which sections, and each one's config.
type options struct {
	sections []string
	quick    bool
	out      string
	sizes    []int // node section sizes, ascending; the largest runs every phase
	nodes    nodes.Config
	routes   routes.Config
	lb       lb.Config
	burst    nodes.BurstConfig
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

// quickRequested finds --quick before the flags are parsed: it decides the
// defaults that the other flags then override.
func quickRequested(args []string) bool {
	for _, a := range args {
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "quick" && strings.HasPrefix(a, "-") {
			if !hasValue {
				return true
			}
			ok, _ := strconv.ParseBool(value)
			return ok
		}
		if a == "--" {
			break
		}
	}
	return false
}

func parseFlags(args []string) (options, error) {
	o := options{quick: quickRequested(args), nodes: nodes.DefaultConfig(), routes: routes.DefaultConfig(), lb: lb.DefaultConfig(),
		burst: nodes.DefaultBurstConfig()}
	defaultSizes, defaultOut := "1000,2000,5000", "bench/results/latest.json"
	if o.quick {
		applyQuick(&o)
		// A quick run's numbers are not comparable with a full run's: they
		// go elsewhere, and never over the committed full results.
		defaultSizes, defaultOut = "100,200", "bench/results/quick/latest.json"
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.BoolVar(&o.quick, "quick", o.quick, "a small version of every section (a few minutes); other flags still override it")
	sections := fs.String("sections", strings.Join(allSections, ","), "comma-separated sections to run: "+strings.Join(allSections, ", "))
	fs.StringVar(&o.out, "out", defaultOut, "the JSON results; plots are written next to it")
	ccmBinary := fs.String("ccm-binary", "bin/cloud-controller-manager", "the cloud-controller-manager binary (make build)")
	workDir := fs.String("work-dir", "", "directory for logs and kubeconfigs, one subdirectory per section (default: new temporary directories)")

	// nodes
	n := &o.nodes
	sizes := fs.String("sizes", defaultSizes, "nodes: comma-separated node counts; the largest runs every phase, the others initialization only (init-vs-nodes.svg)")
	fs.IntVar(&n.Nodes, "nodes", 0, "nodes: one node count, every phase (the same as --sizes=N)")
	fs.IntVar(&n.Repeats, "repeats", n.Repeats, "nodes: interleaved (ours, floor) pairs; the ratio is their median")
	fs.IntVar(&n.FloorWorkers, "floor-workers", n.FloorWorkers, "nodes: concurrent PATCH workers of the bare-client floor")
	fs.DurationVar(&n.StatusSyncEvery, "node-status-update-frequency", n.StatusSyncEvery,
		"nodes: the CCM's --node-status-update-frequency during the run (longer than the cache TTL, as in production)")
	fs.StringVar(&n.CacheTTL, "instance-cache-ttl", n.CacheTTL, "nodes: instance_cache_ttl for the CCM (empty: the CCM's default)")
	fs.DurationVar(&n.NotReadyFor, "notready-for", n.NotReadyFor, "nodes: how long 10% of the nodes stay NotReady")
	fs.BoolVar(&n.SkipBaseline, "skip-baseline", n.SkipBaseline, "nodes: skip the unbatched baseline (it takes about N/40 seconds)")
	fs.BoolVar(&n.InitOnly, "init-only", n.InitOnly, "nodes: measure initialization only (floor, ours, baseline): for tuning flags")
	fs.Var(appendFlag{&n.CCMFlags}, "ccm-flag", "nodes: an extra CCM flag, e.g. --ccm-flag=--concurrent-node-syncs=20 (repeatable; overrides the recommended set)")

	// routes
	r := &o.routes
	fs.IntVar(&r.Nodes, "route-nodes", r.Nodes, "routes: number of nodes (and routes)")
	routeModes := fs.String("route-modes", strings.Join(r.Modes, ","), "routes: comma-separated modes: periodic (upstream default), watch (the watch-based feature gate)")
	fs.DurationVar(&r.Idle, "route-idle", r.Idle, "routes: how long to watch the converged cluster for the idle API cost")
	fs.Var(appendFlag{&r.CCMFlags}, "route-ccm-flag", "routes: an extra CCM flag (repeatable)")

	// lb
	l := &o.lb
	fs.IntVar(&l.Services, "lb-services", l.Services, "lb: LoadBalancer Services created at once")
	fs.IntVar(&l.Nodes, "lb-nodes", l.Nodes, "lb: nodes (targets of every CLB)")
	lbSyncs := fs.String("lb-syncs", joinInts(l.Syncs), "lb: comma-separated values of the CCM's --concurrent-service-syncs, one run each (upstream default: 1)")
	fs.DurationVar(&l.TaskLatency, "lb-task-latency", l.TaskLatency, "lb: cloudsim's asynchronous CLB task latency")
	fs.DurationVar(&l.DriftPeriod, "lb-drift-period", l.DriftPeriod, "lb: the CCM's lb_drift_check_period (longer than creating every Service takes)")

	// burst
	bu := &o.burst
	fs.IntVar(&bu.Nodes, "burst-nodes", bu.Nodes, "burst: nodes per burst")
	burstRates := fs.String("burst-rates", joinFloats(bu.Rates), "burst: comma-separated rates (nodes per second), one floor and one ours burst each")

	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, s := range splitList(*sections) {
		if !slices.Contains(allSections, s) {
			return o, fmt.Errorf("--sections: unknown section %q (want %s)", s, strings.Join(allSections, ", "))
		}
		o.sections = append(o.sections, s)
	}
	r.Modes = splitList(*routeModes)
	for _, m := range r.Modes {
		if !routes.ValidMode(m) {
			return o, fmt.Errorf("--route-modes: unknown mode %q (want periodic or watch)", m)
		}
	}
	list := *sizes
	if n.Nodes > 0 {
		list = strconv.Itoa(n.Nodes)
	}
	for _, s := range splitList(list) {
		v, err := strconv.Atoi(s)
		if err != nil || v < 10 {
			return o, fmt.Errorf("--sizes: %q is not a node count of at least 10", s)
		}
		o.sizes = append(o.sizes, v)
	}
	slices.Sort(o.sizes)
	o.sizes = slices.Compact(o.sizes)
	if len(o.sizes) == 0 {
		return o, errors.New("--sizes: no node count")
	}
	l.Syncs = nil
	for _, s := range splitList(*lbSyncs) {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			return o, fmt.Errorf("--lb-syncs: %q is not a positive integer", s)
		}
		l.Syncs = append(l.Syncs, v)
	}
	bu.Rates = nil
	for _, s := range splitList(*burstRates) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v <= 0 {
			return o, fmt.Errorf("--burst-rates: %q is not a positive number", s)
		}
		bu.Rates = append(bu.Rates, v)
	}
	// The burst runs the node section's CCM command line, --ccm-flag
	// included.
	bu.CCMFlags = n.CCMFlags
	n.CCMBinary, r.CCMBinary, l.CCMBinary, bu.CCMBinary = *ccmBinary, *ccmBinary, *ccmBinary, *ccmBinary
	if *workDir != "" {
		n.WorkDir = filepath.Join(*workDir, "nodes")
		r.WorkDir = filepath.Join(*workDir, "routes")
		l.WorkDir = filepath.Join(*workDir, "lb")
		bu.WorkDir = filepath.Join(*workDir, "burst")
	}
	return o, nil
}

// applyQuick shrinks every section to a few minutes' worth; the status sync
// and NotReady periods shrink with it, and the cache TTL stays shorter than
// the sync period, as in production (the smoke test's settings).
func applyQuick(o *options) {
	o.nodes.CacheTTL = "5s"
	o.nodes.StatusSyncEvery = 12 * time.Second
	o.nodes.NotReadyFor = 10 * time.Second
	o.nodes.PhaseTimeout = 3 * time.Minute
	o.routes.Nodes = 100
	o.routes.Idle = 10 * time.Second
	o.routes.Timeout = 3 * time.Minute
	o.lb.Services = 10
	o.lb.DriftPeriod = 30 * time.Second
	o.lb.Timeout = 3 * time.Minute
	o.burst.Nodes = 200
	o.burst.PhaseTimeout = 3 * time.Minute
}

func run(ctx context.Context, o options) error {
	begin := time.Now()
	doc := document{Run: runInfo{Sections: o.sections, Quick: o.quick, Started: begin.UTC().Format(time.RFC3339), CPUs: runtime.NumCPU()}}
	// Written after every section, so that a later section's failure keeps
	// the earlier numbers.
	write := func() error {
		doc.Run.WholeRunSeconds = time.Since(begin).Seconds()
		doc.Run.AllMet = (doc.Result == nil || doc.Result.Met) && (doc.Routes == nil || doc.Routes.Met) && (doc.LB == nil || doc.LB.Met) &&
			(doc.Burst == nil || doc.Burst.Met)
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
			for _, size := range o.sizes {
				cfg := o.nodes
				cfg.Nodes = size
				// Smaller sizes are for the init-vs-N curve: initialization
				// only, which is what they plot.
				cfg.InitOnly = cfg.InitOnly || size != o.sizes[len(o.sizes)-1]
				if cfg.WorkDir != "" {
					cfg.WorkDir = filepath.Join(cfg.WorkDir, strconv.Itoa(size))
				}
				res, err := nodes.Run(ctx, cfg, os.Stdout)
				if err != nil {
					return fmt.Errorf("nodes (%d): %w", size, err)
				}
				res.Print(os.Stdout)
				doc.NodeSizes = append(doc.NodeSizes, summarizeSize(res))
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
		case "burst":
			res, err := nodes.RunBurst(ctx, o.burst, os.Stdout)
			if err != nil {
				return fmt.Errorf("burst: %w", err)
			}
			res.Print(os.Stdout)
			doc.Burst = res
		}
		fmt.Printf("bench: section %s took %s\n", section, time.Since(start).Round(time.Second))
		if err := write(); err != nil {
			return err
		}
	}
	fmt.Printf("\nwrote %s (whole run %s; every target met: %v)\n", o.out, time.Since(begin).Round(time.Second), doc.Run.AllMet)
	return nil
}

// printSizes writes the init-vs-N table: seconds as median (min-max) of
// the interleaved runs.
func printSizes(w io.Writer, sizes []sizeSummary) {
	fmt.Fprintf(w, "\nNode initialization by size (median (min-max) of the interleaved runs)\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "nodes\tours (s)\tfloor (s)\tours / floor\tbaseline (s)\tDescribeInstances ours / baseline\tmet")
	for _, s := range sizes {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%.1f\t%d / %d\t%v\n", s.Nodes, s.Init.Spread("%.1f"), s.Floor.Spread("%.1f"),
			s.Ratio.Spread("%.2fx"), s.BaselineSeconds, s.DescribeCalls, s.BaselineDescribe, s.Met)
	}
	_ = tw.Flush()
}

// appendFlag is a repeatable string flag that appends to a slice.
type appendFlag struct{ to *[]string }

func (f appendFlag) String() string {
	if f.to == nil {
		return ""
	}
	return strings.Join(*f.to, " ")
}
func (f appendFlag) Set(v string) error { *f.to = append(*f.to, v); return nil }

func splitList(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func joinFloats(vs []float64) string {
	s := make([]string, len(vs))
	for k, v := range vs {
		s[k] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strings.Join(s, ",")
}

func joinInts(vs []int) string {
	s := make([]string, len(vs))
	for k, v := range vs {
		s[k] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}
