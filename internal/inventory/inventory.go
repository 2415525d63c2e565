// Package inventory is a process-wide view of a cloud's instances, shared by
// every controller of the CCM, so that N nodes cost about N/100 cloud calls
// instead of N.
//
// It answers three kinds of lookup:
//
//   - Get: one instance by id, from an entry no older than the caller's
//     max age, else from the cloud. Concurrent misses coalesce: ids gather
//     for a short window (or until a batch is full) and go out in one by-id
//     call. The same id asked twice in a window is asked once.
//   - GetFresh: one instance by id from a by-id call that starts after the
//     lookup began. This is what deletion decisions use.
//   - Match and MatchIndex: the instances satisfying a predicate, or having
//     given keys in a named index (a private IP, a name), from a complete
//     listing no older than the caller's max age; when there is none, or
//     it matches nothing, the caller's own filtered call. An index makes
//     the lookup O(1): initializing N nodes by IP then does not test N
//     instances N times. With Source.FetchByKeys, MatchIndex misses
//     coalesce like Get's: keys gather for the window and go out as one
//     batch, so a burst of joining nodes costs about N/k calls, where k
//     is what one call can answer. With Source.ListSince, a miss first
//     asks for a delta (delta.go): the instances created since the view
//     was complete, which also answers the nodes still booting.
//
// When a full listing is worth it is a ski-rental decision: lookups "rent"
// (one call each batch, or one filtered call each) until the calls spent
// within one TTL reach what a listing costs (its page count last time),
// and then "buy" a listing, which answers everything for a TTL. The total
// is never more than twice the cheaper of the two, whatever the load: a
// full status sync of N nodes costs at most 2*ceil(N/page size) calls (+1, a batch gathering meanwhile). When
// the calls so far were well filled batches, the listing is bought only if
// what is still stale would cost more by id (restCheaperByID): a concurrent
// sync then costs about ceil(N/page size). One listing runs at a time and
// every miss that arrives meanwhile waits for it.
//
// Safety: an entry is only ever evidence that an instance exists. Nothing
// here concludes that an instance is gone from a missing or stale entry,
// and an id absent from a listing is looked up by id before it is reported
// missing. The inventory is generic (keyed by id, with a batch fetch and a
// list-all function) so that every provider can use it.
package inventory

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/batch"
)

// Defaults for Options.
const (
	DefaultMaxBatch = 100
	DefaultPageSize = 100
	DefaultWindow   = 20 * time.Millisecond
	// listTimeout bounds a whole listing, all pages, which may run for
	// longer than any one caller is willing to wait.
	listTimeout = 5 * time.Minute
)

// Source is how an inventory reads the cloud.
type Source[T any] struct {
	// FetchByID describes the given instances (at most MaxBatch ids) in one
	// call. An id absent from a successful answer is unknown to the cloud.
	FetchByID func(ctx context.Context, ids []string) ([]T, error)
	// ListAll lists every instance in scope (e.g. the cluster's VPC),
	// through all pages.
	ListAll func(ctx context.Context) ([]T, error)
	// ID returns an instance's id.
	ID func(T) string
	// Indexes name the keys MatchIndex can look instances up by, e.g.
	// "private-ip-address" -> the instance's private IPs. An instance may
	// have no key in an index (e.g. one outside the scope).
	Indexes map[string]func(T) []string
	// FetchByKeys, if set, finds the instances having any of keys (about
	// MaxKeys) in the named index, in as few calls as the cloud allows.
	// MatchIndex misses then gather into one FetchByKeys per batch instead
	// of each making the caller's direct call. Like a direct call, an
	// answer without a key proves nothing.
	FetchByKeys func(ctx context.Context, index string, keys []string) ([]T, error)
	// ListSince, if set, lists the instances in scope created at or after
	// since, through all pages (a filter on the creation time, or a listing
	// sorted newest first): a delta that extends a complete listing with
	// what was created after it. See delta.go.
	ListSince func(ctx context.Context, since time.Time) ([]T, error)
}

