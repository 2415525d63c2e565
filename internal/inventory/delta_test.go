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

// deltaCloud is a keyCloud whose instances have creation times, answering
// ListSince like a creation-time filter and recording each delta's since.
type deltaCloud struct {
	*keyCloud
	clk      *clock
	created  map[string]time.Time
	sinces   []time.Time
	deltaErr error
	gate     chan struct{} // when set, a delta waits for it
}

func newDeltaCloud(n int, clk *clock) *deltaCloud {
	d := &deltaCloud{keyCloud: &keyCloud{cloud: newCloud(n)}, clk: clk, created: map[string]time.Time{}}
	for id := range d.vms {
		d.created[id] = clk.Now().Add(-time.Hour)
	}
	return d
}

// add creates instances now, with the IPs of the given indexes.
func (d *deltaCloud) add(from, to int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := from; i < to; i++ {
		id := fmt.Sprintf("ins-new%05d", i)
		d.vms[id] = vm{id: id, ip: ipOf(i)}
		d.created[id] = d.clk.Now()
	}
}

func (d *deltaCloud) listSince(_ context.Context, since time.Time) ([]vm, error) {
	if d.gate != nil {
		<-d.gate
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sinces = append(d.sinces, since)
	if d.deltaErr != nil {
		return nil, d.deltaErr
	}
	var out []vm
	for id, v := range d.vms {
		if !d.created[id].Before(since) {
			out = append(out, v)
		}
	}
	return out, nil
}

func (d *deltaCloud) deltas() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.sinces)
}

func (d *deltaCloud) inventory(provider string) *Inventory[vm] {
	src := source(d.cloud)
	src.FetchByKeys = d.fetchByKeys
	src.ListSince = d.listSince
	return New(src, Options{Provider: provider, TTL: time.Minute, KeyWindow: 50 * time.Millisecond, Now: d.clk.Now})
}

// listed primes inv and waits for its listing.
func listed(t *testing.T, inv *Inventory[vm]) {
	t.Helper()
	inv.Prime(0)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		inv.mu.Lock()
		done := !inv.listedAt.IsZero()
		inv.mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the listing did not end")
		}
	}
}

// matchIPs looks up each IP concurrently and returns the ids found, by IP.
func matchIPs(t *testing.T, inv *Inventory[vm], ips []string, maxAge time.Duration) map[string][]string {
	t.Helper()
	var mu sync.Mutex
	got := map[string][]string{}
	var wg sync.WaitGroup
	for _, ip := range ips {
		wg.Go(func() {
			set, err := inv.MatchIndex(context.Background(), maxAge, "ip", []string{ip}, func(context.Context) ([]vm, error) {
				t.Errorf("%s: the direct call was made, with a key source", ip)
				return nil, nil
			})
			if err != nil {
				t.Errorf("MatchIndex %s: %v", ip, err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, v := range set {
				got[ip] = append(got[ip], v.id)
			}
		})
	}
	wg.Wait()
	return got
}

func ipRange(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, ipOf(i))
	}
	return out
}

// A burst of nodes whose machines were created after the listing costs one
// delta, not a key batch per five; the machines still booting are in it,
// and their nodes join without any call.
func TestDeltaFindsNewAndBootingInstances(t *testing.T) {
	clk := &clock{t: time.Unix(10_000, 0)}
	d := newDeltaCloud(10, clk)
	inv := d.inventory(uniq("delta-burst"))
	listed(t, inv)
	listedAt := clk.Now()

	clk.Advance(10 * time.Second)
	d.add(100, 250) // 150 machines created; the first 50 nodes register
	clk.Advance(time.Second)
	got := matchIPs(t, inv, ipRange(100, 150), time.Minute)
	if len(got) != 50 || d.deltas() != 1 || len(d.batches) != 0 {
		t.Fatalf("%d of 50 found with %d deltas and %d key batches, want 50 with 1 and 0", len(got), d.deltas(), len(d.batches))
	}
	if want := listedAt.Add(-DefaultDeltaMargin); !d.sinces[0].Equal(want) {
		t.Errorf("the delta asked since %s, want the listing's start less the margin, %s", d.sinces[0], want)
	}
	if ids := got[ipOf(120)]; !slices.Equal(ids, []string{"ins-new00120"}) {
		t.Errorf("10.0.0.120 -> %v, want ins-new00120", ids)
	}

	clk.Advance(10 * time.Second)
	got = matchIPs(t, inv, ipRange(150, 250), time.Minute)
	if len(got) != 100 || d.deltas() != 1 || len(d.batches) != 0 {
		t.Fatalf("booted nodes: %d of 100 found, %d deltas, %d key batches; want 100, still 1 and 0", len(got), d.deltas(), len(d.batches))
	}

	// The next delta starts from the last one, not from the listing.
	clk.Advance(10 * time.Second)
	d.add(250, 251)
	deltaAt := clk.Now().Add(-20 * time.Second)
	clk.Advance(time.Second)
	if got := matchIPs(t, inv, ipRange(250, 251), time.Minute); len(got) != 1 {
		t.Fatalf("the second delta found %v", got)
	}
	if want := deltaAt.Add(-DefaultDeltaMargin); d.deltas() != 2 || !d.sinces[1].Equal(want) {
		t.Errorf("deltas since %v, want a second since %s", d.sinces, want)
	}
}

