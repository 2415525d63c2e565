package inventory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/component-base/metrics/testutil"
)

var runs atomic.Int32

// uniq names a metrics provider label for one test run, so that counts do
// not add up across -count repetitions.
func uniq(name string) string { return fmt.Sprintf("%s-%d", name, runs.Add(1)) }

// vm is the test's instance type.
type vm struct{ id, ip string }

// cloud is a fake cloud: by-id calls and paged listings over a fixed set
// of instances, counting every call.
type cloud struct {
	mu        sync.Mutex
	vms       map[string]vm
	batches   [][]string // ids of each by-id call
	pages     int        // listing pages served
	listings  int
	delay     time.Duration // per call
	fetchErr  error
	listErr   error
	listGate  chan struct{} // when set, a listing waits for it
	pageSize  int
	fetchHook func(ids []string)
}

func newCloud(n int) *cloud {
	c := &cloud{vms: map[string]vm{}, pageSize: 100}
	for i := range n {
		id := fmt.Sprintf("ins-%08d", i)
		c.vms[id] = vm{id: id, ip: fmt.Sprintf("10.0.%d.%d", i/250, i%250)}
	}
	return c
}

func (c *cloud) fetch(_ context.Context, ids []string) ([]vm, error) {
	if c.fetchHook != nil {
		c.fetchHook(ids)
	}
	time.Sleep(c.delay)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batches = append(c.batches, slices.Clone(ids))
	if c.fetchErr != nil {
		return nil, c.fetchErr
	}
	var out []vm
	for _, id := range ids {
		if v, ok := c.vms[id]; ok {
			out = append(out, v)
		}
	}
	return out, nil
}

func (c *cloud) list(context.Context) ([]vm, error) {
	if c.listGate != nil {
		<-c.listGate
	}
	time.Sleep(c.delay)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listings++
	c.pages += max(1, (len(c.vms)+c.pageSize-1)/c.pageSize)
	if c.listErr != nil {
		return nil, c.listErr
	}
	out := make([]vm, 0, len(c.vms))
	for _, v := range c.vms {
		out = append(out, v)
	}
	return out, nil
}

// calls is the number of cloud calls: by-id batches plus listing pages.
func (c *cloud) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.batches) + c.pages
}

func (c *cloud) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batches, c.pages, c.listings = nil, 0, 0
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newInventory(c *cloud, clk *clock, provider string, ttl time.Duration) *Inventory[vm] {
	return New(source(c), Options{Provider: provider, TTL: ttl, Window: 10 * time.Millisecond, Now: clk.Now})
}

func source(c *cloud) Source[vm] {
	return Source[vm]{FetchByID: c.fetch, ListAll: c.list, ID: func(v vm) string { return v.id },
		Indexes: map[string]func(vm) []string{"ip": func(v vm) []string { return []string{v.ip} }}}
}

func ids(n int) []string {
	out := make([]string, n)
	for i := range n {
		out[i] = fmt.Sprintf("ins-%08d", i)
	}
	return out
}

// getAll looks up every id concurrently and fails on any error or miss.
func getAll(t *testing.T, inv *Inventory[vm], list []string, maxAge time.Duration) []Result[vm] {
	t.Helper()
	out := make([]Result[vm], len(list))
	var wg sync.WaitGroup
	for i, id := range list {
		wg.Go(func() {
			r, err := inv.Get(context.Background(), id, maxAge)
			if err != nil {
				t.Errorf("Get %s: %v", id, err)
			}
			out[i] = r
		})
	}
	wg.Wait()
	return out
}

