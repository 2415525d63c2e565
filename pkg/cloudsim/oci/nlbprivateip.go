package oci

import (
	"net/netip"
)

// checkAssignedPrivateIPv4 validates CreateNetworkLoadBalancerDetails.
// assignedPrivateIpv4: "This IP address has to be in the CIDR range of the
// subnet where network load balancer is being created" (oci-go-sdk v65
// networkloadbalancer/create_network_load_balancer_details.go). Not one of
// the addresses Networking keeps for itself ("the first two IP addresses
// and the last in each subnet's CIDR are reserved", OCI docs, VCNs and
// Subnets), and not another live load balancer's private address: the 400
// InvalidParameter for both is cloudsim's choice of code. Callers do not
// hold d.lbs.mu.
func (d *Dialect) checkAssignedPrivateIPv4(subnetID string, ip *string) (netip.Addr, error) {
	if ip == nil || *ip == "" {
		return netip.Addr{}, nil
	}
	a, err := netip.ParseAddr(*ip)
	if err != nil || !a.Is4() {
		return netip.Addr{}, badRequest("The assignedPrivateIpv4 %q is not an IPv4 address.", *ip)
	}
	s, ok := d.net.subnet(subnetID)
	if !ok {
		return netip.Addr{}, relatedNotFound("subnet", subnetID)
	}
	p, err := netip.ParsePrefix(s.CIDRBlock)
	if err != nil || !p.Contains(a) {
		return netip.Addr{}, badRequest("The assignedPrivateIpv4 %s is not in the CIDR %s of subnet %s.", a, s.CIDRBlock, subnetID)
	}
	first := p.Masked().Addr()
	last := lastAddr(p)
	if a == first || a == first.Next() || a == last {
		return netip.Addr{}, badRequest("The assignedPrivateIpv4 %s is one of the addresses subnet %s reserves (its first two and its last).", a, subnetID)
	}
	d.lbs.mu.Lock()
	defer d.lbs.mu.Unlock()
	for _, b := range d.lbs.byID {
		if b.lifecycle != stateDeleted && len(b.subnetIDs) > 0 && b.subnetIDs[0] == subnetID && d.privateAddrOf(b) == a {
			return netip.Addr{}, badRequest("The assignedPrivateIpv4 %s is already the address of %s %s.", a, kindName(b.kind), b.id)
		}
	}
	return a, nil
}

// lastAddr is the last IPv4 address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	n := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	n |= uint32(1)<<(32-p.Bits()) - 1
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}
