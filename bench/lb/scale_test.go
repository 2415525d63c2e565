package lb

import (
	"maps"
	"slices"
	"testing"
)

// The read budget is ceil(S / per call) for each load balancer read, and
// only reads above it are listed.
func TestReadBudget(t *testing.T) {
	perCall := map[string]int{"DescribeLoadBalancers": 100, "DescribeTargets": 1}
	for _, c := range []struct {
		name     string
		services int
		reads    map[string]int
		budget   map[string]int
		over     []string
	}{
		{"1,000 at the budget", 1000, map[string]int{"DescribeLoadBalancers": 10, "DescribeTargets": 1000},
			map[string]int{"DescribeLoadBalancers": 10, "DescribeTargets": 1000}, nil},
		{"per-Service listing over", 1000, map[string]int{"DescribeLoadBalancers": 1000, "DescribeTargets": 999, "DescribeSecurityGroups": 500},
			map[string]int{"DescribeLoadBalancers": 10, "DescribeTargets": 1000}, []string{"DescribeLoadBalancers 1000 > 10"}},
		{"50 rounds up to one page", 50, map[string]int{"DescribeLoadBalancers": 2},
			map[string]int{"DescribeLoadBalancers": 1, "DescribeTargets": 50}, []string{"DescribeLoadBalancers 2 > 1"}},
	} {
		budget := readBudget(c.services, perCall)
		if !maps.Equal(budget, c.budget) {
			t.Errorf("%s: budget %v, want %v", c.name, budget, c.budget)
		}
		if over := overBudget(c.reads, budget); !slices.Equal(over, c.over) {
			t.Errorf("%s: over %v, want %v", c.name, over, c.over)
		}
	}
}

// The write floors: on Tencent the busiest action at its own rate; on OCI
// every write through the 20/s, burst-5 bucket, then one work request.
func TestScaleWriteFloors(t *testing.T) {
	rate := func(a string) float64 {
		if a == "Unlimited" {
			return 0
		}
		return 20
	}
	for _, c := range []struct {
		name   string
		writes map[string]int
		want   float64
	}{
		{"one write per CLB per action", map[string]int{"CreateLoadBalancer": 1000, "CreateListener": 1000, "BatchRegisterTargets": 1000}, 50},
		{"the busiest action bounds", map[string]int{"CreateLoadBalancer": 50, "BatchRegisterTargets": 70}, 3.5},
		{"an action with no limit costs nothing", map[string]int{"Unlimited": 500}, 0},
	} {
		if got := tencentWriteFloor(c.writes, rate); got != c.want {
			t.Errorf("tencent %s: %v, want %v", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		name   string
		writes map[string]int
		want   float64
	}{
		{"1,000 creations", map[string]int{"CreateLoadBalancer": 1000}, 50.05},
		{"1,000 across operations", map[string]int{"CreateLoadBalancer": 500, "UpdateBackendSet": 500}, 50.05},
		{"within the burst", map[string]int{"UpdateBackendSet": 5}, 0.3},
	} {
		if got := ociWriteFloor(c.writes); got != c.want {
			t.Errorf("oci %s: %v, want %v", c.name, got, c.want)
		}
	}
}

// Each target is met or not on its own numbers.
func TestScaleEvaluate(t *testing.T) {
	good := func() ScaleCloud {
		return ScaleCloud{Create: ScaleTimed{Ratio: 1.2}, Join: ScaleTimed{Ratio: 1.4, WritesTotal: 100}, PeakRSSMiB: 120}
	}
	for _, c := range []struct {
		name   string
		edit   func(*ScaleCloud)
		failed string
	}{
		{"all met", func(*ScaleCloud) {}, ""},
		{"slow creation", func(c *ScaleCloud) { c.Create.Ratio = 1.6 }, "create_within_1.5x_floor"},
		{"a resync write", func(c *ScaleCloud) { c.Resync.WritesTotal = 1 }, "resync_no_writes"},
		{"drift reads over", func(c *ScaleCloud) { c.Drift.OverBudget = []string{"x"} }, "drift_reads_within_budget"},
		{"two writes per LB on join", func(c *ScaleCloud) { c.Join.WritesTotal = 101 }, "join_one_write_per_lb"},
		{"throttled", func(c *ScaleCloud) { c.Throttled = map[string]int{"CreateListener": 1} }, "no_throttled"},
		{"no RSS read", func(c *ScaleCloud) { c.PeakRSSMiB = 0 }, "peak_rss"},
	} {
		r := good()
		c.edit(&r)
		r.evaluate(100)
		for name, ok := range r.Targets {
			if ok == (name == c.failed) {
				t.Errorf("%s: target %s met=%v", c.name, name, ok)
			}
		}
		if r.Met != (c.failed == "") {
			t.Errorf("%s: met %v", c.name, r.Met)
		}
	}
}
