package tencentcloud

import (
	"context"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccm/internal/tencent/config"
	"github.com/ccmkit/ccm/internal/tencent/routeops"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// fakeOps records what the interface layer asks of the ops layer.
type fakeOps struct {
	mu      sync.Mutex
	list    []routeops.NodeRoute
	err     error
	created []string // "node:route"
	deleted []string
	nodes   routeops.Nodes
}

func (f *fakeOps) List(_ context.Context, nodes routeops.Nodes) ([]routeops.NodeRoute, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nodes = nodes
	return f.list, f.err
}

func (f *fakeOps) Create(_ context.Context, node string, r routeops.Route) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.created = append(f.created, node+":"+r.String())
	return f.err
}

func (f *fakeOps) Delete(_ context.Context, r routeops.Route) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, r.String())
	return f.err
}

func routeNode(name string, addrs ...v1.NodeAddress) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Addresses: addrs}}
}

// routesWithNodes wires routes to a synced node informer over a fake
// clientset, through Cloud.SetInformers as the CCM does.
func routesWithNodes(t *testing.T, ops routeOps, nodes ...*v1.Node) *routes {
	t.Helper()
	client := fake.NewClientset()
	for _, n := range nodes {
		if _, err := client.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r := &routes{ops: ops, nodes: &nodeIndex{}}
	c := &Cloud{routes: r}
	f := informers.NewSharedInformerFactory(client, 0)
	c.SetInformers(f)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	f.Start(stop)
	f.WaitForCacheSync(stop)
	return r
}

func nr(dst, gw, node string, gone bool) routeops.NodeRoute {
	return routeops.NodeRoute{
		Route: routeops.Route{Destination: netip.MustParsePrefix(dst), Gateway: netip.MustParseAddr(gw)},
		Node:  node, Gone: gone,
	}
}

func TestListRoutesTranslates(t *testing.T) {
	n1 := routeNode("n1", internalIP("10.0.0.1"), hostnameAddr("n1.local"))
	ops := &fakeOps{list: []routeops.NodeRoute{
		nr("10.244.1.0/24", "10.0.0.1", "n1", false),
		nr("10.244.2.0/24", "10.0.0.2", "gone-node", true),
		nr("10.244.3.0/24", "10.0.0.3", "n1", false), // n1's old IP
	}}
	r := routesWithNodes(t, ops, n1)
	got, err := r.ListRoutes(context.Background(), "kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	want := []*cloudprovider.Route{
		{Name: "10.244.1.0/24->10.0.0.1", TargetNode: "n1", DestinationCIDR: "10.244.1.0/24", EnableNodeAddresses: true,
			TargetNodeAddresses: n1.Status.Addresses},
		{Name: "10.244.2.0/24->10.0.0.2", TargetNode: "gone-node", DestinationCIDR: "10.244.2.0/24", EnableNodeAddresses: true,
			TargetNodeAddresses: []v1.NodeAddress{internalIP("10.0.0.2")}},
		// The node no longer has the gateway IP: different addresses make the
		// route controller replace the route.
		{Name: "10.244.3.0/24->10.0.0.3", TargetNode: "n1", DestinationCIDR: "10.244.3.0/24", EnableNodeAddresses: true,
			TargetNodeAddresses: []v1.NodeAddress{internalIP("10.0.0.3")}},
	}
	if !reflect.DeepEqual(got, want) {
		for i := range got {
			t.Logf("got[%d] = %+v", i, *got[i])
		}
		t.Fatalf("ListRoutes mismatch")
	}
	// The ops layer resolves gateways through the node index.
	if name, ok := ops.nodes.NodeForIP(netip.MustParseAddr("10.0.0.1")); !ok || name != "n1" {
		t.Errorf("NodeForIP(10.0.0.1) = %q, %v", name, ok)
	}
}

func TestListRoutesErrors(t *testing.T) {
	t.Run("no informer", func(t *testing.T) {
		r := &routes{ops: &fakeOps{}, nodes: &nodeIndex{}}
		if _, err := r.ListRoutes(context.Background(), ""); err == nil || !strings.Contains(err.Error(), "SetInformers") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("ops error passes through", func(t *testing.T) {
		boom := errors.New("boom")
		r := routesWithNodes(t, &fakeOps{err: boom})
		if _, err := r.ListRoutes(context.Background(), ""); !errors.Is(err, boom) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestNodeIndex(t *testing.T) {
	r := routesWithNodes(t, &fakeOps{},
		routeNode("a", internalIP("10.0.0.1"), internalIP("10.0.1.1")),
		routeNode("b", internalIP("10.0.0.2")),
		routeNode("c", internalIP("10.0.0.3")), routeNode("d", internalIP("10.0.0.3")), // duplicate IP
		routeNode("e", hostnameAddr("e")),
	)
	tests := []struct {
		ip   string
		want string
		ok   bool
	}{
		{"10.0.0.1", "a", true},
		{"10.0.1.1", "a", true},
		{"10.0.0.2", "b", true},
		{"10.0.0.3", "", false}, // ambiguous: neither owns it
		{"10.0.0.9", "", false},
	}
	for _, tc := range tests {
		name, ok := r.nodes.NodeForIP(netip.MustParseAddr(tc.ip))
		if name != tc.want || ok != tc.ok {
			t.Errorf("NodeForIP(%s) = %q, %v; want %q, %v", tc.ip, name, ok, tc.want, tc.ok)
		}
	}
}

func TestCreateRoute(t *testing.T) {
	tests := []struct {
		name    string
		route   cloudprovider.Route
		want    string
		wantErr string
	}{
		{"first IPv4 InternalIP is the gateway", cloudprovider.Route{TargetNode: "n1", DestinationCIDR: "10.244.1.0/24",
			TargetNodeAddresses: []v1.NodeAddress{hostnameAddr("n1"), internalIP("fd00::1"), internalIP("10.0.0.1"), internalIP("10.0.0.9")}},
			"n1:10.244.1.0/24 -> 10.0.0.1", ""},
		{"no InternalIP", cloudprovider.Route{TargetNode: "n1", DestinationCIDR: "10.244.1.0/24",
			TargetNodeAddresses: []v1.NodeAddress{hostnameAddr("n1")}}, "", "no IPv4 InternalIP"},
		{"bad CIDR", cloudprovider.Route{TargetNode: "n1", DestinationCIDR: "10.244.1/24",
			TargetNodeAddresses: []v1.NodeAddress{internalIP("10.0.0.1")}}, "", `pod CIDR "10.244.1/24"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ops := &fakeOps{}
			r := &routes{ops: ops, nodes: &nodeIndex{}}
			err := r.CreateRoute(context.Background(), "kubernetes", "uid", &tc.route)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(ops.created) != 1 || ops.created[0] != tc.want {
				t.Fatalf("err = %v, created %v", err, ops.created)
			}
		})
	}
}

func TestDeleteRoute(t *testing.T) {
	ops := &fakeOps{}
	r := &routes{ops: ops, nodes: &nodeIndex{}}
	if err := r.DeleteRoute(context.Background(), "", &cloudprovider.Route{Name: "10.244.1.0/24->10.0.0.1", TargetNode: types.NodeName("n1")}); err != nil {
		t.Fatal(err)
	}
	if len(ops.deleted) != 1 || ops.deleted[0] != "10.244.1.0/24 -> 10.0.0.1" {
		t.Fatalf("deleted %v", ops.deleted)
	}
	err := r.DeleteRoute(context.Background(), "", &cloudprovider.Route{Name: "some-other-route", TargetNode: "n1"})
	if err == nil || !strings.Contains(err.Error(), "not a route this provider listed") {
		t.Fatalf("err = %v", err)
	}
}

func TestRoutesOnlyWhenConfigured(t *testing.T) {
	base := config.Config{Region: "ap-guangzhou", VpcID: "vpc-aaaa1111", SecretID: "i", SecretKey: "k"}
	tests := []struct {
		name string
		mod  func(*config.Config)
		want bool
	}{
		{"no table", func(*config.Config) {}, false},
		{"tke table", func(c *config.Config) { c.ClusterRouteTable = "cls-1" }, true},
		{"vpc table", func(c *config.Config) {
			c.RouteBackend, c.RouteTableID, c.ClusterCIDR = config.RouteBackendVPC, "rtb-aaaa1111", netip.MustParsePrefix("10.244.0.0/16")
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			tc.mod(&cfg)
			c, err := New(&cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := c.Routes(); ok != tc.want {
				t.Fatalf("Routes() ok = %v, want %v", ok, tc.want)
			}
		})
	}
}

// The provider as the CCM builds it (config, SDK clients, shared transport)
// against cloudsim: a route is created, listed for its node and deleted.
func TestRoutesAgainstCloudsim(t *testing.T) {
	clearTencentEnv(t)
	const (
		id, key = "AKIDroutesprovider", "routes-provider-key"
		vpcID   = "vpc-prov0001"
		table   = "cls-prov0001"
	)
	sim := cloudsim.New(cloudsim.Options{Latency: cloudsim.ZeroLatency,
		Tencent: cloudsim.TencentOptions{
			Credentials: map[string]string{id: key},
			RouteTables: []tencent.RouteTable{{Name: table, CIDR: "10.244.0.0/16", VpcID: vpcID}},
		},
	})
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	if _, err := sim.AddInstances(cloudsim.Instance{PrivateIP: "10.0.0.1", VpcID: vpcID}); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(strings.NewReader("region: ap-guangzhou\nvpc_id: "+vpcID+"\nsecret_id: "+id+"\nsecret_key: "+key+
		"\napi_endpoint: "+url+"\ncluster_route_table: "+table+"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cloud, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n1 := routeNode("n1", internalIP("10.0.0.1"))
	r := routesWithNodes(t, cloud.routes.ops, n1)
	ctx := context.Background()
	route := &cloudprovider.Route{TargetNode: "n1", DestinationCIDR: "10.244.1.0/24", TargetNodeAddresses: n1.Status.Addresses}
	if err := r.CreateRoute(ctx, "kubernetes", "uid", route); err != nil {
		t.Fatal(err)
	}
	got, err := r.ListRoutes(ctx, "kubernetes")
	if err != nil || len(got) != 1 || got[0].TargetNode != "n1" || got[0].DestinationCIDR != "10.244.1.0/24" {
		t.Fatalf("ListRoutes = %v, %v", got, err)
	}
	if err := r.DeleteRoute(ctx, "kubernetes", got[0]); err != nil {
		t.Fatal(err)
	}
	if rt, _ := sim.Tencent().TKE().RouteTable(table); len(rt.Routes) != 0 {
		t.Fatalf("table still has %v", rt.Routes)
	}
	calls := sim.Calls()
	if calls["CreateClusterRoute"]["OK"] != 1 || calls["DeleteClusterRoute"]["OK"] != 1 {
		t.Fatalf("calls %v", calls)
	}
}
