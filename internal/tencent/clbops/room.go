package clbops

// makeRoom takes out of the plan's deregistrations, and returns, the ones
// that must happen before the registrations so that no listener ever holds
// more than limit targets (TOTAL_TARGET_BIND_QUOTA: registering past it is
// refused with LimitExceeded). The others still happen after the
// registrations, so that a listener keeps as many targets as the quota
// allows while nodes are replaced. limit 0 means no limit.
func (p *targetPlan) makeRoom(actual map[string][]target, limit int) []target {
	if limit <= 0 || len(p.register) == 0 || len(p.deregister) == 0 {
		return nil
	}
	adding := map[string]int{}
	for _, t := range p.register {
		adding[t.listenerID]++
	}
	excess := map[string]int{}
	for id, n := range adding {
		if over := len(actual[id]) + n - limit; over > 0 {
			excess[id] = over
		}
	}
	if len(excess) == 0 {
		return nil
	}
	var first, later []target
	for _, t := range p.deregister {
		if excess[t.listenerID] > 0 {
			excess[t.listenerID]--
			first = append(first, t)
		} else {
			later = append(later, t)
		}
	}
	p.deregister = later
	return first
}
