package drain

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// RetryAfter is how long Rerun waits to run a reconcile again that failed;
// it doubles with each failure in a row, up to MaxRetryAfter, so that a
// Service that stays broken (a bad annotation) is not retried every few
// seconds.
const (
	RetryAfter    = 10 * time.Second
	MaxRetryAfter = 5 * time.Minute
)

// Rerun runs a Service's last reconcile again at the time its next drain
// ends. The upstream service controller calls the provider only when a
// Service or the node set changes, so without this a drained target would
// stay (at weight 0, or drain: true) until the next change.
//
// The provider remembers, on every EnsureLoadBalancer and
// UpdateLoadBalancer, how to run that call again (Remember), and the ops
// layer asks for a run when a drain will end (At). The reconcile run takes
// the Service's lock like any other call, so it never overlaps one.
type Rerun struct {
	ctx        context.Context
	retryAfter time.Duration
	mu         sync.Mutex
	svcs       map[types.UID]*pending
	// runs counts the reconciles run, for tests.
	runs int
}

type pending struct {
	run      func(context.Context) error
	timer    *time.Timer
	at       time.Time
	failures int // failed runs in a row
}

// NewRerun returns a Rerun whose runs stop when ctx ends. A nil *Rerun
// does nothing (a provider without draining, in tests).
func NewRerun(ctx context.Context) *Rerun {
	return &Rerun{ctx: ctx, retryAfter: RetryAfter, svcs: map[types.UID]*pending{}}
}

// Remember keeps run as the Service's reconcile; a pending run will call
// the latest one remembered.
func (r *Rerun) Remember(uid types.UID, run func(context.Context) error) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.svcs[uid]
	if p == nil {
		p = &pending{}
		r.svcs[uid] = p
	}
	p.run = run
}

// At asks for the Service's reconcile to run at t. An earlier pending run
// stays; a later one moves to t.
func (r *Rerun) At(uid types.UID, t time.Time) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.svcs[uid]
	if p == nil || p.run == nil || r.ctx.Err() != nil {
		return
	}
	if p.timer != nil && !p.at.After(t) {
		return
	}
	if p.timer != nil {
		p.timer.Stop()
	}
	p.at = t
	p.timer = time.AfterFunc(time.Until(t), func() { r.fire(uid, p) })
}

// fire runs the Service's reconcile, unless it was forgotten or
// rescheduled meanwhile.
func (r *Rerun) fire(uid types.UID, p *pending) {
	r.mu.Lock()
	if r.svcs[uid] != p || p.timer == nil || time.Now().Before(p.at) {
		r.mu.Unlock()
		return
	}
	p.timer = nil
	run := p.run
	r.runs++
	r.mu.Unlock()
	if r.ctx.Err() != nil {
		return
	}
	err := run(r.ctx)
	r.mu.Lock()
	if err == nil {
		p.failures = 0
		r.mu.Unlock()
		return
	}
	delay := min(r.retryAfter<<min(p.failures, 16), MaxRetryAfter)
	p.failures++
	r.mu.Unlock()
	klog.ErrorS(err, "Finishing a load balancer drain failed; trying again", "serviceUID", uid, "after", delay)
	r.At(uid, time.Now().Add(delay))
}

// Forget drops the Service: it is deleted, and its load balancer with it.
func (r *Rerun) Forget(uid types.UID) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.svcs[uid]; p != nil && p.timer != nil {
		p.timer.Stop()
	}
	delete(r.svcs, uid)
}

// Runs is the number of reconciles run so far.
func (r *Rerun) Runs() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs
}
