// Command nodes is the node benchmark behind `make bench`: a real
// kube-apiserver and etcd (internal/testcluster), cloudsim with its
// documented rate limits, and the cloud-controller-manager as its own
// process. It measures, in one run:
//
//   - init: the time until N tainted nodes are initialized, and the
//     DescribeInstances calls that took;
//   - floor: the time a bare client takes to PATCH the same N nodes with the
//     same fields, as fast as the apiserver allows;
//   - baseline: init again with the inventory off (one call per lookup, like
//     upstream and the public Tencent CCM);
//   - a steady-state full node status sync: calls and duration;
//   - 10% of the nodes NotReady for a minute: the lifecycle controller's calls;
//   - RequestLimitExceeded answers from cloudsim over the whole run;
//   - the CCM's peak RSS and CPU seconds.
//
// It prints one table and writes JSON (default bench/results/latest.json).
// It is a benchmark, not a test; `go test -tags e2e ./bench/nodes/` runs a
// small smoke version that checks correctness and the call budget only.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	cfg := defaultConfig()
	flag.IntVar(&cfg.Nodes, "nodes", cfg.Nodes, "number of nodes (and instances)")
	flag.StringVar(&cfg.CCMBinary, "ccm-binary", cfg.CCMBinary, "the cloud-controller-manager binary (make build)")
	flag.StringVar(&cfg.Out, "out", cfg.Out, "where to write the JSON results")
	flag.StringVar(&cfg.WorkDir, "work-dir", "", "directory for logs and kubeconfigs (default: a new temporary directory)")
	flag.IntVar(&cfg.FloorWorkers, "floor-workers", cfg.FloorWorkers, "concurrent PATCH workers of the bare-client floor")
	flag.DurationVar(&cfg.StatusSyncEvery, "node-status-update-frequency", cfg.StatusSyncEvery,
		"the CCM's --node-status-update-frequency during the run (longer than the cache TTL, as in production)")
	flag.StringVar(&cfg.CacheTTL, "instance-cache-ttl", cfg.CacheTTL, "instance_cache_ttl for the CCM (empty: the CCM's default)")
	flag.DurationVar(&cfg.NotReadyFor, "notready-for", cfg.NotReadyFor, "how long 10% of the nodes stay NotReady")
	flag.BoolVar(&cfg.SkipBaseline, "skip-baseline", false, "skip the unbatched baseline (it takes about N/40 seconds)")
	flag.BoolVar(&cfg.InitOnly, "init-only", false, "measure initialization only (floor, ours, baseline): for tuning flags")
	flag.Var(&cfg.CCMFlags, "ccm-flag", "an extra CCM flag, e.g. --ccm-flag=--concurrent-node-syncs=20 (repeatable; overrides the recommended set)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	begin := time.Now()
	res, err := run(ctx, cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	res.print(os.Stdout)
	if err := res.write(cfg.Out); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	fmt.Printf("\nwrote %s (whole run %s)\n", cfg.Out, time.Since(begin).Round(time.Second))
}
