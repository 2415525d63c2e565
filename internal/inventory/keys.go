package inventory

import (
	"context"
	"time"

	"github.com/ccmkit/ccm/internal/batch"
)

// Index lookups (MatchIndex) and the key batches their misses gather
// into (Source.FetchByKeys).

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
