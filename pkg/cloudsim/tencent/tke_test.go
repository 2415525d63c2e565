package tencent

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	tke "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/tke/v20180525"
)

const (
	tkeVPC   = "vpc-tke00001"
	tkeTable = "cls-routes01"
)

func (e *env) tkeClient(t *testing.T, region string) *tke.Client {
	t.Helper()
	c, err := tke.NewClient(common.NewCredential(testID, testKey), region, clientProfile(e))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// tkeEnv has a table 10.244.0.0/16 in tkeVPC and three instances whose
// private IPs can be gateways.
func tkeEnv(t *testing.T, cfg core.Config) (*env, *tke.Client) {
	t.Helper()
	e := newEnv(t, cfg)
	e.mustAdd(t,
		core.Instance{ID: "ins-gw000001", PrivateIP: "10.0.0.1", VpcID: tkeVPC},
		core.Instance{ID: "ins-gw000002", PrivateIP: "10.0.0.2", VpcID: tkeVPC},
		core.Instance{ID: "ins-gw000003", PrivateIP: "10.0.0.3", VpcID: tkeVPC},
		core.Instance{ID: "ins-other001", PrivateIP: "10.0.0.9", VpcID: "vpc-other001"},
	)
	if _, err := e.d.TKE().CreateRouteTable(RouteTable{Name: tkeTable, CIDR: "10.244.0.0/16", VpcID: tkeVPC}); err != nil {
		t.Fatal(err)
	}
	return e, e.tkeClient(t, testRegion)
}

func createRoute(cl *tke.Client, table, cidr, gw string) error {
	req := tke.NewCreateClusterRouteRequest()
	req.RouteTableName, req.DestinationCidrBlock, req.GatewayIp = &table, &cidr, &gw
	_, err := cl.CreateClusterRoute(req)
	return err
}

func deleteRoute(cl *tke.Client, table, cidr, gw string) error {
	req := tke.NewDeleteClusterRouteRequest()
	req.RouteTableName, req.DestinationCidrBlock, req.GatewayIp = &table, &cidr, &gw
	_, err := cl.DeleteClusterRoute(req)
	return err
}

func listRoutes(t *testing.T, cl *tke.Client, table string, gateways ...string) []string {
	t.Helper()
	req := tke.NewDescribeClusterRoutesRequest()
	req.RouteTableName = &table
	if len(gateways) > 0 {
		req.Filters = []*tke.Filter{{Name: common.StringPtr(GatewayIPFilter), Values: common.StringPtrs(gateways)}}
	}
	resp, err := cl.DescribeClusterRoutes(req)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, r := range resp.Response.RouteSet {
		if *r.RouteTableName != table {
			t.Errorf("route %v in table %s, asked for %s", r, *r.RouteTableName, table)
		}
		out = append(out, *r.DestinationCidrBlock+">"+*r.GatewayIp)
	}
	if int(*resp.Response.TotalCount) != len(out) {
		t.Errorf("TotalCount %d, %d routes", *resp.Response.TotalCount, len(out))
	}
	return out
}

func TestClusterRouteValidation(t *testing.T) {
	tests := []struct {
		name            string
		table, cidr, gw string
		wantCode        string
	}{
		{"ok", tkeTable, "10.244.9.0/24", "10.0.0.3", ""},
		{"missing table name", "", "10.244.9.0/24", "10.0.0.3", CodeParam},
		{"unknown table", "cls-nothere", "10.244.9.0/24", "10.0.0.3", CodeRouteTableNotFound},
		{"missing cidr", tkeTable, "", "10.0.0.3", CodeParam},
		{"missing gateway", tkeTable, "10.244.9.0/24", "", CodeParam},
		{"malformed cidr", tkeTable, "10.244.9/24", "10.0.0.3", CodeParam},
		{"host bits set", tkeTable, "10.244.9.1/24", "10.0.0.3", CodeParam},
		{"ipv6 cidr", tkeTable, "fd00::/64", "10.0.0.3", CodeParam},
		{"malformed gateway", tkeTable, "10.244.9.0/24", "10.0.0", CodeParam},
		{"outside the table", tkeTable, "10.245.0.0/24", "10.0.0.3", CodeCidrOutOfRouteTable},
		{"wider than the table", tkeTable, "10.0.0.0/8", "10.0.0.3", CodeCidrOutOfRouteTable},
		{"gateway has a cidr", tkeTable, "10.244.9.0/24", "10.0.0.1", CodeGatewayAlreadyAssociatedCidr},
		{"same route again", tkeTable, "10.244.1.0/24", "10.0.0.1", CodeGatewayAlreadyAssociatedCidr},
		{"overlaps another route", tkeTable, "10.244.1.128/25", "10.0.0.3", CodeCidrConflictWithOtherRoute},
		{"contains another route", tkeTable, "10.244.0.0/20", "10.0.0.3", CodeCidrConflictWithOtherRoute},
		{"gateway not an instance", tkeTable, "10.244.9.0/24", "10.0.0.77", CodeCvmNotFound},
		{"gateway in another VPC", tkeTable, "10.244.9.0/24", "10.0.0.9", CodeCvmNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, cl := tkeEnv(t, core.Config{})
			if err := createRoute(cl, tkeTable, "10.244.1.0/24", "10.0.0.1"); err != nil {
				t.Fatal(err)
			}
			err := createRoute(cl, tc.table, tc.cidr, tc.gw)
			if got := sdkCode(err); got != tc.wantCode {
				t.Fatalf("code %q (%v), want %q", got, err, tc.wantCode)
			}
			want := 1
			if tc.wantCode == "" {
				want = 2
			}
			if rt, _ := e.d.TKE().RouteTable(tkeTable); len(rt.Routes) != want {
				t.Fatalf("table has %v, want %d routes", rt.Routes, want)
			}
		})
	}
}

