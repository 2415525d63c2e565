// Package routes is the route section of `make bench` (go run ./bench): the
// route controller on a TKE cluster route table, against a real
// kube-apiserver and etcd (internal/testcluster), cloudsim with its
// documented rate limits (DescribeClusterRoutes 50/s, CreateClusterRoute and
// DeleteClusterRoute 20/s), and the cloud-controller-manager as its own
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
//
// A third mode, vpc, runs the periodic controller on a VPC route table
// (route_backend: vpc), whose CreateRoutes takes many routes per call, with
// at most the table's quota of nodes (200).
//   - churn: the time until the routes of 10% deleted nodes are gone.
package routes

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"text/tabwriter"
	"time"

	"github.com/ccmkit/ccm/bench/report"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// Config is what one run measures.
type Config struct {
	Nodes     int
	Modes     []string // modePeriodic, modeWatch
	CCMBinary string
	WorkDir   string        // logs and kubeconfigs; empty: a new temporary directory
	Idle      time.Duration // how long to watch the converged cluster for the idle API cost
	Timeout   time.Duration // give up on a phase after this long
	CCMFlags  []string
}

// DefaultConfig is the full-size run of `make bench`. Idle is 20 s, two
// periodic reconciles (every 10 s): enough for a per-minute rate, and make
// bench has a time budget (25 minutes for every section).
func DefaultConfig() Config {
	return Config{Nodes: 1000, Modes: []string{modePeriodic, modeWatch, modeVPC}, CCMBinary: "bin/cloud-controller-manager",
		Idle: 20 * time.Second, Timeout: 15 * time.Minute}
}

// ValidMode reports whether m is a mode Run knows.
func ValidMode(m string) bool { return m == modePeriodic || m == modeWatch || m == modeVPC }

// Result is the section's numbers: one entry per mode, and the targets.
type Result struct {
	Nodes int          `json:"nodes"`
	Modes []ModeResult `json:"modes"`
	// FloorSeconds is what the cloud's write limit forces: one
	// CreateClusterRoute per route (TKE has no batch create) at its
	// documented rate.
	FloorSeconds float64         `json:"floor_seconds"`
	Target       string          `json:"target"`
	Targets      map[string]bool `json:"targets"`
	Met          bool            `json:"met"`
}

// Run measures each configured mode, each with a fresh cloudsim and CCM
// on one control plane (starting one takes 5-10 s): between modes it
// deletes the Nodes and Events the last left. Progress goes to log.
func Run(ctx context.Context, cfg Config, log io.Writer) (*Result, error) {
	res := &Result{Nodes: cfg.Nodes}
	if cfg.WorkDir == "" {
		dir, err := os.MkdirTemp("", "ccm-bench-routes-")
		if err != nil {
			return nil, err
		}
		cfg.WorkDir = dir
	}
	cp, err := startControlPlane(ctx, cfg.WorkDir, log)
	if err != nil {
		return nil, err
	}
	defer func() { _ = cp.cluster.Stop() }() // at exit: nothing is left to do about a failed stop
	for k, mode := range cfg.Modes {
		if k > 0 {
			if err := cp.reset(ctx, log); err != nil {
				return nil, err
			}
		}
		m, err := runMode(ctx, cfg, mode, cp, log)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mode, err)
		}
		res.Modes = append(res.Modes, m)
	}
	res.evaluate()
	return res, nil
}

// The targets are our own (the issue sets none for routes): all routes
// within 1.2x the write-limit floor plus 10 s (the CCM's start-up and the
// route controller's first 10 s period), no more creates than the backend's
// batch size forces (TKE: one per route; VPC: one per vpcRoutesPerCall
// routes, plus one per route-controller pass that finds routes missing),
// and no RequestLimitExceeded answer.
func (r *Result) evaluate() {
	r.FloorSeconds = float64(r.Nodes) / createRoutesPerSecond
	r.Target = "all routes <= 1.2x the backend's write floor + 10 s, creates <= what its batch size forces, 0 throttled"
	within, fewCreates, throttled := true, true, 0
	for _, m := range r.Modes {
		within = within && m.AllRoutesSeconds <= 1.2*m.FloorSeconds+10
		fewCreates = fewCreates && m.CallsToRoutes[m.CreateAction] <= m.maxCreates()
		throttled += sum(m.Throttled)
	}
	r.Targets = map[string]bool{
		"routes_within_1.2x_floor_plus_10s": within,
		"creates_within_batch_bound":        fewCreates,
		"no_request_limit_exceeded":         throttled == 0,
	}
	r.Met = report.AllMet(r.Targets)
}

// maxCreates is the most create calls the mode may make: one per route on
// a TKE table; on a VPC table, one per full batch plus a partial batch for
// each of the route controller's first few passes (routes of nodes that
// appear between passes).
func (m ModeResult) maxCreates() int {
	if m.CreateAction != backendOf(modeVPC).create {
		return m.Nodes
	}
	return (m.Nodes+vpcRoutesPerCall-1)/vpcRoutesPerCall + 2
}

// Print writes the table.
func (r *Result) Print(w io.Writer) {
	fmt.Fprintf(w, "\nRoute benchmark: %d nodes (a VPC table holds at most %d); floor = creates forced at %.0f/s; target: %s\n\n",
		r.Nodes, tencent.MaxRoutesPerTable, createRoutesPerSecond, r.Target)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "mode\tnodes\tall routes\tfloor\tvs floor\tDescribe\tCreate\tthrottled\tall NetworkUnavailable=False\tidle Describe/min\tchurn (routes of 10% deleted nodes gone)")
	for _, m := range r.Modes {
		fmt.Fprintf(tw, "%s\t%d\t%.1fs\t%.1fs\t%.2fx\t%d %s\t%d %s\t%d\t%.1fs\t%.1f\t%d nodes: %.1fs, %d deletes\n",
			m.Mode, m.Nodes, m.AllRoutesSeconds, m.FloorSeconds, m.AllRoutesSeconds/math.Max(m.FloorSeconds, 1e-9),
			m.CallsToRoutes[m.DescribeAction], m.DescribeAction, m.CallsToRoutes[m.CreateAction], m.CreateAction,
			sum(m.Throttled), m.AllConditionsSeconds, m.IdleDescribePerMinute, m.ChurnNodes, m.ChurnSeconds, m.ChurnCalls[m.DeleteAction])
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "met: %v %v\n", r.Met, r.Targets)
}
