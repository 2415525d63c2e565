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

	inv.Warm(time.Minute)
	time.Sleep(20 * time.Millisecond)
	if c.listings != 0 {
		t.Fatalf("a cold Warm listed (%d listings)", c.listings)
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
	time.Sleep(20 * time.Millisecond)
	if c.listings != 1 {
		t.Fatalf("Warm with a fresh listing listed again (%d listings)", c.listings)
	}
}
