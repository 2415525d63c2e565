package main

import (
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ccmkit/ccm/bench/lb"
	"github.com/ccmkit/ccm/bench/nodes"
	"github.com/ccmkit/ccm/bench/routes"
)

// options are the command line: which sections, and each one's config.
type options struct {
	sections []string
	quick    bool
	out      string
	update   bool  // keep the sections of an existing out that this run does not run
	sizes    []int // node section sizes, ascending; the largest runs every phase
	// baselineAllSizes runs the unbatched baseline at every size, not
	// only the largest.
	baselineAllSizes bool
	nodes            nodes.Config
	routes           routes.Config
	lb               lb.Config
	fanout           lb.FanoutConfig
	burst            nodes.BurstConfig
	ociNodes         nodes.OCIConfig
	// ociFanout is the fanout section's config (its --fanout-* sizes) run
	// on OCI.
	ociFanout lb.FanoutConfig
	lbScale   lb.ScaleConfig
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
		fanout: lb.DefaultFanoutConfig(), burst: nodes.DefaultBurstConfig(), ociNodes: nodes.DefaultOCIConfig(), lbScale: lb.DefaultScaleConfig()}
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
	fs.BoolVar(&o.update, "update", false, "keep the sections already in --out that this run does not run (run.kept says which, and when they ran)")
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
	fs.BoolVar(&o.baselineAllSizes, "baseline-all-sizes", false, "nodes: run the unbatched baseline at every --sizes value, not only the largest")
	fs.BoolVar(&n.UpstreamFloor, "upstream-floor", n.UpstreamFloor, "nodes: also time a floor that posts upstream's per-node Event, to tell our costs from upstream's (a diagnosis)")
	fs.BoolVar(&n.InitOnly, "init-only", n.InitOnly, "nodes: measure initialization only (floor, ours, baseline): for tuning flags")
	heap := fs.Bool("heap-profile", false, "nodes and oci-nodes: save the CCM's heap profile (first run, before it stops) into the work directory: a diagnosis")
	fs.Var(appendFlag{&n.CCMFlags}, "ccm-flag", "nodes: an extra CCM flag, e.g. --ccm-flag=--concurrent-node-syncs=20 (repeatable; overrides the recommended set)")

	// routes
	r := &o.routes
	fs.IntVar(&r.Nodes, "route-nodes", r.Nodes, "routes: number of nodes (and routes)")
	routeModes := fs.String("route-modes", strings.Join(r.Modes, ","), "routes: comma-separated modes: periodic (upstream default), watch (the watch-based feature gate), vpc (periodic, on a VPC route table)")
	fs.DurationVar(&r.Idle, "route-idle", r.Idle, "routes: how long to watch the converged cluster for the idle API cost")
	fs.Var(appendFlag{&r.CCMFlags}, "route-ccm-flag", "routes: an extra CCM flag (repeatable)")

	// lb
	l := &o.lb
	fs.IntVar(&l.Services, "lb-services", l.Services, "lb: LoadBalancer Services created at once")
	fs.IntVar(&l.Nodes, "lb-nodes", l.Nodes, "lb: nodes (targets of every CLB)")
	lbSyncs := fs.String("lb-syncs", joinInts(l.Syncs), "lb: comma-separated values of the CCM's --concurrent-service-syncs, one run each (upstream default: 1)")
	fs.DurationVar(&l.TaskLatency, "lb-task-latency", l.TaskLatency, "lb: cloudsim's asynchronous CLB task latency")
	fs.DurationVar(&l.DriftPeriod, "lb-drift-period", l.DriftPeriod, "lb: the resync CCM's lb_drift_check_period (longer than the unchanged resync takes)")

	// fanout
	fo := &o.fanout
	fs.IntVar(&fo.Services, "fanout-services", fo.Services, "fanout and oci-fanout: LoadBalancer Services, created and converged before the burst")
	fs.IntVar(&fo.InitialNodes, "fanout-nodes", fo.InitialNodes, "fanout and oci-fanout: initialized nodes before the burst")
	fs.IntVar(&fo.BurstNodes, "fanout-burst-nodes", fo.BurstNodes, "fanout and oci-fanout: nodes joining at once, each initialized by the CCM")
	fs.IntVar(&fo.Syncs, "fanout-syncs", fo.Syncs, "fanout and oci-fanout: the CCM's --concurrent-service-syncs")
	fs.IntVar(&fo.Repeats, "fanout-repeats", fo.Repeats, "fanout and oci-fanout: runs, each on a fresh cluster; the ratios are their medians")

	// burst
	bu := &o.burst
	fs.IntVar(&bu.Nodes, "burst-nodes", bu.Nodes, "burst: nodes per burst")
	burstRates := fs.String("burst-rates", joinFloats(bu.Rates), "burst: comma-separated rates (nodes per second), one floor and one ours burst each")
	fs.DurationVar(&bu.Boot, "burst-boot", bu.Boot, "burst: how long before its Node registers each machine is created (its boot)")

	// oci-nodes
	on := &o.ociNodes
	fs.IntVar(&on.Nodes, "oci-nodes", on.Nodes, "oci-nodes: nodes the OCI CCM initializes")
	fs.IntVar(&on.Repeats, "oci-repeats", on.Repeats, "oci-nodes: interleaved (ours, floor) pairs; the ratio is their median")
	fs.IntVar(&on.PublicEvery, "oci-public-every", on.PublicEvery, "oci-nodes: every N-th instance has a public IP (0: none)")

	// lb-scale
	ls := &o.lbScale
	fs.IntVar(&ls.Services, "lb-scale-services", ls.Services, "lb-scale: LoadBalancer Services created at once, on each cloud")
	fs.IntVar(&ls.Nodes, "lb-scale-nodes", ls.Nodes, "lb-scale: initialized nodes (one more joins at the end)")
	fs.IntVar(&ls.Syncs, "lb-scale-syncs", ls.Syncs, "lb-scale: the CCM's --concurrent-service-syncs")
	lbScaleClouds := fs.String("lb-scale-clouds", strings.Join(ls.Clouds, ","), "lb-scale: comma-separated clouds: tencent, oci")

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
			return o, fmt.Errorf("--route-modes: unknown mode %q (want periodic, watch or vpc)", m)
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
	ls.Clouds = splitList(*lbScaleClouds)
	for _, c := range ls.Clouds {
		if c != "tencent" && c != "oci" {
			return o, fmt.Errorf("--lb-scale-clouds: unknown cloud %q (want tencent or oci)", c)
		}
	}
	if ls.Services < 1 || ls.Nodes < 1 {
		return o, fmt.Errorf("--lb-scale-services and --lb-scale-nodes must be positive, not %d and %d", ls.Services, ls.Nodes)
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
	on.CCMFlags = n.CCMFlags
	n.HeapProfile, on.HeapProfile = *heap, *heap
	n.CCMBinary, r.CCMBinary, l.CCMBinary, fo.CCMBinary, bu.CCMBinary, on.CCMBinary, ls.CCMBinary = *ccmBinary, *ccmBinary, *ccmBinary, *ccmBinary, *ccmBinary, *ccmBinary, *ccmBinary
	o.ociFanout = *fo
	if *workDir != "" {
		n.WorkDir = filepath.Join(*workDir, "nodes")
		r.WorkDir = filepath.Join(*workDir, "routes")
		l.WorkDir = filepath.Join(*workDir, "lb")
		fo.WorkDir = filepath.Join(*workDir, "fanout")
		bu.WorkDir = filepath.Join(*workDir, "burst")
		on.WorkDir = filepath.Join(*workDir, "oci-nodes")
		o.ociFanout.WorkDir = filepath.Join(*workDir, "oci-fanout")
		ls.WorkDir = filepath.Join(*workDir, "lb-scale")
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
	// The resync of 10 Services takes about 3 s; the drift check must only
	// outlast that.
	o.lb.DriftPeriod = 15 * time.Second
	o.lb.Timeout = 3 * time.Minute
	o.fanout.Services, o.fanout.InitialNodes, o.fanout.BurstNodes, o.fanout.Repeats = 20, 20, 20, 1
	o.fanout.Timeout = 3 * time.Minute
	// 100 nodes: 5 s of joins at 20/s, each machine 5 s ahead of its Node.
	o.burst.Nodes = 100
	o.burst.Boot = 5 * time.Second
	o.burst.PhaseTimeout = 3 * time.Minute
	o.ociNodes.Nodes = 200
	o.ociNodes.PhaseTimeout = 3 * time.Minute
	o.lbScale.Services, o.lbScale.Nodes = 20, 10
	o.lbScale.Timeout = 3 * time.Minute
	o.lbScale.Parallel = true // both clouds at once: --quick as a whole within its 5 minutes
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
