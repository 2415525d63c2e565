package oci

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/lb/lbdrift"
	"github.com/ccmkit/ccm/internal/oci/lbops"
)

// overlapOps is an lbkit.Ops that takes its time and counts how many calls
// run at once. With await set, a call waits (up to a second) for that many
// to be inside, so a test of overlap does not depend on scheduling luck.
type overlapOps struct {
	inside, most atomic.Int32
	await        int32
}

func (o *overlapOps) enter() func() {
	n := o.inside.Add(1)
	for m := o.most.Load(); n > m && !o.most.CompareAndSwap(m, n); m = o.most.Load() {
	}
	time.Sleep(50 * time.Millisecond)
	for deadline := time.Now().Add(time.Second); o.await > 0 && o.most.Load() < o.await && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	return func() { o.inside.Add(-1) }
}

func (o *overlapOps) Get(context.Context, *lbops.Desired) (*corev1.LoadBalancerStatus, bool, error) {
	return nil, false, nil
}
func (o *overlapOps) Ensure(context.Context, *lbops.Desired) (*corev1.LoadBalancerStatus, error) {
	defer o.enter()()
	return &corev1.LoadBalancerStatus{}, nil
}
func (o *overlapOps) Update(context.Context, *lbops.Desired) error { defer o.enter()(); return nil }
func (o *overlapOps) Delete(context.Context, *lbops.Desired) error { defer o.enter()(); return nil }
func (o *overlapOps) DriftAll(context.Context, []*lbops.Desired) map[types.UID]lbdrift.Result {
	return nil
}

// One Service's Ensure (service worker), Update (node sync) and Delete never
// run at once (internal/lb/svclock says why); another Service's do.
func TestOneServiceAtATime(t *testing.T) {
	ops := &overlapOps{}
	l := withOps(lbCfg, ops)
	svc := lbService(nil)
	nodes := []*corev1.Node{lbNode("a", "10.0.0.1", true)}
	ctx := context.Background()
	done := make(chan error, 3)
	go func() { _, err := l.EnsureLoadBalancer(ctx, "k", svc, nodes); done <- err }()
	go func() { done <- l.UpdateLoadBalancer(ctx, "k", svc, nodes) }()
	go func() { done <- l.EnsureLoadBalancerDeleted(ctx, "k", svc) }()
	for range 3 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if ops.most.Load() != 1 {
		t.Fatalf("%d operations on one Service at once, want 1", ops.most.Load())
	}

	ops.await = 2
	other := lbService(nil)
	other.UID = "other-uid"
	go func() { _, err := l.EnsureLoadBalancer(ctx, "k", svc, nodes); done <- err }()
	go func() { _, err := l.EnsureLoadBalancer(ctx, "k", other, nodes); done <- err }()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if ops.most.Load() != 2 {
		t.Fatalf("two Services: at most %d operations at once, want 2", ops.most.Load())
	}
}