// Options tunes an inventory. Zero values take the defaults.
type Options struct {
	// Provider labels the metrics, e.g. "tencentcloud".
	Provider string
	// TTL is how long a listing stays worth having: the window in which
	// lookups' calls are weighed against a listing's cost. 0 never lists
	// (lookups are still batched).
	TTL time.Duration
	// MaxBatch is the most ids one by-id call may carry (default 100).
	MaxBatch int
	// MaxKeys is the most keys one FetchByKeys batch gathers before it
	// goes (default MaxBatch): what one call can answer, e.g. 5 for
	// DescribeInstances' filters. A caller's keys never split.
	MaxKeys int
	// KeyWindow is how long the first key of a batch waits for others
	// (default Window). Longer than Window when a call answers several
	// keys but lookups arrive one at a time (nodes joining at 20/s).
	KeyWindow time.Duration
	// Window is how long the first id of a batch waits for others (default
	// 20ms). A full batch goes at once.
	Window time.Duration
	// PageSize is the listing's page size, to estimate its cost (default 100).
	PageSize int
	// DeltaMargin is how much earlier than the view's completeness a delta
	// starts (default DefaultDeltaMargin): the clock difference between
	// this host and the cloud, and the filter's granularity.
	DeltaMargin time.Duration
	// ChargeFoundOnly counts a key batch as rent only for the keys it found
	// something for, once it answered. Absence is never proof here, so a
	// key that found nothing costs its call with or without a listing:
	// lookups of what does not exist yet (a Service's load balancer before
	// its creation) would otherwise buy listings that answer none of them.
	// The instance lookups keep the plain rule: their misses are instances
	// the next listing holds (machines created since the last one).
	ChargeFoundOnly bool
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Result is the answer to a by-id lookup.
type Result[T any] struct {
	Item  T
	Found bool
	// Fresh: the answer comes from a by-id call that started after the
	// lookup began. Only a fresh answer may say that an instance is gone.
	Fresh bool
}

// Inventory holds the instances. It is safe for concurrent use.
type Inventory[T any] struct {
	src  Source[T]
	opts Options

	mu        sync.Mutex
	entries   map[string]entry[T]
	index     map[string]map[string]map[string]bool // index -> key -> ids
	listedAt  time.Time                             // start of the last complete listing; zero: none yet
	coveredAt time.Time                             // start of the last complete listing or delta (delta.go)
	listCost  int                                   // pages the last listing took; the price of the next one
	rent      []rentCall                            // calls made instead of a listing, since the last one
	listing   *flight                               // the listing in progress, if any
	// The batchers run under mu: whether to batch at all is decided under
	// it, from the entries and the listing.
	byID   *batch.Batcher[string, T]              // by-id calls
	keyed  map[string]*batch.Batcher[string, []T] // index -> its FetchByKeys calls
	deltas *batch.Batcher[struct{}, struct{}]     // ListSince calls (delta.go)
}

// rentCall is one call made instead of a listing: when it started, and how
// many ids, keys or instances it carried.
type rentCall struct {
	at    time.Time
	items int
}

type entry[T any] struct {
	item    T
	fetched time.Time // when the call that read it started
}

// flight is one listing in progress; done closes when it ends.
type flight struct {
	done chan struct{}
	err  error
}

// New returns an empty inventory reading the cloud through src.
func New[T any](src Source[T], opts Options) *Inventory[T] {
	registerMetrics()
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = DefaultMaxBatch
	}
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.Window < 0 {
		opts.Window = 0
	} else if opts.Window == 0 {
		opts.Window = DefaultWindow
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxKeys <= 0 {
		opts.MaxKeys = opts.MaxBatch
	}
	if opts.KeyWindow <= 0 {
		opts.KeyWindow = opts.Window
	}
	if opts.DeltaMargin <= 0 {
		opts.DeltaMargin = DefaultDeltaMargin
	}
	index := map[string]map[string]map[string]bool{}
	for name := range src.Indexes {
		index[name] = map[string]map[string]bool{}
	}
	inv := &Inventory[T]{
		src:      src,
		opts:     opts,
		entries:  map[string]entry[T]{},
		index:    index,
		listCost: 1,
		keyed:    map[string]*batch.Batcher[string, []T]{},
	}
	inv.byID = batch.New(batch.Options[string, T]{
		Window: opts.Window, MaxKeys: opts.MaxBatch, Lock: &inv.mu,
		Sent: func(ids []string) { inv.rent = append(inv.rent, rentCall{inv.opts.Now(), len(ids)}) },
		Call: inv.fetchByID,
	})
	inv.deltas = batch.New(batch.Options[struct{}, struct{}]{Window: opts.KeyWindow, Lock: &inv.mu, Call: inv.listSince})
	return inv
}

// Get returns the instance with this id, from an entry at most maxAge old
// or else from the cloud (possibly by joining a listing or a batch already
// under way). Found is false only after a by-id call answered without it.
func (inv *Inventory[T]) Get(ctx context.Context, id string, maxAge time.Duration) (Result[T], error) {
	inv.mu.Lock()
	if item, ok := inv.freshEntry(id, maxAge); ok {
		inv.mu.Unlock()
		lookups.WithLabelValues(inv.opts.Provider, "id", "hit").Inc()
		return Result[T]{Item: item, Found: true}, nil
	}
	lookups.WithLabelValues(inv.opts.Provider, "id", "miss").Inc()
	// A batch already asking for this id answers just as well, and costs
	// nothing: check it before the ski rental, which would otherwise buy a
	// listing for an id whose call is on its way.
	if c := inv.byID.InFlight(id); c != nil {
		inv.mu.Unlock()
		return result(ctx, c, id, false)
	}
	if f := inv.listingToJoin(); f != nil {
		inv.mu.Unlock()
		if err := wait(ctx, f.done); err != nil {
			return Result[T]{}, err
		}
		inv.mu.Lock()
		if item, ok := inv.freshEntry(id, maxAge); ok {
			inv.mu.Unlock()
			return Result[T]{Item: item, Found: true}, nil
		}
		// Not in the listing (or the listing failed): ask by id, since an
		// instance missing from a listing is not proof of anything.
	}
	// A batch already asking for this id answers just as well.
	c, fresh := inv.byID.InFlight(id), false
	if c == nil {
		c, fresh = inv.byID.Add(ctx, id), true
	}
	inv.mu.Unlock()
	return result(ctx, c, id, fresh)
}

// GetFresh returns the instance with this id from a by-id call that starts
// after this call began. Use it before concluding that an instance is gone.
func (inv *Inventory[T]) GetFresh(ctx context.Context, id string) (Result[T], error) {
	lookups.WithLabelValues(inv.opts.Provider, "fresh", "miss").Inc()
	inv.mu.Lock()
	c := inv.byID.Add(ctx, id)
	inv.mu.Unlock()
	return result(ctx, c, id, true)
}

// Warm starts a listing now if a lookup arriving now would start one (the
// calls spent within a TTL have reached its price) and there is no listing
// at most maxAge old. A caller that will look up only after other work
// (the OCI addresses, after the instance) calls it first, so that the
// listing runs meanwhile instead of after. It costs no call the next
// lookup would not have made.
func (inv *Inventory[T]) Warm(maxAge time.Duration) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if !inv.listingFresh(maxAge) {
		inv.listingToJoin()
	}
}

