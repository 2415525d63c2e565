package lbops

import "fmt"

// Limits are the documented configuration limits of one load balancer.
type Limits struct {
	Listeners      int // listeners (we make one backend set per listener)
	BackendsPerSet int // backends in one backend set
	Backends       int // backends of all backend sets together
}

// LimitsOf returns a kind's limits. Load Balancing's overview
// (https://docs.oracle.com/en-us/iaas/Content/Balance/Concepts/balanceoverview.htm):
// "16 backend sets", "512 backend servers per backend set", "512 backend
// servers total", "16 listeners" (the Always Free page grants a flexible
// load balancer 1024 backend servers; we keep to the stricter 512). Network
// Load Balancing (https://docs.oracle.com/en-us/iaas/Content/NetworkLoadBalancer/introduction.htm):
// "50 backend sets", "512 backend servers per backend set", "1024 backend
// servers total", "50 listeners".
func LimitsOf(k Kind) Limits {
	if k == KindNLB {
		return Limits{Listeners: 50, BackendsPerSet: 512, Backends: 1024}
	}
	return Limits{Listeners: 16, BackendsPerSet: 512, Backends: 512}
}

// BackendsPerListener is how many nodes each of a load balancer's sets
// can hold when it has this many listeners (one backend set each, every
// set holding the same nodes): the per-set limit, or the total shared out.
func (l Limits) BackendsPerListener(listeners int) int {
	return min(l.BackendsPerSet, l.Backends/max(listeners, 1))
}

// CheckListeners refuses more ports than the kind takes listeners.
func (l Limits) CheckListeners(k Kind, listeners int) error {
	if listeners > l.Listeners {
		name := "an OCI Load Balancer"
		if k == KindNLB {
			name = "an OCI Network Load Balancer"
		}
		return fmt.Errorf("the Service has %d ports, and %s takes at most %d listeners (one per port)", listeners, name, l.Listeners)
	}
	return nil
}

// Describe names the limit for an Event.
func (l Limits) Describe(k Kind, listeners int) string {
	name := "OCI Load Balancer"
	if k == KindNLB {
		name = "OCI Network Load Balancer"
	}
	return fmt.Sprintf("%s, %d backends per backend set and %d in all, over %d backend set(s)", name, l.BackendsPerSet, l.Backends, max(listeners, 1))
}
