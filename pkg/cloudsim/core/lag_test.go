package core

import (
	"errors"
	"testing"
	"time"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time                 { return c.t }
func (c *fakeClock) add(d time.Duration)            { c.t = c.t.Add(d) }
func newFakeClock() *fakeClock                      { return &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }
func viewOf(l *Lag, key, cur string) (string, bool) { return Viewed(l, key, cur) }

func TestLag(t *testing.T) {
	clk := newFakeClock()
	l := newLag(clk.now)

	// Off: every write is seen at once, and nothing is kept.
	l.Wrote("a", nil, "a1")
	if v, ok := viewOf(l, "a", "a1"); !ok || v != "a1" || l.Pending() != 0 {
		t.Fatalf("off: view = %q %v, pending %d; want a1, seen, 0", v, ok, l.Pending())
	}

	if err := l.Set(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	// A new resource is absent until its write is due, which is within
	// the lag; a change shows the version before it until then.
	l.Wrote("new", nil, "n1")
	l.Wrote("old", "o1", "o2")
	if _, ok := viewOf(l, "new", "n1"); ok && l.Pending() == 2 {
		t.Error("a new resource is seen while its write is pending")
	}
	if v, _ := viewOf(l, "old", "o2"); v != "o1" && l.Pending() == 2 {
		t.Errorf("a changed resource shows %q while its change is pending, want o1", v)
	}
	// A second change is never seen before the first.
	l.Wrote("old", "o2", "o3")
	clk.add(10 * time.Second)
	if v, ok := viewOf(l, "new", "n1"); !ok || v != "n1" {
		t.Errorf("after the lag: new = %q %v, want n1", v, ok)
	}
	if v, _ := viewOf(l, "old", "o3"); v != "o3" {
		t.Errorf("after the lag: old = %q, want o3", v)
	}
	if l.Pending() != 0 {
		t.Errorf("pending = %d after the lag, want 0", l.Pending())
	}
	// Untracked resources are seen as they are.
	if v, ok := viewOf(l, "other", "x"); !ok || v != "x" {
		t.Errorf("untracked = %q %v", v, ok)
	}
	// Forget: a deleted resource's pending writes are dropped.
	l.Wrote("gone", nil, "g1")
	l.Forget("gone")
	if v, ok := viewOf(l, "gone", "g1"); !ok || v != "g1" {
		t.Errorf("forgotten = %q %v", v, ok)
	}
	// Setting the lag again makes every pending write visible.
	l.Wrote("reset", nil, "r1")
	_ = l.Set(5 * time.Second)
	if _, ok := viewOf(l, "reset", "r1"); !ok {
		t.Error("a pending write is still hidden after Set")
	}
	for _, bad := range []time.Duration{-time.Second, MaxReadLag + time.Second} {
		if err := l.Set(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("Set(%v) = %v, want ErrInvalid", bad, err)
		}
	}
}

// Every write becomes visible within the lag, in order, whatever the
// random delay.
func TestLagBound(t *testing.T) {
	clk := newFakeClock()
	l := newLag(clk.now)
	_ = l.Set(3 * time.Second)
	for i := range 200 {
		key := string(rune('a' + i%26))
		l.Wrote(key+"x", nil, "v")
		clk.add(100 * time.Millisecond)
	}
	clk.add(3 * time.Second)
	if n := l.Pending(); n != 0 {
		t.Errorf("%d resources still pending 3s after their last write", n)
	}
}

func TestInstancesLag(t *testing.T) {
	clk := newFakeClock()
	c := New(Config{Clock: clk.now, ReadLag: 5 * time.Second})
	added, err := c.AddInstances(Instance{ID: "ins-lag00001", PrivateIP: "10.0.0.1", VpcID: "vpc-lag00001", State: StateRunning})
	if err != nil {
		t.Fatal(err)
	}
	id := added[0].ID
	// Writes see it at once; reads only once visible.
	if _, err := c.InstanceRecord(id); err != nil {
		t.Fatalf("InstanceRecord: %v", err)
	}
	seen := func() bool {
		_, err := c.ReadInstanceRecord(id)
		inSnapshot := len(c.ReadSnapshot()) == 1
		if (err == nil) != inSnapshot {
			t.Fatalf("by id (%v) and listing (%v) disagree", err, inSnapshot)
		}
		return err == nil
	}
	deadline := clk.t.Add(5 * time.Second)
	for seen() == false && clk.t.Before(deadline) {
		clk.add(250 * time.Millisecond)
	}
	if !seen() {
		t.Fatal("the instance is not visible 5s after it was added")
	}
	// A state change shows the old state until it is due.
	_ = c.lag.Set(5 * time.Second) // every write so far is visible
	if _, err := c.SetInstanceState(id, StateStopped); err != nil {
		t.Fatal(err)
	}
	clk.add(5 * time.Second)
	if r, err := c.ReadInstanceRecord(id); err != nil || r.State != StateStopped {
		t.Errorf("after the lag: %v %v, want STOPPED", r.State, err)
	}
	if _, err := c.ReadInstanceRecord("ins-nosuch01"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown id: %v, want ErrNotFound", err)
	}
}
