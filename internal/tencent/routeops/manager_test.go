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

	"github.com/ccmkit/ccm/internal/tcapi"
)

// fakeBackend is an in-memory table with TKE's rules (inside the CIDR, one
// CIDR per gateway, no overlap). Hooks let a test fail or delay calls.
type fakeBackend struct {
	mu      sync.Mutex
	exists  bool
	table   Table
	routes  []Route
	calls   map[string]int
	failOn  map[string]error    // action -> error to return
	onList  func()              // called inside ListRoutes, before answering
	created []netip.Prefix      // CreateTable CIDRs
	nextID  int                 // for IDs, when withIDs
	withIDs bool                // assign IDs like the VPC backend
	deleted []Route             // DeleteRoute arguments
	before  func(action string) // called (unlocked) at the start of every call
}

func newFake(routes ...Route) *fakeBackend {
	return &fakeBackend{
		exists: true,
		table:  Table{Name: "cls-test", CIDR: mustPrefix("10.244.0.0/16"), VpcID: "vpc-test0001"},
		routes: routes,
		calls:  map[string]int{},
		failOn: map[string]error{},
	}
}

func (f *fakeBackend) String() string { return `fake table "cls-test"` }

func (f *fakeBackend) call(action string) error {
	if f.before != nil {
		f.before(action)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[action]++
	return f.failOn[action]
}

func (f *fakeBackend) count(action string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[action]
}

func (f *fakeBackend) FindTable(context.Context) (Table, error) {
	if err := f.call("FindTable"); err != nil {
		return Table{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.exists {
		return Table{}, &tcapi.CallError{Action: "FindTable", Kind: ErrTableNotFound, Err: errors.New("no such table")}
	}
	return f.table, nil
}

func (f *fakeBackend) CreateTable(_ context.Context, cidr netip.Prefix) (Table, error) {
	if err := f.call("CreateTable"); err != nil {
		return Table{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.created = append(f.created, cidr)
	f.exists, f.table.CIDR = true, cidr
	return f.table, nil
}

func (f *fakeBackend) ListRoutes(context.Context) ([]Route, error) {
	if err := f.call("ListRoutes"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	out := slices.Clone(f.routes)
	f.mu.Unlock()
	if f.onList != nil {
		f.onList()
	}
	return out, nil
}

func (f *fakeBackend) CreateRoute(_ context.Context, r Route) (Route, error) {
	if err := f.call("CreateRoute"); err != nil {
		return Route{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.exists {
		return Route{}, &tcapi.CallError{Action: "CreateRoute", Kind: ErrTableNotFound, Err: errors.New("no such table")}
	}
	if !f.table.CIDR.Contains(r.Destination.Addr()) {
		return Route{}, &tcapi.CallError{Action: "CreateRoute", Kind: ErrOutOfTable, Err: errors.New("[InvalidParameter.CidrOutOfRouteTable] out")}
	}
	for _, x := range f.routes {
		if x.Gateway == r.Gateway {
			return Route{}, &tcapi.CallError{Action: "CreateRoute", Kind: ErrGatewayInUse, Err: errors.New("[InvalidParameter.GatewayAlreadyAssociatedCidr] in use")}
		}
		if x.Destination.Overlaps(r.Destination) {
			return Route{}, &tcapi.CallError{Action: "CreateRoute", Kind: ErrCIDRConflict, Err: errors.New("[InvalidParameter.CidrConflictWithOtherRoute] conflict")}
		}
	}
	if f.withIDs {
		f.nextID++
		r.ID = fmt.Sprintf("id-%d", f.nextID)
	}
	f.routes = append(f.routes, r)
	return r, nil
}

func (f *fakeBackend) DeleteRoute(_ context.Context, r Route) error {
	if err := f.call("DeleteRoute"); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, r)
	f.routes = slices.DeleteFunc(f.routes, r.same)
	return nil
}

func (f *fakeBackend) has(r Route) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.ContainsFunc(f.routes, r.same)
}

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

func newManager(f *fakeBackend, opts Options) (*Manager, *clock) {
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	if opts.Clock == nil {
		opts.Clock = clk.Now
	}
	return NewManager(f, opts), clk
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
			f := newFake(tc.routes...)
			m, _ := newManager(f, tc.opts)
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
	f := newFake(rt("10.244.1.0/24", "10.0.0.1"), rt("10.244.9.0/24", "10.0.0.9"))
	m, clk := newManager(f, Options{CacheTTL: 9 * time.Second})
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
	if !f.has(rt("10.244.9.0/24", "10.0.0.9")) || f.has(rt("10.244.1.0/24", "10.0.0.1")) {
		t.Fatalf("table now %v", f.routes)
	}
	// Once the route is gone, the gateway is forgotten: a later route to
	// that IP from another tool is foreign.
	f.routes = append(f.routes, rt("10.244.5.0/24", "10.0.0.1"))
	clk.Advance(10 * time.Second)
	if got, _ := m.List(ctx, nodeMap{}); len(got) != 0 {
		t.Fatalf("List after the node's route went = %v", names(got))
	}
}

func TestCacheTTLAndInPlaceUpdates(t *testing.T) {
	ctx := context.Background()
	f := newFake(rt("10.244.1.0/24", "10.0.0.1"))
	m, clk := newManager(f, Options{CacheTTL: 9 * time.Second})
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
	if n := f.count("ListRoutes"); n != 1 {
		t.Fatalf("ListRoutes calls = %d, want 1 (cache)", n)
	}
	// Creating a route that the fresh cache already holds costs nothing.
	if err := m.Create(ctx, "n2", rt("10.244.2.0/24", "10.0.0.2")); err != nil {
		t.Fatal(err)
	}
	if n := f.count("CreateRoute"); n != 2 {
		t.Fatalf("CreateRoute calls = %d, want 2", n)
	}
	// After the TTL, the next List reads the cloud and sees drift.
	f.mu.Lock()
	f.routes = slices.DeleteFunc(f.routes, rt("10.244.3.0/24", "10.0.0.3").same)
	f.mu.Unlock()
	clk.Advance(5 * time.Second)
	got, _ = m.List(ctx, nodes)
	if want := []string{"10.244.2.0/24 -> 10.0.0.2@n2"}; !slices.Equal(names(got), want) {
		t.Fatalf("List after TTL = %v, want %v", names(got), want)
	}
	if n := f.count("ListRoutes"); n != 2 {
		t.Fatalf("ListRoutes calls = %d, want 2", n)
	}
	if s := m.Stats(); s.CacheHits != 1 || s.CacheMisses != 2 || s.CreatesSkipped != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestCacheDisabled(t *testing.T) {
	f := newFake(rt("10.244.1.0/24", "10.0.0.1"))
	m, _ := newManager(f, Options{})
	for range 3 {
		if _, err := m.List(context.Background(), nodeMap{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.count("ListRoutes"); n != 3 {
		t.Fatalf("ListRoutes calls = %d, want 3 with CacheTTL 0", n)
	}
}

// A write that lands while a refresh is in flight is not lost when the
// (older) list arrives.
func TestWriteDuringRefresh(t *testing.T) {
	ctx := context.Background()
	f := newFake(rt("10.244.1.0/24", "10.0.0.1"))
	m, clk := newManager(f, Options{CacheTTL: 9 * time.Second})
	nodes := nodeMap{"10.0.0.1": "n1", "10.0.0.2": "n2"}
	if _, err := m.List(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	clk.Advance(10 * time.Second)
	inList, release := make(chan struct{}), make(chan struct{})
	f.onList = func() { close(inList); <-release }
	done := make(chan []NodeRoute)
	go func() {
		got, err := m.List(ctx, nodes)
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	<-inList // the list has been read, the answer is on its way
	if err := m.Create(ctx, "n2", rt("10.244.2.0/24", "10.0.0.2")); err != nil {
		t.Fatal(err)
	}
	f.onList = nil
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
	f := newFake(routes...)
	m, _ := newManager(f, Options{CacheTTL: 9 * time.Second})
	if _, err := m.List(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	// All 50 calls are in flight before the first answer, as with a real
	// network.
	var arrived sync.WaitGroup
	arrived.Add(50)
	f.before = func(action string) {
		if action == "CreateRoute" {
			arrived.Done()
			arrived.Wait()
		}
	}
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
	if n := f.count("ListRoutes"); n != 2 {
		t.Fatalf("ListRoutes calls = %d for 50 concurrent conflicts, want a shared read", n)
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
			f := newFake(tc.existing...)
			m, _ := newManager(f, tc.opts)
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
			if tc.wantKind == nil && f.count("CreateRoute") != 0 {
				t.Errorf("CreateRoute called for a route we refuse")
			}
		})
	}
}

// A conflict caused by the route itself (an earlier attempt whose answer was
// lost) is success.
func TestCreateIdempotentAfterLostAnswer(t *testing.T) {
	ctx := context.Background()
	f := newFake()
	m, _ := newManager(f, Options{CacheTTL: 9 * time.Second})
	if _, err := m.List(ctx, nodeMap{}); err != nil {
		t.Fatal(err)
	}
	// Someone (our previous attempt) created it behind the cache's back.
	f.routes = append(f.routes, rt("10.244.1.0/24", "10.0.0.1"))
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
		f := newFake()
		f.exists = false
		m, _ := newManager(f, Options{})
		_, err := m.List(ctx, nodeMap{})
		if !errors.Is(err, ErrTableNotFound) || !strings.Contains(err.Error(), "create_cluster_route_table: true") {
			t.Fatalf("List = %v", err)
		}
	})
	t.Run("created when allowed", func(t *testing.T) {
		f := newFake()
		f.exists = false
		m, _ := newManager(f, Options{CreateTable: true, ClusterCIDR: mustPrefix("10.96.0.0/16")})
		if _, err := m.List(ctx, nodeMap{}); err != nil {
			t.Fatal(err)
		}
		if len(f.created) != 1 || f.created[0] != mustPrefix("10.96.0.0/16") {
			t.Fatalf("CreateTable calls %v", f.created)
		}
		if _, err := m.List(ctx, nodeMap{}); err != nil || f.count("CreateTable") != 1 || f.count("FindTable") > 3 {
			t.Fatalf("second List: %v, calls %v", err, f.calls)
		}
	})
	t.Run("deleted later: found missing again", func(t *testing.T) {
		f := newFake(rt("10.244.1.0/24", "10.0.0.1"))
		m, clk := newManager(f, Options{CacheTTL: time.Second})
		if _, err := m.List(ctx, nodeMap{}); err != nil {
			t.Fatal(err)
		}
		f.mu.Lock()
		f.exists, f.routes = false, nil
		f.mu.Unlock()
		clk.Advance(2 * time.Second)
		// The empty answer is checked against the table list.
		if _, err := m.List(ctx, nodeMap{}); !errors.Is(err, ErrTableNotFound) {
			t.Fatalf("List = %v", err)
		}
		err := m.Create(ctx, "n1", rt("10.244.2.0/24", "10.0.0.2"))
		if !errors.Is(err, ErrTableNotFound) || !strings.Contains(err.Error(), "does not exist") {
			t.Fatalf("Create = %v", err)
		}
	})
}

// The VPC backend needs the cloud's ID to delete; the Manager fills it from
// the cache.
func TestDeleteUsesCachedID(t *testing.T) {
	ctx := context.Background()
	f := newFake()
	f.withIDs = true
	m, _ := newManager(f, Options{CacheTTL: time.Minute})
	if _, err := m.List(ctx, nodeMap{}); err != nil {
		t.Fatal(err)
	}
	if err := m.Create(ctx, "n1", rt("10.244.1.0/24", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(ctx, rt("10.244.1.0/24", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	if len(f.deleted) != 1 || f.deleted[0].ID != "id-1" {
		t.Fatalf("DeleteRoute got %+v", f.deleted)
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
