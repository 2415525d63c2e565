package core

// OnInstanceGone registers fn to be called with each terminated instance
// when its linger ends and the fleet drops it, so that a dialect whose
// cloud keeps terminated instances visible longer (OCI) can keep its own
// copy. fn runs with the core's lock held: it must not call back into the
// Core.
func (c *Core) OnInstanceGone(fn func(Record)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fleet.gone = append(c.fleet.gone, fn)
}
