package oci

import (
	"net/netip"

	v1 "k8s.io/api/core/v1"
)

// ipv6NodeAddresses are the node addresses of the primary VNIC's IPv6
// addresses (Vnic.ipv6Addresses), typed as the public OCI CCM types them
// (its extractNodeAddresses), so that a cluster moving from it sees the same
// Node status: a unique local address (fc00::/7, private) is an
// InternalIP, any other (a global unicast address from Oracle's or the
// customer's GUA prefix, reachable from the internet when the subnet
// allows it) an ExternalIP. The load balancers take a node's IPv6 backend
// address from the InternalIPs first, then the ExternalIPs (lbspec's
// Backend.AddressV6), as that CCM does. Unlike it, the addresses are not
// gated on the node label oci.oraclecloud.com/ip-family-ipv6 (which OKE
// sets): the VNIC having them is enough. Unparsable entries are skipped.
func ipv6NodeAddresses(addrs []string) []v1.NodeAddress {
	var out []v1.NodeAddress
	for _, s := range addrs {
		a, err := netip.ParseAddr(s)
		if err != nil || !a.Is6() || a.Is4In6() {
			continue
		}
		typ := v1.NodeExternalIP
		if a.IsPrivate() {
			typ = v1.NodeInternalIP
		}
		out = append(out, v1.NodeAddress{Type: typ, Address: a.String()})
	}
	return out
}
