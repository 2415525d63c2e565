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
//
// A lock does not order its waiters, and each call brings the nodes it
// listed when it started: after a leader failover the new leader's first
// Ensure (its full sync, with the nodes of that moment) and its node sync's
// Updates overlap, and an Ensure that got the lock last would put back a
// node an Update had just drained. So a call that brings nodes
// (LockNodes) works with the nodes of the latest call to arrive for the
// Service, its own or a newer one's.
package svclock

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
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
	// nodes are those of the latest LockNodes call to arrive while the
	// entry lives (guarded by Locks.mu).
	nodes []*corev1.Node
}

// Lock blocks until the Service's lock is free and returns its unlock.
func (l *Locks) Lock(uid types.UID) (unlock func()) {
	unlock, _ = l.lock(uid, nil, false)
	return unlock
}

// LockNodes is Lock for a call that brings the Service's nodes: it
// returns, with the unlock, the nodes of the latest LockNodes call for the
// Service to arrive so far (this one's, or those of a call that arrived
// while this one waited, which listed them later).
func (l *Locks) LockNodes(uid types.UID, nodes []*corev1.Node) (unlock func(), latest []*corev1.Node) {
	return l.lock(uid, nodes, true)
}

func (l *Locks) lock(uid types.UID, nodes []*corev1.Node, withNodes bool) (func(), []*corev1.Node) {
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
	if withNodes {
		e.nodes = nodes
	}
	l.mu.Unlock()

	e.mu.Lock()
	l.mu.Lock()
	latest := e.nodes
	l.mu.Unlock()
	return l.unlock(uid, e), latest
}

func (l *Locks) unlock(uid types.UID, e *entry) func() {
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
