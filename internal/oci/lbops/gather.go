package lbops

import (
	"context"
	"slices"
	"sync"
	"time"
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
type gatherer[T any] struct {
	nameOf   func(T) string
	live     func(T) bool
	byName   func(ctx context.Context, name string) ([]T, error)
	all      func(ctx context.Context) ([]T, int, error) // the items and the pages they took
	deadline time.Duration                               // of a gathered listing (its waiters may go)

	mu    sync.Mutex
	busy  bool
	next  *gatherRound[T] // the lookups waiting for the running listing to end
	pages int             // pages of the last unfiltered listing; 1 before any

	listings int // unfiltered listings run, for tests
}

type gatherRound[T any] struct {
	ctx   context.Context // the first waiter's, without its cancel: the others still want the answer
	names []string
	done  chan struct{}
	found map[string][]T // live items by name, for every name asked
	err   error
}

func newGatherer[T any](nameOf func(T) string, live func(T) bool, byName func(context.Context, string) ([]T, error),
	all func(context.Context) ([]T, int, error)) *gatherer[T] {
	return &gatherer[T]{nameOf: nameOf, live: live, byName: byName, all: all, deadline: 2 * time.Minute, pages: 1}
}

// lookup returns the live items named each of names (an empty slice
// for a name with none).
func (g *gatherer[T]) lookup(ctx context.Context, names []string) (map[string][]T, error) {
	g.mu.Lock()
	if !g.busy {
		g.busy = true
		r := &gatherRound[T]{ctx: ctx, names: slices.Clone(names), done: make(chan struct{})}
		g.mu.Unlock()
		g.run(r)
		return r.found, r.err
	}
	r := g.next
	if r == nil {
		r = &gatherRound[T]{ctx: context.WithoutCancel(ctx), done: make(chan struct{})}
		g.next = r
	}
	for _, n := range names {
		if !slices.Contains(r.names, n) {
			r.names = append(r.names, n)
		}
	}
	g.mu.Unlock()
	select {
	case <-r.done:
		return r.found, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// run lists for r, answers its waiters, then starts the round gathered
// meanwhile, if any.
func (g *gatherer[T]) run(r *gatherRound[T]) {
	g.mu.Lock()
	unfiltered := len(r.names) > g.pages
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
			if n := g.nameOf(it); g.live(it) {
				if _, asked := r.found[n]; asked {
					r.found[n] = append(r.found[n], it)
				}
			}
		}
	}
	if unfiltered {
		items, pages, err := g.all(r.ctx)
		if err == nil {
			g.mu.Lock()
			g.pages = max(pages, 1)
			g.mu.Unlock()
		}
		r.err = err
		keep(items)
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
		r.found = nil
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
