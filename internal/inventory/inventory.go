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

	mu          sync.Mutex
	entries     map[string]entry[T]
	index       map[string]map[string]map[string]bool // index -> key -> ids
	listedAt    time.Time                             // start of the last complete listing; zero: none yet
	coveredAt   time.Time                             // start of the last complete listing or delta (delta.go)
	listCost    int                                   // pages the last listing took; the price of the next one
	rent        []rentCall                            // calls made instead of a listing, since the last one
	listing     *flight                               // the listing in progress, if any
	gathering   *batch[T]                             // the batch still gathering ids, if any
	inflight    map[string]*batch[T]
	keyed       map[string]*keyBatch[T] // index -> the key batch still gathering, if any
	delta       *deltaBatch             // the delta still gathering, if any
	deltaFlight *deltaBatch             // the last delta sent, while in flight
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

// batch is one by-id call, gathering then in flight; done closes when it ends.
type batch[T any] struct {
	ids   []string
	set   map[string]bool
	timer *time.Timer
	done  chan struct{}
	found map[string]T
	err   error
}

// keyBatch is one FetchByKeys batch, gathering then in flight; done closes
// when it ends.
type keyBatch[T any] struct {
	index string
	keys  []string
	set   map[string]bool
	timer *time.Timer
	done  chan struct{}
	items []T
	err   error
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
	return &Inventory[T]{
		src:      src,
		opts:     opts,
		entries:  map[string]entry[T]{},
		index:    index,
		listCost: 1,
		inflight: map[string]*batch[T]{},
		keyed:    map[string]*keyBatch[T]{},
	}
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
	if b := inv.inflight[id]; b != nil {
		inv.mu.Unlock()
		return b.result(ctx, id, false)
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
	b, fresh := inv.inflight[id], false
	if b == nil {
		b, fresh = inv.enqueue(id), true
	}
	inv.mu.Unlock()
	return b.result(ctx, id, fresh)
}

// GetFresh returns the instance with this id from a by-id call that starts
// after this call began. Use it before concluding that an instance is gone.
func (inv *Inventory[T]) GetFresh(ctx context.Context, id string) (Result[T], error) {
	lookups.WithLabelValues(inv.opts.Provider, "fresh", "miss").Inc()
	inv.mu.Lock()
	b := inv.enqueue(id)
	inv.mu.Unlock()
	return b.result(ctx, id, true)
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
	b, found, err := inv.listingOrKeys(ctx, maxAge, index, keys, find)
	if err != nil || b == nil {
		return found, err
	}
	lookups.WithLabelValues(inv.opts.Provider, "match", "miss").Inc()
	if err := wait(ctx, b.done); err != nil {
		return nil, err
	}
	if b.err != nil {
		return nil, b.err
	}
	return inv.withKeys(b.items, index, keys), nil
}

// listingOrKeys answers from a listing at most maxAge old (joining or
// starting one as fromListing does), or else adds keys to a key batch and
// returns it. The decision and the enqueue happen under one lock: a burst
// of lookups must not all decide "no listing yet" and then each send a
// batch before the first batch's rent makes the listing worth buying.
func (inv *Inventory[T]) listingOrKeys(ctx context.Context, maxAge time.Duration, index string, keys []string,
	find func() []T) (*keyBatch[T], []T, error) {
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
	b := inv.enqueueKeys(index, keys)
	inv.mu.Unlock()
	return b, nil, nil
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

// enqueueKeys adds keys to the index's gathering key batch, starting one
// (and its window) if needed, and sends the batch once it is full. A
// caller's keys all go in one batch, so that its answer is complete.
// Call with mu held.
func (inv *Inventory[T]) enqueueKeys(index string, keys []string) *keyBatch[T] {
	b := inv.keyed[index]
	if b != nil && len(b.keys)+len(keys) > inv.opts.MaxKeys && len(b.keys) > 0 {
		b.timer.Stop()
		inv.sendKeysLocked(b)
		b = nil
	}
	if b == nil {
		b = &keyBatch[T]{index: index, set: map[string]bool{}, done: make(chan struct{})}
		inv.keyed[index] = b
		b.timer = time.AfterFunc(inv.opts.KeyWindow, func() {
			inv.mu.Lock()
			defer inv.mu.Unlock()
			if inv.keyed[index] == b {
				inv.sendKeysLocked(b)
			}
		})
	}
	for _, k := range keys {
		if !b.set[k] {
			b.set[k] = true
			b.keys = append(b.keys, k)
		}
	}
	if len(b.keys) >= inv.opts.MaxKeys {
		b.timer.Stop()
		inv.sendKeysLocked(b)
	}
	return b
}

// sendKeysLocked takes b out of gathering and makes its call in the
// background. Call with mu held.
func (inv *Inventory[T]) sendKeysLocked(b *keyBatch[T]) {
	delete(inv.keyed, b.index)
	start := inv.opts.Now()
	if !inv.opts.ChargeFoundOnly {
		inv.rent = append(inv.rent, rentCall{start, len(b.keys)})
	}
	go inv.sendKeys(b, start)
}

// sendKeys makes b's call and keeps what it found.
func (inv *Inventory[T]) sendKeys(b *keyBatch[T], start time.Time) {
	batchSize.WithLabelValues(inv.opts.Provider).Observe(float64(len(b.keys)))
	// As for by-id batches, no single waiter's context may end the call.
	items, err := inv.src.FetchByKeys(context.Background(), b.index, b.keys)
	result := "ok"
	if err != nil {
		result = "error"
	} else {
		inv.mu.Lock()
		for _, item := range items {
			inv.store(item, start)
		}
		if found := inv.keysFound(b, items); inv.opts.ChargeFoundOnly && found > 0 {
			inv.rent = append(inv.rent, rentCall{start, found})
		}
		n := len(inv.entries)
		inv.mu.Unlock()
		entries.WithLabelValues(inv.opts.Provider).Set(float64(n))
	}
	calls.WithLabelValues(inv.opts.Provider, "keys", result).Inc()
	b.items, b.err = items, err
	close(b.done)
}

// keysFound is how many of b's keys some item has.
func (inv *Inventory[T]) keysFound(b *keyBatch[T], items []T) int {
	keysOf := inv.src.Indexes[b.index]
	if keysOf == nil {
		return 0
	}
	found := map[string]bool{}
	for _, item := range items {
		for _, k := range keysOf(item) {
			if b.set[k] {
				found[k] = true
			}
		}
	}
	return len(found)
}

// withKeys returns, sorted by id and once each, the items having any of
// keys in the index: one waiter's share of a key batch's answer.
func (inv *Inventory[T]) withKeys(items []T, index string, keys []string) []T {
	keysOf := inv.src.Indexes[index]
	var out []T
	seen := map[string]bool{}
	for _, item := range items {
		id := inv.src.ID(item)
		if !seen[id] && keysOf != nil && slices.ContainsFunc(keysOf(item), func(k string) bool { return slices.Contains(keys, k) }) {
			seen[id] = true
			out = append(out, item)
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
		if now.Sub(e.fetched) > inv.opts.TTL && inv.inflight[id] == nil && (inv.gathering == nil || !inv.gathering.set[id]) {
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

// enqueue adds id to the gathering batch, starting one (and its window) if
// needed, and sends the batch once it is full. Call with mu held.
func (inv *Inventory[T]) enqueue(id string) *batch[T] {
	b := inv.gathering
	if b == nil {
		b = &batch[T]{set: map[string]bool{}, done: make(chan struct{})}
		inv.gathering = b
		b.timer = time.AfterFunc(inv.opts.Window, func() { inv.flush(b) })
	}
	if !b.set[id] {
		b.set[id] = true
		b.ids = append(b.ids, id)
	}
	if len(b.ids) >= inv.opts.MaxBatch {
		b.timer.Stop()
		inv.sendLocked(b)
	}
	return b
}

// flush sends b when its window ends, unless it already went out full.
func (inv *Inventory[T]) flush(b *batch[T]) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if inv.gathering == b {
		inv.sendLocked(b)
	}
}

// sendLocked takes b out of gathering and makes its call in the background.
// Call with mu held.
func (inv *Inventory[T]) sendLocked(b *batch[T]) {
	inv.gathering = nil
	start := inv.opts.Now()
	inv.rent = append(inv.rent, rentCall{start, len(b.ids)})
	for _, id := range b.ids {
		inv.inflight[id] = b
	}
	go inv.send(b, start)
}

// send makes b's call and records what it says: found ids are stored,
// asked ids that are absent are dropped from the inventory.
func (inv *Inventory[T]) send(b *batch[T], start time.Time) {
	batchSize.WithLabelValues(inv.opts.Provider).Observe(float64(len(b.ids)))
	// The call serves every waiter, so no single waiter's context may end
	// it; the SDK's own request timeout bounds it.
	items, err := inv.src.FetchByID(context.Background(), b.ids)
	inv.mu.Lock()
	for _, id := range b.ids {
		if inv.inflight[id] == b {
			delete(inv.inflight, id)
		}
	}
	if err == nil {
		b.found = make(map[string]T, len(items))
		for _, item := range items {
			b.found[inv.src.ID(item)] = item
			inv.store(item, start)
		}
		for _, id := range b.ids {
			if _, ok := b.found[id]; !ok {
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
	b.err = err
	close(b.done)
}

// result waits for the batch and returns what it said about id.
func (b *batch[T]) result(ctx context.Context, id string, fresh bool) (Result[T], error) {
	if err := wait(ctx, b.done); err != nil {
		return Result[T]{}, err
	}
	if b.err != nil {
		return Result[T]{}, b.err
	}
	item, ok := b.found[id]
	return Result[T]{Item: item, Found: ok, Fresh: fresh}, nil
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
