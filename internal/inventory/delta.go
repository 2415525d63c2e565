package inventory

import (
	"context"
	"time"

	"k8s.io/klog/v2"
)

// Deltas: keeping a complete listing complete for new instances.
//
// A node that joins is usually a machine created a little earlier; its
// lookup misses the last listing. Before this, each miss cost its own
// call (five private IPs per DescribeInstances, one display name per OCI
// ListInstances): 1,000 nodes joining at 20/s made 200 calls. A delta
// lists only the instances created since the view was complete, in about
// one page per 100 new machines, and it answers the machines still booting
// as well, whose nodes then join without any call.
//
// The view is the last complete listing plus the deltas since. It serves
// an index lookup while its newest part (coveredAt) is at most the
// lookup's max age old and its complete listing is at most DeltaHorizon
// old: a delta sees new instances, not changes to older ones, and the
// entries it does not renew age out by themselves (lookupKeys).

// Defaults for deltas.
const (
	// DefaultDeltaMargin covers the clock difference between this host
	// and the cloud and a creation-time filter's one-second granularity.
	// An instance it misses is still found by its key (the fallback).
	DefaultDeltaMargin = 3 * time.Second
	// DeltaHorizon is how long after its complete listing a view may be
	// renewed by deltas. After that, index lookups go the ski-rental way
	// again (key batches or direct calls, then a listing).
	DeltaHorizon = 5 * time.Minute
)

// deltaBatch is one delta, gathering then in flight; done closes when it
// ends.
type deltaBatch struct {
	done chan struct{}
	err  error
}

// fromView answers an index lookup from the view: at once when it is
// fresh and holds the keys, else after a delta. ok is false when there is
// no usable view, no delta source, the delta failed, or the keys are still
// not in it; the caller then asks by key.
func (inv *Inventory[T]) fromView(ctx context.Context, maxAge time.Duration, find func() []T) ([]T, bool, error) {
	inv.mu.Lock()
	if inv.viewFresh(maxAge) {
		if found := find(); len(found) > 0 {
			inv.mu.Unlock()
			lookups.WithLabelValues(inv.opts.Provider, "match", "hit").Inc()
			return found, true, nil
		}
	}
	if inv.src.ListSince == nil || inv.listedAt.IsZero() || inv.opts.Now().Sub(inv.listedAt) > DeltaHorizon {
		inv.mu.Unlock()
		return nil, false, nil
	}
	lookups.WithLabelValues(inv.opts.Provider, "match", "miss").Inc()
	// A delta under way may well hold the instance (the machine was
	// created before it began): wait for it before asking for another.
	for _, next := range []func() *deltaBatch{func() *deltaBatch { return inv.deltaFlight }, inv.enqueueDelta} {
		d := next()
		if d == nil {
			continue
		}
		inv.mu.Unlock()
		if err := wait(ctx, d.done); err != nil {
			return nil, false, err
		}
		inv.mu.Lock()
		if d.err == nil && inv.viewFresh(maxAge) {
			if found := find(); len(found) > 0 {
				inv.mu.Unlock()
				return found, true, nil
			}
		}
	}
	inv.mu.Unlock()
	return nil, false, nil
}

// viewFresh: the view is complete as of at most maxAge ago, and its
// complete listing is within DeltaHorizon. Call with mu held.
func (inv *Inventory[T]) viewFresh(maxAge time.Duration) bool {
	if inv.listedAt.IsZero() {
		return false
	}
	now := inv.opts.Now()
	return now.Sub(inv.coveredAt) <= maxAge && now.Sub(inv.listedAt) <= DeltaHorizon
}

// enqueueDelta joins the delta still gathering, or starts one that goes
// when KeyWindow ends: the misses of a window share one delta.
// Call with mu held.
func (inv *Inventory[T]) enqueueDelta() *deltaBatch {
	if inv.delta != nil {
		return inv.delta
	}
	d := &deltaBatch{done: make(chan struct{})}
	inv.delta = d
	time.AfterFunc(inv.opts.KeyWindow, func() {
		inv.mu.Lock()
		inv.delta, inv.deltaFlight = nil, d
		start := inv.opts.Now()
		since := inv.coveredAt.Add(-inv.opts.DeltaMargin)
		inv.mu.Unlock()
		go inv.sendDelta(d, since, start)
	})
	return d
}

// sendDelta lists the instances created since and adds them to the view.
func (inv *Inventory[T]) sendDelta(d *deltaBatch, since, start time.Time) {
	// Like a batch, the delta serves every waiter: no waiter's context
	// may end it.
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	items, err := inv.src.ListSince(ctx, since)
	result := "ok"
	if err != nil {
		result = "error"
		klog.ErrorS(err, "Instance inventory: listing the new instances failed; lookups go on by key", "provider", inv.opts.Provider)
	} else {
		klog.V(4).InfoS("Instance inventory: listed the new instances", "provider", inv.opts.Provider,
			"since", since, "instances", len(items))
		inv.mu.Lock()
		for _, item := range items {
			inv.store(item, start)
		}
		inv.coveredAt = laterOf(inv.coveredAt, start)
		for page := range max(1, (len(items)+inv.opts.PageSize-1)/inv.opts.PageSize) {
			inv.rent = append(inv.rent, rentCall{start, max(1, min(inv.opts.PageSize, len(items)-page*inv.opts.PageSize))})
		}
		n := len(inv.entries)
		inv.mu.Unlock()
		entries.WithLabelValues(inv.opts.Provider).Set(float64(n))
	}
	calls.WithLabelValues(inv.opts.Provider, "delta", result).Inc()
	inv.mu.Lock()
	if inv.deltaFlight == d {
		inv.deltaFlight = nil
	}
	inv.mu.Unlock()
	d.err = err
	close(d.done)
}

// laterOf returns the later of two times.
func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
