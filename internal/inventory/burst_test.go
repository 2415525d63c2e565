package inventory

import (
	"context"
	"slices"
	"testing"
	"time"
)

// A burst of lookups that began on a fresh listing goes on being answered
// from it after it turns older than the TTL (5,000 nodes initializing in
// more than a minute re-listed halfway: 151 DescribeInstances, not 51),
// within the grace and while the burst lasts; a newer instance is still
// asked of the cloud, and nothing else is extended.
func TestBurstOutlivesTheTTLWithoutRelisting(t *testing.T) {
	const (
		ttl   = time.Minute
		grace = 4 * time.Minute
		gap   = 10 * time.Second
		n     = 300
	)
	tests := []struct {
		name  string
		grace time.Duration // 0: off, as for OCI
		// the burst: every lookup after the first comes step later, until
		// the listing is this old; then, after pause, one more lookup.
		step, until, pause time.Duration
		maxAge             time.Duration // the lookups' max age
		get                bool          // by id (Get) instead of by IP (MatchIndex)
		wantListings       int
		wantLastCalls      int // key batches or by-id calls of the last lookup
	}{
		{name: "a burst past the TTL is served by its listing", grace: grace, step: 2 * time.Second,
			until: 90 * time.Second, maxAge: ttl, wantListings: 1},
		{name: "by id too", grace: grace, step: 2 * time.Second, until: 90 * time.Second, maxAge: ttl,
			get: true, wantListings: 1},
		{name: "without grace the burst re-lists", step: 2 * time.Second, until: 90 * time.Second,
			maxAge: ttl, wantListings: 2},
		{name: "a burst ends after a pause longer than the gap", grace: grace, step: 2 * time.Second,
			until: 50 * time.Second, pause: 20 * time.Second, maxAge: ttl, wantListings: 1, wantLastCalls: 1},
		{name: "a pause within the gap does not end it", grace: grace, step: 2 * time.Second,
			until: 50 * time.Second, pause: 9 * time.Second, maxAge: ttl, wantListings: 1},
		{name: "no answer older than the TTL plus the grace", grace: grace, step: 5 * time.Second,
			until: ttl + grace, pause: 5 * time.Second, maxAge: ttl, wantListings: 1, wantLastCalls: 1},
		{name: "lookups allowing less than the TTL get no grace", grace: grace, step: time.Second,
			until: 9 * time.Second, pause: 2 * time.Second, maxAge: 10 * time.Second, wantListings: 1, wantLastCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := &keyCloud{cloud: newCloud(n)}
			src := source(kc.cloud)
			src.FetchByKeys = kc.fetchByKeys
			clk := &clock{t: time.Unix(0, 0)}
			inv := New(src, Options{Provider: uniq("test-burst"), TTL: ttl, Window: time.Millisecond,
				KeyWindow: time.Millisecond, Now: clk.Now, BurstGrace: tt.grace, BurstGap: gap})
			ctx := context.Background()
			direct := func(context.Context) ([]vm, error) { t.Error("direct call"); return nil, nil }
			k := 0
			lookup := func() {
				t.Helper()
				k++
				i := k % n
				if tt.get {
					if r, err := inv.Get(ctx, ids(n)[i], tt.maxAge); err != nil || !r.Found {
						t.Fatalf("Get %d at %s = %+v, %v", i, clk.Now().Sub(time.Unix(0, 0)), r, err)
					}
					return
				}
				if got, err := inv.MatchIndex(ctx, tt.maxAge, "ip", []string{ipOf(i)}, direct); err != nil || len(got) != 1 {
					t.Fatalf("MatchIndex %s at %s = %v, %v", ipOf(i), clk.Now().Sub(time.Unix(0, 0)), got, err)
				}
			}
			// Cold: the first lookup rents, the second buys the listing.
			lookup()
			lookup()
			if kc.listings != 1 {
				t.Fatalf("%d listings after the first two lookups, want 1", kc.listings)
			}
			for clk.Now().Sub(time.Unix(0, 0)) < tt.until {
				clk.Advance(tt.step)
				lookup()
			}
			calls := func() int { return len(kc.batchSizes()) + len(kc.cloud.batches) }
			before := calls()
			clk.Advance(tt.pause)
			lookup()
			if got := calls() - before; got != tt.wantLastCalls {
				t.Errorf("the last lookup made %d calls, want %d", got, tt.wantLastCalls)
			}
			if kc.listings != tt.wantListings {
				t.Errorf("%d listings, want %d", kc.listings, tt.wantListings)
			}
		})
	}
}

// During a burst's grace, an instance newer than the listing is asked of
// the cloud (one key batch) and found.
func TestBurstStillAsksForWhatTheListingLacks(t *testing.T) {
	kc := &keyCloud{cloud: newCloud(100)}
	src := source(kc.cloud)
	src.FetchByKeys = kc.fetchByKeys
	clk := &clock{t: time.Unix(0, 0)}
	inv := New(src, Options{Provider: uniq("test-burst-new"), TTL: time.Minute, KeyWindow: time.Millisecond,
		Now: clk.Now, BurstGrace: 4 * time.Minute})
	ctx := context.Background()
	direct := func(context.Context) ([]vm, error) { t.Error("direct call"); return nil, nil }
	for i := range 80 {
		clk.Advance(time.Second)
		if got, err := inv.MatchIndex(ctx, time.Minute, "ip", []string{ipOf(i)}, direct); err != nil || len(got) != 1 {
			t.Fatalf("MatchIndex %s = %v, %v", ipOf(i), got, err)
		}
	}
	kc.mu.Lock()
	kc.vms["ins-new00001"] = vm{id: "ins-new00001", ip: "10.9.9.9"}
	kc.mu.Unlock()
	got, err := inv.MatchIndex(ctx, time.Minute, "ip", []string{"10.9.9.9"}, direct)
	if err != nil || len(got) != 1 || got[0].id != "ins-new00001" {
		t.Fatalf("MatchIndex for an instance newer than the listing = %v, %v", got, err)
	}
	if sizes := kc.batchSizes(); !slices.Equal(sizes, []int{1, 1}) || kc.listings != 1 {
		t.Errorf("key batches %v, listings %d; want [1 1] (the first rent, the new instance) and 1", sizes, kc.listings)
	}
}
