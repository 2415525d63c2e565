package svclock

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