// Prime starts a listing now, whatever the rent, unless one is under way
// or the last is at most maxAge old. A caller that knows lookups of most
// instances are coming (a CCM starting: the node controller initializes
// every new node, the status sync looks up every node) calls it first, so
// that the listing runs while the rest of the process starts, not after
// the first lookup's own call. It costs what that first lookup would have
// bought a moment later.
func (inv *Inventory[T]) Prime(maxAge time.Duration) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if inv.listing == nil && inv.opts.TTL > 0 && inv.src.ListAll != nil && !inv.listingFresh(maxAge) {
		inv.startListing()
	}
}

// Match returns the instances for which match is true, from a complete
// listing at most maxAge old when there is one (or one worth starting).
// Otherwise, or when the listing has no match (the instance may be newer
// than the listing), it calls direct: the caller's own filtered call, whose
// answer is then kept. The result is sorted by id. Match tests every
// instance held; MatchIndex is O(1) for lookups by a key.
func (inv *Inventory[T]) Match(ctx context.Context, maxAge time.Duration, match func(T) bool,
	direct func(context.Context) ([]T, error)) ([]T, error) {
	return inv.match(ctx, maxAge, func() []T { return inv.scan(match) }, direct)
}

// MatchIndex is Match for the instances with any of keys in the named
// index (see Source.Indexes). With Source.FetchByKeys, a miss joins a
// batch of keys instead of calling direct.
func (inv *Inventory[T]) MatchIndex(ctx context.Context, maxAge time.Duration, index string, keys []string,
	direct func(context.Context) ([]T, error)) ([]T, error) {
	find := func() []T { return inv.lookupKeys(index, keys, maxAge) }
	if found, ok, err := inv.fromView(ctx, maxAge, find); err != nil || ok {
		return found, err
	}
	if inv.src.FetchByKeys == nil || len(keys) == 0 {
		return inv.match(ctx, maxAge, find, direct)
	}
	c, found, err := inv.listingOrKeys(ctx, maxAge, index, keys, find)
	if err != nil || c == nil {
		return found, err
	}
	lookups.WithLabelValues(inv.opts.Provider, "match", "miss").Inc()
	if err := c.Wait(ctx); err != nil {
		return nil, err
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	return inv.withKeys(c, keys), nil
}

// listingOrKeys answers from a listing at most maxAge old (joining or
// starting one as fromListing does), or else adds keys to a key batch and
// returns it. The decision and the enqueue happen under one lock: a burst
// of lookups must not all decide "no listing yet" and then each send a
// batch before the first batch's rent makes the listing worth buying.
func (inv *Inventory[T]) listingOrKeys(ctx context.Context, maxAge time.Duration, index string, keys []string,
	find func() []T) (*batch.Call[string, []T], []T, error) {
	joined := false
	inv.mu.Lock()
	for !inv.listingFresh(maxAge) && !joined {
		f := inv.listingToJoin()
		if f == nil {
			break
		}
		inv.mu.Unlock()
		if err := wait(ctx, f.done); err != nil {
			return nil, nil, err
		}
		joined = true
		inv.mu.Lock()
	}
	if inv.listingFresh(maxAge) {
		if found := find(); len(found) > 0 {
			inv.mu.Unlock()
			lookups.WithLabelValues(inv.opts.Provider, "match", "hit").Inc()
			return nil, found, nil
		}
	}
	c := inv.keyBatcher(index).Add(ctx, keys...)
	inv.mu.Unlock()
	return c, nil, nil
}

// match answers with find (called with mu held) from a fresh listing, else
// with direct.
func (inv *Inventory[T]) match(ctx context.Context, maxAge time.Duration, find func() []T,
	direct func(context.Context) ([]T, error)) ([]T, error) {
	if found, ok, err := inv.fromListing(ctx, maxAge, find); err != nil || ok {
		return found, err
	}
	lookups.WithLabelValues(inv.opts.Provider, "match", "miss").Inc()
	inv.mu.Lock()
	start := inv.opts.Now()
	inv.rent = append(inv.rent, rentCall{start, 1})
	inv.mu.Unlock()

	found, err := direct(ctx)
	if err != nil {
		calls.WithLabelValues(inv.opts.Provider, "direct", "error").Inc()
		return nil, err
	}
	calls.WithLabelValues(inv.opts.Provider, "direct", "ok").Inc()
	inv.mu.Lock()
	for _, item := range found {
		inv.store(item, start)
	}
	inv.mu.Unlock()
	inv.sortByID(found)
	return found, nil
}

// fromListing answers with find (called with mu held) from a listing at
// most maxAge old, joining or starting one if the ski rental says so. ok is
// false when there is none or it has no match.
func (inv *Inventory[T]) fromListing(ctx context.Context, maxAge time.Duration, find func() []T) (found []T, ok bool, err error) {
	inv.mu.Lock()
	joined := false
	if !inv.listingFresh(maxAge) {
		f := inv.listingToJoin()
		if f == nil {
			inv.mu.Unlock()
			return nil, false, nil
		}
		inv.mu.Unlock()
		if err := wait(ctx, f.done); err != nil {
			return nil, false, err
		}
		joined = true
		inv.mu.Lock()
	}
	if inv.listingFresh(maxAge) {
		found = find()
	}
	if len(found) == 0 && !joined {
		// A fresh listing without a match may predate the instance (nodes
		// joining while their machines are created). The misses' direct
		// calls are rent like any other: once they reach a listing's
		// price, a new listing answers the rest of them.
		if f := inv.listingToJoin(); f != nil {
			inv.mu.Unlock()
			if err := wait(ctx, f.done); err != nil {
				return nil, false, err
			}
			inv.mu.Lock()
			if inv.listingFresh(maxAge) {
				found = find()
			}
		}
	}
	inv.mu.Unlock()
	if len(found) == 0 {
		return nil, false, nil
	}
	lookups.WithLabelValues(inv.opts.Provider, "match", "hit").Inc()
	return found, true, nil
}

// keyBatcher returns the index's key batcher, made on first use. Call
// with mu held.
func (inv *Inventory[T]) keyBatcher(index string) *batch.Batcher[string, []T] {
	b := inv.keyed[index]
	if b == nil {
		b = batch.New(batch.Options[string, []T]{
			Window: inv.opts.KeyWindow, MaxKeys: inv.opts.MaxKeys, Lock: &inv.mu,
			Sent: func(keys []string) {
				if !inv.opts.ChargeFoundOnly {
					inv.rent = append(inv.rent, rentCall{inv.opts.Now(), len(keys)})
				}
			},
			Call: func(ctx context.Context, keys []string) (map[string][]T, error) {
				return inv.fetchByKeys(ctx, index, keys)
			},
		})
		inv.keyed[index] = b
	}
	return b
}

// fetchByKeys makes one FetchByKeys call, keeps what it found and returns
// it by key.
func (inv *Inventory[T]) fetchByKeys(ctx context.Context, index string, keys []string) (map[string][]T, error) {
	start := inv.opts.Now()
	batchSize.WithLabelValues(inv.opts.Provider).Observe(float64(len(keys)))
	items, err := inv.src.FetchByKeys(ctx, index, keys)
	var byKey map[string][]T
	result := "ok"
	if err != nil {
		result = "error"
	} else {
		byKey = inv.byKey(index, keys, items)
		inv.mu.Lock()
		for _, item := range items {
			inv.store(item, start)
		}
		if inv.opts.ChargeFoundOnly && len(byKey) > 0 {
			inv.rent = append(inv.rent, rentCall{start, len(byKey)})
		}
		n := len(inv.entries)
		inv.mu.Unlock()
		entries.WithLabelValues(inv.opts.Provider).Set(float64(n))
	}
	calls.WithLabelValues(inv.opts.Provider, "keys", result).Inc()
	return byKey, err
}

// byKey files items under the keys of the call they have in the index.
func (inv *Inventory[T]) byKey(index string, keys []string, items []T) map[string][]T {
	keysOf := inv.src.Indexes[index]
	out := map[string][]T{}
	if keysOf == nil {
		return out
	}
	asked := make(map[string]bool, len(keys))
	for _, k := range keys {
		asked[k] = true
	}
	for _, item := range items {
		for _, k := range keysOf(item) {
			if asked[k] {
				out[k] = append(out[k], item)
			}
		}
	}
	return out
}

// withKeys returns, sorted by id and once each, the items c found for
// keys: one waiter's share of a key batch's answer.
func (inv *Inventory[T]) withKeys(c *batch.Call[string, []T], keys []string) []T {
	var out []T
	seen := map[string]bool{}
	for _, k := range keys {
		items, _ := c.Value(k)
		for _, item := range items {
			if id := inv.src.ID(item); !seen[id] {
				seen[id] = true
				out = append(out, item)
			}
		}
	}
	inv.sortByID(out)
	return out
}

// freshEntry returns the entry for id if it is at most maxAge old.
// Call with mu held.
func (inv *Inventory[T]) freshEntry(id string, maxAge time.Duration) (T, bool) {
	e, ok := inv.entries[id]
	if !ok || inv.opts.Now().Sub(e.fetched) > maxAge {
		var zero T
		return zero, false
	}
	return e.item, true
}

// listingFresh: the last complete listing is at most maxAge old.
// Call with mu held.
func (inv *Inventory[T]) listingFresh(maxAge time.Duration) bool {
	return !inv.listedAt.IsZero() && inv.opts.Now().Sub(inv.listedAt) <= maxAge
}

// scan returns, sorted by id, the entries of the current listing (read by
// it or since) that match. Call with mu held.
func (inv *Inventory[T]) scan(match func(T) bool) []T {
	var out []T
	for _, e := range inv.entries {
		if !e.fetched.Before(inv.listedAt) && match(e.item) {
			out = append(out, e.item)
		}
	}
	inv.sortByID(out)
	return out
}

// lookupKeys returns, sorted by id, the entries of the current listing
// (read by it or since) with any of keys in the index, if they are at most
// maxAge old. It returns nothing when an older entry has one of the keys
// too: that instance may be gone and its key (a private IP) reused, or
// both may hold it (a name), and only the cloud can tell which.
// Call with mu held.
func (inv *Inventory[T]) lookupKeys(index string, keys []string, maxAge time.Duration) []T {
	var out []T
	seen := map[string]bool{}
	now := inv.opts.Now()
	for _, key := range keys {
		for id := range inv.index[index][key] {
			e := inv.entries[id]
			if seen[id] || e.fetched.Before(inv.listedAt) {
				continue
			}
			if now.Sub(e.fetched) > maxAge {
				return nil
			}
			seen[id] = true
			out = append(out, e.item)
		}
	}
	inv.sortByID(out)
	return out
}

func (inv *Inventory[T]) sortByID(items []T) {
	slices.SortFunc(items, func(a, b T) int { return strings.Compare(inv.src.ID(a), inv.src.ID(b)) })
}

// listingToJoin returns the listing in progress, or starts one if the
// calls spent within a TTL have reached its price, or returns nil.
// Call with mu held.
func (inv *Inventory[T]) listingToJoin() *flight {
	if inv.listing != nil {
		return inv.listing
	}
	if inv.opts.TTL <= 0 || inv.src.ListAll == nil {
		return nil
	}
	now := inv.opts.Now()
	inv.rent = slices.DeleteFunc(inv.rent, func(r rentCall) bool { return now.Sub(r.at) > inv.opts.TTL })
	if len(inv.rent) < inv.listCost || inv.restCheaperByID(now) {
		return nil
	}
	inv.startListing()
	return inv.listing
}

// restCheaperByID: the rent has reached a listing's price, but asking by id
// for what is still stale costs fewer calls than the listing. A full status
// sync asks for every node in batches of nearly a page each, so its by-id
// calls alone cost about what a listing does; buying the listing once the
// rent reached that price nearly doubled the sync (10,000 nodes: 96
// batches, then a listing of 100 pages, 196 calls). So when the rent's
// calls were at least half full on average, the rest is estimated: the
// entries older than the TTL (the ones a lookup would miss) that no call is
// asking for yet, in calls of that average size. The estimate is high (a
// stale entry no node asks for counts too), which only ever buys the
// listing as before; lookups of instances the inventory does not know yet
// are not in it, and half-full calls bound what they cost by id to twice a
// listing. Lookups one at a time (a trickle of new instances, a sync with
// one worker) keep the plain ski rental. Before the first complete listing
// it says no: nothing is known yet. Call with mu held.
func (inv *Inventory[T]) restCheaperByID(now time.Time) bool {
	if inv.listedAt.IsZero() || len(inv.rent) == 0 {
		return false
	}
	items := 0
	for _, r := range inv.rent {
		items += r.items
	}
	perCall := items / len(inv.rent)
	if 2*perCall < inv.opts.MaxBatch {
		return false
	}
	stale := 0
	for id, e := range inv.entries {
		if now.Sub(e.fetched) > inv.opts.TTL && !inv.byID.Pending(id) {
			stale++ // and not already being asked for
		}
	}
	return (stale+perCall-1)/perCall < inv.listCost
}

// startListing lists everything in the background. Call with mu held.
func (inv *Inventory[T]) startListing() {
	f := &flight{done: make(chan struct{})}
	inv.listing = f
	inv.rent = nil
	start := inv.opts.Now()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
		defer cancel()
		items, err := inv.src.ListAll(ctx)
		inv.mu.Lock()
		if err == nil {
			inv.replace(items, start)
		}
		inv.listing = nil
		f.err = err
		n := len(inv.entries)
		inv.mu.Unlock()
		result := "ok"
		if err != nil {
			result = "error"
			klog.ErrorS(err, "Instance inventory: listing failed; lookups go on by id", "provider", inv.opts.Provider)
		} else {
			klog.V(2).InfoS("Instance inventory: listed every instance", "provider", inv.opts.Provider,
				"instances", len(items), "duration", inv.opts.Now().Sub(start))
		}
		calls.WithLabelValues(inv.opts.Provider, "list", result).Inc()
		entries.WithLabelValues(inv.opts.Provider).Set(float64(n))
		close(f.done)
	}()
}

