package drain

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRerunRunsTheLatestReconcileOnce(t *testing.T) {
	r := NewRerun(context.Background())
	var first, second atomic.Int32
	r.Remember("a", func(context.Context) error { first.Add(1); return nil })
	r.Remember("a", func(context.Context) error { second.Add(1); return nil })
	now := time.Now()
	r.At("a", now.Add(200*time.Millisecond))
	r.At("a", now.Add(50*time.Millisecond)) // earlier: moves the run
	r.At("a", now.Add(time.Hour))           // later: the earlier stays
	waitFor(t, "the run", func() bool { return second.Load() == 1 })
	time.Sleep(300 * time.Millisecond)
	if first.Load() != 0 || second.Load() != 1 || r.Runs() != 1 {
		t.Errorf("runs: first %d, second %d, total %d; want only the latest reconcile, once", first.Load(), second.Load(), r.Runs())
	}
}

func TestRerunRetriesAFailedRun(t *testing.T) {
	r := NewRerun(context.Background())
	r.retryAfter = 20 * time.Millisecond
	var calls atomic.Int32
	r.Remember("a", func(context.Context) error {
		if calls.Add(1) < 3 {
			return errors.New("throttled")
		}
		return nil
	})
	r.At("a", time.Now())
	waitFor(t, "three runs", func() bool { return calls.Load() == 3 })
	time.Sleep(100 * time.Millisecond)
	if calls.Load() != 3 {
		t.Errorf("runs: %d, want 3 (two failures, then success and no more)", calls.Load())
	}
}

func TestRerunForgetAndStop(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := NewRerun(ctx)
	var runs atomic.Int32
	for _, uid := range []types.UID{"deleted", "stopped"} {
		r.Remember(uid, func(context.Context) error { runs.Add(1); return nil })
	}
	r.At("deleted", time.Now().Add(30*time.Millisecond))
	r.Forget("deleted")
	r.At("deleted", time.Now()) // forgotten: nothing to run
	r.At("never-remembered", time.Now())
	r.At("stopped", time.Now().Add(30*time.Millisecond))
	cancel()
	time.Sleep(150 * time.Millisecond)
	if runs.Load() != 0 {
		t.Errorf("runs: %d, want 0 (forgotten, never remembered, or stopped)", runs.Load())
	}
}
