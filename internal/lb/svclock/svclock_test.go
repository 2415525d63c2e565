package svclock

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestOneHolderPerService(t *testing.T) {
	var l Locks
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			unlock := l.Lock("a")
			n := inside.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(time.Millisecond)
			inside.Add(-1)
			unlock()
		})
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Fatalf("%d holders at once, want 1", most.Load())
	}
	if l.Len() != 0 {
		t.Fatalf("%d locks kept after every holder left", l.Len())
	}
}

func TestServicesDoNotBlockEachOther(t *testing.T) {
	var l Locks
	unlockA := l.Lock(types.UID("a"))
	done := make(chan struct{})
	go func() {
		l.Lock(types.UID("b"))()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Service b waited for Service a's lock")
	}
	unlockA()
}

// A call that waited works with the nodes of the latest call to arrive,
// whichever of the waiters the lock wakes first.
func TestLockNodesGivesTheLatestNodes(t *testing.T) {
	var l Locks
	const uid = types.UID("svc")
	node := func(name string) []*corev1.Node {
		n := &corev1.Node{}
		n.Name = name
		return []*corev1.Node{n}
	}
	users := func() int {
		l.mu.Lock()
		defer l.mu.Unlock()
		if e := l.locks[uid]; e != nil {
			return e.users
		}
		return 0
	}
	unlock, got := l.LockNodes(uid, node("first"))
	if got[0].Name != "first" {
		t.Fatalf("alone: nodes %s", got[0].Name)
	}
	results := make(chan string, 2)
	for i, name := range []string{"older", "newer"} {
		go func() {
			u, nodes := l.LockNodes(uid, node(name))
			// Unlock before reporting: the test counts the locks left
			// once both results are in.
			u()
			results <- nodes[0].Name
		}()
		for deadline := time.Now().Add(5 * time.Second); users() != i+2; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("call %s never waited", name)
			}
		}
	}
	unlock()
	for range 2 {
		if got := <-results; got != "newer" {
			t.Errorf("a waiter worked with the nodes of %q, want the latest call's (newer)", got)
		}
	}
	if l.Len() != 0 {
		t.Errorf("%d locks left", l.Len())
	}
}
