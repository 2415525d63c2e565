package annotations

// OCI: dual-stack network load balancers
//
// A Service whose spec.ipFamilies hold IPv4 and IPv6 gets an IPV4_AND_IPV6
// network load balancer, one with IPv6 alone an IPV6 one; see docs/oci.md
// (Dual-stack). The option below picks its IPv6 address.
const (
	// OCINLBAssignedIPv6 is the network load balancer's IPv6 address, in
	// one of its subnet's IPv6 prefixes, chosen at creation (later changes
	// are not applied), for a Service whose spec.ipFamilies include IPv6.
	// On a Load Balancer (lb), or on an IPv4-only Service, it is an error.
	//
	// Type: IPv6 address
	// Default: OCI chooses
	// Providers: oci (nlb)
	OCINLBAssignedIPv6 Name = OCINLBPrefix + "assigned-ipv6"
)
