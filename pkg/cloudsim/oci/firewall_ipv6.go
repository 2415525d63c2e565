package oci

import (
	"net/netip"
	"slices"
)

// IPv6 flows of a dual-stack Network Load Balancer (ipv6.go): the same
// rules as IPv4 (firewall.go), with IPv6 addresses. The load balancer sends
// to IPv6 backends from its IPv6 address; an IPv6 address belongs to the
// instance whose VNIC has it (vnicIPv6), else to the VCN's subnet whose
// IPv6 prefix holds it. An IPv6 address is in no NSG (cloudsim's limit:
// NSG rules naming an NSG match its members' IPv4 addresses only).

// sourceFor is the address the load balancer sends to target from.
func (f *ociFirewall) sourceFor(target netip.Addr) netip.Addr {
	if target.Is6() && !target.Is4In6() && f.addr6.IsValid() {
		return f.addr6
	}
	return f.addr
}

// ipv6Endpoint finds the side of an IPv6 address, as hostEndpoint does for
// IPv4; nil outside the VCN.
func (f *ociFirewall) ipv6Endpoint(addr netip.Addr) *endpoint {
	defs := f.d.placementDefaults()
	for _, r := range f.d.core.Snapshot() {
		if f.d.vcnOfInstance(r) != f.vcn {
			continue
		}
		p := placementWith(r, defs)
		if vnicIPv6(f.d.subnetIPv6(p.subnet), r.PrivateIP) == addr {
			return &endpoint{name: "instance " + r.OCID + " (subnet " + p.subnet + ")", secLists: f.subnetLists(p.subnet), nsgs: r.NSGIDs}
		}
	}
	f.d.net.mu.Lock()
	defer f.d.net.mu.Unlock()
	for _, s := range f.d.net.subnets {
		if s.VCNID != f.vcn {
			continue
		}
		for _, b := range s.IPv6CIDRBlocks {
			if p, err := netip.ParsePrefix(b); err == nil && p.Contains(addr) {
				return &endpoint{name: "subnet " + s.ID, secLists: slices.Clone(s.SecurityListIDs)}
			}
		}
	}
	return nil
}
