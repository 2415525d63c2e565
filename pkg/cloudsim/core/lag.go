package core

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Lagging reads: eventual consistency between a cloud's writes and its
// List/Describe answers, off by default.
//
// What the clouds document: OCI's API errors page says a 404
// NotAuthorizedOrNotFound may be retried "with backoff"
// (https://docs.oracle.com/en-us/iaas/Content/API/References/apierrors.htm),
// and oci-go-sdk handles eventual consistency explicitly
// (common/eventual_consistency.go: 404 NotAuthorizedOrNotFound and 409
// NotAuthorizedOrResourceAlreadyExists are "affected by eventual
// consistency", within a window the Identity client opens after its writes).
// Tencent documents asynchronous creation (cvm RunInstances: "本接口为异步接口";
// clb CreateLoadBalancerResponseParams.LoadBalancerIds: "存在某些场景，如创建出现
// 延迟时，此字段可能返回为空") but no delay of its Describe answers. Neither
// documents a bound for Compute, Load Balancing or routes. So the lag below
// is cloudsim's option (ReadLag, --read-lag, PUT /admin/readlag), and its
// model is cloudsim's choice:
//
//   - every write of a lagged resource (instances, CLBs with their listeners
//     and targets, OCI load balancers and NLBs, routes) becomes visible to
//     reads at a random moment within the lag after it, in order;
//   - until then reads answer the version before it, and a new resource is
//     absent (a read by id answers as for an id that does not exist);
//   - writes, task and work request status, and deletions are not lagged:
//     a write acts on the current state, and a deleted resource is gone at
//     once.

// Lag delays what reads see of new and changed resources. The zero value
// is off; it is safe for concurrent use.
type Lag struct {
	mu    sync.Mutex
	max   time.Duration
	clock func() time.Time
	keys  map[string]*lagged
}

// lagged is one resource with writes reads do not see yet.
type lagged struct {
	shown   any          // the version reads see until pending[0] is due (nil: absent)
	pending []lagVersion // oldest first, due times ascending
}

type lagVersion struct {
	v   any
	due time.Time
}

func newLag(clock func() time.Time) *Lag {
	return &Lag{clock: clock, keys: map[string]*lagged{}}
}

// MaxReadLag bounds SetReadLag: longer lags make no sense for a test.
const MaxReadLag = 10 * time.Minute

// Set sets the maximum lag (0: off). Turning it off, or changing it, makes
// every pending write visible at once.
func (l *Lag) Set(max time.Duration) error {
	if max < 0 || max > MaxReadLag {
		return fmt.Errorf("%w: read lag %v must be between 0 and %v", ErrInvalid, max, MaxReadLag)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.max = max
	l.keys = map[string]*lagged{}
	return nil
}

// Max is the maximum lag (0: off).
func (l *Lag) Max() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.max
}

// Wrote records a write of resource key: before is the version reads
// showed until now (nil for a new resource), after the version written
// (both copies the caller will not change). after becomes visible at a
// random moment within the lag, never before an earlier write of key.
func (l *Lag) Wrote(key string, before, after any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.max <= 0 {
		return
	}
	now := l.clock()
	e := l.keys[key]
	if e == nil {
		e = &lagged{shown: before}
		l.keys[key] = e
	}
	due := now.Add(rand.N(l.max + 1))
	if n := len(e.pending); n > 0 && due.Before(e.pending[n-1].due) {
		due = e.pending[n-1].due
	}
	e.pending = append(e.pending, lagVersion{v: after, due: due})
}

// View returns the version of key a read sees now, and false if the read
// sees no version (a new resource not visible yet). cur is the current
// version, which a resource without pending writes shows.
func (l *Lag) View(key string, cur any) (any, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.keys[key]
	if e == nil {
		return cur, true
	}
	now := l.clock()
	for len(e.pending) > 0 && !e.pending[0].due.After(now) {
		e.shown, e.pending = e.pending[0].v, e.pending[1:]
	}
	if len(e.pending) == 0 {
		delete(l.keys, key)
		return cur, true
	}
	return e.shown, e.shown != nil
}

// Forget drops key's pending writes: the resource was deleted, which reads
// see at once.
func (l *Lag) Forget(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.keys, key)
}

// Pending is how many resources have writes reads do not see yet (for
// tests and the admin API).
func (l *Lag) Pending() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock()
	n := 0
	for _, e := range l.keys {
		if len(e.pending) > 0 && e.pending[len(e.pending)-1].due.After(now) {
			n++
		}
	}
	return n
}

// Viewed is View for a typed version: the version a read sees, or false.
func Viewed[T any](l *Lag, key string, cur T) (T, bool) {
	v, ok := l.View(key, cur)
	if !ok {
		var zero T
		return zero, false
	}
	return v.(T), true
}