func TestClusterRoutesLifecycle(t *testing.T) {
	e, cl := tkeEnv(t, core.Config{})
	for i, gw := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"} {
		if err := createRoute(cl, tkeTable, "10.244."+string(rune('1'+i))+".0/24", gw); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"10.244.1.0/24>10.0.0.1", "10.244.2.0/24>10.0.0.2", "10.244.3.0/24>10.0.0.3"}
	if got := listRoutes(t, cl, tkeTable); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("routes %v, want %v (creation order)", got, want)
	}
	if got := listRoutes(t, cl, tkeTable, "10.0.0.2", "10.0.0.3"); len(got) != 2 || got[0] != want[1] {
		t.Fatalf("gateway-ip filter: %v", got)
	}
	// An unknown table lists as empty: DescribeClusterRoutes documents no
	// RouteTableNotFound.
	if got := listRoutes(t, cl, "cls-nothere"); len(got) != 0 {
		t.Fatalf("unknown table: %v", got)
	}
	bad := tke.NewDescribeClusterRoutesRequest()
	bad.RouteTableName = common.StringPtr(tkeTable)
	bad.Filters = []*tke.Filter{{Name: common.StringPtr("destination-cidr"), Values: common.StringPtrs([]string{"x"})}}
	if _, err := cl.DescribeClusterRoutes(bad); sdkCode(err) != CodeParam {
		t.Fatalf("unknown filter: %v", err)
	}

	// Delete: the exact route only; a missing route is not an error.
	if err := deleteRoute(cl, tkeTable, "10.244.2.0/24", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if err := deleteRoute(cl, tkeTable, "10.244.2.0/24", "10.0.0.2"); err != nil {
		t.Fatal(err)
	}
	if got := listRoutes(t, cl, tkeTable); len(got) != 2 {
		t.Fatalf("after delete: %v", got)
	}
	if err := deleteRoute(cl, "cls-nothere", "10.244.2.0/24", "10.0.0.2"); sdkCode(err) != CodeRouteTableNotFoundOnDelete {
		t.Fatalf("delete in unknown table: %v", err)
	}
	// The freed gateway and CIDR can be used again.
	if err := createRoute(cl, tkeTable, "10.244.2.0/24", "10.0.0.2"); err != nil {
		t.Fatal(err)
	}
	calls := e.core.Calls()
	if calls["CreateClusterRoute"]["OK"] != 4 || calls["DescribeClusterRoutes"]["OK"] != 4 || calls["DeleteClusterRoute"]["OK"] != 2 {
		t.Fatalf("call counts %v", calls)
	}
}

