package oci

import (
	"cmp"
	"net/http"
)

// BalancerLimits are the configuration limits of one load balancer. Zero
// fields take the kind's default.
type BalancerLimits struct {
	Listeners      int // listeners per load balancer
	BackendSets    int // backend sets per load balancer
	BackendsPerSet int // backends in one backend set
	// Backends is the backends of all backend sets together: a node in two
	// backend sets counts twice ("to be distributed among your backend
	// sets", as the Always Free page says of the NLB's 1024).
	Backends int
}

// DefaultLBLimits are Load Balancing's. The service's overview
// (https://docs.oracle.com/en-us/iaas/Content/Balance/Concepts/balanceoverview.htm,
// "Each load balancer has the following configuration limits"): "16 backend
// sets", "512 backend servers per backend set", "512 backend servers total",
// "16 listeners". The Always Free page
// (https://docs.oracle.com/en-us/iaas/Content/FreeTier/freetier_topic-Always_Free_Resources.htm)
// gives a flexible load balancer "Backend Servers: 1024". cloudsim takes the
// larger total, so that it never refuses what a tenancy may be granted; the
// provider stays within the smaller one (internal/oci/lbops).
var DefaultLBLimits = BalancerLimits{Listeners: 16, BackendSets: 16, BackendsPerSet: 512, Backends: 1024}

// DefaultNLBLimits are Network Load Balancing's ("Limits on Network Load
// Balancers", https://docs.oracle.com/en-us/iaas/Content/NetworkLoadBalancer/introduction.htm):
// "50 backend sets", "512 backend servers per backend set", "1024 backend
// servers total", "50 listeners".
var DefaultNLBLimits = BalancerLimits{Listeners: 50, BackendSets: 50, BackendsPerSet: 512, Backends: 1024}

// or fills the zero fields of l from def.
func (l BalancerLimits) or(def BalancerLimits) BalancerLimits {
	return BalancerLimits{
		Listeners:      cmp.Or(max(l.Listeners, 0), def.Listeners),
		BackendSets:    cmp.Or(max(l.BackendSets, 0), def.BackendSets),
		BackendsPerSet: cmp.Or(max(l.BackendsPerSet, 0), def.BackendsPerSet),
		Backends:       cmp.Or(max(l.Backends, 0), def.Backends),
	}
}

// checkLimits refuses a configuration over the kind's limits with 400
// LimitExceeded ("Fulfilling this request exceeds the Oracle-defined limit
// for this tenancy for this resource type",
// https://docs.oracle.com/iaas/Content/API/References/apierrors.htm).
func (d *Dialect) checkLimits(b *balancer) error {
	lim, listeners, sets := d.lbLimits, len(b.listeners), len(b.backendSets)
	perSet := map[string]int{}
	for name, bs := range b.backendSets {
		perSet[name] = len(bs.Backends)
	}
	if b.kind == kindNLB {
		lim, listeners, sets = d.nlbLimits, len(b.nlbListeners), len(b.nlbBackendSets)
		for name, bs := range b.nlbBackendSets {
			perSet[name] = len(bs.Backends)
		}
	}
	kind := kindName(b.kind)
	exceeded := func(format string, args ...any) error {
		return Errorf(http.StatusBadRequest, CodeLimitExceeded, format, args...)
	}
	switch {
	case listeners > lim.Listeners:
		return exceeded("A %s takes at most %d listeners; this request makes %d.", kind, lim.Listeners, listeners)
	case sets > lim.BackendSets:
		return exceeded("A %s takes at most %d backend sets; this request makes %d.", kind, lim.BackendSets, sets)
	}
	total := 0
	for name, n := range perSet {
		if n > lim.BackendsPerSet {
			return exceeded("The backend set %s would have %d backends; a %s's backend set takes at most %d.", name, n, kind, lim.BackendsPerSet)
		}
		total += n
	}
	if total > lim.Backends {
		return exceeded("The %s would have %d backends across its backend sets; it takes at most %d in all.", kind, total, lim.Backends)
	}
	return nil
}

// checkLimitsAfter checks b as edit would leave it, without changing b.
func (d *Dialect) checkLimitsAfter(b *balancer, edit func(*balancer)) error {
	next := b.clone()
	edit(next)
	return d.checkLimits(next)
}