func TestConcurrentLookupsCoalesce(t *testing.T) {
	c := newCloud(300)
	provider := uniq("test-coalesce")
	// TTL 0: never lists. A wide window: full batches go at 100 ids
	// anyway, and the last one must not leave before every goroutine of a
	// loaded machine (CI, -race) has asked; this test is about coalescing,
	// not the window's length.
	inv := New(source(c), Options{Provider: provider, TTL: 0, Window: 500 * time.Millisecond, Now: (&clock{t: time.Unix(0, 0)}).Now})
	res := getAll(t, inv, ids(250), time.Minute)
	for i, r := range res {
		if !r.Found || !r.Fresh || r.Item.id != ids(250)[i] {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	if len(c.batches) != 3 {
		t.Errorf("%d by-id calls for 250 concurrent lookups, want 3", len(c.batches))
	}
	for _, b := range c.batches {
		if len(b) > 100 {
			t.Errorf("a batch of %d ids, more than 100", len(b))
		}
	}
	if n, _ := testutil.GetHistogramMetricCount(batchSize.WithLabelValues(provider)); n != 3 {
		t.Errorf("batch_size observations %d, want 3", n)
	}
	if v, _ := testutil.GetCounterMetricValue(lookups.WithLabelValues(provider, "id", "miss")); v != 250 {
		t.Errorf("misses %v, want 250", v)
	}
}

func TestThunderingHerdOnOneIDMakesOneCall(t *testing.T) {
	c := newCloud(10)
	inv := newInventory(c, &clock{t: time.Unix(0, 0)}, uniq("test-herd-one"), time.Minute)
	same := slices.Repeat([]string{"ins-00000003"}, 50)
	for _, r := range getAll(t, inv, same, time.Minute) {
		if !r.Found {
			t.Fatal("not found")
		}
	}
	if c.calls() != 1 || len(c.batches[0]) != 1 {
		t.Errorf("calls %d (batches %v), want one call for one id", c.calls(), c.batches)
	}
}

func TestCacheHitsWithinMaxAge(t *testing.T) {
	c := newCloud(5)
	clk := &clock{t: time.Unix(0, 0)}
	provider := uniq("test-hits")
	inv := newInventory(c, clk, provider, time.Minute)
	ctx := context.Background()
	if _, err := inv.Get(ctx, "ins-00000001", time.Minute); err != nil {
		t.Fatal(err)
	}
	clk.Advance(30 * time.Second)
	r, err := inv.Get(ctx, "ins-00000001", time.Minute)
	if err != nil || !r.Found || r.Fresh {
		t.Fatalf("Get = %+v, %v; want a cached (not fresh) hit", r, err)
	}
	if c.calls() != 1 {
		t.Errorf("%d calls, want 1 (the second lookup is a hit)", c.calls())
	}
	// A caller wanting younger data goes to the cloud (here: a listing,
	// since the first call already cost as much as one).
	if r, _ := inv.Get(ctx, "ins-00000001", 10*time.Second); !r.Found || c.calls() != 2 {
		t.Errorf("Get with maxAge 10s after 30s = %+v after %d calls, want an answer from a new call", r, c.calls())
	}
	if v, _ := testutil.GetCounterMetricValue(lookups.WithLabelValues(provider, "id", "hit")); v != 1 {
		t.Errorf("hits %v, want 1", v)
	}
}

// A full sync of N instances, one lookup at a time (no batching possible),
// costs at most twice a listing: rent until the calls reach its price, then buy.
func TestSequentialSyncCostsAtMostTwoListings(t *testing.T) {
	const n = 1000 // a listing is 10 pages
	c := newCloud(n)
	clk := &clock{t: time.Unix(0, 0)}
	inv := New(source(c), Options{Provider: uniq("test-sequential"), TTL: time.Minute, Window: -1, Now: clk.Now})
	ctx := context.Background()
	sync := func() {
		for _, id := range ids(n) {
			r, err := inv.Get(ctx, id, time.Minute)
			if err != nil || !r.Found {
				t.Fatalf("Get %s = %+v, %v", id, r, err)
			}
		}
	}
	sync() // cold: one by-id call, then the listing (cost unknown, assumed 1)
	if got := c.calls(); got != 1+10 {
		t.Errorf("cold sync: %d calls, want 11", got)
	}
	for range 3 {
		clk.Advance(5 * time.Minute) // everything stale, as at each status sync
		c.reset()
		sync()
		if got := c.calls(); got > 2*10 {
			t.Errorf("sync: %d calls, want <= 20", got)
		}
		if c.listings != 1 {
			t.Errorf("sync: %d listings, want 1", c.listings)
		}
	}
}

// A status sync whose lookups come in nearly full batches costs about a
// listing by id alone; buying a listing once the rent reached its price
// nearly doubled it (196 calls at 10,000 nodes). Lookups one at a time
// still buy it (TestSequentialSyncCostsAtMostTwoListings).
func TestBatchedSyncDoesNotBuyAListing(t *testing.T) {
	const n = 1000 // a listing is 10 pages
	c := newCloud(n)
	clk := &clock{t: time.Unix(0, 0)}
	// Batches of 90 go out as soon as they are full, so the sync's batches
	// do not depend on the machine's speed; the window only sends the tail.
	inv := New(source(c), Options{Provider: uniq("test-batched-sync"), TTL: time.Minute, MaxBatch: 90,
		Window: time.Second, Now: clk.Now})
	inv.Prime(time.Minute)
	getAll(t, inv, ids(n), time.Minute) // joins the listing
	if c.listings != 1 || inv.listCost != 10 {
		t.Fatalf("priming: %d listings of %d pages, want 1 of 10", c.listings, inv.listCost)
	}
	for range 3 {
		clk.Advance(5 * time.Minute) // everything stale, as at each status sync
		c.reset()
		for _, r := range getAll(t, inv, ids(n), time.Minute) {
			if !r.Found {
				t.Fatal("not found")
			}
		}
		// 11 batches of 90 and one of 10; the rent reaches the listing's
		// price at the 10th, when 100 stale entries are left (2 calls).
		if c.listings != 0 || c.calls() != 12 {
			t.Errorf("sync: %d calls, %d listings; want 12 by-id calls and no listing", c.calls(), c.listings)
		}
	}
}

func TestThunderingHerdJoinsOneListing(t *testing.T) {
	const n = 1000
	c := newCloud(n)
	c.delay = 5 * time.Millisecond
	clk := &clock{t: time.Unix(0, 0)}
	inv := newInventory(c, clk, uniq("test-herd"), time.Minute)
	if _, err := inv.Get(context.Background(), "ins-00000000", time.Minute); err != nil { // the rent that prices a listing
		t.Fatal(err)
	}
	c.reset()
	for _, r := range getAll(t, inv, ids(n), 0) { // maxAge 0: everything is a miss
		if !r.Found {
			t.Fatal("not found")
		}
	}
	if c.listings != 1 {
		t.Errorf("%d listings, want 1", c.listings)
	}
	if got := c.calls(); got > 2*10 {
		t.Errorf("%d calls for %d concurrent misses, want <= 20", got, n)
	}
}

func TestMissingFromListingIsAskedByID(t *testing.T) {
	c := newCloud(10)
	clk := &clock{t: time.Unix(0, 0)}
	inv := newInventory(c, clk, uniq("test-missing"), time.Minute)
	ctx := context.Background()
	// Two rents, then a listing.
	getAll(t, inv, []string{"ins-00000001"}, time.Minute)
	clk.Advance(time.Second)
	getAll(t, inv, []string{"ins-00000002"}, 0)
	if c.listings != 1 {
		t.Fatalf("%d listings, want 1", c.listings)
	}
	c.reset()
	r, err := inv.Get(ctx, "ins-99999999", time.Minute)
	if err != nil || r.Found || !r.Fresh {
		t.Fatalf("Get unknown id = %+v, %v; want not found, from a fresh by-id call", r, err)
	}
	if len(c.batches) != 1 || c.pages != 0 {
		t.Errorf("batches %v pages %d; want one by-id call", c.batches, c.pages)
	}
}

func TestGetFreshAlwaysCalls(t *testing.T) {
	c := newCloud(3)
	inv := newInventory(c, &clock{t: time.Unix(0, 0)}, uniq("test-fresh"), time.Minute)
	ctx := context.Background()
	for range 3 {
		r, err := inv.GetFresh(ctx, "ins-00000001")
		if err != nil || !r.Found || !r.Fresh {
			t.Fatalf("GetFresh = %+v, %v", r, err)
		}
	}
	if len(c.batches) != 3 {
		t.Errorf("%d calls, want 3", len(c.batches))
	}
	// A fresh answer without the id drops it from the inventory.
	c.mu.Lock()
	delete(c.vms, "ins-00000001")
	c.mu.Unlock()
	if r, _ := inv.GetFresh(ctx, "ins-00000001"); r.Found {
		t.Fatalf("GetFresh after deletion = %+v", r)
	}
	if r, _ := inv.Get(ctx, "ins-00000001", time.Hour); r.Found || !r.Fresh {
		t.Errorf("Get after deletion = %+v; want not found, fresh (no stale entry)", r)
	}
}

func TestInflightBatchIsJoinedButNotForFresh(t *testing.T) {
	c := newCloud(3)
	started := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	c.fetchHook = func([]string) {
		once.Do(func() {
			close(started)
			<-release
		})
	}
	provider := uniq("test-inflight")
	inv := newInventory(c, &clock{t: time.Unix(0, 0)}, provider, 0)
	ctx := context.Background()
	first := make(chan Result[vm])
	go func() { r, _ := inv.Get(ctx, "ins-00000001", 0); first <- r }()
	<-started
	joined := make(chan Result[vm])
	go func() { r, _ := inv.Get(ctx, "ins-00000001", 0); joined <- r }()
	fresh := make(chan Result[vm])
	go func() { r, _ := inv.GetFresh(ctx, "ins-00000001"); fresh <- r }()
	// The second Get must have joined the first call before it ends: it
	// counts its miss and joins under one lock, so a count of two read
	// under that lock means it has (a 50 ms sleep did not always suffice).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		inv.mu.Lock()
		misses, _ := testutil.GetCounterMetricValue(lookups.WithLabelValues(provider, "id", "miss"))
		inv.mu.Unlock()
		if misses >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second Get never reached the inventory")
		}
	}
	close(release)
	if r := <-first; !r.Fresh || !r.Found {
		t.Errorf("first = %+v", r)
	}
	if r := <-joined; r.Fresh || !r.Found {
		t.Errorf("joined = %+v; want found, not fresh (the call began before it)", r)
	}
	if r := <-fresh; !r.Fresh || !r.Found {
		t.Errorf("fresh = %+v", r)
	}
	if len(c.batches) != 2 {
		t.Errorf("%d calls, want 2 (the first, and GetFresh's own)", len(c.batches))
	}
}