func TestClusterRouteTables(t *testing.T) {
	e, cl := tkeEnv(t, core.Config{})
	create := func(name, cidr, vpc string) error {
		req := tke.NewCreateClusterRouteTableRequest()
		req.RouteTableName, req.RouteTableCidrBlock, req.VpcId = &name, &cidr, &vpc
		_, err := cl.CreateClusterRouteTable(req)
		return err
	}
	tests := []struct {
		name, table, cidr, vpc, wantCode string
	}{
		{"ok", "cls-new00001", "172.16.0.0/16", tkeVPC, ""},
		{"other vpc may overlap", "cls-new00002", "10.244.0.0/16", "vpc-other002", ""},
		{"exists", tkeTable, "172.17.0.0/16", tkeVPC, CodeRouteTableExists},
		{"overlaps a table in the vpc", "cls-new00003", "10.244.128.0/17", tkeVPC, CodeCidrConflictWithOtherCluster},
		{"overlaps the vpc's instances", "cls-new00004", "10.0.0.0/16", tkeVPC, CodeCidrConflictWithVpcCidr},
		{"public cidr", "cls-new00005", "8.8.0.0/16", tkeVPC, CodeParam},
		{"host bits", "cls-new00006", "172.18.0.1/16", tkeVPC, CodeParam},
		{"bad vpc", "cls-new00007", "172.19.0.0/16", "vpc-1", CodeParam},
		{"no name", "", "172.19.0.0/16", tkeVPC, CodeParam},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := sdkCode(create(tc.table, tc.cidr, tc.vpc)); got != tc.wantCode {
				t.Fatalf("code %q, want %q", got, tc.wantCode)
			}
		})
	}
	resp, err := cl.DescribeClusterRouteTables(tke.NewDescribeClusterRouteTablesRequest())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, rt := range resp.Response.RouteTableSet {
		names = append(names, *rt.RouteTableName+"="+*rt.RouteTableCidrBlock+"@"+*rt.VpcId)
	}
	want := "cls-routes01=10.244.0.0/16@vpc-tke00001,cls-new00001=172.16.0.0/16@vpc-tke00001,cls-new00002=10.244.0.0/16@vpc-other002"
	if strings.Join(names, ",") != want || *resp.Response.TotalCount != 3 {
		t.Fatalf("tables %v", names)
	}
	// Tables are regional.
	other, err := e.tkeClient(t, "ap-shanghai").DescribeClusterRouteTables(tke.NewDescribeClusterRouteTablesRequest())
	if err != nil || *other.Response.TotalCount != 0 {
		t.Fatalf("ap-shanghai sees %v, %v", other, err)
	}
	if err := createRoute(e.tkeClient(t, "ap-shanghai"), tkeTable, "10.244.1.0/24", "10.0.0.1"); sdkCode(err) != CodeRouteTableNotFound {
		t.Fatalf("route into another region's table: %v", err)
	}

	del := func(name string) error {
		req := tke.NewDeleteClusterRouteTableRequest()
		req.RouteTableName = &name
		_, err := cl.DeleteClusterRouteTable(req)
		return err
	}
	if err := createRoute(cl, tkeTable, "10.244.1.0/24", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if err := del(tkeTable); sdkCode(err) != CodeRouteTableNotEmpty {
		t.Fatalf("delete non-empty: %v", err)
	}
	if err := del("cls-nothere"); sdkCode(err) != CodeRouteTableNotFound {
		t.Fatalf("delete unknown: %v", err)
	}
	if err := del("cls-new00001"); err != nil {
		t.Fatal(err)
	}
}

