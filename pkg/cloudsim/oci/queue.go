package oci

import (
	"errors"
	"sync"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// Load Balancing queues the work requests of one load balancer and runs
// them one after the other, where Network Load Balancing refuses a change
// while one is in flight (409 Conflict, see busyError). That the Load
// Balancing service accepts a second change at once and runs it after the
// first is what issue 11 item 11 reports of the real service; no SDK
// comment says so, and the details are cloudsim's choice. A queued work
// request is ACCEPTED until its turn. Its request was validated when it was
// made; what depends on the load balancer's state (does the backend set
// exist, the limits, if-match) is checked when it starts, and a failure
// then FAILS the work request (errorDetails BAD_INPUT) instead of answering
// an error.

// queued is a change waiting for its turn: start runs it on the
// reservation that made it the load balancer's only work request.
type queued struct {
	wr     *workRequest
	action string
	start  func(res *core.Reservation)
}

type lbQueues struct {
	mu   sync.Mutex
	byLB map[string][]*queued
}

// reserveOrQueue reserves load balancer id for a change now, or, when a
// work request is in flight or queued on it, queues the change: then it
// returns nil and q runs later. Only Load Balancing queues.
func (d *Dialect) reserveOrQueue(action, id string, q *queued) (*core.Reservation, error) {
	d.queue.mu.Lock()
	defer d.queue.mu.Unlock()
	if len(d.queue.byLB[id]) == 0 {
		res, err := d.tasks.Reserve(action, busyKey(id))
		if err == nil || !errors.Is(err, core.ErrBusy) {
			return res, err
		}
	}
	q.wr.queued.Store(true)
	d.queue.byLB[id] = append(d.queue.byLB[id], q)
	return nil, nil
}

// kickQueue starts the next queued change of load balancer id once the
// work request ending now has released it. It returns at once: the task
// that calls it still holds the reservation until it has ended.
func (d *Dialect) kickQueue(id string) {
	d.queue.mu.Lock()
	empty := len(d.queue.byLB[id]) == 0
	d.queue.mu.Unlock()
	if empty {
		return
	}
	go func() {
		for attempt := 0; ; attempt++ {
			d.queue.mu.Lock()
			qs := d.queue.byLB[id]
			if len(qs) == 0 {
				d.queue.mu.Unlock()
				return
			}
			res, err := d.tasks.Reserve(qs[0].action, busyKey(id))
			if err == nil {
				next := qs[0]
				if len(qs) == 1 {
					delete(d.queue.byLB, id)
				} else {
					d.queue.byLB[id] = qs[1:]
				}
				d.queue.mu.Unlock()
				next.start(res)
				return
			}
			d.queue.mu.Unlock()
			if attempt > 5000 { // 5 s: the ending task never released it (cloudsim is closing)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
}