func TestErrorsReachEveryWaiter(t *testing.T) {
	c := newCloud(3)
	c.fetchErr = errors.New("RequestLimitExceeded")
	inv := newInventory(c, &clock{t: time.Unix(0, 0)}, uniq("test-errors"), 0)
	var wg sync.WaitGroup
	for _, id := range ids(3) {
		wg.Go(func() {
			if _, err := inv.Get(context.Background(), id, time.Minute); err == nil || err.Error() != "RequestLimitExceeded" {
				t.Errorf("Get %s: %v", id, err)
			}
		})
	}
	wg.Wait()
	if len(c.batches) != 1 {
		t.Errorf("%d calls, want 1", len(c.batches))
	}
}

func TestFailedListingFallsBackToByID(t *testing.T) {
	c := newCloud(10)
	c.listErr = errors.New("InternalError")
	clk := &clock{t: time.Unix(0, 0)}
	inv := newInventory(c, clk, uniq("test-listfail"), time.Minute)
	for i := range 3 {
		r, err := inv.Get(context.Background(), ids(3)[i], time.Minute)
		if err != nil || !r.Found {
			t.Fatalf("Get = %+v, %v", r, err)
		}
	}
	if c.listings == 0 {
		t.Error("expected a listing attempt")
	}
}

func TestCancelledWaiterLeavesOthers(t *testing.T) {
	c := newCloud(3)
	c.delay = 100 * time.Millisecond
	inv := newInventory(c, &clock{t: time.Unix(0, 0)}, uniq("test-cancel"), 0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	other := make(chan error)
	go func() { _, err := inv.Get(context.Background(), "ins-00000002", 0); other <- err }()
	if _, err := inv.Get(ctx, "ins-00000001", 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("canceled Get: %v", err)
	}
	if err := <-other; err != nil {
		t.Errorf("the other waiter: %v", err)
	}
}

func TestMatch(t *testing.T) {
	c := newCloud(300)
	clk := &clock{t: time.Unix(0, 0)}
	inv := newInventory(c, clk, uniq("test-match"), time.Minute)
	ctx := context.Background()
	directCalls := 0
	direct := func(ip string) func(context.Context) ([]vm, error) {
		return func(context.Context) ([]vm, error) {
			directCalls++
			var out []vm
			c.mu.Lock()
			defer c.mu.Unlock()
			for _, v := range c.vms {
				if v.ip == ip {
					out = append(out, v)
				}
			}
			return out, nil
		}
	}
	// Cold: the caller's own filtered call, whose answer is kept.
	got, err := inv.MatchIndex(ctx, time.Minute, "ip", []string{"10.0.0.7"}, direct("10.0.0.7"))
	if err != nil || len(got) != 1 || got[0].id != "ins-00000007" || directCalls != 1 {
		t.Fatalf("cold Match = %v, %v (direct %d)", got, err, directCalls)
	}
	if r, _ := inv.Get(ctx, "ins-00000007", time.Minute); r.Fresh {
		t.Error("the direct answer was not kept")
	}
	// The rent reached a listing's price: the next miss lists, then matches
	// come from the listing.
	got, _ = inv.MatchIndex(ctx, time.Minute, "ip", []string{"10.0.0.8"}, direct("10.0.0.8"))
	if len(got) != 1 || directCalls != 1 || c.listings != 1 {
		t.Fatalf("Match = %v, direct %d, listings %d; want from a listing", got, directCalls, c.listings)
	}
	for i := range 200 {
		ip := fmt.Sprintf("10.0.0.%d", i%250)
		if got, _ := inv.MatchIndex(ctx, time.Minute, "ip", []string{ip}, direct(ip)); len(got) != 1 {
			t.Fatalf("Match %s = %v", ip, got)
		}
	}
	if directCalls != 1 || c.listings != 1 {
		t.Errorf("direct %d listings %d; want everything from the listing", directCalls, c.listings)
	}
	// Nothing in the listing: ask the cloud (the instance may be newer).
	c.mu.Lock()
	c.vms["ins-new00001"] = vm{id: "ins-new00001", ip: "10.9.9.9"}
	c.mu.Unlock()
	got, _ = inv.MatchIndex(ctx, time.Minute, "ip", []string{"10.9.9.9"}, direct("10.9.9.9"))
	if len(got) != 1 || directCalls != 2 {
		t.Errorf("Match for a new instance = %v, direct %d", got, directCalls)
	}
	// Several matches come back sorted, for stable messages.
	c.mu.Lock()
	c.vms["ins-dup00002"] = vm{id: "ins-dup00002", ip: "10.0.0.1"}
	c.vms["ins-dup00001"] = vm{id: "ins-dup00001", ip: "10.0.0.1"}
	c.mu.Unlock()
	clk.Advance(2 * time.Minute)
	_, _ = inv.Get(ctx, "ins-00000001", 0) // rent, so the next miss lists
	got, _ = inv.MatchIndex(ctx, time.Minute, "ip", []string{"10.0.0.1"}, direct("10.0.0.1"))
	if want := []string{"ins-00000001", "ins-dup00001", "ins-dup00002"}; len(got) != 3 ||
		got[0].id != want[0] || got[1].id != want[1] || got[2].id != want[2] {
		t.Errorf("Match = %v, want %v", got, want)
	}
}

func TestListingDropsWhatItNoLongerHolds(t *testing.T) {
	c := newCloud(3)
	clk := &clock{t: time.Unix(0, 0)}
	inv := newInventory(c, clk, uniq("test-drop"), time.Minute)
	ctx := context.Background()
	getAll(t, inv, []string{"ins-00000000"}, time.Minute)
	c.mu.Lock()
	delete(c.vms, "ins-00000000")
	c.mu.Unlock()
	clk.Advance(time.Second)
	getAll(t, inv, []string{"ins-00000001"}, 0) // rent reached: lists
	if c.listings != 1 {
		t.Fatalf("%d listings, want 1", c.listings)
	}
	inv.mu.Lock()
	_, held := inv.entries["ins-00000000"]
	inv.mu.Unlock()
	if held {
		t.Error("an instance absent from a newer listing is still held")
	}
	// ...and asking for it is a by-id call, never a conclusion from the listing.
	c.reset()
	if r, err := inv.Get(ctx, "ins-00000000", time.Minute); err != nil || r.Found || !r.Fresh || len(c.batches) != 1 {
		t.Errorf("Get = %+v, %v after %d calls", r, err, len(c.batches))
	}
}

// Match with a predicate answers like MatchIndex, from the same listing.
func TestMatchPredicate(t *testing.T) {
	c := newCloud(300)
	clk := &clock{t: time.Unix(0, 0)}
	inv := newInventory(c, clk, uniq("test-predicate"), time.Minute)
	ctx := context.Background()
	directCalls := 0
	direct := func(context.Context) ([]vm, error) { directCalls++; return []vm{c.vms["ins-00000005"]}, nil }
	byIP := func(ip string) func(vm) bool { return func(v vm) bool { return v.ip == ip } }
	for _, ip := range []string{"10.0.0.5", "10.0.0.6", "10.0.0.7"} {
		if got, err := inv.Match(ctx, time.Minute, byIP(ip), direct); err != nil || len(got) != 1 || got[0].ip != ip {
			t.Fatalf("Match %s = %v, %v", ip, got, err)
		}
	}
	if directCalls != 1 || c.listings != 1 {
		t.Errorf("direct %d, listings %d; want one of each", directCalls, c.listings)
	}
}

// An instance re-read with new keys is found by the new ones only.
func TestIndexFollowsChanges(t *testing.T) {
	c := newCloud(3)
	clk := &clock{t: time.Unix(0, 0)}
	inv := newInventory(c, clk, uniq("test-index"), time.Minute)
	ctx := context.Background()
	none := func(context.Context) ([]vm, error) { return nil, nil }
	getAll(t, inv, []string{"ins-00000001"}, time.Minute)
	getAll(t, inv, []string{"ins-00000002"}, 0) // lists
	if got, _ := inv.MatchIndex(ctx, time.Minute, "ip", []string{"10.0.0.1"}, none); len(got) != 1 {
		t.Fatalf("Match old IP = %v", got)
	}
	c.mu.Lock()
	c.vms["ins-00000001"] = vm{id: "ins-00000001", ip: "10.5.5.5"}
	c.mu.Unlock()
	clk.Advance(time.Second)
	if r, _ := inv.GetFresh(ctx, "ins-00000001"); r.Item.ip != "10.5.5.5" {
		t.Fatalf("GetFresh = %+v", r)
	}
	if got, _ := inv.MatchIndex(ctx, time.Minute, "ip", []string{"10.0.0.1"}, none); len(got) != 0 {
		t.Errorf("the old IP still matches: %v", got)
	}
	if got, _ := inv.MatchIndex(ctx, time.Minute, "ip", []string{"10.5.5.5"}, none); len(got) != 1 {
		t.Errorf("the new IP does not match: %v", got)
	}
	if got, _ := inv.MatchIndex(ctx, time.Minute, "no-such-index", []string{"x"}, none); len(got) != 0 {
		t.Errorf("an unknown index matched: %v", got)
	}
}

// Instances created after a fresh listing (nodes joining while their
// machines are created) are not in it: their lookups call direct until
// those calls reach a listing's price, and then a new listing answers the
// rest, instead of one direct call each.
func TestMatchMissesOnAFreshListingBuyANewOne(t *testing.T) {
	c := newCloud(300)
	clk := &clock{t: time.Unix(0, 0)}
	inv := newInventory(c, clk, uniq("test-match-relist"), time.Minute)
	ctx := context.Background()
	directCalls := 0
	direct := func(ip string) func(context.Context) ([]vm, error) {
		return func(context.Context) ([]vm, error) {
			directCalls++
			c.mu.Lock()
			defer c.mu.Unlock()
			var out []vm
			for _, v := range c.vms {
				if v.ip == ip {
					out = append(out, v)
				}
			}
			return out, nil
		}
	}
	// A listing (one rent, then the buy).
	for _, ip := range []string{"10.0.0.1", "10.0.0.2"} {
		if got, err := inv.MatchIndex(ctx, time.Minute, "ip", []string{ip}, direct(ip)); err != nil || len(got) != 1 {
			t.Fatalf("Match %s = %v, %v", ip, got, err)
		}
	}
	if c.listings != 1 {
		t.Fatalf("listings %d, want 1", c.listings)
	}
	directBefore, cost := directCalls, inv.listCost
	// 100 new instances, each looked up once, the listing still fresh.
	c.mu.Lock()
	for i := range 100 {
		c.vms[fmt.Sprintf("ins-new%05d", i)] = vm{id: fmt.Sprintf("ins-new%05d", i), ip: fmt.Sprintf("10.9.0.%d", i)}
	}
	c.mu.Unlock()
	for i := range 100 {
		ip := fmt.Sprintf("10.9.0.%d", i)
		if got, err := inv.MatchIndex(ctx, time.Minute, "ip", []string{ip}, direct(ip)); err != nil || len(got) != 1 {
			t.Fatalf("Match %s = %v, %v", ip, got, err)
		}
	}
	if d := directCalls - directBefore; d != cost || c.listings != 2 {
		t.Errorf("100 new instances: %d direct calls and %d listings; want %d (a listing's price) and 2", d, c.listings, cost)
	}
}
