package routeops

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// nodeMap is a Nodes answering from a map of IP -> node name.
type nodeMap map[string]string

func (n nodeMap) NodeForIP(ip netip.Addr) (string, bool) {
	name, ok := n[ip.String()]
	return name, ok
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func rt(dst, gw string) Route {
	return Route{Destination: netip.MustParsePrefix(dst), Gateway: netip.MustParseAddr(gw)}
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newManager(b Backend, opts Options) (*Manager, *clock) {
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	if opts.Clock == nil {
		opts.Clock = clk.Now
	}
	return NewManager(b, opts), clk
}

func names(routes []NodeRoute) []string {
	var out []string
	for _, r := range routes {
		s := r.Route.String() + "@" + r.Node
		if r.Gone {
			s += "(gone)"
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func TestListOwnership(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		routes  []Route
		nodes   nodeMap
		want    []string
		wantErr string
	}{
		{
			name:   "routes of our nodes only",
			routes: []Route{rt("10.244.1.0/24", "10.0.0.1"), rt("10.244.2.0/24", "10.0.0.2"), rt("10.244.9.0/24", "10.0.0.9")},
			nodes:  nodeMap{"10.0.0.1": "n1", "10.0.0.2": "n2"},
			want:   []string{"10.244.1.0/24 -> 10.0.0.1@n1", "10.244.2.0/24 -> 10.0.0.2@n2"},
		},
		{
			name:   "outside the cluster CIDR, even to our node",
			opts:   Options{ClusterCIDR: mustPrefix("10.244.0.0/17")},
			routes: []Route{rt("10.244.1.0/24", "10.0.0.1"), rt("10.244.200.0/24", "10.0.0.2")},
			nodes:  nodeMap{"10.0.0.1": "n1", "10.0.0.2": "n2"},
			want:   []string{"10.244.1.0/24 -> 10.0.0.1@n1"},
		},
		{
			name:   "wider than the cluster CIDR",
			opts:   Options{ClusterCIDR: mustPrefix("10.244.0.0/17")},
			routes: []Route{rt("10.244.0.0/16", "10.0.0.1")},
			nodes:  nodeMap{"10.0.0.1": "n1"},
		},
		{
			name:   "empty table",
			nodes:  nodeMap{"10.0.0.1": "n1"},
			routes: nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := newManager(newRouteEnv(t, tc.routes...).tke(), tc.opts)
			got, err := m.List(context.Background(), tc.nodes)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(names(got), tc.want) {
				t.Fatalf("List = %v, want %v", names(got), tc.want)
			}
		})
	}
}

// A deleted node's route stays ours, so that the controller deletes it; a
// foreign route is never listed and cannot be deleted.
func TestDeletedNodeRouteStaysOurs(t *testing.T) {
	ctx := context.Background()
	e := newRouteEnv(t, rt("10.244.1.0/24", "10.0.0.1"), rt("10.244.9.0/24", "10.0.0.9"))
	m, clk := newManager(e.tke(), Options{CacheTTL: 9 * time.Second})
	if _, err := m.List(ctx, nodeMap{"10.0.0.1": "n1"}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(10 * time.Second)
	got, err := m.List(ctx, nodeMap{}) // n1 deleted
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"10.244.1.0/24 -> 10.0.0.1@n1(gone)"}; !slices.Equal(names(got), want) {
		t.Fatalf("List = %v, want %v", names(got), want)
	}
	if err := m.Delete(ctx, rt("10.244.1.0/24", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	err = m.Delete(ctx, rt("10.244.9.0/24", "10.0.0.9"))
	if err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("deleting a foreign route: %v", err)
	}
	if !e.has(rt("10.244.9.0/24", "10.0.0.9")) || e.has(rt("10.244.1.0/24", "10.0.0.1")) {
		t.Fatalf("table now %v", e.routes())
	}
	// Once the route is gone, the gateway is forgotten: a later route to
	// that IP from another tool is foreign.
	e.addRoute(rt("10.244.5.0/24", "10.0.0.1"))
	clk.Advance(10 * time.Second)
	if got, _ := m.List(ctx, nodeMap{}); len(got) != 0 {
		t.Fatalf("List after the node's route went = %v", names(got))
	}
}

func TestCacheTTLAndInPlaceUpdates(t *testing.T) {
	ctx := context.Background()
	e := newRouteEnv(t, rt("10.244.1.0/24", "10.0.0.1"))
	m, clk := newManager(e.tke(), Options{CacheTTL: 9 * time.Second})
	nodes := nodeMap{"10.0.0.1": "n1", "10.0.0.2": "n2", "10.0.0.3": "n3"}

	if _, err := m.List(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	// Writes between reconciles update the cache: no read.
	if err := m.Create(ctx, "n2", rt("10.244.2.0/24", "10.0.0.2")); err != nil {
		t.Fatal(err)
	}
	if err := m.Create(ctx, "n3", rt("10.244.3.0/24", "10.0.0.3")); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(ctx, rt("10.244.1.0/24", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	clk.Advance(5 * time.Second)
	got, err := m.List(ctx, nodes)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.244.2.0/24 -> 10.0.0.2@n2", "10.244.3.0/24 -> 10.0.0.3@n3"}
	if !slices.Equal(names(got), want) {
		t.Fatalf("cached List = %v, want %v", names(got), want)
	}
	if n := e.count("DescribeClusterRoutes"); n != 1 {
		t.Fatalf("DescribeClusterRoutes calls = %d, want 1 (cache)", n)
	}
	// Creating a route that the fresh cache already holds costs nothing.
	if err := m.Create(ctx, "n2", rt("10.244.2.0/24", "10.0.0.2")); err != nil {
		t.Fatal(err)
	}
	if n := e.count("CreateClusterRoute"); n != 2 {
		t.Fatalf("CreateClusterRoute calls = %d, want 2", n)
	}
	// After the TTL, the next List reads the cloud and sees drift.
	e.removeRoute(rt("10.244.3.0/24", "10.0.0.3"))
	clk.Advance(5 * time.Second)
	got, _ = m.List(ctx, nodes)
	if want := []string{"10.244.2.0/24 -> 10.0.0.2@n2"}; !slices.Equal(names(got), want) {
		t.Fatalf("List after TTL = %v, want %v", names(got), want)
	}
	if n := e.count("DescribeClusterRoutes"); n != 2 {
		t.Fatalf("DescribeClusterRoutes calls = %d, want 2", n)
	}
	if s := m.Stats(); s.CacheHits != 1 || s.CacheMisses != 2 || s.CreatesSkipped != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestCacheDisabled(t *testing.T) {
	e := newRouteEnv(t, rt("10.244.1.0/24", "10.0.0.1"))
	m, _ := newManager(e.tke(), Options{})
	for range 3 {
		if _, err := m.List(context.Background(), nodeMap{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.count("DescribeClusterRoutes"); n != 3 {
		t.Fatalf("DescribeClusterRoutes calls = %d, want 3 with CacheTTL 0", n)
	}
}

// A write that lands while a refresh is in flight is not lost when the
// (older) list arrives.
func TestWriteDuringRefresh(t *testing.T) {
	ctx := context.Background()
	e := newRouteEnv(t, rt("10.244.1.0/24", "10.0.0.1"))
	m, clk := newManager(e.tke(), Options{CacheTTL: 9 * time.Second})
	nodes := nodeMap{"10.0.0.1": "n1", "10.0.0.2": "n2"}
	if _, err := m.List(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	clk.Advance(10 * time.Second)
	inList, release := make(chan struct{}), make(chan struct{})
	// The refresh's answer is held between cloudsim and the Manager.
	e.afterNext("DescribeClusterRoutes", func() { close(inList); <-release })
	done := make(chan []NodeRoute)
	go func() {
		got, err := m.List(ctx, nodes)
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	<-inList // cloudsim has answered without the new route; the answer is on its way
	if err := m.Create(ctx, "n2", rt("10.244.2.0/24", "10.0.0.2")); err != nil {
		t.Fatal(err)
	}
	close(release)
	got := <-done
	want := []string{"10.244.1.0/24 -> 10.0.0.1@n1", "10.244.2.0/24 -> 10.0.0.2@n2"}
	if !slices.Equal(names(got), want) {
		t.Fatalf("List = %v, want %v", names(got), want)
	}
}

// Many concurrent conflicts share one read of the table.
func TestConcurrentConflictsShareOneRead(t *testing.T) {
	ctx := context.Background()
	var routes []Route
	nodes := nodeMap{}
	for i := range 50 {
		routes = append(routes, rt(fmt.Sprintf("10.244.%d.0/24", i), fmt.Sprintf("10.0.1.%d", i)))
		nodes[fmt.Sprintf("10.0.1.%d", i)] = fmt.Sprintf("old-%d", i)
	}
	e := newRouteEnvWith(t, func(o *cloudsim.Options) {
		o.Tencent.RouteTables = []tencent.RouteTable{envTable(routes...)}
		// 50 creates at once exceed the documented 20/s, which the
		// provider's transport paces in production; here they must all
		// reach the table.
		o.RateLimits = map[string]float64{"CreateClusterRoute": 0}
	})
	m, _ := newManager(e.tke(), Options{CacheTTL: 9 * time.Second})
	if _, err := m.List(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	// All 50 calls are in flight before the first answer, as with a real
	// network.
	var arrived sync.WaitGroup
	arrived.Add(50)
	e.beforeEach(func(action string) {
		if action == "CreateClusterRoute" {
			arrived.Done()
			arrived.Wait()
		}
	})
	var wg sync.WaitGroup
	errs := make([]error, 50)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = m.Create(ctx, fmt.Sprintf("new-%d", i), rt(fmt.Sprintf("10.244.%d.0/24", i), fmt.Sprintf("10.0.2.%d", i)))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, ErrCIDRConflict) || !strings.Contains(err.Error(), fmt.Sprintf("node %q's route", fmt.Sprintf("old-%d", i))) {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	if n := e.count("DescribeClusterRoutes"); n != 2 {
		t.Fatalf("DescribeClusterRoutes calls = %d for 50 concurrent conflicts, want a shared read", n)
	}
}

// A call the cloud fails once changes nothing the Manager knows: a failed
// read is not cached, a failed write leaves the cache and the ownership as
// they were, the error names the action and the cloud's code, and the
// retry (the route controller's next reconcile) succeeds.
func TestTransientFaults(t *testing.T) {
	nodes := nodeMap{"10.0.0.1": "n1", "10.0.0.2": "n2"}
	tests := []struct {
		action string
		op     func(context.Context, *Manager) error
		want   []string // the table afterwards
	}{
		{"DescribeClusterRoutes", func(ctx context.Context, m *Manager) error {
			got, err := m.List(ctx, nodes)
			if err == nil && len(got) != 1 {
				return fmt.Errorf("List = %v, want n1's route", names(got))
			}
			return err
		}, []string{"10.244.1.0/24 -> 10.0.0.1"}},
		{"CreateClusterRoute", func(ctx context.Context, m *Manager) error {
			return m.Create(ctx, "n2", rt("10.244.2.0/24", "10.0.0.2"))
		}, []string{"10.244.1.0/24 -> 10.0.0.1", "10.244.2.0/24 -> 10.0.0.2"}},
		{"DeleteClusterRoute", func(ctx context.Context, m *Manager) error {
			return m.Delete(ctx, rt("10.244.1.0/24", "10.0.0.1"))
		}, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.action, func(t *testing.T) {
			ctx := context.Background()
			e := newRouteEnv(t, rt("10.244.1.0/24", "10.0.0.1"))
			m, clk := newManager(e.tke(), Options{CacheTTL: 9 * time.Second})
			if _, err := m.List(ctx, nodes); err != nil {
				t.Fatal(err)
			}
			clk.Advance(10 * time.Second) // the cache is stale: every op calls the cloud
			e.fail(tc.action, "InternalError", 1)
			err := tc.op(ctx, m)
			if err == nil || !strings.Contains(err.Error(), tc.action) || !strings.Contains(err.Error(), "InternalError") {
				t.Fatalf("with the fault: %v, want the action and the code", err)
			}
			if err := tc.op(ctx, m); err != nil {
				t.Fatalf("retry: %v", err)
			}
			if got := e.routes(); !slices.Equal(got, tc.want) {
				t.Errorf("table now %v, want %v", got, tc.want)
			}
			if n := e.count(tc.action); n < 2 {
				t.Errorf("%s calls = %d: the retry did not reach the cloud", tc.action, n)
			}
		})
	}
}

func TestCreateErrors(t *testing.T) {
	foreign := rt("10.244.9.0/24", "10.0.0.9")
	tests := []struct {
		name     string
		node     string
		route    Route
		opts     Options
		existing []Route
		nodes    nodeMap
		wantKind error
		wantMsg  []string
	}{
		{
			name: "conflict with a foreign route", node: "n1", route: rt("10.244.9.0/24", "10.0.0.1"),
			existing: []Route{foreign}, nodes: nodeMap{"10.0.0.1": "n1"},
			wantKind: ErrCIDRConflict,
			wantMsg:  []string{`create route 10.244.9.0/24 -> 10.0.0.1 for node "n1"`, "overlaps route 10.244.9.0/24 -> 10.0.0.9", "not managed by this cluster; delete it from the table"},
		},
		{
			name: "conflict with another node's route", node: "n1", route: rt("10.244.2.0/23", "10.0.0.1"),
			existing: []Route{rt("10.244.2.0/24", "10.0.0.2")}, nodes: nodeMap{"10.0.0.1": "n1", "10.0.0.2": "n2"},
			wantKind: ErrCIDRConflict,
			wantMsg:  []string{`node "n2"'s route`, "overlapping pod CIDRs"},
		},
		{
			name: "gateway already has a CIDR", node: "n1", route: rt("10.244.3.0/24", "10.0.0.1"),
			existing: []Route{rt("10.244.1.0/24", "10.0.0.1")}, nodes: nodeMap{"10.0.0.1": "n1"},
			wantKind: ErrGatewayInUse,
			wantMsg:  []string{`node "n1" already has route 10.244.1.0/24 -> 10.0.0.1`, "one CIDR", "deleted on a later reconcile"},
		},
		{
			name: "outside the table", node: "n1", route: rt("10.245.0.0/24", "10.0.0.1"),
			opts:     Options{ClusterCIDR: mustPrefix("10.0.0.0/8")},
			nodes:    nodeMap{"10.0.0.1": "n1"},
			wantKind: ErrOutOfTable,
			wantMsg:  []string{"outside the table's CIDR 10.244.0.0/16"},
		},
		{
			name: "outside the cluster CIDR: no call", node: "n1", route: rt("10.245.0.0/24", "10.0.0.1"),
			nodes:   nodeMap{"10.0.0.1": "n1"},
			wantMsg: []string{"outside the cluster CIDR 10.244.0.0/16"},
		},
		{
			name: "ipv6: no call", node: "n1", route: Route{Destination: mustPrefix("fd00:1::/64"), Gateway: netip.MustParseAddr("10.0.0.1")},
			wantMsg: []string{"IPv4 only"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newRouteEnv(t, tc.existing...)
			m, _ := newManager(e.tke(), tc.opts)
			if _, err := m.List(ctx, tc.nodes); err != nil {
				t.Fatal(err)
			}
			err := m.Create(ctx, tc.node, tc.route)
			if err == nil {
				t.Fatal("Create succeeded")
			}
			if tc.wantKind != nil && !errors.Is(err, tc.wantKind) {
				t.Errorf("error %v is not %v", err, tc.wantKind)
			}
			for _, s := range tc.wantMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if tc.wantKind == nil && e.count("CreateClusterRoute") != 0 {
				t.Errorf("CreateClusterRoute called for a route we refuse")
			}
		})
	}
}

// A conflict caused by the route itself (an earlier attempt whose answer was
// lost) is success.
func TestCreateIdempotentAfterLostAnswer(t *testing.T) {
	ctx := context.Background()
	e := newRouteEnv(t)
	m, _ := newManager(e.tke(), Options{CacheTTL: 9 * time.Second})
	if _, err := m.List(ctx, nodeMap{}); err != nil {
		t.Fatal(err)
	}
	// Our previous attempt created it, but its answer was lost: the route
	// is in the table behind the cache's back.
	e.loseNextAnswer("CreateClusterRoute")
	if err := m.Create(ctx, "n1", rt("10.244.1.0/24", "10.0.0.1")); err == nil {
		t.Fatal("Create succeeded without an answer")
	}
	if !e.has(rt("10.244.1.0/24", "10.0.0.1")) {
		t.Fatalf("table now %v, want the route of the lost answer", e.routes())
	}
	// The retry conflicts with the route itself (GatewayAlreadyAssociatedCidr).
	if err := m.Create(ctx, "n1", rt("10.244.1.0/24", "10.0.0.1")); err != nil {
		t.Fatalf("Create = %v, want success", err)
	}
	if got, _ := m.List(ctx, nodeMap{}); len(got) != 1 || got[0].Node != "n1" || !got[0].Gone {
		t.Fatalf("List = %v", names(got))
	}
}

func TestTableMissing(t *testing.T) {
	ctx := context.Background()
	t.Run("clear error", func(t *testing.T) {
		m, _ := newManager(newRouteEnvWith(t, nil).tke(), Options{})
		_, err := m.List(ctx, nodeMap{})
		if !errors.Is(err, ErrTableNotFound) || !strings.Contains(err.Error(), "create_cluster_route_table: true") {
			t.Fatalf("List = %v", err)
		}
	})
	t.Run("created when allowed", func(t *testing.T) {
		e := newRouteEnvWith(t, nil)
		m, _ := newManager(e.tke(), Options{CreateTable: true, ClusterCIDR: mustPrefix("10.96.0.0/16")})
		if _, err := m.List(ctx, nodeMap{}); err != nil {
			t.Fatal(err)
		}
		created := e.requests("CreateClusterRouteTable")
		if len(created) != 1 || !strings.Contains(created[0], `"RouteTableCidrBlock":"10.96.0.0/16"`) {
			t.Fatalf("CreateClusterRouteTable calls %v", created)
		}
		if table, err := e.sim.Tencent().TKE().RouteTable(simTable); err != nil || table.CIDR != "10.96.0.0/16" {
			t.Fatalf("table %+v, %v", table, err)
		}
		if _, err := m.List(ctx, nodeMap{}); err != nil || e.count("CreateClusterRouteTable") != 1 || e.count("DescribeClusterRouteTables") > 3 {
			t.Fatalf("second List: %v, calls %v", err, e.counts())
		}
	})
	t.Run("deleted later: found missing again", func(t *testing.T) {
		e := newRouteEnv(t, rt("10.244.1.0/24", "10.0.0.1"))
		m, clk := newManager(e.tke(), Options{CacheTTL: time.Second})
		if _, err := m.List(ctx, nodeMap{}); err != nil {
			t.Fatal(err)
		}
		e.deleteTable()
		clk.Advance(2 * time.Second)
		// DescribeClusterRoutes answers an empty list for a missing table;
		// the empty answer is checked against the table list.
		if _, err := m.List(ctx, nodeMap{}); !errors.Is(err, ErrTableNotFound) {
			t.Fatalf("List = %v", err)
		}
		err := m.Create(ctx, "n1", rt("10.244.2.0/24", "10.0.0.2"))
		if !errors.Is(err, ErrTableNotFound) || !strings.Contains(err.Error(), "does not exist") {
			t.Fatalf("Create = %v", err)
		}
	})
}

// The VPC backend needs the cloud's RouteId to delete; the Manager fills it
// from the cache (the CreateRoutes answer), so that the backend does not
// read the table to look it up.
func TestDeleteUsesCachedID(t *testing.T) {
	ctx := context.Background()
	e := newRouteEnvWith(t, func(o *cloudsim.Options) {
		o.Tencent.VPCRouteTables = []tencent.VPCRouteTable{{ID: simRTB, VpcID: simVPC}}
	})
	m, _ := newManager(NewVPC(e.vpcClient(), simRTB, simVPC, nil), Options{ClusterCIDR: mustPrefix("10.200.0.0/16"), CacheTTL: time.Minute})
	if _, err := m.List(ctx, nodeMap{}); err != nil {
		t.Fatal(err)
	}
	if err := m.Create(ctx, "n1", rt("10.200.1.0/24", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	table, err := e.sim.Tencent().VPC().VPCRouteTable(simRTB)
	if err != nil || len(table.Routes) != 1 {
		t.Fatalf("table %+v, %v", table, err)
	}
	reads := e.count("DescribeRouteTables")
	if err := m.Delete(ctx, rt("10.200.1.0/24", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	deletes := e.requests("DeleteRoutes")
	if len(deletes) != 1 || !strings.Contains(deletes[0], fmt.Sprintf(`"RouteId":%d`, table.Routes[0].ID)) {
		t.Fatalf("DeleteRoutes got %v, want RouteId %d", deletes, table.Routes[0].ID)
	}
	if n := e.count("DescribeRouteTables"); n != reads {
		t.Errorf("Delete read the table %d times to find the RouteId", n-reads)
	}
	if table, _ := e.sim.Tencent().VPC().VPCRouteTable(simRTB); len(table.Routes) != 0 {
		t.Errorf("table now %+v", table.Routes)
	}
}

func TestParseName(t *testing.T) {
	r := rt("10.244.1.0/24", "10.0.0.1")
	got, err := ParseName(r.Name())
	if err != nil || !got.same(r) {
		t.Fatalf("ParseName(%q) = %v, %v", r.Name(), got, err)
	}
	for _, bad := range []string{"", "10.244.1.0/24", "x->10.0.0.1", "10.244.1.0/24->x"} {
		if _, err := ParseName(bad); err == nil {
			t.Errorf("ParseName(%q) succeeded", bad)
		}
	}
}
