package inventory

import (
	"context"
	"time"
)

// Lookups by predicate (Match), and the plain path of index lookups:
// from a listing, else the caller's own filtered call.

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
