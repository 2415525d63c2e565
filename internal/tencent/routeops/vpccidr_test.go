package routeops

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	tke "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/tke/v20180525"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"
	"k8s.io/component-base/metrics/testutil"

	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// failingVPCs cannot read VPCs (no permission), so nothing is checked
// before calling.
type failingVPCs struct{ VPCAPI }

func (failingVPCs) DescribeVpcsWithContext(context.Context, *vpc.DescribeVpcsRequest) (*vpc.DescribeVpcsResponse, error) {
	return nil, errors.New("UnauthorizedOperation")
}

// TestVPCRouteInsideVPCCIDR: a VPC route's destination "取值不能在私有网络网段内"
// (Route.DestinationCidrBlock, vpc@v1.3.83 models.go; the API answers
// InvalidParameterValue.VpcCidrConflict). With the VPC's CIDR known, such a
// route is refused before any call, with a message that says what to do;
// without it, the API's refusal gets the same message.
func TestVPCRouteInsideVPCCIDR(t *testing.T) {
	ctx := context.Background()
	sim, cl := startVPCSim(t)
	if _, err := sim.Tencent().Networks().AddVPC(tencent.VPCNetwork{ID: simVPC, CIDR: "10.0.0.0/16"}); err != nil {
		t.Fatal(err)
	}
	inside := rt("10.0.128.0/24", "10.0.0.1")
	want := []string{"lies inside the VPC's CIDR (10.0.0.0/16)", "choose a --cluster-cidr", "VpcCidrConflict"}

	m := NewManager(NewVPC(cl, simRTB, simVPC, nil), Options{ClusterCIDR: netip.MustParsePrefix("10.0.0.0/8"), VPC: NewVPCCIDRs(cl, simVPC)})
	sim.ResetCalls()
	err := m.Create(ctx, "n1", inside)
	if !errors.Is(err, ErrVPCCIDRConflict) {
		t.Fatalf("Create = %v, want ErrVPCCIDRConflict", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if n := sim.Calls()["CreateRoutes"]; len(n) != 0 {
		t.Errorf("CreateRoutes calls = %v, want none (known to be refused)", n)
	}
	// The start-up check saw it too.
	if v, _ := testutil.GetGaugeMetricValue(vpcConflicts); v != 1 {
		t.Errorf("cluster_cidr_overlaps_vpc = %v, want 1", v)
	}
	if err := m.Create(ctx, "n1", rt("10.1.0.0/24", "10.0.0.1")); err != nil {
		t.Errorf("a route outside the VPC's CIDR: %v", err)
	}

	// Without DescribeVpcs the cloud refuses, and the code is explained.
	blind := NewManager(NewVPC(failingVPCs{cl}, simRTB, simVPC, nil), Options{ClusterCIDR: netip.MustParsePrefix("10.0.0.0/8"), VPC: NewVPCCIDRs(cl, simVPC)})
	sim.ResetCalls()
	err = blind.Create(ctx, "n1", inside)
	if !errors.Is(err, ErrVPCCIDRConflict) || !strings.Contains(err.Error(), "[InvalidParameterValue.VpcCidrConflict]") || !strings.Contains(err.Error(), want[1]) {
		t.Fatalf("Create with the cloud refusing = %v", err)
	}
	if n := sim.Calls()["CreateRoutes"]["InvalidParameterValue.VpcCidrConflict"]; n != 1 {
		t.Errorf("CreateRoutes refusals = %d, want 1", n)
	}

	// A cluster CIDR apart from the VPC's: no conflict reported.
	apart := NewManager(NewVPC(cl, simRTB, simVPC, nil), Options{ClusterCIDR: netip.MustParsePrefix("10.200.0.0/16"), VPC: NewVPCCIDRs(cl, simVPC)})
	if _, err := apart.List(ctx, nodeMap{}); err != nil {
		t.Fatal(err)
	}
	if v, _ := testutil.GetGaugeMetricValue(vpcConflicts); v != 0 {
		t.Errorf("cluster_cidr_overlaps_vpc = %v, want 0", v)
	}
}

// TestTKETableCreateConflictsWithVPCCIDR: CreateClusterRouteTable refuses a
// CIDR overlapping the VPC's (InternalError.CidrConflictWithVpcCidr,
// tke@v1.3.136 errors.go); the error names the VPC's CIDR.
func TestTKETableCreateConflictsWithVPCCIDR(t *testing.T) {
	ctx := context.Background()
	sim, url := startSimURL(t)
	if _, err := sim.Tencent().Networks().AddVPC(tencent.VPCNetwork{ID: simVPC, CIDR: "172.16.0.0/16"}); err != nil {
		t.Fatal(err)
	}
	tkeCl, err := tke.NewClient(common.NewCredential(simID, simKey), simRegion, simProfile(url))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := vpc.NewClient(common.NewCredential(simID, simKey), simRegion, simProfile(url))
	if err != nil {
		t.Fatal(err)
	}
	m := NewManager(NewTKE(tkeCl, "cls-vpccidr1", simVPC), Options{CreateTable: true, ClusterCIDR: netip.MustParsePrefix("172.16.0.0/12"), VPC: NewVPCCIDRs(cl, simVPC)})
	_, err = m.List(ctx, nodeMap{})
	if !errors.Is(err, ErrTableCIDRConflict) || !strings.Contains(err.Error(), "VPC's CIDR (172.16.0.0/16)") || !strings.Contains(err.Error(), "CidrConflictWithVpcCidr") {
		t.Fatalf("List = %v", err)
	}
}

func TestVPCCIDRsLookup(t *testing.T) {
	ctx := context.Background()
	sim, cl := startVPCSim(t)
	if _, err := sim.Tencent().Networks().AddVPC(tencent.VPCNetwork{ID: simVPC, CIDR: "192.168.0.0/16", AssistantCIDRs: []string{"172.16.0.0/16"}}); err != nil {
		t.Fatal(err)
	}
	v := NewVPCCIDRs(cl, simVPC)
	for range 2 {
		primary, all, err := v.CIDRs(ctx)
		if err != nil || primary.String() != "192.168.0.0/16" || len(all) != 2 || all[1].String() != "172.16.0.0/16" {
			t.Fatalf("CIDRs = %v %v %v", primary, all, err)
		}
	}
	if n := sim.Calls()["DescribeVpcs"]["OK"]; n != 1 {
		t.Errorf("DescribeVpcs calls = %d, want 1 (kept)", n)
	}
	if _, _, err := NewVPCCIDRs(cl, "vpc-nothere1").CIDRs(ctx); err == nil || !strings.Contains(err.Error(), "not in the answer") {
		t.Errorf("unknown VPC: %v", err)
	}
}
