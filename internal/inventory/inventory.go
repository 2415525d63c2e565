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
//
// Files: byid.go (Get, GetFresh), match.go (Match), keys.go (MatchIndex),
// delta.go (deltas), listing.go (full listings), rental.go (when to list),
// entries.go (what is held, and its indexes), metrics.go. Every batched
// call goes through internal/batch.
package inventory

import (
	"context"
	"sync"
	"time"

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
