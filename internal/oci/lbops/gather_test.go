package lbops

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	"github.com/oracle/oci-go-sdk/v65/networkloadbalancer"
	"k8s.io/apimachinery/pkg/types"
)

// fakeLists answers ListLoadBalancers and ListNetworkLoadBalancers from a
// slice, with the displayName filter and paging, and counts the calls.
// A call reads the store when it starts, then waits for gate (if set), so
// a test can hold a listing while lookups gather and load balancers are
// created. Every other method of the embedded interfaces is absent.
type fakeLists struct {
	mu       sync.Mutex
	items    []fakeLB
	filtered int
	all      int
	failAll  error         // the answer of unfiltered calls, when set
	gate     chan struct{} // a call waits for it when set
	entered  chan struct{} // a call signals it started, when set
	pageSize int           // 0: the request's limit
}

type fakeLB struct{ id, name, state string }

func (f *fakeLists) add(id, name, state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.items = append(f.items, fakeLB{id, name, state})
}

func (f *fakeLists) calls() (filtered, all int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.filtered, f.all
}

// page is the call's answer: items named name (all for nil) from the
// page'th, and the next page.
func (f *fakeLists) page(name, page *string, limit int) ([]fakeLB, *string, error) {
	f.mu.Lock()
	var err error
	if name != nil {
		f.filtered++
	} else {
		f.all++
		err = f.failAll
	}
	var match []fakeLB
	for _, it := range f.items {
		if name == nil || it.name == *name {
			match = append(match, it)
		}
	}
	gate, entered := f.gate, f.entered
	if f.pageSize > 0 {
		limit = f.pageSize
	}
	f.mu.Unlock()
	if entered != nil {
		entered <- struct{}{}
	}
	if gate != nil {
		<-gate
	}
	if err != nil {
		return nil, nil, err
	}
	from := 0
	if page != nil {
		from, _ = strconv.Atoi(*page)
	}
	to := min(from+limit, len(match))
	var next *string
	if to < len(match) {
		s := strconv.Itoa(to)
		next = &s
	}
	return match[from:to], next, nil
}

func (f fakeLBAPI) ListLoadBalancers(_ context.Context, req loadbalancer.ListLoadBalancersRequest) (loadbalancer.ListLoadBalancersResponse, error) {
	items, next, err := f.page(req.DisplayName, req.Page, int(*req.Limit))
	var resp loadbalancer.ListLoadBalancersResponse
	for _, it := range items {
		resp.Items = append(resp.Items, loadbalancer.LoadBalancer{Id: &it.id, DisplayName: &it.name,
			LifecycleState: loadbalancer.LoadBalancerLifecycleStateEnum(it.state)})
	}
	resp.OpcNextPage = next
	return resp, err
}

func (f fakeNLBAPI) ListNetworkLoadBalancers(_ context.Context, req networkloadbalancer.ListNetworkLoadBalancersRequest) (networkloadbalancer.ListNetworkLoadBalancersResponse, error) {
	items, next, err := f.page(req.DisplayName, req.Page, *req.Limit)
	var resp networkloadbalancer.ListNetworkLoadBalancersResponse
	for _, it := range items {
		resp.Items = append(resp.Items, networkloadbalancer.NetworkLoadBalancerSummary{Id: &it.id, DisplayName: &it.name,
			LifecycleState: networkloadbalancer.LifecycleStateEnum(it.state)})
	}
	resp.OpcNextPage = next
	return resp, err
}

func (f fakeNLBAPI) GetNetworkLoadBalancer(_ context.Context, req networkloadbalancer.GetNetworkLoadBalancerRequest) (networkloadbalancer.GetNetworkLoadBalancerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, it := range f.items {
		if it.id == *req.NetworkLoadBalancerId {
			return networkloadbalancer.GetNetworkLoadBalancerResponse{NetworkLoadBalancer: networkloadbalancer.NetworkLoadBalancer{
				Id: &it.id, DisplayName: &it.name, LifecycleState: networkloadbalancer.LifecycleStateEnum(it.state)}}, nil
		}
	}
	return networkloadbalancer.GetNetworkLoadBalancerResponse{}, fmt.Errorf("no NLB %s", *req.NetworkLoadBalancerId)
}

