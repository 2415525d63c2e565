// Package drain times the graceful removal of load balancer targets. A
// target that is no longer wanted (its node deleted, excluded, or outside
// the subset) first stops taking new connections, Tencent CLB weight 0 or
// OCI drain: true, and is removed only once it has drained for the drain
// period, so that the requests and connections under way can finish.
//
// Tracker remembers when each target started draining; Rerun runs a
// Service's reconcile again when its next drain ends, since nothing else
// would call the provider then.
package drain

import (
	"strings"
	"sync"
	"time"
)

// Tracker remembers when each target started draining, by a key the ops
// layer chooses (load balancer, listener or backend set, target). It is
// kept in memory only: after a restart, a target found draining starts its
// period again, which errs on the side of a longer drain, never a shorter
// one. The zero value is not ready; use NewTracker.
type Tracker struct {
	mu    sync.Mutex
	since map[string]time.Time
	now   func() time.Time
}

// NewTracker returns a Tracker reading the time from now (time.Now if nil).
func NewTracker(now func() time.Time) *Tracker {
	if now == nil {
		now = time.Now
	}
	return &Tracker{since: map[string]time.Time{}, now: now}
}

// Due reports whether the unwanted target key has drained for period, and
// when it is (or was) due. The first call for a key starts its drain. A
// period of 0 means no draining: always due.
func (t *Tracker) Due(key string, period time.Duration) (due bool, at time.Time) {
	now := t.now()
	if period <= 0 {
		return true, now
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	start, ok := t.since[key]
	if !ok {
		start = now
		t.since[key] = start
	}
	at = start.Add(period)
	return !now.Before(at), at
}

// Forget drops keys: their targets are wanted again, or gone.
func (t *Tracker) Forget(keys ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range keys {
		delete(t.since, k)
	}
}

// ForgetPrefix drops every key that starts with prefix (e.g. a deleted load
// balancer's id and a separator).
func (t *Tracker) ForgetPrefix(prefix string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range t.since {
		if strings.HasPrefix(k, prefix) {
			delete(t.since, k)
		}
	}
}

// Len is the number of targets draining.
func (t *Tracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.since)
}
