package clbops

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// At the region's CLB quota (cloudsim's DefaultCLBQuota, lowered to one
// here) a new Service's Ensure fails with an error that names the quota,
// which the service controller puts into the Service's Warning Event
// (SyncLoadBalancerFailed); no CLB, listener or target is left for it, and
// the Service that fits keeps its CLB.
func TestEnsureAtCLBQuota(t *testing.T) {
	sim, client := startSimWith(t, func(o *cloudsim.Options) {
		o.DisableDataPlane = true
		o.Tencent.CLBQuotaOpen = 1
	})
	if _, err := sim.AddInstances(cloudsim.Instance{ID: "ins-00000001", PrivateIP: "10.0.0.1", VpcID: testVPC},
		cloudsim.Instance{ID: "ins-00000002", PrivateIP: "10.0.0.2", VpcID: testVPC}); err != nil {
		t.Fatal(err)
	}
	ops := simOps(client)
	ctx := context.Background()
	if _, err := ops.Ensure(ctx, testSpec()); err != nil {
		t.Fatalf("the first Service, within the quota: %v", err)
	}
	second := testSpec(func(s *Desired) {
		s.Ref.Service, s.Ref.UID = types.NamespacedName{Namespace: "default", Name: "api"}, "uid-2"
		s.Name = "kubernetes-default-api"
	})
	_, err := ops.Ensure(ctx, second)
	if err == nil {
		t.Fatal("the second Service got a CLB over a quota of one")
	}
	for _, want := range []string{"LimitExceeded", "quota"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	lbs := sim.Tencent().CLB().LoadBalancers()
	if len(lbs) != 1 {
		t.Fatalf("%d CLBs after the refusal, want the first Service's only", len(lbs))
	}
	if _, err := ops.Ensure(ctx, testSpec()); err != nil {
		t.Errorf("the first Service after the refusal: %v", err)
	}
}
