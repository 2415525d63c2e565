package lbops

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ccmkit/ccm/internal/oci/ocierr"
)

// Gathered lookups by display name (issue 33). Every sync looks its
// Service's load balancer up by name, of both kinds (the other kind for a
// switch, plan.go and reconcile), and a Network Load Balancer under two
// names (ours and the public CCM's, Naming.names): a burst of S syncs made
// S ListLoadBalancers and 2S ListNetworkLoadBalancers, one filtered list
// per name.
//
// What the API offers (oci-go-sdk v65 loadbalancer/
// list_load_balancers_request_response.go and networkloadbalancer/
// list_network_load_balancers_request_response.go): one displayName
// ("match the given display name exactly") and one lifecycleState per
// request, so neither several names nor "not DELETED/DELETING" fit in one
// filtered call; limit has "Example: `50`" and no maximum in the SDK, and
// no page maximum for these two APIs was found in Oracle's public
// reference (the 1000 of docs/scale.md is the Core API's), so pages stay at
// pageSize (100), which the API surely takes.
//
// So concurrent lookups share one unfiltered listing of the compartment:
// a lookup that finds no listing running runs its own at once (the
// filtered call for one name, as before: a lone sync waits for nothing);
// lookups that arrive while one runs are gathered and, when it ends, served
// together by one listing. That listing starts after every lookup it serves
// asked, so none misses a load balancer created before it asked. Several
// names are listed unfiltered only when that costs fewer calls than one
// filtered call per name (pages: what the last unfiltered listing took).
//
// With a TTL, the last unfiltered listing also answers later lookups, for
// up to the TTL, when it began after the asking Service's last reconcile
// ended (notBefore, cloudbase.Reconciled): that Service's own writes are
// then in it, and nothing else makes its load balancers. A resync of S
// Services (a CCM that starts, a node that joins) then costs one listing
// of ⌈S/100⌉ pages, not one listing per round of 20 syncs (issue 33). Its
// first round waits window for the others, so that it is that listing.
// Absence from the listing is taken as absence, as a filtered call's
// would be, except before a creation, which reads afresh (reconcile):
// a listing may predate a load balancer made out of band, and a second
// one would be made beside it. Deletion reads afresh too. Other
// out-of-band changes reach a lookup at most the TTL later.
//
// Some questions are about every load balancer, not names: whether one
// named for the Service with another prefix exists, before a creation
// (takeover.go). listAll answers them from the same listings, under the
// same fence: a burst of S creations costs a listing per TTL, not S
// listings of the compartment (⌈S/100⌉ pages each: O(S²) pages, found at
// 1,000 Services, issue 33).
type gatherer[T any] struct {
	kind     listing[T]
	deadline time.Duration // of a gathered listing (its waiters may go)
	ttl      time.Duration // how long an unfiltered listing answers lookups; 0: never
	window   time.Duration // how long a round with no listing under way waits (with a TTL)
	now      func() time.Time

	mu    sync.Mutex
	busy  bool
	next  *gatherRound[T] // the lookups waiting for the running listing to end
	pages int             // pages of the last unfiltered listing; 1 before any
	snap  *gatherSnapshot[T]

	listings int // unfiltered listings run, for tests
	served   int // lookups the snapshot answered, for tests
}

// gatherSnapshot is an unfiltered listing's live items by name, and when
// it began.
type gatherSnapshot[T any] struct {
	start  time.Time
	byName map[string][]T
	all    []T
}

// gatherWindow is how long a round that no listing holds up waits for
// other lookups, with a TTL (our choice: a resync's workers all ask within
// it, and a lone sync's work requests take seconds).
const gatherWindow = 50 * time.Millisecond

type gatherRound[T any] struct {
	ctx        context.Context // the first waiter's, without its cancel: the others still want the answer
	names      []string
	everything bool // a waiter wants every live item: the listing is unfiltered
	done       chan struct{}
	found      map[string][]T // live items by name, for every name asked
	all        []T            // every live item, when everything
	err        error
}

func newGatherer[T any](kind listing[T]) *gatherer[T] {
	return &gatherer[T]{kind: kind, deadline: 2 * time.Minute, pages: 1, now: time.Now}
}