func TestClusterRouteRateLimits(t *testing.T) {
	frozen := time.Now()
	_, cl := tkeEnv(t, core.Config{Clock: func() time.Time { return frozen }})
	count := func(n int, call func(i int) error) (ok, throttled int) {
		for i := range n {
			switch err := call(i); sdkCode(err) {
			case "":
				ok++
			case "RequestLimitExceeded":
				throttled++
			default:
				t.Fatal(err)
			}
		}
		return ok, throttled
	}
	// A frozen clock refills nothing: exactly the documented rate passes.
	ok, throttled := count(30, func(int) error {
		return deleteRoute(cl, tkeTable, "10.244.1.0/24", "10.0.0.1")
	})
	if ok != DeleteClusterRouteQPS || throttled != 10 {
		t.Fatalf("DeleteClusterRoute: %d ok, %d throttled", ok, throttled)
	}
	ok, _ = count(60, func(int) error {
		req := tke.NewDescribeClusterRoutesRequest()
		req.RouteTableName = common.StringPtr(tkeTable)
		_, err := cl.DescribeClusterRoutes(req)
		return err
	})
	if ok != DescribeClusterRoutesQPS {
		t.Fatalf("DescribeClusterRoutes: %d ok", ok)
	}
}

func TestRouteTableAdmin(t *testing.T) {
	e, cl := tkeEnv(t, core.Config{})
	srv := httptest.NewServer(e.core.AdminHandler())
	t.Cleanup(srv.Close)
	do := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+"/admin/tencent/routetables"+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := do("POST", "", `{"name":"cls-admin001","cidr":"192.168.0.0/16","vpcID":"vpc-tke00001","routes":[{"destinationCidrBlock":"192.168.1.0/24","gatewayIp":"10.9.9.9"}]}`); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, body := do("POST", "", `{"name":"cls-admin002","cidr":"192.168.0.0/16","vpcID":"vpc-tke00001","routes":[{"destinationCidrBlock":"10.1.0.0/24","gatewayIp":"10.9.9.9"}]}`); code != 400 || !strings.Contains(body, CodeCidrOutOfRouteTable) {
		t.Fatalf("invalid seed route: %d %s", code, body)
	}
	if code, body := do("POST", "", `{"name":"x","cidr":"192.168.0.0/16","vpcID":"vpc-tke00001","color":"red"}`); code != 400 {
		t.Fatalf("unknown field: %d %s", code, body)
	}
	// A foreign route added out of band, then a route through the API.
	if code, body := do("POST", "/"+tkeTable+"/routes", `{"destinationCidrBlock":"10.244.200.0/24","gatewayIp":"10.0.0.250"}`); code != 201 {
		t.Fatalf("add route: %d %s", code, body)
	}
	if err := createRoute(cl, tkeTable, "10.244.1.0/24", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	code, body := do("GET", "/"+tkeTable+"/routes", "")
	var routes []ClusterRoute
	if err := json.Unmarshal([]byte(body), &routes); code != 200 || err != nil || len(routes) != 2 ||
		routes[0] != (ClusterRoute{"10.244.200.0/24", "10.0.0.250"}) || routes[1] != (ClusterRoute{"10.244.1.0/24", "10.0.0.1"}) {
		t.Fatalf("routes: %d %s", code, body)
	}
	code, body = do("GET", "", "")
	var tables []RouteTable
	if err := json.Unmarshal([]byte(body), &tables); code != 200 || err != nil || len(tables) != 2 || tables[1].Name != "cls-admin001" || tables[0].Region != testRegion {
		t.Fatalf("tables: %d %s", code, body)
	}
	if code, _ := do("DELETE", "/"+tkeTable+"/routes", `{"destinationCidrBlock":"10.244.200.0/24","gatewayIp":"10.0.0.250"}`); code != 204 {
		t.Fatalf("delete route: %d", code)
	}
	if code, _ := do("GET", "/cls-nothere/routes", ""); code != 404 {
		t.Fatalf("unknown table: %d", code)
	}
	if code, _ := do("DELETE", "/cls-admin001", ""); code != 204 {
		t.Fatalf("delete table: %d", code)
	}
	if got := e.d.TKE().RouteTables(); len(got) != 1 || len(got[0].Routes) != 1 {
		t.Fatalf("after admin deletes: %+v", got)
	}
}
