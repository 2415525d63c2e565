package tencentcloud

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// The service controller's node sync may call UpdateLoadBalancer while a
// service worker's EnsureLoadBalancer is still creating the CLB (seen in the
// fault campaign): Ensure began before the nodes had providerIDs, and the
// Update carries the initialized nodes. Update must wait for Ensure and then
// bind the nodes: had it found no CLB, upstream would take that as success
// and never update the CLB again until the next node change.
func TestUpdateDuringEnsureBindsTheNewNodes(t *testing.T) {
	e := newSubsetEnv(t, 6)
	svc := subsetService("race", "uid-race")
	joining := make([]*v1.Node, len(e.nodes)) // as Ensure saw them: no providerID yet
	for i, n := range e.nodes {
		joining[i] = n.DeepCopy()
		joining[i].Spec.ProviderID = ""
	}
	// Hold Ensure between creating the CLB and creating its listeners.
	e.sim.SetFault(cloudsim.Fault{Action: "CreateListener", Latency: 500 * time.Millisecond})
	ctx := context.Background()
	ensured := make(chan error, 1)
	go func() {
		_, err := e.lb.EnsureLoadBalancer(ctx, "kubernetes", svc, joining)
		ensured <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !e.hasCLB(svc) {
		if time.Now().After(deadline) {
			t.Fatal("Ensure created no CLB")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := e.lb.UpdateLoadBalancer(ctx, "kubernetes", svc, e.nodes); err != nil {
		t.Fatalf("UpdateLoadBalancer during Ensure: %v", err)
	}
	if err := <-ensured; err != nil {
		t.Fatalf("EnsureLoadBalancer: %v", err)
	}
	for listener, ids := range e.targets(t, svc.UID) {
		if len(ids) != len(e.nodes) {
			t.Errorf("listener %s binds %d targets, want %d: %v", listener, len(ids), len(e.nodes), ids)
		}
	}
}

func (e *subsetEnv) hasCLB(svc *v1.Service) bool {
	for _, lb := range e.sim.Tencent().CLB().LoadBalancers() {
		if lb.Tags["ccmkit.io/service-uid"] == string(svc.UID) {
			return true
		}
	}
	return false
}
