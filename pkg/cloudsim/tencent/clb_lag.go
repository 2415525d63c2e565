package tencent

import "slices"

// Lagging reads (core/lag.go, cloudsim's option, off by default): the
// Describe actions of CLB (DescribeLoadBalancers, DescribeListeners,
// DescribeTargets) see a new load balancer, and what each task changed,
// only within the lag after it; writes, task status and deletions are not
// lagged.

func clbLagKey(id string) string { return "clb/" + id }

// clone is a deep copy of lb, a version the lag keeps.
func (lb *clbLB) clone() *clbLB {
	c := *lb
	c.tags = slices.Clone(lb.tags)
	c.securityGroups = slices.Clone(lb.securityGroups)
	c.listeners = make([]*clbListener, len(lb.listeners))
	for i, li := range lb.listeners {
		cl := *li
		cl.targets = cloneTargets(li.targets)
		if li.cert != nil {
			cert := *li.cert
			cl.cert = &cert
		}
		cl.rules = make([]*clbRule, len(li.rules))
		for j, r := range li.rules {
			cr := *r
			cr.targets = cloneTargets(r.targets)
			cl.rules[j] = &cr
		}
		c.listeners[i] = &cl
	}
	return &c
}

func cloneTargets(ts []*clbTarget) []*clbTarget {
	out := make([]*clbTarget, len(ts))
	for i, t := range ts {
		ct := *t
		out[i] = &ct
	}
	return out
}

// lagSnapshotLocked is a copy of load balancer id now (nil: none). Callers
// hold l.mu.
func (l *CLB) lagSnapshotLocked(id string) *clbLB {
	if lb := l.lbs[id]; lb != nil {
		return lb.clone()
	}
	return nil
}

// lagWroteLocked records a write of load balancer id whose version before
// it was before (nil: a new one); a deleted one is forgotten. Callers hold
// l.mu.
func (l *CLB) lagWroteLocked(id string, before *clbLB) {
	after := l.lagSnapshotLocked(id)
	if after == nil {
		l.core.Lag().Forget(clbLagKey(id))
		return
	}
	var prev any // untyped nil for a new one
	if before != nil {
		prev = before
	}
	l.core.Lag().Wrote(clbLagKey(id), prev, after)
}

// visibleLocked is lb as a read sees it now, or false if a read does not
// see it yet. Callers hold l.mu.
func (l *CLB) visibleLocked(lb *clbLB) (*clbLB, bool) {
	v, ok := l.core.Lag().View(clbLagKey(lb.id), lb)
	if !ok {
		return nil, false
	}
	return v.(*clbLB), true
}

// readLBLocked is lbLocked for a read: the version the lag shows, and a new
// load balancer not visible yet is not found. Callers hold l.mu.
func (l *CLB) readLBLocked(region, id string) (*clbLB, *Error) {
	lb, e := l.lbLocked(region, id)
	if e != nil {
		return nil, e
	}
	v, ok := l.visibleLocked(lb)
	if !ok {
		return nil, errLBNotFound(id)
	}
	return v, nil
}
