package tencent

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"
)

const vpcTableID = "rtb-route001"

// vpcEnv has the instances and TKE table of tkeEnv, and a VPC route table
// in tkeVPC with a route to a NAT gateway.
func vpcEnv(t *testing.T) (*env, *vpc.Client) {
	t.Helper()
	e, _ := tkeEnv(t, core.Config{})
	if _, err := e.d.VPC().CreateVPCRouteTable(VPCRouteTable{ID: vpcTableID, VpcID: tkeVPC, Routes: []VPCRoute{
		{DestinationCIDR: "0.0.0.0/0", GatewayType: "NAT", GatewayID: "nat-aaaa0001"},
	}}); err != nil {
		t.Fatal(err)
	}
	cl, err := vpc.NewClient(common.NewCredential(testID, testKey), testRegion, clientProfile(e))
	if err != nil {
		t.Fatal(err)
	}
	return e, cl
}

func normalCVM(dst, gw string) *vpc.Route {
	return &vpc.Route{DestinationCidrBlock: common.StringPtr(dst), GatewayType: common.StringPtr(GatewayTypeNormalCVM), GatewayId: common.StringPtr(gw)}
}

func createVPCRoutes(cl *vpc.Client, table string, routes ...*vpc.Route) (*vpc.CreateRoutesResponse, error) {
	req := vpc.NewCreateRoutesRequest()
	req.RouteTableId, req.Routes = common.StringPtr(table), routes
	return cl.CreateRoutes(req)
}

func TestCreateRoutesValidation(t *testing.T) {
	tests := []struct {
		name     string
		table    string
		routes   []*vpc.Route
		wantCode string
	}{
		{"ok", vpcTableID, []*vpc.Route{normalCVM("172.20.1.0/24", "10.0.0.1")}, ""},
		{"two at once", vpcTableID, []*vpc.Route{normalCVM("172.20.1.0/24", "10.0.0.1"), normalCVM("172.20.2.0/24", "10.0.0.1")}, ""},
		{"unknown table", "rtb-notthere", []*vpc.Route{normalCVM("172.20.1.0/24", "10.0.0.1")}, CodeVPCResourceNotFound},
		{"malformed table", "rtb-1", []*vpc.Route{normalCVM("172.20.1.0/24", "10.0.0.1")}, CodeVPCMalformed},
		{"no routes", vpcTableID, nil, CodeVPCMissingParameter},
		{"malformed cidr", vpcTableID, []*vpc.Route{normalCVM("172.20.1.1/24", "10.0.0.1")}, CodeVPCMalformed},
		{"duplicate destination", vpcTableID, []*vpc.Route{normalCVM("0.0.0.0/0", "10.0.0.1")}, CodeVPCDuplicate},
		{"duplicate in the request", vpcTableID, []*vpc.Route{normalCVM("172.20.1.0/24", "10.0.0.1"), normalCVM("172.20.1.0/24", "10.0.0.2")}, CodeVPCDuplicate},
		{"not an instance", vpcTableID, []*vpc.Route{normalCVM("172.20.1.0/24", "10.0.0.77")}, CodeVPCNextHopInvalid},
		{"instance of another VPC", vpcTableID, []*vpc.Route{normalCVM("172.20.1.0/24", "10.0.0.9")}, CodeVPCNextHopInvalid},
		{"inside a TKE cluster route table", vpcTableID, []*vpc.Route{normalCVM("10.244.3.0/24", "10.0.0.1")}, CodeVPCDockerRoute},
		{"other gateway type", vpcTableID, []*vpc.Route{{DestinationCidrBlock: common.StringPtr("172.20.1.0/24"), GatewayType: common.StringPtr("VPN"), GatewayId: common.StringPtr("vpngw-1")}}, CodeVPCUnsupportedOpType},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, cl := vpcEnv(t)
			resp, err := createVPCRoutes(cl, tc.table, tc.routes...)
			if got := sdkCode(err); got != tc.wantCode {
				t.Fatalf("code %q (%v), want %q", got, err, tc.wantCode)
			}
			rt, _ := e.d.VPC().VPCRouteTable(vpcTableID)
			want := 1
			if tc.wantCode == "" {
				want += len(tc.routes)
				if *resp.Response.TotalCount != uint64(len(tc.routes)) || len(resp.Response.RouteTableSet[0].RouteSet) != want {
					t.Fatalf("answer %s", resp.ToJsonString())
				}
			}
			if len(rt.Routes) != want {
				t.Fatalf("table has %v, want %d routes (all or nothing)", rt.Routes, want)
			}
		})
	}
}