// listing is how one kind of load balancer is listed: one call of the
// kind's List operation, and what the gatherer reads of an item. The two
// kinds differ only in their SDK types.
type listing[T any] struct {
	action      string // the List operation, for errors
	compartment string
	// page lists one page of the compartment's load balancers named
	// displayName (nil: all), from token (nil: the first page); next is
	// nil or empty after the last.
	page   func(ctx context.Context, displayName, token *string) (items []T, next *string, err error)
	nameOf func(T) string
	idOf   func(T) string
	live   func(T) bool // not DELETING or DELETED
}

// list lists the compartment's load balancers named displayName (nil:
// all), page after page: page tokens are opaque, so one at a time. It
// returns the items and the pages they took.
func (l listing[T]) list(ctx context.Context, displayName *string) ([]T, int, error) {
	var out []T
	var token *string
	for page := 1; page <= maxPages; page++ {
		items, next, err := l.page(ctx, displayName, token)
		if err != nil {
			if displayName != nil {
				return nil, 0, ocierr.Wrap(l.action, "displayName="+*displayName, err)
			}
			return nil, 0, ocierr.Wrap(l.action, "compartment "+l.compartment, err)
		}
		out = append(out, items...)
		if next == nil || *next == "" {
			return out, page, nil
		}
		token = next
	}
	return nil, 0, fmt.Errorf("%s of compartment %s: more than %d pages", l.action, l.compartment, maxPages)
}

func (g *gatherer[T]) byName(ctx context.Context, name string) ([]T, error) {
	items, _, err := g.kind.list(ctx, &name)
	return items, err
}

func (g *gatherer[T]) all(ctx context.Context) ([]T, int, error) { return g.kind.list(ctx, nil) }

// only is the one load balancer of what (its kind's name in errors) under
// the first of names that has any: ok is false when none has, and more
// than one under a name is an error (OCI names need not be unique, and
// which of them is the Service's cannot be told).
func (l listing[T]) only(what string, names []string, found map[string][]T) (item T, ok bool, err error) {
	for _, name := range names {
		switch items := found[name]; len(items) {
		case 0:
			continue
		case 1:
			return items[0], true, nil
		default:
			ids := make([]string, 0, len(items))
			for _, it := range items {
				ids = append(ids, l.idOf(it))
			}
			return item, false, fmt.Errorf("%d %s named %s in compartment %s: %v; delete the extra ones", len(items), what, name, l.compartment, ids)
		}
	}
	return item, false, nil
}

// withTTL lets unfiltered listings answer lookups for ttl (0: never).
func (g *gatherer[T]) withTTL(ttl time.Duration) *gatherer[T] {
	g.ttl = ttl
	if ttl > 0 {
		g.window = gatherWindow
	}
	return g
}

// lookup returns the live items named each of names (an empty slice
// for a name with none), from a listing that began after notBefore.
func (g *gatherer[T]) lookup(ctx context.Context, names []string, notBefore time.Time) (map[string][]T, error) {
	g.mu.Lock()
	if snap := g.fresh(notBefore); snap != nil {
		g.mu.Unlock()
		found := make(map[string][]T, len(names))
		for _, n := range names {
			found[n] = snap.byName[n]
		}
		return found, nil
	}
	r, err := g.ask(ctx, names, false)
	if err != nil {
		return nil, err
	}
	return r.found, nil
}

// lookupNow returns the live items named each of names from one filtered
// call per name, made now and shared with no other lookup: a creation's
// confirmation (reconcile), one small read, where a gathered round would
// list the compartment's load balancers whole (every listener and
// backend of each) for a few names.
func (g *gatherer[T]) lookupNow(ctx context.Context, names []string) (map[string][]T, error) {
	found := make(map[string][]T, len(names))
	for _, n := range names {
		items, err := g.byName(ctx, n)
		if err != nil {
			return nil, err
		}
		found[n] = slices.DeleteFunc(items, func(it T) bool { return !g.kind.live(it) || g.kind.nameOf(it) != n })
	}
	return found, nil
}

// listAll returns every live item, from a listing that began after
// notBefore.
func (g *gatherer[T]) listAll(ctx context.Context, notBefore time.Time) ([]T, error) {
	g.mu.Lock()
	if snap := g.fresh(notBefore); snap != nil {
		g.mu.Unlock()
		return snap.all, nil
	}
	r, err := g.ask(ctx, nil, true)
	if err != nil {
		return nil, err
	}
	return r.all, nil
}

