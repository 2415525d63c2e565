// Package svclock serializes the cloud operations on one Service's load
// balancer.
//
// The upstream service controller calls EnsureLoadBalancer from its service
// workers and UpdateLoadBalancer from its node sync, and nothing stops the
// two from running at once for the same Service. When they do, the node
// sync's UpdateLoadBalancer may find no load balancer yet (Ensure is still
// creating it), and upstream takes "no load balancer" as success and
// records the new node set as synced: the load balancer Ensure then
// finishes keeps the nodes Ensure started with, possibly none, until the
// next node change. Two writers also race on the same listeners (Tencent
// answers InvalidParameter.PortCheckFailed). Holding one lock per Service
// makes the later call wait and then see what the earlier one built.
package svclock

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Locks holds one mutex per Service UID, created on first use and dropped
// when nobody holds or waits for it. The zero value is ready to use.
type Locks struct {
	mu    sync.Mutex
	locks map[types.UID]*entry
}

type entry struct {
	mu    sync.Mutex
	users int // holders and waiters
}

// Lock blocks until the Service's lock is free and returns its unlock.
func (l *Locks) Lock(uid types.UID) (unlock func()) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[types.UID]*entry{}
	}
	e := l.locks[uid]
	if e == nil {
		e = &entry{}
		l.locks[uid] = e
	}
	e.users++
	l.mu.Unlock()

	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		l.mu.Lock()
		if e.users--; e.users == 0 {
			delete(l.locks, uid)
		}
		l.mu.Unlock()
	}
}

// Len is the number of Services whose lock is held or awaited.
func (l *Locks) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.locks)
}
