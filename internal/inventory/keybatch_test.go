package inventory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// keyCloud answers FetchByKeys over a cloud's instances by IP, recording
// each batch's keys.
type keyCloud struct {
	*cloud
	keyMu   sync.Mutex
	batches [][]string
	err     error
}

func (k *keyCloud) fetchByKeys(_ context.Context, index string, keys []string) ([]vm, error) {
	k.keyMu.Lock()
	k.batches = append(k.batches, slices.Clone(keys))
	k.keyMu.Unlock()
	if index != "ip" {
		return nil, fmt.Errorf("unknown index %q", index)
	}
	if k.err != nil {
		return nil, k.err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []vm
	for _, v := range k.vms {
		if slices.Contains(keys, v.ip) {
			out = append(out, v)
		}
	}
	return out, nil
}

func (k *keyCloud) batchSizes() []int {
	k.keyMu.Lock()
	defer k.keyMu.Unlock()
	var out []int
	for _, b := range k.batches {
		out = append(out, len(b))
	}
	slices.Sort(out)
	return out
}

func ipOf(i int) string { return fmt.Sprintf("10.0.%d.%d", i/250, i%250) }

// Concurrent MatchIndex misses gather into FetchByKeys batches of at most
// MaxBatch keys, and each waiter gets exactly the instances with its keys.
func TestMatchIndexBatchesKeys(t *testing.T) {
	oneIPEach := func(n int) [][]string {
		out := make([][]string, n)
		for i := range out {
			out[i] = []string{ipOf(i)}
		}
		return out
	}
	ownInstance := func(n int) [][]string {
		out := make([][]string, n)
		for i := range out {
			out[i] = []string{fmt.Sprintf("ins-%08d", i)}
		}
		return out
	}
	tests := []struct {
		name    string
		waiters [][]string // each waiter's keys
		extra   []vm       // instances besides newCloud's
		err     error
		maxKeys int        // 0: the default, MaxBatch
		batches []int      // key batch sizes, sorted
		want    [][]string // ids each waiter gets
	}{
		{name: "several IPs in one batch", waiters: oneIPEach(3), batches: []int{3}, want: ownInstance(3)},
		{name: "an IP that matches nothing", waiters: [][]string{{ipOf(1)}, {"10.99.0.1"}},
			batches: []int{2}, want: [][]string{{"ins-00000001"}, nil}},
		{name: "two instances claim one IP", waiters: [][]string{{ipOf(1)}, {ipOf(2)}},
			extra:   []vm{{id: "ins-dup00001", ip: ipOf(1)}},
			batches: []int{2}, want: [][]string{{"ins-00000001", "ins-dup00001"}, {"ins-00000002"}}},
		{name: "a waiter's keys stay in one batch", waiters: [][]string{{ipOf(1), "10.99.0.1"}, {ipOf(2)}},
			batches: []int{3}, want: [][]string{{"ins-00000001"}, {"ins-00000002"}}},
		{name: "more than 100 waiters go in several calls", waiters: oneIPEach(250),
			batches: []int{50, 100, 100}, want: ownInstance(250)},
		{name: "batches go at MaxKeys, what one call answers", waiters: oneIPEach(12), maxKeys: 5,
			batches: []int{2, 5, 5}, want: ownInstance(12)},
		{name: "an API error reaches every waiter of the batch", waiters: oneIPEach(150), err: errors.New("throttled"),
			batches: []int{50, 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := &keyCloud{cloud: newCloud(300), err: tt.err}
			for _, v := range tt.extra {
				kc.vms[v.id] = v
			}
			src := source(kc.cloud)
			src.FetchByKeys = kc.fetchByKeys
			// TTL 0: never lists, so every lookup is a miss. A wide window,
			// so that every waiter of a loaded machine has asked before the
			// last partial batch leaves.
			inv := New(src, Options{Provider: uniq("test-keys"), KeyWindow: time.Second, MaxKeys: tt.maxKeys})
			direct := func(context.Context) ([]vm, error) {
				t.Error("a miss made the caller's direct call instead of joining a key batch")
				return nil, nil
			}
			got := make([][]string, len(tt.waiters))
			errs := make([]error, len(tt.waiters))
			var wg sync.WaitGroup
			for i, keys := range tt.waiters {
				wg.Go(func() {
					set, err := inv.MatchIndex(context.Background(), time.Minute, "ip", keys, direct)
					errs[i] = err
					for _, v := range set {
						got[i] = append(got[i], v.id)
					}
				})
			}
			wg.Wait()
			if sizes := kc.batchSizes(); !slices.Equal(sizes, tt.batches) {
				t.Errorf("key batches of %v keys, want %v", sizes, tt.batches)
			}
			if kc.calls() != 0 {
				t.Errorf("%d by-id calls or listing pages, want none", kc.calls())
			}
			for i := range tt.waiters {
				if tt.err != nil {
					if !errors.Is(errs[i], tt.err) {
						t.Errorf("waiter %d (%v): error %v, want %v", i, tt.waiters[i], errs[i], tt.err)
					}
					continue
				}
				if errs[i] != nil || !slices.Equal(got[i], tt.want[i]) {
					t.Errorf("waiter %d (%v) = %v, %v; want %v", i, tt.waiters[i], got[i], errs[i], tt.want[i])
				}
			}
		})
	}
}

// A fresh listing still answers what it holds without any call, and a key
// it lacks (a newer instance) goes in a key batch, whose answer is kept.
func TestMatchIndexBatchesOnlyWhatTheListingLacks(t *testing.T) {
	kc := &keyCloud{cloud: newCloud(300)}
	src := source(kc.cloud)
	src.FetchByKeys = kc.fetchByKeys
	clk := &clock{t: time.Unix(0, 0)}
	inv := New(src, Options{Provider: uniq("test-keys-listing"), TTL: time.Minute, Window: 10 * time.Millisecond, Now: clk.Now})
	ctx := context.Background()
	direct := func(context.Context) ([]vm, error) { t.Error("direct call"); return nil, nil }
	// The first miss rents (one key batch), the second buys a listing.
	for _, ip := range []string{ipOf(1), ipOf(2)} {
		if got, err := inv.MatchIndex(ctx, time.Minute, "ip", []string{ip}, direct); err != nil || len(got) != 1 {
			t.Fatalf("MatchIndex %s = %v, %v", ip, got, err)
		}
	}
	if sizes := kc.batchSizes(); !slices.Equal(sizes, []int{1}) || kc.listings != 1 {
		t.Fatalf("key batches %v, listings %d; want [1] and 1", sizes, kc.listings)
	}
	for i := range 300 {
		if got, _ := inv.MatchIndex(ctx, time.Minute, "ip", []string{ipOf(i)}, direct); len(got) != 1 {
			t.Fatalf("MatchIndex %s = %v, want from the listing", ipOf(i), got)
		}
	}
	kc.mu.Lock()
	kc.vms["ins-new00001"] = vm{id: "ins-new00001", ip: "10.9.9.9"}
	kc.mu.Unlock()
	if got, _ := inv.MatchIndex(ctx, time.Minute, "ip", []string{"10.9.9.9"}, direct); len(got) != 1 || got[0].id != "ins-new00001" {
		t.Fatalf("MatchIndex for a new instance = %v", got)
	}
	if sizes := kc.batchSizes(); !slices.Equal(sizes, []int{1, 1}) || kc.listings != 1 {
		t.Errorf("key batches %v, listings %d; want [1 1] and 1", sizes, kc.listings)
	}
	if r, err := inv.Get(ctx, "ins-new00001", time.Minute); err != nil || !r.Found || r.Fresh {
		t.Errorf("Get after the key batch = %+v, %v; want its kept answer", r, err)
	}
}

// A burst of misses on a cold inventory rents once and then buys a listing:
// deciding "no listing yet" and joining a key batch happen under one lock,
// so the burst cannot send a batch per waiter before the first batch's rent
// makes the listing worth it (found by CI: 250 nodes cost 8 calls, not 4).
func TestMatchIndexBurstBuysOneListing(t *testing.T) {
	const n = 300
	kc := &keyCloud{cloud: newCloud(n)}
	src := source(kc.cloud)
	src.FetchByKeys = kc.fetchByKeys
	inv := New(src, Options{Provider: uniq("test-keys-burst"), TTL: time.Minute, MaxKeys: 5, KeyWindow: time.Second})
	direct := func(context.Context) ([]vm, error) { t.Error("direct call"); return nil, nil }
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if got, err := inv.MatchIndex(context.Background(), time.Minute, "ip", []string{ipOf(i)}, direct); err != nil || len(got) != 1 {
				t.Errorf("MatchIndex %s = %v, %v", ipOf(i), got, err)
			}
		})
	}
	wg.Wait()
	if sizes := kc.batchSizes(); !slices.Equal(sizes, []int{5}) || kc.listings != 1 {
		t.Errorf("key batches %v, listings %d; want one full batch [5] and one listing", sizes, kc.listings)
	}
}

