package inventory

import (
	"context"
	"time"

	"github.com/ccmkit/ccm/internal/batch"
)

// By-id lookups: Get and GetFresh, and the by-id calls their misses
// gather into.

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