// replace installs a complete listing that started at start. Entries read
// before it and absent from it are dropped (they left the scope, or were
// deleted); entries read after it started are newer and stay.
// Call with mu held.
func (inv *Inventory[T]) replace(items []T, start time.Time) {
	listed := make(map[string]bool, len(items))
	for _, item := range items {
		listed[inv.src.ID(item)] = true
		inv.store(item, start)
	}
	for id, e := range inv.entries {
		if !listed[id] && !e.fetched.After(start) {
			inv.remove(id)
		}
	}
	inv.listedAt = start
	inv.coveredAt = laterOf(inv.coveredAt, start)
	inv.listCost = max(1, (len(items)+inv.opts.PageSize-1)/inv.opts.PageSize)
}

// store keeps item unless a newer answer is already held. Call with mu held.
func (inv *Inventory[T]) store(item T, fetched time.Time) {
	id := inv.src.ID(item)
	if e, ok := inv.entries[id]; ok {
		if e.fetched.After(fetched) {
			return
		}
		inv.remove(id)
	}
	inv.entries[id] = entry[T]{item: item, fetched: fetched}
	for name, keysOf := range inv.src.Indexes {
		for _, key := range keysOf(item) {
			ids := inv.index[name][key]
			if ids == nil {
				ids = map[string]bool{}
				inv.index[name][key] = ids
			}
			ids[id] = true
		}
	}
}