// With ChargeFoundOnly, key batches that found nothing are no rent: lookups
// of what does not exist yet never buy a listing, and lookups that find
// something still do, as without it.
func TestChargeFoundOnly(t *testing.T) {
	missing := func(i int) string { return fmt.Sprintf("10.99.%d.%d", i/250, i%250) }
	tests := []struct {
		name            string
		chargeFoundOnly bool
		key             func(int) string
		listings        int
	}{
		{"absent keys, plain rule: the second miss lists", false, missing, 1},
		{"absent keys, found only: no listing", true, missing, 0},
		{"present keys, found only: the second lookup lists", true, ipOf, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := &keyCloud{cloud: newCloud(300)}
			src := source(kc.cloud)
			src.FetchByKeys = kc.fetchByKeys
			inv := New(src, Options{Provider: uniq("test-keys-found"), TTL: time.Hour, KeyWindow: time.Millisecond,
				ChargeFoundOnly: tt.chargeFoundOnly})
			direct := func(context.Context) ([]vm, error) { t.Error("direct call"); return nil, nil }
			// One lookup at a time: each waits for the last one's answer,
			// and so for its rent.
			for i := range 5 {
				if _, err := inv.MatchIndex(context.Background(), time.Hour, "ip", []string{tt.key(i)}, direct); err != nil {
					t.Fatal(err)
				}
			}
			if kc.listings != tt.listings {
				t.Errorf("%d listings, want %d (key batches %v)", kc.listings, tt.listings, kc.batchSizes())
			}
		})
	}
}
