package inventory

import (
	"context"
	"time"

	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/batch"
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

// deltaKey is the one key of the delta batcher: a delta asks for nothing
// but "what is new", so the misses of a window all share it.
var deltaKey struct{}

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
	inFlight := func() *batch.Call[struct{}, struct{}] { return inv.deltas.InFlight(deltaKey) }
	gathering := func() *batch.Call[struct{}, struct{}] { return inv.deltas.Add(ctx, deltaKey) }
	for _, next := range []func() *batch.Call[struct{}, struct{}]{inFlight, gathering} {
		d := next()
		if d == nil {
			continue
		}
		inv.mu.Unlock()
		if err := d.Wait(ctx); err != nil {
			return nil, false, err
		}
		inv.mu.Lock()
		if d.Err() == nil && inv.viewFresh(maxAge) {
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

// listSince makes one delta: it lists the instances created since the
// view was complete (less DeltaMargin) and adds them to the view. The
// misses of a KeyWindow share it (the delta batcher's window).
func (inv *Inventory[T]) listSince(ctx context.Context, _ []struct{}) (map[struct{}]struct{}, error) {
	inv.mu.Lock()
	start := inv.opts.Now()
	since := inv.coveredAt.Add(-inv.opts.DeltaMargin)
	inv.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
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
	return nil, err
}

// laterOf returns the later of two times.
func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