// fakeLBAPI and fakeNLBAPI are the two APIs over f; any other method
// than these three panics (nil interface).
type fakeLBAPI struct {
	LBAPI
	*fakeLists
}

type fakeNLBAPI struct {
	NLBAPI
	*fakeLists
}

func newFakeDrivers(f *fakeLists) (lbDriver, nlbDriver) {
	const c = "ocid1.compartment.oc1..test"
	lb, nlb := fakeLBAPI{fakeLists: f}, fakeNLBAPI{fakeLists: f}
	return lbDriver{api: lb, compartment: c, lists: newLBLists(lb, c)}, nlbDriver{api: nlb, compartment: c, lists: newNLBLists(nlb, c)}
}

// waitGathered waits until lookups asking for n names wait for the
// running listing to end.
func waitGathered[T any](t *testing.T, g *gatherer[T], n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		q := 0
		if g.next != nil {
			q = len(g.next.names)
		}
		g.mu.Unlock()
		if q >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d names gathered after 10s, want %d", q, n)
		}
		time.Sleep(time.Millisecond)
	}
}

type findResult struct {
	id  string
	err error
}

func findAsync(ctx context.Context, drv driver, names ...string) chan findResult {
	ch := make(chan findResult, 1)
	go func() {
		a, err := drv.find(ctx, time.Time{}, names...)
		r := findResult{err: err}
		if a != nil {
			r.id = a.ID
		}
		ch <- r
	}()
	return ch
}

// A lone find uses the displayName filter, one call per name it needs;
// DELETED and DELETING load balancers are not found, and two live ones
// under the name are refused.
func TestLoneFindUsesTheFilter(t *testing.T) {
	for _, tc := range []struct {
		name         string
		kind         Kind
		items        []fakeLB
		find         []string
		wantID       string
		wantErr      string
		wantFiltered int
		wantAll      int
	}{
		{name: "LB found", kind: KindLB, items: []fakeLB{{"lb1", "u1", "ACTIVE"}, {"lb2", "u2", "ACTIVE"}},
			find: []string{"u1"}, wantID: "lb1", wantFiltered: 1},
		{name: "LB none", kind: KindLB, items: []fakeLB{{"lb2", "u2", "ACTIVE"}}, find: []string{"u1"}, wantFiltered: 1},
		{name: "LB deleted and deleting are not found", kind: KindLB,
			items: []fakeLB{{"lb1", "u1", "DELETED"}, {"lb2", "u1", "DELETING"}, {"lb3", "u1", "ACTIVE"}},
			find:  []string{"u1"}, wantID: "lb3", wantFiltered: 1},
		{name: "LB duplicates refused", kind: KindLB, items: []fakeLB{{"lb1", "u1", "ACTIVE"}, {"lb2", "u1", "FAILED"}},
			find: []string{"u1"}, wantErr: "2 load balancers named u1 in compartment", wantFiltered: 1},
		{name: "NLB duplicates refused", kind: KindNLB, items: []fakeLB{{"n1", "u1", "ACTIVE"}, {"n2", "u1", "ACTIVE"}},
			find: []string{"u1"}, wantErr: "2 network load balancers named u1", wantFiltered: 1},
		// Two names on a compartment that lists in one page: one
		// unfiltered call instead of two filtered ones (the kind-switch
		// lookup of every LB Service).
		{name: "NLB two names, one listing", kind: KindNLB, items: []fakeLB{{"n1", "default/a/u1", "ACTIVE"}},
			find: []string{"u1", "default/a/u1"}, wantID: "n1", wantAll: 1},
		{name: "NLB first name wins", kind: KindNLB, items: []fakeLB{{"n1", "default/a/u1", "ACTIVE"}, {"n2", "u1", "ACTIVE"}},
			find: []string{"u1", "default/a/u1"}, wantID: "n2", wantAll: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeLists{items: tc.items}
			lb, nlb := newFakeDrivers(f)
			var drv driver = lb
			if tc.kind == KindNLB {
				drv = nlb
			}
			a, err := drv.find(context.Background(), time.Time{}, tc.find...)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case tc.wantID == "" && a != nil:
				t.Fatalf("found %s, want none", a.ID)
			case tc.wantID != "" && (a == nil || a.ID != tc.wantID):
				t.Fatalf("found %+v, want %s", a, tc.wantID)
			}
			if fl, all := f.calls(); fl != tc.wantFiltered || all != tc.wantAll {
				t.Errorf("calls: %d filtered, %d unfiltered; want %d, %d", fl, all, tc.wantFiltered, tc.wantAll)
			}
		})
	}
}

