package inventory

import (
	"context"
	"time"

	"k8s.io/klog/v2"
)

// Full listings: starting one (Warm, Prime), and installing its answer.

// flight is one listing in progress; done closes when it ends.
type flight struct {
	done chan struct{}
	err  error
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

// listingFresh: the last complete listing is at most maxAge old.
// Call with mu held.
func (inv *Inventory[T]) listingFresh(maxAge time.Duration) bool {
	return !inv.listedAt.IsZero() && inv.opts.Now().Sub(inv.listedAt) <= maxAge
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

// wait blocks until done closes or ctx ends.
func wait(ctx context.Context, done <-chan struct{}) error {
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
