package clbops

// makeRoom takes out of the plan's deregistrations, and returns, the ones
// that must happen before the registrations so that no listener ever holds
// more than limit targets (TOTAL_TARGET_BIND_QUOTA: registering past it is
// refused with LimitExceeded). The others still happen after the
// registrations, so that a listener keeps as many targets as the quota
// allows while nodes are replaced. Targets that are draining, or about to,
// are cut short only when the deregistrations do not make room enough:
// the quota leaves no other way in. limit 0 means no limit.
func (p *targetPlan) makeRoom(actual map[string][]target, limit int) []target {
	if limit <= 0 || len(p.register) == 0 {
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
	var first []target
	for _, list := range []*[]target{&p.deregister, &p.draining, &p.drain} {
		var later []target
		for _, t := range *list {
			if excess[t.listenerID] > 0 {
				excess[t.listenerID]--
				first = append(first, t)
			} else {
				later = append(later, t)
			}
		}
		*list = later
	}
	return first
}