func TestVPCRoutesLifecycle(t *testing.T) {
	e, cl := vpcEnv(t)
	resp, err := createVPCRoutes(cl, vpcTableID, normalCVM("172.20.1.0/24", "10.0.0.1"), normalCVM("172.20.2.0/24", "10.0.0.2"))
	if err != nil {
		t.Fatal(err)
	}
	routes := resp.Response.RouteTableSet[0].RouteSet
	if len(routes) != 3 || *routes[1].GatewayType != GatewayTypeNormalCVM || *routes[1].RouteId == 0 || *routes[1].RouteItemId == "" {
		t.Fatalf("routes %s", resp.ToJsonString())
	}

	desc := vpc.NewDescribeRouteTablesRequest()
	desc.RouteTableIds = common.StringPtrs([]string{vpcTableID})
	got, err := cl.DescribeRouteTables(desc)
	if err != nil || *got.Response.TotalCount != 1 || len(got.Response.RouteTableSet[0].RouteSet) != 3 || *got.Response.RouteTableSet[0].VpcId != tkeVPC {
		t.Fatalf("describe: %v %v", got, err)
	}
	byFilter := vpc.NewDescribeRouteTablesRequest()
	byFilter.Filters = []*vpc.Filter{{Name: common.StringPtr("vpc-id"), Values: common.StringPtrs([]string{"vpc-other001"})}}
	if got, err := cl.DescribeRouteTables(byFilter); err != nil || *got.Response.TotalCount != 0 {
		t.Fatalf("vpc-id filter: %v %v", got, err)
	}
	both := vpc.NewDescribeRouteTablesRequest()
	both.RouteTableIds, both.Filters = desc.RouteTableIds, byFilter.Filters
	if _, err := cl.DescribeRouteTables(both); sdkCode(err) != CodeVPCCoexist {
		t.Fatalf("ids and filters: %v", err)
	}
	missing := vpc.NewDescribeRouteTablesRequest()
	missing.RouteTableIds = common.StringPtrs([]string{"rtb-notthere"})
	if _, err := cl.DescribeRouteTables(missing); sdkCode(err) != CodeVPCResourceNotFound {
		t.Fatalf("unknown id: %v", err)
	}

	del := vpc.NewDeleteRoutesRequest()
	del.RouteTableId = common.StringPtr(vpcTableID)
	del.Routes = []*vpc.Route{{RouteId: routes[1].RouteId}}
	if _, err := cl.DeleteRoutes(del); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.DeleteRoutes(del); sdkCode(err) != CodeVPCResourceNotFound {
		t.Fatalf("delete again: %v", err)
	}
	rt, _ := e.d.VPC().VPCRouteTable(vpcTableID)
	if len(rt.Routes) != 2 || rt.Routes[1].DestinationCIDR != "172.20.2.0/24" {
		t.Fatalf("after delete: %+v", rt.Routes)
	}
	calls := e.core.Calls()
	if calls["CreateRoutes"]["OK"] != 1 || calls["DeleteRoutes"]["OK"] != 1 || calls["DescribeRouteTables"]["OK"] != 2 {
		t.Fatalf("calls %v", calls)
	}
}

func TestVPCRouteTableAdmin(t *testing.T) {
	e, _ := vpcEnv(t)
	srv := httptest.NewServer(e.core.AdminHandler())
	t.Cleanup(srv.Close)
	post := func(path, body string) (int, string) {
		resp, err := http.Post(srv.URL+"/admin/tencent/vpcroutetables"+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := post("", `{"vpcID":"vpc-tke00001"}`)
	var created VPCRouteTable
	if err := json.Unmarshal([]byte(body), &created); code != 201 || err != nil || !strings.HasPrefix(created.ID, "rtb-") {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, body := post("/"+created.ID+"/routes", `{"destinationCidrBlock":"172.30.0.0/16","gatewayType":"PEERCONNECTION","gatewayId":"pcx-1"}`); code != 201 {
		t.Fatalf("add route: %d %s", code, body)
	}
	if code, _ := post("/rtb-notthere/routes", `{"destinationCidrBlock":"172.30.0.0/16","gatewayType":"NAT","gatewayId":"nat-1"}`); code != 404 {
		t.Fatalf("unknown table: %d", code)
	}
	if code, _ := post("", `{"vpcID":"vpc-1"}`); code != 400 {
		t.Fatalf("bad vpc: %d", code)
	}
	if got := e.d.VPC().VPCRouteTables(); len(got) != 2 || len(got[1].Routes) != 1 || got[1].Routes[0].ID == 0 {
		t.Fatalf("tables %+v", got)
	}
}