// What a delta cannot answer is asked by key; nothing is concluded from
// its absence.
func TestDeltaFallsBackToKeys(t *testing.T) {
	tests := []struct {
		name     string
		prepare  func(d *deltaCloud, clk *clock)
		advance  time.Duration // before the lookup
		deltaErr error
		ip       string
		want     []string
		deltas   int
		batches  int
	}{
		{name: "created before the delta's since, missing from the listing",
			prepare: func(d *deltaCloud, clk *clock) {
				d.vms["ins-late0001"] = vm{id: "ins-late0001", ip: "10.9.0.1"}
				d.created["ins-late0001"] = clk.Now().Add(-time.Hour)
			},
			advance: time.Second, ip: "10.9.0.1", want: []string{"ins-late0001"}, deltas: 1, batches: 1},
		{name: "the delta fails",
			prepare: func(d *deltaCloud, clk *clock) { d.add(100, 101) },
			advance: time.Second, deltaErr: errors.New("throttled"), ip: ipOf(100), want: []string{"ins-new00100"}, deltas: 1, batches: 1},
		{name: "no such instance",
			advance: time.Second, ip: "10.9.9.9", deltas: 1, batches: 1},
		{name: "the listing is older than the horizon: no delta",
			prepare: func(d *deltaCloud, clk *clock) { d.add(100, 101) },
			advance: DeltaHorizon + time.Second, ip: ipOf(100), want: []string{"ins-new00100"}, batches: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &clock{t: time.Unix(10_000, 0)}
			d := newDeltaCloud(10, clk)
			d.deltaErr = tt.deltaErr
			inv := d.inventory(uniq("delta-fallback"))
			// A listing cheaper than any rent, so that no new one is bought.
			inv.opts.TTL = time.Nanosecond
			listed(t, inv)
			if tt.prepare != nil {
				tt.prepare(d, clk)
			}
			clk.Advance(tt.advance)
			got := matchIPs(t, inv, []string{tt.ip}, 10*time.Minute)
			if !slices.Equal(got[tt.ip], tt.want) || d.deltas() != tt.deltas || len(d.batches) != tt.batches {
				t.Errorf("got %v with %d deltas and %d key batches, want %v with %d and %d",
					got[tt.ip], d.deltas(), len(d.batches), tt.want, tt.deltas, tt.batches)
			}
		})
	}
}

// An entry older than the lookup's max age that shares the key with a new
// instance is not taken as an answer, nor hidden: the instance it was may
// be gone and its private IP reused, which only the cloud can tell.
func TestDeltaDoesNotTrustAnOldEntryForAKey(t *testing.T) {
	clk := &clock{t: time.Unix(10_000, 0)}
	d := newDeltaCloud(10, clk)
	inv := d.inventory(uniq("delta-reuse"))
	inv.opts.TTL = time.Nanosecond
	listed(t, inv)

	clk.Advance(2 * time.Minute)
	d.mu.Lock()
	delete(d.vms, "ins-00000003") // gone; its IP goes to a new machine
	d.mu.Unlock()
	d.add(3, 4)
	clk.Advance(time.Second)
	got := matchIPs(t, inv, []string{ipOf(3)}, time.Minute)
	// The cloud's answer: a key batch, or a new listing when the delta's
	// rent has bought one.
	asked := len(d.batches) + d.listings - 1
	if !slices.Equal(got[ipOf(3)], []string{"ins-new00003"}) || d.deltas() != 1 || asked != 1 {
		t.Errorf("got %v with %d deltas, %d key batches and %d listings, want ins-new00003 after 1 delta and 1 more call",
			got[ipOf(3)], d.deltas(), len(d.batches), d.listings)
	}
}

// A miss that arrives while a delta is under way waits for it, and asks
// for another only if that one did not hold its instance.
func TestDeltaInFlightIsJoined(t *testing.T) {
	clk := &clock{t: time.Unix(10_000, 0)}
	d := newDeltaCloud(10, clk)
	inv := d.inventory(uniq("delta-flight"))
	listed(t, inv)
	d.add(100, 102)
	clk.Advance(time.Second)
	d.gate = make(chan struct{})
	first := make(chan map[string][]string)
	go func() { first <- matchIPs(t, inv, []string{ipOf(100)}, time.Minute) }()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		inv.mu.Lock()
		sent := inv.deltas.InFlight(deltaKey) != nil
		inv.mu.Unlock()
		if sent {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first delta was not sent")
		}
	}
	second := make(chan map[string][]string)
	go func() { second <- matchIPs(t, inv, []string{ipOf(101)}, time.Minute) }()
	time.Sleep(100 * time.Millisecond) // longer than the window: the second would have gone
	close(d.gate)
	a, b := <-first, <-second
	if len(a) != 1 || len(b) != 1 || d.deltas() != 1 {
		t.Errorf("found %v and %v with %d deltas, want both with 1", a, b, d.deltas())
	}
}
