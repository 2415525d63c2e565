package oci

// Lagging reads (core/lag.go, cloudsim's option, off by default): reads of
// load balancers and NLBs (Get, List and the reads of their sub-resources)
// see each work request's result, and a new load balancer at all, only
// within the lag after it; writes, work requests and deletions are not
// lagged.

func lbLagKey(id string) string { return "oci-lb/" + id }

// lagSnapshot is a copy of load balancer id as it is now (nil: none).
func (d *Dialect) lagSnapshot(id string) *balancer {
	d.lbs.mu.Lock()
	defer d.lbs.mu.Unlock()
	if b := d.lbs.byID[id]; b != nil {
		return b.clone()
	}
	return nil
}

// lagWrote records a write of load balancer id, whose version before it
// was before (nil: a new one). A deleted one is forgotten: reads see that
// at once.
func (d *Dialect) lagWrote(id string, before *balancer) {
	after := d.lagSnapshot(id)
	if after == nil || after.lifecycle == stateDeleted {
		d.core.Lag().Forget(lbLagKey(id))
		return
	}
	var prev any // an untyped nil for a new one: a typed nil would be a version
	if before != nil {
		prev = before
	}
	d.core.Lag().Wrote(lbLagKey(id), prev, after)
}

// visible is b as a read sees it now, or false if a read does not see it
// yet.
func (d *Dialect) visible(b *balancer) (*balancer, bool) {
	v, ok := d.core.Lag().View(lbLagKey(b.id), b)
	if !ok {
		return nil, false
	}
	return v.(*balancer).clone(), true
}
