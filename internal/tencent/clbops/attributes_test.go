package clbops

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func withPassToTarget(v bool) specOpt { return func(s *Desired) { s.PassToTarget = v } }

func passToTarget(env *clbEnv, id string) bool { return env.lb(id).PassToTarget }

func TestPassToTarget(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	mustEnsure(t, o, testSpec(withPassToTarget(true)))
	create := env.creates()[0]
	if create.LoadBalancerPassToTarget == nil || !*create.LoadBalancerPassToTarget {
		t.Fatalf("CreateLoadBalancer LoadBalancerPassToTarget = %v, want true", create.LoadBalancerPassToTarget)
	}
	id := env.lbIDs()[0]
	if n := env.count("ModifyLoadBalancerAttributes"); n != 0 {
		t.Errorf("a CLB created with the right setting was modified %d times", n)
	}

	// Turned off by the annotation: one write, then an unchanged resync
	// writes nothing; drift shows it in between.
	off := testSpec(withPassToTarget(false))
	diffs, err := o.Drift(context.Background(), off)
	if err != nil || len(diffs) != 1 || !strings.Contains(diffs[0], "LoadBalancerPassToTarget is true, want false") {
		t.Fatalf("drift = %v, %v", diffs, err)
	}
	env.resetCalls()
	mustEnsure(t, o, off)
	if w := env.writes(); !slices.Equal(w, []string{"ModifyLoadBalancerAttributes"}) || passToTarget(env, id) {
		t.Fatalf("writes %v, pass-to-target %v; want one ModifyLoadBalancerAttributes to false", w, passToTarget(env, id))
	}
	env.resetCalls()
	mustEnsure(t, o, off)
	if w := env.writes(); len(w) != 0 {
		t.Errorf("unchanged resync wrote %v", w)
	}

	// A failed task is an error, and the next sync tries again.
	env.failTask("ModifyLoadBalancerAttributes", "InternalError")
	if _, err := o.Ensure(context.Background(), testSpec(withPassToTarget(true))); err == nil {
		t.Fatal("a failed ModifyLoadBalancerAttributes task must fail Ensure")
	}
	mustEnsure(t, o, testSpec(withPassToTarget(true)))
	if !passToTarget(env, id) {
		t.Fatal("pass-to-target not corrected on the next sync")
	}
}

func TestPassToTargetLeavesAdoptedCLB(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	existing := env.addLB(testVPC, nil)
	spec := testSpec(withAdopt(existing), onlyTCP80, withPassToTarget(true))
	mustEnsure(t, o, spec)
	if n := env.count("ModifyLoadBalancerAttributes"); n != 0 || passToTarget(env, existing) {
		t.Fatalf("an adopted CLB's attributes were changed (%d calls)", n)
	}
	if diffs, err := o.Drift(context.Background(), spec); err != nil || len(diffs) != 0 {
		t.Fatalf("drift on an adopted CLB = %v, %v", diffs, err)
	}
}
