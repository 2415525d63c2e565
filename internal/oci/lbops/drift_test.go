package lbops

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
)

// DriftAll lists once for the pass, and each Service's check is answered
// from that listing: drift is still found, a missing load balancer still
// reported, and a listing that fails fails every check with its error.
func TestDriftAll(t *testing.T) {
	const services = 30
	env := newLBEnv(t)
	o := newSharedOps(env)
	ds := ensureAll(t, o, KindLB, 0, services)
	// Out of band: one listener deleted, one load balancer gone.
	ctx := context.Background()
	byName := map[string]string{}
	for _, lb := range env.balancers(KindLB) {
		byName[lb.DisplayName] = lb.ID
	}
	if _, err := env.api.LB.DeleteListener(ctx, loadbalancer.DeleteListenerRequest{LoadBalancerId: common.String(byName["uid-3"]), ListenerName: common.String("TCP-80")}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.api.LB.DeleteLoadBalancer(ctx, loadbalancer.DeleteLoadBalancerRequest{LoadBalancerId: common.String(byName["uid-4"])}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for settled := false; !settled; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the out-of-band deletions did not end")
		}
		settled = true
		for _, lb := range env.balancers(KindLB) {
			if lb.DisplayName == "uid-4" || (lb.DisplayName == "uid-3" && (len(lb.Listeners) > 0 || lb.Busy != "")) {
				settled = false
			}
		}
	}
	env.resetWrites()
	before, beforeFiltered := env.listsOf("ListLoadBalancers"), env.listsOf("ListLoadBalancers displayName")

	res := o.DriftAll(ctx, ds)
	for i, d := range ds {
		r := res[d.Ref.UID]
		var want string
		switch i {
		case 3:
			want = "listener TCP-80 missing"
		case 4:
			want = "load balancer missing"
		}
		if r.Err != nil || (want == "") != (len(r.Diffs) == 0) || (want != "" && !slices.Contains(r.Diffs, want)) {
			t.Errorf("Service %d: %+v, want %q", i, r, want)
		}
	}
	if n, filtered := env.listsOf("ListLoadBalancers")-before, env.listsOf("ListLoadBalancers displayName")-beforeFiltered; n != 1 || filtered != 0 {
		t.Errorf("the pass made %d unfiltered and %d filtered ListLoadBalancers for %d Services, want 1 and 0", n, filtered, services)
	}
	if w := env.writesOf(); len(w) != 0 {
		t.Errorf("the pass wrote %v", w)
	}

	env.fail("ListLoadBalancers", http.StatusUnauthorized, "NotAuthenticated", 0)
	before = env.listsOf("ListLoadBalancers")
	for uid, r := range o.DriftAll(ctx, ds) {
		if r.Err == nil || !strings.Contains(r.Err.Error(), "ListLoadBalancers") {
			t.Errorf("%s: %+v, want the listing's error", uid, r)
		}
	}
	if n := env.listsOf("ListLoadBalancers") - before; n != 1 {
		t.Errorf("a failing pass made %d ListLoadBalancers, want 1", n)
	}
}