// Finds that ask while a listing runs share the next one, which starts
// after they asked: a load balancer created while the first listing ran
// is found; an error reaches every waiter; duplicates are still refused.
func TestConcurrentFindsShareAListing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		failAll error
		dup     bool
	}{
		{name: "shared"},
		{name: "error reaches every waiter", failAll: errors.New("503 boom")},
		{name: "duplicates refused", dup: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const waiters = 8
			f := &fakeLists{gate: make(chan struct{}), entered: make(chan struct{}, 10), failAll: tc.failAll, pageSize: 3}
			f.add("lb-first", "first", "ACTIVE")
			f.add("lb-gone", "svc-0", "DELETED")
			lb, _ := newFakeDrivers(f)
			ctx := context.Background()

			first := findAsync(ctx, lb, "first")
			<-f.entered // the lone find's filtered listing has read the store
			// Created after that listing started: the gathered finds must see them.
			for i := range waiters {
				f.add(fmt.Sprintf("lb-%d", i), fmt.Sprintf("svc-%d", i), "ACTIVE")
			}
			if tc.dup {
				f.add("lb-extra", "svc-3", "ACTIVE")
			}
			var rest []chan findResult
			for i := range waiters {
				rest = append(rest, findAsync(ctx, lb, fmt.Sprintf("svc-%d", i)))
			}
			waitGathered(t, lb.lists, waiters)
			f.mu.Lock()
			gate := f.gate
			f.gate, f.entered = nil, nil
			f.mu.Unlock()
			close(gate) // the lone find's listing ends; the gathered one starts

			if r := <-first; r.err != nil || r.id != "lb-first" {
				t.Errorf("the lone find: %+v", r)
			}
			for i, ch := range rest {
				r := <-ch
				switch {
				case tc.failAll != nil:
					if r.err == nil || !strings.Contains(r.err.Error(), "ListLoadBalancers") || !strings.Contains(r.err.Error(), "503 boom") {
						t.Errorf("svc-%d: err = %v, want the listing's error", i, r.err)
					}
				case tc.dup && i == 3:
					if r.err == nil || !strings.Contains(r.err.Error(), "2 load balancers named svc-3") {
						t.Errorf("svc-3: err = %v, want the duplicate refusal", r.err)
					}
				case r.err != nil || r.id != fmt.Sprintf("lb-%d", i):
					t.Errorf("svc-%d: %+v, want lb-%d (created after the first listing began, before it asked)", i, r, i)
				}
			}
			// One filtered call for the lone find; one unfiltered listing
			// of ceil(items/3) pages for all the others.
			pages := 1
			if tc.failAll == nil {
				pages = (len(f.items) + 2) / 3
			}
			if fl, all := f.calls(); fl != 1 || all != pages {
				t.Errorf("calls: %d filtered, %d unfiltered; want 1 and %d", fl, all, pages)
			}
			if tc.failAll == nil && lb.lists.pages != pages {
				t.Errorf("remembered pages = %d, want %d", lb.lists.pages, pages)
			}
		})
	}
}

