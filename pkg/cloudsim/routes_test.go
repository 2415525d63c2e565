package cloudsim_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// Route tables seeded from Options, read and changed through the admin
// client as a test in another process would.
func TestRouteTablesAdminClient(t *testing.T) {
	ctx := context.Background()
	sim, url := start(t, cloudsim.Options{
		Tencent: cloudsim.TencentOptions{
			RouteTables: []tencent.RouteTable{{Name: "cls-seed0001", CIDR: "10.244.0.0/16", VpcID: "vpc-seed0001",
				Routes: []tencent.ClusterRoute{{DestinationCIDR: "10.244.1.0/24", GatewayIP: "10.0.0.1"}}}},
			VPCRouteTables: []tencent.VPCRouteTable{{ID: "rtb-seed0001", VpcID: "vpc-seed0001",
				Routes: []tencent.VPCRoute{{DestinationCIDR: "0.0.0.0/0", GatewayType: "NAT", GatewayID: "nat-1"}}}},
		},
	})
	ac := &cloudsim.AdminClient{BaseURL: url}

	if err := ac.AddClusterRoute(ctx, "cls-seed0001", tencent.ClusterRoute{DestinationCIDR: "10.244.2.0/24", GatewayIP: "10.0.0.2"}); err != nil {
		t.Fatal(err)
	}
	var ae *cloudsim.AdminError
	if err := ac.AddClusterRoute(ctx, "cls-seed0001", tencent.ClusterRoute{DestinationCIDR: "10.244.2.0/25", GatewayIP: "10.0.0.3"}); !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest {
		t.Fatalf("overlapping route: %v", err)
	}
	rt, err := ac.RouteTable(ctx, "cls-seed0001")
	if err != nil || len(rt.Routes) != 2 {
		t.Fatalf("RouteTable = %+v, %v", rt, err)
	}
	if err := ac.DeleteClusterRoute(ctx, "cls-seed0001", rt.Routes[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := ac.CreateRouteTable(ctx, tencent.RouteTable{Name: "cls-seed0002", CIDR: "172.16.0.0/16", VpcID: "vpc-seed0001"}); err != nil {
		t.Fatal(err)
	}
	tables, err := ac.RouteTables(ctx)
	if err != nil || len(tables) != 2 || len(tables[0].Routes) != 1 || len(sim.Tencent().TKE().RouteTables()) != 2 {
		t.Fatalf("RouteTables = %+v, %v", tables, err)
	}
	if _, err := ac.RouteTable(ctx, "cls-nothere"); !errors.As(err, &ae) || ae.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown table: %v", err)
	}

	r, err := ac.AddVPCRoute(ctx, "rtb-seed0001", tencent.VPCRoute{DestinationCIDR: "172.30.0.0/16", GatewayType: "PEERCONNECTION", GatewayID: "pcx-1"})
	if err != nil || r.ID == 0 {
		t.Fatalf("AddVPCRoute = %+v, %v", r, err)
	}
	if _, err := ac.CreateVPCRouteTable(ctx, tencent.VPCRouteTable{VpcID: "vpc-seed0001"}); err != nil {
		t.Fatal(err)
	}
	vts, err := ac.VPCRouteTables(ctx)
	if err != nil || len(vts) != 2 || len(vts[0].Routes) != 2 {
		t.Fatalf("VPCRouteTables = %+v, %v", vts, err)
	}
	if got, _ := sim.Tencent().VPC().VPCRouteTable("rtb-seed0001"); len(got.Routes) != 2 {
		t.Fatalf("VPCRouteTable = %+v", got)
	}
}
