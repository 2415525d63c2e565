package routeops

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/profile"
	tke "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/tke/v20180525"

	"github.com/ccmkit/ccm/internal/callerr"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// These tests drive the TKE backend with the real SDK against cloudsim,
// which answers with the cloud's validation and error codes.

const (
	simID     = "AKIDrouteopstest"
	simKey    = "routeops-test-key"
	simRegion = "ap-guangzhou"
	simVPC    = "vpc-route001"
	simTable  = "cls-route001"
)

func startSim(t *testing.T, tables ...tencent.RouteTable) (*cloudsim.Sim, *tke.Client) {
	t.Helper()
	sim, url := startSimURL(t, tables...)
	cl, err := tke.NewClient(common.NewCredential(simID, simKey), simRegion, simProfile(url))
	if err != nil {
		t.Fatal(err)
	}
	return sim, cl
}

// simProfile points the SDK at cloudsim.
func simProfile(url string) *profile.ClientProfile {
	cpf := profile.NewClientProfile()
	cpf.HttpProfile.Endpoint = strings.TrimPrefix(url, "http://")
	cpf.HttpProfile.Scheme = "HTTP"
	return cpf
}

// startSimURL starts cloudsim with four instances in simVPC and the tables.
func startSimURL(t *testing.T, tables ...tencent.RouteTable) (*cloudsim.Sim, string) {
	t.Helper()
	sim := cloudsim.New(cloudsim.Options{Latency: cloudsim.ZeroLatency, Region: simRegion, Tencent: cloudsim.TencentOptions{Credentials: map[string]string{simID: simKey}, RouteTables: tables}})
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	var ins []cloudsim.Instance
	for _, ip := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.9"} {
		ins = append(ins, cloudsim.Instance{PrivateIP: ip, VpcID: simVPC})
	}
	if _, err := sim.AddInstances(ins...); err != nil {
		t.Fatal(err)
	}
	return sim, url
}

func simTableWith(routes ...tencent.ClusterRoute) tencent.RouteTable {
	return tencent.RouteTable{Name: simTable, CIDR: "10.244.0.0/16", VpcID: simVPC, Routes: routes}
}

func TestTKEBackendErrorKinds(t *testing.T) {
	tests := []struct {
		name     string
		route    Route
		wantKind error
		wantCode string
	}{
		{"outside the table", rt("10.245.0.0/24", "10.0.0.2"), ErrOutOfTable, "InvalidParameter.CidrOutOfRouteTable"},
		{"gateway in use", rt("10.244.7.0/24", "10.0.0.1"), ErrGatewayInUse, "InvalidParameter.GatewayAlreadyAssociatedCidr"},
		{"cidr conflict", rt("10.244.1.0/25", "10.0.0.2"), ErrCIDRConflict, "InvalidParameter.CidrConflictWithOtherRoute"},
		{"not an instance", rt("10.244.7.0/24", "10.0.0.77"), ErrGatewayNotInstance, "InternalError.CvmNotFound"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, cl := startSim(t, simTableWith(tencent.ClusterRoute{DestinationCIDR: "10.244.1.0/24", GatewayIP: "10.0.0.1"}))
			_, err := NewTKE(cl, simTable, simVPC).CreateRoute(context.Background(), tc.route)
			var ce *callerr.Error
			if !errors.Is(err, tc.wantKind) || Code(err) != tc.wantCode || !errors.As(err, &ce) || ce.Action != "CreateClusterRoute" {
				t.Fatalf("err = %v (code %q), want kind %v, code %s", err, Code(err), tc.wantKind, tc.wantCode)
			}
			if !strings.Contains(err.Error(), tc.route.String()) || !strings.Contains(err.Error(), simTable) {
				t.Errorf("error %q does not name the route and the table", err)
			}
		})
	}
	t.Run("table not found", func(t *testing.T) {
		_, cl := startSim(t)
		b := NewTKE(cl, simTable, simVPC)
		if _, err := b.FindTable(context.Background()); !errors.Is(err, ErrTableNotFound) {
			t.Fatalf("FindTable = %v", err)
		}
		if _, err := b.CreateRoute(context.Background(), rt("10.244.1.0/24", "10.0.0.1")); !errors.Is(err, ErrTableNotFound) {
			t.Fatalf("CreateRoute = %v", err)
		}
	})
	t.Run("table of another VPC", func(t *testing.T) {
		_, cl := startSim(t, tencent.RouteTable{Name: simTable, CIDR: "10.244.0.0/16", VpcID: "vpc-other001"})
		_, err := NewTKE(cl, simTable, simVPC).FindTable(context.Background())
		if err == nil || !strings.Contains(err.Error(), "belongs to VPC vpc-other001, not to vpc_id "+simVPC) {
			t.Fatalf("FindTable = %v", err)
		}
	})
}