// With a TTL, a resync's lookups gather in the first round's window into
// one unfiltered listing, which then answers every later lookup of a
// Service not reconciled since it began, absence included, until the TTL
// ends.
func TestSnapshotAnswersAResync(t *testing.T) {
	const lbs, first = 250, 20
	f := &fakeLists{pageSize: 100}
	for i := range lbs {
		f.add(fmt.Sprintf("lb-%d", i), fmt.Sprintf("svc-%d", i), "ACTIVE")
	}
	lb, _ := newFakeDrivers(f)
	now := time.Unix(1000, 0)
	var clockMu sync.Mutex
	lb.lists.withTTL(time.Minute).now = func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	ctx := context.Background()

	var rest []chan findResult
	for i := range first {
		rest = append(rest, findAsync(ctx, lb, fmt.Sprintf("svc-%d", i)))
	}
	for i, ch := range rest {
		if r := <-ch; r.err != nil || r.id != fmt.Sprintf("lb-%d", i) {
			t.Fatalf("svc-%d: %+v", i, r)
		}
	}
	if fl, all := f.calls(); fl != 0 || all != 3 {
		t.Fatalf("the first round: %d filtered, %d unfiltered calls; want one listing of 3 pages", fl, all)
	}
	for i := first; i < lbs; i++ {
		if a, err := lb.find(ctx, time.Time{}, fmt.Sprintf("svc-%d", i)); err != nil || a == nil || a.ID != fmt.Sprintf("lb-%d", i) {
			t.Fatalf("svc-%d: %+v, %v", i, a, err)
		}
	}
	if a, err := lb.find(ctx, time.Time{}, "svc-new"); err != nil || a != nil {
		t.Fatalf("a Service without a load balancer: %+v, %v", a, err)
	}
	if fl, all := f.calls(); fl != 0 || all != 3 || lb.lists.served != lbs-first+1 {
		t.Fatalf("after the resync: %d filtered, %d unfiltered calls, %d served; want 0, 3, %d", fl, all, lb.lists.served, lbs-first+1)
	}

	for _, tc := range []struct {
		name      string
		advance   time.Duration
		notBefore time.Duration // after the listing began; 0: the zero time
		wantCall  bool
	}{
		{name: "reconciled before the listing began", notBefore: -time.Second},
		{name: "reconciled after the listing began", notBefore: time.Second, wantCall: true},
		{name: "the TTL has passed", advance: time.Minute + time.Second, wantCall: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clockMu.Lock()
			now = now.Add(tc.advance)
			start := lb.lists.snap.start
			clockMu.Unlock()
			var nb time.Time
			if tc.notBefore != 0 {
				nb = start.Add(tc.notBefore)
			}
			fl0, all0 := f.calls()
			if a, err := lb.find(ctx, nb, "svc-7"); err != nil || a == nil || a.ID != "lb-7" {
				t.Fatalf("svc-7: %+v, %v", a, err)
			}
			fl, all := f.calls()
			if called := fl+all > fl0+all0; called != tc.wantCall {
				t.Errorf("made a call: %v, want %v", called, tc.wantCall)
			}
		})
	}
}

// newSharedOps are the operations as the provider makes them: the
// listings answer lookups for a minute (DefaultLookupTTL).
func newSharedOps(env *lbEnv) *Ops {
	return New(env.api.LB, env.api.NLB, env.api.Network, Config{Compartment: testCompartment, VCN: testVCN, LookupTTL: DefaultLookupTTL,
		Timing: Timing{Poll: time.Millisecond, PollMax: time.Millisecond, Wait: 5 * time.Second}})
}

// serviceN is desired for the i'th Service of a fleet.
func serviceN(kind Kind, i int) *Desired {
	d := desired(kind, "10.0.0.1")
	d.Ref.Service.Name = fmt.Sprintf("web-%d", i)
	d.Ref.UID = types.UID(fmt.Sprintf("uid-%d", i))
	d.Name = string(d.Ref.UID)
	return d
}

