package tencent

import (
	"errors"
	"slices"
	"testing"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	tke "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/tke/v20180525"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"
)

// TestVPCRouteInsideVPCCIDR: a VPC route's destination "取值不能在私有网络网段内"
// (Route.DestinationCidrBlock, vpc@v1.3.83 models.go): CreateRoutes answers
// InvalidParameterValue.VpcCidrConflict ("目的网段和当前VPC的CIDR冲突",
// errors.go) for a destination inside the VPC's CIDR, and accepts one
// outside it or wider than it (a default route).
func TestVPCRouteInsideVPCCIDR(t *testing.T) {
	e, cl := vpcEnv(t) // tkeVPC is not seeded: 10.0.0.0/16
	tests := []struct {
		dst, code string
	}{
		{"10.0.5.0/24", CodeVPCCidrConflict},
		{"10.0.0.0/16", CodeVPCCidrConflict},
		{"10.1.0.0/24", ""},
		{"10.0.0.0/8", ""}, // wider than the VPC: not inside it
	}
	for _, tt := range tests {
		if _, err := createVPCRoutes(cl, vpcTableID, normalCVM(tt.dst, "10.0.0.1")); sdkCode(err) != tt.code {
			t.Errorf("route to %s: %v, want %q", tt.dst, err, tt.code)
		}
	}
	// A seeded CIDR replaces the default.
	if _, err := e.d.Networks().AddVPC(VPCNetwork{ID: tkeVPC, CIDR: "172.16.0.0/16", AssistantCIDRs: []string{"192.168.0.0/24"}}); err != nil {
		t.Fatal(err)
	}
	for dst, code := range map[string]string{"172.16.3.0/24": CodeVPCCidrConflict, "10.0.5.0/24": ""} {
		if _, err := createVPCRoutes(cl, vpcTableID, normalCVM(dst, "10.0.0.1")); sdkCode(err) != code {
			t.Errorf("seeded VPC, route to %s: %v, want %q", dst, err, code)
		}
	}
	// Out-of-band routes stand for other tools' and are not checked.
	if _, err := e.d.VPC().AddVPCRoute(vpcTableID, VPCRoute{DestinationCIDR: "172.16.9.0/24", GatewayType: "NAT", GatewayID: "nat-1"}); err != nil {
		t.Fatal(err)
	}
}

// TestTKETableConflictsWithVPCCIDR: CreateClusterRouteTable documents
// InternalError.CidrConflictWithVpcCidr ("CIDR和vpc冲突", tke@v1.3.136
// errors.go): a table CIDR overlapping the VPC's CIDR is refused.
func TestTKETableConflictsWithVPCCIDR(t *testing.T) {
	e, cl := tkeEnv(t, core.Config{})
	if _, err := e.d.Networks().AddVPC(VPCNetwork{ID: tkeVPC, CIDR: "172.16.0.0/16"}); err != nil {
		t.Fatal(err)
	}
	mk := func(name, cidr string) error {
		req := tke.NewCreateClusterRouteTableRequest()
		req.RouteTableName, req.RouteTableCidrBlock, req.VpcId = common.StringPtr(name), common.StringPtr(cidr), common.StringPtr(tkeVPC)
		_, err := cl.CreateClusterRouteTable(req)
		return err
	}
	// In order: the accepted table last, so that its CIDR cannot be the
	// conflict a wider candidate is refused for.
	for _, tt := range []struct{ name, cidr, code string }{
		{"cls-inside01", "172.16.128.0/17", CodeCidrConflictWithVpcCidr},
		{"cls-around01", "172.16.0.0/12", CodeCidrConflictWithVpcCidr},
		{"cls-apart001", "172.20.0.0/16", ""},
	} {
		if err := mk(tt.name, tt.cidr); sdkCode(err) != tt.code {
			t.Errorf("table %s: %v, want %q", tt.cidr, err, tt.code)
		}
	}
}