// remove drops an entry and its index keys. Call with mu held.
func (inv *Inventory[T]) remove(id string) {
	e, ok := inv.entries[id]
	if !ok {
		return
	}
	delete(inv.entries, id)
	for name, keysOf := range inv.src.Indexes {
		for _, key := range keysOf(e.item) {
			delete(inv.index[name][key], id)
			if len(inv.index[name][key]) == 0 {
				delete(inv.index[name], key)
			}
		}
	}
}

// fetchByID makes one by-id call and records what it says: found ids are
// stored, asked ids that are absent are dropped from the inventory.
func (inv *Inventory[T]) fetchByID(ctx context.Context, ids []string) (map[string]T, error) {
	start := inv.opts.Now()
	batchSize.WithLabelValues(inv.opts.Provider).Observe(float64(len(ids)))
	items, err := inv.src.FetchByID(ctx, ids)
	var found map[string]T
	inv.mu.Lock()
	if err == nil {
		found = make(map[string]T, len(items))
		for _, item := range items {
			found[inv.src.ID(item)] = item
			inv.store(item, start)
		}
		for _, id := range ids {
			if _, ok := found[id]; !ok {
				if e, held := inv.entries[id]; held && !e.fetched.After(start) {
					inv.remove(id)
				}
			}
		}
	}
	n := len(inv.entries)
	inv.mu.Unlock()
	result := "ok"
	if err != nil {
		result = "error"
	}
	calls.WithLabelValues(inv.opts.Provider, "batch", result).Inc()
	entries.WithLabelValues(inv.opts.Provider).Set(float64(n))
	return found, err
}

// result waits for a by-id call and returns what it said about id.
func result[T any](ctx context.Context, c *batch.Call[string, T], id string, fresh bool) (Result[T], error) {
	item, found, err := c.Result(ctx, id)
	if err != nil {
		return Result[T]{}, err
	}
	return Result[T]{Item: item, Found: found, Fresh: fresh}, nil
}

// wait blocks until done closes or ctx ends.
func wait(ctx context.Context, done <-chan struct{}) error {
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