// ensureAll creates the load balancers of Services from to to-1 at once,
// as a burst of creations does.
func ensureAll(t *testing.T, o *Ops, kind Kind, from, to int) []*Desired {
	t.Helper()
	ds := make([]*Desired, to-from)
	errs := make([]error, len(ds))
	var wg sync.WaitGroup
	for i := range ds {
		ds[i] = serviceN(kind, from+i)
		wg.Go(func() { _, errs[i] = o.Ensure(context.Background(), ds[i]) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Service %d: %v", from+i, err)
		}
	}
	return ds
}

// Creations list the compartment once, not once each: the check for a
// load balancer named with another prefix (takeover.go) is answered by the
// listing that answered the lookups, while it may (gather.go). Before,
// each creation listed the whole compartment, O(S²) pages for S Services.
func TestCreationsListOnce(t *testing.T) {
	const burst, oneByOne = 20, 10
	env := newLBEnv(t)
	o := newSharedOps(env)
	ensureAll(t, o, KindLB, 0, burst)
	for i := burst; i < burst+oneByOne; i++ {
		ensureAll(t, o, KindLB, i, i+1)
	}
	if n := len(env.balancers(KindLB)); n != burst+oneByOne {
		t.Fatalf("%d load balancers, want %d", n, burst+oneByOne)
	}
	// The burst's lookups gather into one listing in the first round's
	// window; it answers every later lookup and check for the TTL (a check
	// that read afresh made 12 here: one per creation one by one). A
	// lookup starved past the window joins a second round: one more call,
	// filtered for a name or two. Each creation confirms the absence
	// afresh, by name: one small call each.
	all, filtered := env.listsOf("ListLoadBalancers"), env.listsOf("ListLoadBalancers displayName")
	if all > 2 || filtered < burst+oneByOne || filtered > 2*burst+oneByOne {
		t.Errorf("%d unfiltered and %d filtered ListLoadBalancers for %d creations; want 1 (2 with a starved lookup) and %d (up to %d)",
			all, filtered, burst+oneByOne, burst+oneByOne, 2*burst+oneByOne)
	}
}

// A creation is decided on a fresh read: a load balancer made out of band
// for the Service after the shared listing that says it is absent is found,
// and no second one is made.
func TestCreationReadsAfresh(t *testing.T) {
	env := newLBEnv(t)
	o := newSharedOps(env)
	ensureAll(t, o, KindLB, 0, 1) // a listing that answers for the TTL
	if got := env.listsOf("ListLoadBalancers"); got != 1 {
		t.Fatalf("%d listings, want 1", got)
	}
	late := serviceN(KindLB, 1)
	if _, err := env.api.LB.CreateLoadBalancer(context.Background(), loadbalancer.CreateLoadBalancerRequest{
		CreateLoadBalancerDetails: loadbalancer.CreateLoadBalancerDetails{CompartmentId: common.String(testCompartment),
			DisplayName: common.String(late.Name), ShapeName: common.String(ShapeFlexible), SubnetIds: []string{subnetA},
			ShapeDetails: &loadbalancer.ShapeDetails{MinimumBandwidthInMbps: common.Int(10), MaximumBandwidthInMbps: common.Int(100)}}}); err != nil {
		t.Fatal(err)
	}
	if a, err := o.lb.find(context.Background(), time.Time{}, late.Name); err != nil || a != nil {
		t.Fatalf("the shared listing: %+v, %v; want it to predate the load balancer", a, err)
	}
	if _, err := o.Ensure(context.Background(), late); err != nil {
		t.Fatal(err)
	}
	if n := len(env.balancers(KindLB)); n != 2 {
		t.Errorf("%d load balancers, want 2: the first Service's and the one made out of band, taken over", n)
	}
}
