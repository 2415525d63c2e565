package clbops

import (
	"context"
	"slices"
	"strings"
	"testing"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"

	"github.com/ccmkit/ccm/internal/lbspec"
)

func withPassToTarget(v bool) specOpt { return func(s *lbspec.Spec) { s.PassToTarget = v } }

func passToTarget(f *fakeCLB, id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return deref(f.lbs[id].sdk.LoadBalancerPassToTarget)
}

func TestPassToTarget(t *testing.T) {
	f := newFakeCLB()
	o := newTestOps(f)
	mustEnsure(t, o, testSpec(withPassToTarget(true)))
	create := f.requests[slices.Index(f.calls, "CreateLoadBalancer")].(*clb.CreateLoadBalancerRequest)
	if create.LoadBalancerPassToTarget == nil || !*create.LoadBalancerPassToTarget {
		t.Fatalf("CreateLoadBalancer LoadBalancerPassToTarget = %v, want true", create.LoadBalancerPassToTarget)
	}
	id := f.lbIDs()[0]
	if n := f.count("ModifyLoadBalancerAttributes"); n != 0 {
		t.Errorf("a CLB created with the right setting was modified %d times", n)
	}

	// Turned off by the annotation: one write, then an unchanged resync
	// writes nothing; drift shows it in between.
	off := testSpec(withPassToTarget(false))
	diffs, err := o.Drift(context.Background(), off)
	if err != nil || len(diffs) != 1 || !strings.Contains(diffs[0], "LoadBalancerPassToTarget is true, want false") {
		t.Fatalf("drift = %v, %v", diffs, err)
	}
	f.resetCalls()
	mustEnsure(t, o, off)
	if w := f.writes(); !slices.Equal(w, []string{"ModifyLoadBalancerAttributes"}) || passToTarget(f, id) {
		t.Fatalf("writes %v, pass-to-target %v; want one ModifyLoadBalancerAttributes to false", w, passToTarget(f, id))
	}
	f.resetCalls()
	mustEnsure(t, o, off)
	if w := f.writes(); len(w) != 0 {
		t.Errorf("unchanged resync wrote %v", w)
	}

	// A failed task is an error, and the next sync tries again.
	f.failTask["ModifyLoadBalancerAttributes"] = "internal error"
	if _, err := o.Ensure(context.Background(), testSpec(withPassToTarget(true))); err == nil {
		t.Fatal("a failed ModifyLoadBalancerAttributes task must fail Ensure")
	}
	mustEnsure(t, o, testSpec(withPassToTarget(true)))
	if !passToTarget(f, id) {
		t.Fatal("pass-to-target not corrected on the next sync")
	}
}

func TestPassToTargetLeavesAdoptedCLB(t *testing.T) {
	f := newFakeCLB()
	o := newTestOps(f)
	f.addLB("lb-existing", testVPC, nil)
	spec := testSpec(withAdopt("lb-existing"), onlyTCP80, withPassToTarget(true))
	mustEnsure(t, o, spec)
	if n := f.count("ModifyLoadBalancerAttributes"); n != 0 || passToTarget(f, "lb-existing") {
		t.Fatalf("an adopted CLB's attributes were changed (%d calls)", n)
	}
	if diffs, err := o.Drift(context.Background(), spec); err != nil || len(diffs) != 0 {
		t.Fatalf("drift on an adopted CLB = %v, %v", diffs, err)
	}
}