// listNamed is listAll as id and display name pairs.
func (g *gatherer[T]) listNamed(ctx context.Context, notBefore time.Time) ([]named, error) {
	items, err := g.listAll(ctx, notBefore)
	if err != nil {
		return nil, err
	}
	out := make([]named, 0, len(items))
	for _, it := range items {
		out = append(out, named{id: g.kind.idOf(it), name: g.kind.nameOf(it)})
	}
	return out, nil
}

// ask joins (or starts) the round of listings that answers names, or
// everything, and waits for it. Call with mu held; it is released.
func (g *gatherer[T]) ask(ctx context.Context, names []string, everything bool) (*gatherRound[T], error) {
	if !g.busy && g.window <= 0 {
		g.busy = true
		r := &gatherRound[T]{ctx: ctx, names: slices.Clone(names), everything: everything, done: make(chan struct{})}
		g.mu.Unlock()
		g.run(r)
		return r, r.err
	}
	if !g.busy {
		// The round starts when the window ends, with every lookup
		// gathered by then.
		g.busy = true
		time.AfterFunc(g.window, func() {
			g.mu.Lock()
			r := g.next
			g.next = nil
			g.mu.Unlock()
			ctx, cancel := context.WithTimeout(r.ctx, g.deadline)
			defer cancel()
			r.ctx = ctx
			g.run(r)
		})
	}
	r := g.next
	if r == nil {
		r = &gatherRound[T]{ctx: context.WithoutCancel(ctx), done: make(chan struct{})}
		g.next = r
	}
	r.everything = r.everything || everything
	for _, n := range names {
		if !slices.Contains(r.names, n) {
			r.names = append(r.names, n)
		}
	}
	g.mu.Unlock()
	select {
	case <-r.done:
		return r, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fresh is the last unfiltered listing, if it may answer: at most the TTL
// old, and begun after notBefore. Call with mu held.
func (g *gatherer[T]) fresh(notBefore time.Time) *gatherSnapshot[T] {
	if g.ttl <= 0 || g.snap == nil || !g.snap.start.After(notBefore) || g.now().Sub(g.snap.start) > g.ttl {
		return nil
	}
	g.served++
	return g.snap
}

// run lists for r, answers its waiters, then starts the round gathered
// meanwhile, if any.
func (g *gatherer[T]) run(r *gatherRound[T]) {
	g.mu.Lock()
	unfiltered := r.everything || len(r.names) > g.pages
	if unfiltered {
		g.listings++
	}
	g.mu.Unlock()
	r.found = make(map[string][]T, len(r.names))
	for _, n := range r.names {
		r.found[n] = nil
	}
	keep := func(items []T) {
		for _, it := range items {
			if n := g.kind.nameOf(it); g.kind.live(it) {
				if _, asked := r.found[n]; asked {
					r.found[n] = append(r.found[n], it)
				}
			}
		}
	}
	if unfiltered {
		start := g.now()
		items, pages, err := g.all(r.ctx)
		live := slices.DeleteFunc(items, func(it T) bool { return !g.kind.live(it) })
		if err == nil {
			g.mu.Lock()
			g.pages = max(pages, 1)
			if g.ttl > 0 {
				snap := &gatherSnapshot[T]{start: start, byName: map[string][]T{}, all: live}
				for _, it := range live {
					snap.byName[g.kind.nameOf(it)] = append(snap.byName[g.kind.nameOf(it)], it)
				}
				g.snap = snap
			}
			g.mu.Unlock()
		}
		r.err = err
		if r.everything {
			r.all = live
		}
		keep(live)
	} else {
		for _, n := range r.names {
			items, err := g.byName(r.ctx, n)
			if err != nil {
				r.err = err
				break
			}
			keep(items)
		}
	}
	if r.err != nil {
		r.found, r.all = nil, nil
	}
	close(r.done)

	g.mu.Lock()
	next := g.next
	g.next = nil
	g.busy = next != nil
	g.mu.Unlock()
	if next != nil {
		go func() {
			ctx, cancel := context.WithTimeout(next.ctx, g.deadline)
			defer cancel()
			next.ctx = ctx
			g.run(next)
		}()
	}
}
