package annotations

// The dual-stack NLB option of issue 14 item 7.
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