func TestDescribeVpcs(t *testing.T) {
	e, _ := vpcEnv(t)
	if _, err := e.d.Networks().AddVPC(VPCNetwork{ID: "vpc-seeded01", Name: "prod", CIDR: "192.168.0.0/16", AssistantCIDRs: []string{"172.16.0.0/16"}}); err != nil {
		t.Fatal(err)
	}
	cl, err := vpc.NewClient(common.NewCredential(testID, testKey), testRegion, clientProfile(e))
	if err != nil {
		t.Fatal(err)
	}
	describe := func(mod func(*vpc.DescribeVpcsRequest)) ([]*vpc.Vpc, error) {
		req := vpc.NewDescribeVpcsRequest()
		if mod != nil {
			mod(req)
		}
		resp, err := cl.DescribeVpcs(req)
		if err != nil {
			return nil, err
		}
		return resp.Response.VpcSet, nil
	}
	ids := func(set []*vpc.Vpc) []string {
		var out []string
		for _, v := range set {
			out = append(out, *v.VpcId)
		}
		return out
	}
	// Every VPC: seeded, the default, those of instances and tables.
	all, err := describe(nil)
	if err != nil || !slices.Equal(ids(all), []string{core.DefaultVpcID, "vpc-other001", "vpc-seeded01", tkeVPC}) {
		t.Fatalf("all VPCs: %v %v", ids(all), err)
	}
	one, err := describe(func(r *vpc.DescribeVpcsRequest) { r.VpcIds = common.StringPtrs([]string{"vpc-seeded01"}) })
	if err != nil || len(one) != 1 || *one[0].CidrBlock != "192.168.0.0/16" || *one[0].VpcName != "prod" ||
		len(one[0].AssistantCidrSet) != 1 || *one[0].AssistantCidrSet[0].CidrBlock != "172.16.0.0/16" {
		t.Fatalf("seeded VPC: %v %v", mustJSON(one), err)
	}
	def, err := describe(func(r *vpc.DescribeVpcsRequest) { r.VpcIds = common.StringPtrs([]string{tkeVPC}) })
	if err != nil || len(def) != 1 || *def[0].CidrBlock != DefaultVPCCIDR {
		t.Fatalf("unseeded VPC: %v %v", mustJSON(def), err)
	}
	if none, err := describe(func(r *vpc.DescribeVpcsRequest) { r.VpcIds = common.StringPtrs([]string{"vpc-nothere1"}) }); err != nil || len(none) != 0 {
		t.Fatalf("unknown VPC: %v %v", none, err)
	}
	byName, err := describe(func(r *vpc.DescribeVpcsRequest) {
		r.Filters = []*vpc.Filter{{Name: common.StringPtr("vpc-name"), Values: common.StringPtrs([]string{"pro"})}}
	})
	if err != nil || !slices.Equal(ids(byName), []string{"vpc-seeded01"}) {
		t.Fatalf("vpc-name filter: %v %v", ids(byName), err)
	}
	for name, tt := range map[string]struct {
		mod  func(*vpc.DescribeVpcsRequest)
		code string
	}{
		"ids and filters": {func(r *vpc.DescribeVpcsRequest) {
			r.VpcIds = common.StringPtrs([]string{tkeVPC})
			r.Filters = []*vpc.Filter{{Name: common.StringPtr("vpc-id"), Values: common.StringPtrs([]string{tkeVPC})}}
		}, CodeVPCCoexist},
		"malformed id":   {func(r *vpc.DescribeVpcsRequest) { r.VpcIds = common.StringPtrs([]string{"vpc-1"}) }, CodeVPCMalformed},
		"unknown filter": {func(r *vpc.DescribeVpcsRequest) { r.Filters = []*vpc.Filter{{Name: common.StringPtr("zone")}} }, CodeVPCFilterInvalidKey},
		"limit 101":      {func(r *vpc.DescribeVpcsRequest) { r.Limit = common.StringPtr("101") }, CodeVPCLimitOutOfRange},
	} {
		if _, err := describe(tt.mod); sdkCode(err) != tt.code {
			t.Errorf("%s: %v, want %s", name, err, tt.code)
		}
	}
	// Seeds are checked as CreateVpc would: "仅能在10.0.0.0/12，172.16.0.0/12，
	// 192.168.0.0/16这三个内网网段内" (CreateVpcRequestParams.CidrBlock).
	for _, bad := range []VPCNetwork{{ID: "vpc-bad00001", CIDR: "10.16.0.0/16"}, {ID: "vpc-1", CIDR: "10.0.0.0/16"},
		{ID: "vpc-bad00002", CIDR: "10.0.0.1/16"}, {ID: "vpc-bad00003", CIDR: "10.0.0.0/16", AssistantCIDRs: []string{"10.0.1.0/24"}}} {
		if _, err := e.d.Networks().AddVPC(bad); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("seed %+v: %v, want invalid", bad, err)
		}
	}
}
