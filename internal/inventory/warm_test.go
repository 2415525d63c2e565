package inventory

import (
	"context"
	"testing"
	"time"
)

// Warm starts a listing only when a lookup would: not on a cold
// inventory, yes once the rent has reached the price, and not again while
// a listing is fresh.
func TestWarm(t *testing.T) {
	c := newCloud(250)
	clk := &clock{t: time.Unix(1000, 0)}
	inv := newInventory(c, clk, uniq("warm"), time.Minute)
	ctx := context.Background()

	// Warm decides under the inventory's lock whether to start a listing.
	listing := func() bool {
		inv.mu.Lock()
		defer inv.mu.Unlock()
		return inv.listing != nil
	}
	inv.Warm(time.Minute)
	if listing() {
		t.Fatal("a cold Warm started a listing")
	}
	if _, err := inv.Get(ctx, "ins-00000001", time.Minute); err != nil { // rent: one by-id call
		t.Fatal(err)
	}
	inv.Warm(time.Minute)
	// A lookup now joins the listing Warm started: no by-id call.
	r, err := inv.Get(ctx, "ins-00000002", time.Minute)
	if err != nil || !r.Found {
		t.Fatalf("Get after Warm: %+v, %v", r, err)
	}
	if c.listings != 1 || len(c.batches) != 1 {
		t.Fatalf("%d listings and %d by-id calls, want 1 and 1", c.listings, len(c.batches))
	}
	inv.Warm(time.Minute)
	if listing() {
		t.Fatal("Warm with a fresh listing started another")
	}
}

// Prime lists at once, even cold, and the first lookups join that listing
// instead of making calls of their own; it lists no more while a listing
// is under way or fresh, nor with listings off.
func TestPrime(t *testing.T) {
	tests := []struct {
		name         string
		ttl          time.Duration
		primes       int
		advance      time.Duration // after the first prime and the lookups
		wantListings int
		wantBatches  int
	}{
		{name: "cold: one listing, no by-id call", ttl: time.Minute, primes: 1, wantListings: 1},
		{name: "twice at once: one listing", ttl: time.Minute, primes: 2, wantListings: 1},
		{name: "again while fresh: no listing", ttl: time.Minute, primes: 2, advance: 30 * time.Second, wantListings: 1},
		{name: "again once stale: a new listing", ttl: time.Minute, primes: 2, advance: 2 * time.Minute, wantListings: 2},
		{name: "listings off (TTL 0): lookups go by id", primes: 1, wantBatches: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCloud(250)
			c.listGate = make(chan struct{})
			clk := &clock{t: time.Unix(1000, 0)}
			// A wide window: with listings off, the three lookups must
			// share one by-id call however starved the test is (CI once
			// saw two with newInventory's 10 ms).
			inv := New(source(c), Options{Provider: uniq("prime"), TTL: tt.ttl, Window: 500 * time.Millisecond, Now: clk.Now})
			inv.Prime(time.Minute)
			if tt.primes > 1 && tt.advance == 0 {
				inv.Prime(time.Minute) // while the first listing is under way
			}
			close(c.listGate)
			getAll(t, inv, ids(3), time.Minute)
			if tt.primes > 1 && tt.advance > 0 {
				clk.Advance(tt.advance)
				inv.Prime(time.Minute)
				// A listing, if Prime started one, runs in the background:
				// wait for it to end.
				inv.mu.Lock()
				f := inv.listing
				inv.mu.Unlock()
				if f != nil {
					<-f.done
				}
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.listings != tt.wantListings || len(c.batches) != tt.wantBatches {
				t.Errorf("%d listings and %d by-id calls, want %d and %d", c.listings, len(c.batches), tt.wantListings, tt.wantBatches)
			}
		})
	}
}
