package routeops

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

const simRTB = "rtb-route001"

// startVPCSim is startSim with a VPC route table holding another tool's
// routes: a default route to a NAT gateway, and a NORMAL_CVM route to an
// instance that is no node of ours.
func startVPCSim(t *testing.T, tkeTables ...tencent.RouteTable) (*cloudsim.Sim, *vpc.Client) {
	t.Helper()
	sim, url := startSimURL(t, tkeTables...)
	if _, err := sim.Tencent().VPC().CreateVPCRouteTable(tencent.VPCRouteTable{ID: simRTB, VpcID: simVPC, Routes: []tencent.VPCRoute{
		{DestinationCIDR: "0.0.0.0/0", GatewayType: "NAT", GatewayID: "nat-aaaa0001"},
		{DestinationCIDR: "10.200.9.0/24", GatewayType: GatewayTypeNormalCVM, GatewayID: "10.0.0.9"},
	}}); err != nil {
		t.Fatal(err)
	}
	cl, err := vpc.NewClient(common.NewCredential(simID, simKey), simRegion, simProfile(url))
	if err != nil {
		t.Fatal(err)
	}
	return sim, cl
}

func TestManagerWithVPC(t *testing.T) {
	ctx := context.Background()
	sim, cl := startVPCSim(t)
	m := NewManager(NewVPC(cl, simRTB, simVPC, nil), Options{ClusterCIDR: netip.MustParsePrefix("10.200.0.0/16"), CacheTTL: 9e9})
	nodes := nodeMap{"10.0.0.1": "n1", "10.0.0.2": "n2"}

	if got, err := m.List(ctx, nodes); err != nil || len(got) != 0 {
		t.Fatalf("List = %v, %v (the NAT and foreign routes are not ours)", names(got), err)
	}
	if err := m.Create(ctx, "n1", rt("10.200.1.0/24", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	// Another node's route to the foreign route's destination: a conflict
	// that names the route in the way.
	err := m.Create(ctx, "n2", rt("10.200.9.0/24", "10.0.0.2"))
	if !errors.Is(err, ErrCIDRConflict) || !strings.Contains(err.Error(), "overlaps route 10.200.9.0/24 -> 10.0.0.9") ||
		!strings.Contains(err.Error(), "InvalidParameterValue.Duplicate") {
		t.Fatalf("conflict: %v", err)
	}
	// Two routes to one gateway are fine in a VPC table.
	if err := m.Create(ctx, "n1", rt("10.200.2.0/24", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	got, err := m.List(ctx, nodes)
	if err != nil || len(got) != 2 || got[0].ID == "" {
		t.Fatalf("List = %+v, %v", got, err)
	}
	if err := m.Delete(ctx, rt("10.200.1.0/24", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	table, _ := sim.Tencent().VPC().VPCRouteTable(simRTB)
	var dsts []string
	for _, r := range table.Routes {
		dsts = append(dsts, r.DestinationCIDR+">"+r.GatewayID)
	}
	if strings.Join(dsts, ",") != "0.0.0.0/0>nat-aaaa0001,10.200.9.0/24>10.0.0.9,10.200.2.0/24>10.0.0.1" {
		t.Fatalf("table now %v", dsts)
	}
	if table.Routes[2].Description == "" {
		t.Errorf("our route has no description")
	}
}

func TestVPCBackendErrors(t *testing.T) {
	ctx := context.Background()
	_, cl := startVPCSim(t, tencent.RouteTable{Name: simTable, CIDR: "10.244.0.0/16", VpcID: simVPC})
	b := NewVPC(cl, simRTB, simVPC, nil)
	tests := []struct {
		name     string
		route    Route
		wantKind error
	}{
		{"inside a TKE cluster route table", rt("10.244.1.0/24", "10.0.0.1"), ErrTKECIDRConflict},
		{"gateway not an instance", rt("10.200.1.0/24", "10.0.0.77"), ErrGatewayNotInstance},
	}
	for _, tc := range tests {
		if _, err := b.CreateRoute(ctx, tc.route); !errors.Is(err, tc.wantKind) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.wantKind)
		}
	}
	if _, err := NewVPC(cl, "rtb-notthere", simVPC, nil).FindTable(ctx); !errors.Is(err, ErrTableNotFound) {
		t.Errorf("unknown table: %v", err)
	}
	if _, err := NewVPC(cl, simRTB, "vpc-other001", nil).FindTable(ctx); err == nil || !strings.Contains(err.Error(), "belongs to VPC "+simVPC) {
		t.Errorf("table of another VPC: %v", err)
	}
	// Not "the conflicting route is gone now; the next reconcile retries":
	// no route is in the way, the TKE table's CIDR is, on every reconcile.
	tkeCIDR := NewManager(b, Options{ClusterCIDR: netip.MustParsePrefix("10.244.0.0/16")})
	if err := tkeCIDR.Create(ctx, "n1", rt("10.244.1.0/24", "10.0.0.1")); !errors.Is(err, ErrTKECIDRConflict) ||
		!strings.Contains(err.Error(), "inside the CIDR of a TKE cluster route table") {
		t.Errorf("a pod CIDR inside a TKE table: %v", err)
	}
	m := NewManager(NewVPC(cl, "rtb-notthere", simVPC, nil), Options{ClusterCIDR: netip.MustParsePrefix("10.200.0.0/16"), CreateTable: true})
	if _, err := m.List(ctx, nodeMap{}); !errors.Is(err, ErrTableNotFound) || !strings.Contains(err.Error(), "does not create VPC route tables") {
		t.Errorf("VPC tables are never created: %v", err)
	}
}
