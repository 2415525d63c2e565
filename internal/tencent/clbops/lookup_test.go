package clbops

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// lookupOps is newTestOps with the CLB lookups shared (lookup.go).
func lookupOps(env *clbEnv, ttl time.Duration) *Ops {
	o := newTestOps(env)
	if ttl > 0 {
		o.lookup = newLookup(o, ttl)
	}
	return o
}

// serviceSpecs are n one-port Services, each with its own UID and name.
func serviceSpecs(n int) []*Desired {
	out := make([]*Desired, n)
	for i := range out {
		s := testSpec(onlyTCP80, withBackends("ins-00000001"))
		s.UID = types.UID(fmt.Sprintf("uid-%03d", i))
		s.Service.Name = fmt.Sprintf("web-%03d", i)
		s.Name = "kubernetes-default-" + s.Service.Name
		out[i] = s
	}
	return out
}

// ensureAll ensures every spec with a few workers, as the service
// controller does.
func ensureAll(t *testing.T, o *Ops, specs []*Desired) {
	t.Helper()
	const workers = 5
	work := make(chan *Desired)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for s := range work {
				if _, err := o.Ensure(context.Background(), s); err != nil {
					t.Errorf("Ensure %s: %v", s.Service, err)
				}
			}
		})
	}
	for _, s := range specs {
		work <- s
	}
	close(work)
	wg.Wait()
}

// listings counts the recorded DescribeLoadBalancers pages that list by
// tag key (listTagged's), and all DescribeLoadBalancers calls.
func (e *clbEnv) listings() (listed, all int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.calls {
		if c.action == "DescribeLoadBalancers" {
			all++
			if strings.Contains(string(c.body), `"tag-key"`) {
				listed++
			}
		}
	}
	return listed, all
}

// A restarted CCM's resync finds S CLBs with one filtered call and one
// listing, not one call each; creations, whose lookups find nothing, buy no
// listing.
func TestLookupsShareAListing(t *testing.T) {
	const n = 40
	tests := []struct {
		name string
		ttl  time.Duration
		// DescribeLoadBalancers calls at most, on the creation and on the
		// resync, and listings on the creation
		maxCreate, maxResync, createListings int
	}{
		{name: "a call each", ttl: 0, maxCreate: 2 * n, maxResync: n},
		// Creation: the lookups gather (5 workers), and each new CLB is
		// read until it is normal; no listing.
		{name: "shared", ttl: time.Hour, maxCreate: 2 * n, maxResync: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newCLBEnv(t)
			specs := serviceSpecs(n)
			ensureAll(t, lookupOps(env, tt.ttl), specs)
			listed, all := env.listings()
			if listed != tt.createListings || all > tt.maxCreate {
				t.Errorf("creation: %d DescribeLoadBalancers, %d of them listings; want at most %d, and %d listings",
					all, listed, tt.maxCreate, tt.createListings)
			}
			if got := len(env.lbIDs()); got != n {
				t.Fatalf("%d CLBs, want %d", got, n)
			}

			env.resetCalls()
			ensureAll(t, lookupOps(env, tt.ttl), specs) // a restarted CCM
			if w := env.writes(); len(w) != 0 {
				t.Errorf("the resync wrote %v", w)
			}
			if _, all := env.listings(); all > tt.maxResync || (tt.ttl == 0 && all != n) {
				t.Errorf("the resync made %d DescribeLoadBalancers, want at most %d", all, tt.maxResync)
			}
		})
	}
}

// A listing that began before a Service's reconcile ended never answers
// its next lookup: the reconcile's own writes would look undone, and be
// written again.
func TestLookupSeesOwnWrites(t *testing.T) {
	env := newCLBEnv(t)
	specs := serviceSpecs(10)
	ensureAll(t, newTestOps(env), specs)
	o := lookupOps(env, time.Hour)
	ensureAll(t, o, specs) // buys the listing, which says LoadBalancerPassToTarget false
	if listed, _ := env.listings(); listed == 0 {
		t.Fatal("the resync bought no listing")
	}

	specs[0].PassToTarget = true
	env.resetCalls()
	mustEnsure(t, o, specs[0])
	if n := env.count("ModifyLoadBalancerAttributes"); n != 1 {
		t.Fatalf("ModifyLoadBalancerAttributes calls = %d, want 1", n)
	}
	env.resetCalls()
	mustEnsure(t, o, specs[0])
	if w := env.writes(); len(w) != 0 {
		t.Errorf("the next sync wrote %v: it read the listing from before its own write", w)
	}
}
