package lbops

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/internal/oci/ocierr"
)

// Dual-stack network load balancers (issue 14 item 7). An NLB's
// nlbIpVersion is IPV4, IPV6 or IPV4_AND_IPV6
// (networkloadbalancer.NlbIpVersionEnum); each listener and backend set has
// an ipVersion, IPV4 or IPV6 (IpVersionEnum). A dual-stack Service gets,
// for each port, the IPv4 listener and backend set <PROTO>-<port> with the
// nodes' IPv4 addresses and the IPv6 pair <PROTO>-<port>-IPv6 with their
// IPv6 addresses (lbspec.Backend.AddressV6): the public OCI CCM's names,
// so that an NLB it made is taken over without renaming. An IPv6-only
// Service gets only the IPv6 pair. The flexible Load Balancer stays IPv4
// (the provider says why, internal/provider/oci/dualstack.go).

// The NLB IP versions (Settings.IPVersion; "" is IPV4).
const (
	IPVersion4     = "IPV4"
	IPVersion6     = "IPV6"
	IPVersionDual  = "IPV4_AND_IPV6"
	ipv6NameSuffix = "-IPv6"
)

// hasIPv4 and hasIPv6 say which families an NLB IP version serves.
func hasIPv4(v string) bool { return v != IPVersion6 }
func hasIPv6(v string) bool { return v == IPVersion6 || v == IPVersionDual }

// nlbIPVersion is d's NLB IP version, IPV4 when unset.
func nlbIPVersion(d *Desired) string {
	if d.IPVersion == "" {
		return IPVersion4
	}
	return d.IPVersion
}

// withIPVersions turns desiredSets' IPv4 listeners and backend sets into
// those of d's IP version. The Load Balancer's have no ipVersion and are
// returned as they are.
func withIPVersions(d *Desired, ls []listenerModel, bss []backendSetModel) ([]listenerModel, []backendSetModel) {
	if d.Kind != KindNLB {
		return ls, bss
	}
	v := nlbIPVersion(d)
	var outL []listenerModel
	var outB []backendSetModel
	if hasIPv4(v) {
		for _, l := range ls {
			l.IPVersion = IPVersion4
			outL = append(outL, l)
		}
		for _, bs := range bss {
			bs.IPVersion = IPVersion4
			outB = append(outB, bs)
		}
	}
	if hasIPv6(v) {
		v6 := map[string]string{} // IPv4 address -> the node's IPv6 address
		for _, b := range d.Backends {
			if b.AddressV6 != "" {
				v6[b.Address] = b.AddressV6
			}
		}
		for _, l := range ls {
			l.Name, l.BackendSet, l.IPVersion = l.Name+ipv6NameSuffix, l.BackendSet+ipv6NameSuffix, IPVersion6
			outL = append(outL, l)
		}
		for _, bs := range bss {
			bs.Name, bs.IPVersion = bs.Name+ipv6NameSuffix, IPVersion6
			var backends []backendModel
			for _, b := range bs.Backends {
				if a, ok := v6[b.IP]; ok { // a node without an IPv6 address is not an IPv6 backend
					b.IP = a
					backends = append(backends, b)
				}
			}
			sortBackends(backends)
			bs.Backends = backends
			outB = append(outB, bs)
		}
	}
	return outL, outB
}

// checkAssignedIPv6 checks, before the NLB is created, that the
// assigned-ipv6 address is in one of its subnet's IPv6 prefixes
// (CreateNetworkLoadBalancerDetails.assignedIpv6: "This IP address has to
// be part of one of the prefixes supported by the subnet"), so that the
// Service's Event says so instead of OCI's 400. One GetSubnet, at creation
// only.
func (o *Ops) checkAssignedIPv6(ctx context.Context, d *Desired) error {
	if d.AssignedIPv6 == "" || d.Kind != KindNLB || len(d.Subnets) == 0 {
		return nil
	}
	if !hasIPv6(nlbIPVersion(d)) {
		return fmt.Errorf("assigned IPv6 address %s: the Service is not IPv6 or dual-stack (spec.ipFamilies)", d.AssignedIPv6)
	}
	a, err := netip.ParseAddr(d.AssignedIPv6)
	if err != nil {
		return fmt.Errorf("assigned IPv6 address %q: %w", d.AssignedIPv6, err)
	}
	resp, err := o.net.GetSubnet(ctx, core.GetSubnetRequest{SubnetId: &d.Subnets[0]})
	if err != nil {
		return ocierr.Wrap("GetSubnet", d.Subnets[0], err)
	}
	prefixes := resp.Ipv6CidrBlocks
	if len(prefixes) == 0 && deref(resp.Ipv6CidrBlock) != "" {
		prefixes = []string{*resp.Ipv6CidrBlock}
	}
	for _, s := range prefixes {
		if p, err := netip.ParsePrefix(s); err == nil && p.Contains(a) {
			return nil
		}
	}
	if len(prefixes) == 0 {
		return fmt.Errorf("assigned IPv6 address %s: subnet %s has no IPv6 prefix", a, d.Subnets[0])
	}
	return fmt.Errorf("assigned IPv6 address %s is not in subnet %s's IPv6 prefixes %s", a, d.Subnets[0], strings.Join(prefixes, ", "))
}

// ipVersionDiff reports an NLB whose IP version is not the Service's:
// cloudsim cannot change it in place, and ccmkit does not convert one yet
// (OCI's UpdateNetworkLoadBalancer can), so it is reported like the other
// settings fixed at creation.
func ipVersionDiff(d *Desired, a *actual) string {
	if d.Kind != KindNLB || a.IPVersion == "" || a.IPVersion == nlbIPVersion(d) {
		return ""
	}
	return fmt.Sprintf("IP version is %s but the Service asks for %s (spec.ipFamilies)", a.IPVersion, nlbIPVersion(d))
}

// compareIP orders IPv4 addresses before IPv6 ones, and each family as
// strings: a client that takes the first address of the status gets the
// IPv4 one, as before dual-stack.
func compareIP(x, y string) int {
	x6, y6 := strings.Contains(x, ":"), strings.Contains(y, ":")
	switch {
	case x6 == y6:
		return strings.Compare(x, y)
	case y6:
		return -1
	}
	return 1
}

// ipVersionOf is a listener's or backend set's ipVersion, IPV4 when OCI
// leaves it out (the API's default).
func ipVersionOf(v networkloadbalancer.IpVersionEnum) string {
	if v == "" {
		return IPVersion4
	}
	return string(v)
}
