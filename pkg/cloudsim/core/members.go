package core

import "net/netip"

// Members records which load balancers are in which firewall groups
// (Tencent security groups bound to a CLB, OCI NSGs a load balancer is in),
// with each load balancer's address, so that a group's rules can be
// checked against traffic to that address. group -> load balancer id ->
// address. Not safe for concurrent use: the dialect's store locks it.
type Members map[string]map[string]netip.Addr

// Bind records that lb, at addr, is in exactly groups, replacing what was
// recorded for it; no groups takes it out of every group.
func (m Members) Bind(lb string, addr netip.Addr, groups []string) {
	for g, lbs := range m {
		delete(lbs, lb)
		if len(lbs) == 0 {
			delete(m, g)
		}
	}
	for _, g := range groups {
		if m[g] == nil {
			m[g] = map[string]netip.Addr{}
		}
		m[g][lb] = addr
	}
}
