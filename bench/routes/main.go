// Command routes benchmarks the route controller on a TKE cluster route
// table: a real kube-apiserver and etcd (internal/testcluster), cloudsim with
// its documented rate limits (DescribeClusterRoutes 50/s, CreateClusterRoute
// and DeleteClusterRoute 20/s), and the cloud-controller-manager as its own
// process with the shipped RBAC.
//
// For each mode (periodic reconciliation, the upstream default; and watch,
// the CloudControllerManagerWatchBasedRoutesReconciliation feature gate) it
// registers N nodes with pod CIDRs, starts the CCM and measures:
//
//   - the time until all N routes exist in the table, and the Describe and
//     Create calls that took (and any RequestLimitExceeded answers);
//   - the time until every node's NetworkUnavailable condition is False;
//   - the idle cost: DescribeClusterRoutes calls per minute once converged;
//   - churn: the time until the routes of 10% deleted nodes are gone.
//
// It prints a table and writes JSON (default bench/results/routes.json).
//
//	make build && go run ./bench/routes --nodes=1000
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

type config struct {
	Nodes     int
	Modes     []string
	CCMBinary string
	Out       string
	WorkDir   string
	Idle      time.Duration
	Timeout   time.Duration
	CCMFlags  []string
}

type flagList []string

func (f *flagList) String() string     { return strings.Join(*f, " ") }
func (f *flagList) Set(v string) error { *f = append(*f, v); return nil }

func main() {
	cfg := config{}
	modes := flag.String("modes", "periodic,watch", "comma-separated modes: periodic (upstream default), watch (the watch-based feature gate)")
	flag.IntVar(&cfg.Nodes, "nodes", 1000, "number of nodes (and instances, and routes)")
	flag.StringVar(&cfg.CCMBinary, "ccm-binary", "bin/cloud-controller-manager", "the cloud-controller-manager binary (make build)")
	flag.StringVar(&cfg.Out, "out", "bench/results/routes.json", "where to write the JSON results")
	flag.StringVar(&cfg.WorkDir, "work-dir", "", "directory for logs and kubeconfigs (default: a new temporary directory)")
	flag.DurationVar(&cfg.Idle, "idle", time.Minute, "how long to watch the converged cluster for the idle API cost")
	flag.DurationVar(&cfg.Timeout, "timeout", 15*time.Minute, "give up on a phase after this long")
	ccmFlags := flagList{}
	flag.Var(&ccmFlags, "ccm-flag", "an extra CCM flag, e.g. --ccm-flag=--kube-api-qps=50 (repeatable)")
	flag.Parse()
	cfg.CCMFlags = ccmFlags
	for _, m := range strings.Split(*modes, ",") {
		if m = strings.TrimSpace(m); m != "" {
			if m != modePeriodic && m != modeWatch {
				fmt.Fprintf(os.Stderr, "routes: unknown mode %q (want periodic or watch)\n", m)
				os.Exit(2)
			}
			cfg.Modes = append(cfg.Modes, m)
		}
	}

	// envtest logs through controller-runtime, which warns (with a stack
	// trace) when no logger is set.
	ctrllog.SetLogger(logr.Discard())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	begin := time.Now()
	var results []result
	for _, mode := range cfg.Modes {
		res, err := run(ctx, cfg, mode)
		if err != nil {
			fmt.Fprintf(os.Stderr, "routes: %s: %v\n", mode, err)
			os.Exit(1)
		}
		results = append(results, res)
	}
	printResults(os.Stdout, results)
	if err := writeResults(cfg.Out, results); err != nil {
		fmt.Fprintln(os.Stderr, "routes:", err)
		os.Exit(1)
	}
	fmt.Printf("\nwrote %s (whole run %s)\n", cfg.Out, time.Since(begin).Round(time.Second))
}