// The whole pipeline against cloudsim: routes of our nodes are listed, a
// foreign route is not, a conflict with it is explained, and the cache
// keeps the reads down.
func TestManagerWithTKE(t *testing.T) {
	ctx := context.Background()
	foreign := tencent.ClusterRoute{DestinationCIDR: "10.244.9.0/24", GatewayIP: "10.0.0.9"}
	sim, cl := startSim(t, simTableWith(foreign))
	m := NewManager(NewTKE(cl, simTable, simVPC), Options{CacheTTL: 9e9})
	nodes := nodeMap{"10.0.0.1": "n1", "10.0.0.2": "n2"}

	if got, err := m.List(ctx, nodes); err != nil || len(got) != 0 {
		t.Fatalf("List = %v, %v", names(got), err)
	}
	if err := m.Create(ctx, "n1", rt("10.244.1.0/24", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	err := m.Create(ctx, "n2", rt("10.244.9.0/24", "10.0.0.2"))
	for _, want := range []string{`node "n2"`, "overlaps route 10.244.9.0/24 -> 10.0.0.9", "not managed by this cluster", "[InvalidParameter.CidrConflictWithOtherRoute]"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("conflict error %v does not say %q", err, want)
		}
	}
	got, err := m.List(ctx, nodes)
	if err != nil || len(got) != 1 || got[0].Node != "n1" {
		t.Fatalf("List = %v, %v", names(got), err)
	}
	if err := m.Delete(ctx, rt("10.244.1.0/24", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	table, _ := sim.Tencent().TKE().RouteTable(simTable)
	if len(table.Routes) != 1 || table.Routes[0] != foreign {
		t.Fatalf("table now %v, want only the foreign route", table.Routes)
	}
	calls := sim.Calls()
	// One read for the first List, one to explain the conflict; the second
	// List is served from the cache.
	if n := calls["DescribeClusterRoutes"]["OK"]; n != 2 {
		t.Errorf("DescribeClusterRoutes calls = %v, want 2", calls["DescribeClusterRoutes"])
	}
	if n := calls["DescribeClusterRouteTables"]["OK"]; n != 1 {
		t.Errorf("DescribeClusterRouteTables calls = %v, want 1", calls["DescribeClusterRouteTables"])
	}
}

func TestManagerCreatesTable(t *testing.T) {
	ctx := context.Background()
	sim, cl := startSim(t)
	m := NewManager(NewTKE(cl, simTable, simVPC), Options{CreateTable: true, ClusterCIDR: netip.MustParsePrefix("10.96.0.0/16")})
	if _, err := m.List(ctx, nodeMap{}); err != nil {
		t.Fatal(err)
	}
	table, err := sim.Tencent().TKE().RouteTable(simTable)
	if err != nil || table.CIDR != "10.96.0.0/16" || table.VpcID != simVPC {
		t.Fatalf("table %+v, %v", table, err)
	}
	// A CIDR that overlaps the VPC's instances is refused by the cloud, and
	// the error says what to choose instead.
	other := NewManager(NewTKE(cl, "cls-route002", simVPC), Options{CreateTable: true, ClusterCIDR: netip.MustParsePrefix("10.0.0.0/16")})
	_, err = other.List(ctx, nodeMap{})
	if !errors.Is(err, ErrTableCIDRConflict) || !strings.Contains(err.Error(), "choose a cluster_cidr") {
		t.Fatalf("List = %v", err)
	}
}
