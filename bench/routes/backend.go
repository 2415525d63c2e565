package routes

import (
	"fmt"
	"math"

	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// modeVPC is the periodic route controller on a VPC route table
// (route_backend: vpc), whose CreateRoutes takes many routes per call.
const modeVPC = "vpc"

// backend is what a mode's route table looks like to the benchmark: its
// actions, what the CCM's config says, and its routes as cloudsim holds
// them.
type backend struct {
	describe, create, remove string // the route actions
	config                   string // cloud config lines selecting it
	// perCall is how many routes one create call carries at most.
	perCall int
	// maxNodes is the table's route quota (0: none that the run reaches).
	maxNodes  int
	tkeTables []tencent.RouteTable // cloudsim's TKE cluster route tables
	setup     func(sim *cloudsim.Sim) error
	routes    func(sim *cloudsim.Sim) ([]tencent.ClusterRoute, error)
}

const benchRTB = "rtb-bench001"

// backendOf returns mode's backend: the TKE cluster route table for the
// periodic and watch modes, a VPC route table for modeVPC (and no TKE
// table, whose CIDR a VPC route may not enter:
// UnsupportedOperation.ConflictWithDockerRoute).
func backendOf(mode string) backend {
	if mode != modeVPC {
		return backend{describe: "DescribeClusterRoutes", create: "CreateClusterRoute", remove: "DeleteClusterRoute",
			config: fmt.Sprintf("cluster_route_table: %s\n", benchTable), perCall: 1,
			tkeTables: []tencent.RouteTable{{Name: benchTable, CIDR: benchClusterCIDR, VpcID: benchVPC}},
			setup:     func(*cloudsim.Sim) error { return nil },
			routes: func(sim *cloudsim.Sim) ([]tencent.ClusterRoute, error) {
				rt, err := sim.Tencent().TKE().RouteTable(benchTable)
				return rt.Routes, err
			}}
	}
	return backend{describe: "DescribeRouteTables", create: "CreateRoutes", remove: "DeleteRoutes",
		config:  fmt.Sprintf("route_backend: vpc\nroute_table_id: %s\n", benchRTB),
		perCall: vpcRoutesPerCall, maxNodes: tencent.MaxRoutesPerTable,
		setup: func(sim *cloudsim.Sim) error {
			_, err := sim.Tencent().VPC().CreateVPCRouteTable(tencent.VPCRouteTable{ID: benchRTB, VpcID: benchVPC})
			return err
		},
		routes: func(sim *cloudsim.Sim) ([]tencent.ClusterRoute, error) {
			rt, err := sim.Tencent().VPC().VPCRouteTable(benchRTB)
			out := make([]tencent.ClusterRoute, 0, len(rt.Routes))
			for _, r := range rt.Routes {
				out = append(out, tencent.ClusterRoute{DestinationCIDR: r.DestinationCIDR, GatewayIP: r.GatewayID})
			}
			return out, err
		}}
}

// vpcRoutesPerCall is routeops' batch size (createBatchMax), which the
// write floor assumes.
const vpcRoutesPerCall = 50

// floorSeconds is what the create limit forces for n routes: one call per
// perCall routes, at createRoutesPerSecond.
func (b backend) floorSeconds(n int) float64 {
	return math.Ceil(float64(n)/float64(b.perCall)) / createRoutesPerSecond
}

// nodes is how many nodes a run of n measures on this backend: no more
// than the table holds.
func (b backend) nodes(n int) int {
	if b.maxNodes > 0 {
		return min(n, b.maxNodes)
	}
	return n
}
