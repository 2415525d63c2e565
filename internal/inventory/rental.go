package inventory

import (
	"slices"
	"time"
)

// The ski rental: when the calls made instead of a listing have cost
// enough that a listing is worth buying.

// rentCall is one call made instead of a listing: when it started, and how
// many ids, keys or instances it carried.
type rentCall struct {
	at    time.Time
	items int
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
		if now.Sub(e.fetched) > inv.opts.TTL && !inv.byID.Pending(id) {
			stale++ // and not already being asked for
		}
	}
	return (stale+perCall-1)/perCall < inv.listCost
}
