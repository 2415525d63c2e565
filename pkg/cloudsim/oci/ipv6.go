package oci

import (
	"hash/fnv"
	"net/netip"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	nlb "github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// IPv6 (issue 14 item 7, dual-stack). A subnet is IPv6-enabled when it has
// IPv6 prefixes (Subnet.ipv6CidrBlocks; the SDK's core/subnet.go). Like
// the primary VNIC and its private IP, the IPv6 address of an instance's
// VNIC needs no storage: it is derived from the subnet's first IPv6 prefix
// and the instance's private IPv4 (the prefix with the IPv4 address in its
// low 32 bits), so a seed that gives a subnet a prefix gives every VNIC in
// it one address. That every VNIC of an IPv6 subnet has one is cloudsim's
// choice (OCI assigns one at launch only when asked: assignIpv6Ip). The
// VCN's own IPv6 prefixes are not modeled: a subnet's /64 is not checked
// against one.

// checkSubnetIPv6 validates a subnet's IPv6 prefixes: "The subnet size is
// always /64" (the SDK's core/subnet.go, ipv6CidrBlock); "multiple prefixes
// must not overlap" (core/create_subnet_details.go, ipv6CidrBlocks). It
// returns them in canonical form.
func checkSubnetIPv6(blocks []string) ([]string, string) {
	if len(blocks) > MaxSubnetIPv6Prefixes {
		return nil, "a subnet has at most 3 IPv6 prefixes (cloudsim's limit)"
	}
	out := make([]string, 0, len(blocks))
	for _, b := range blocks {
		p, err := netip.ParsePrefix(b)
		if err != nil || !p.Addr().Is6() || p.Addr().Is4In6() || p.Bits() != 64 || p.Masked() != p {
			return nil, "ipv6CidrBlocks " + b + " must be an IPv6 /64 network"
		}
		for _, q := range out {
			if netip.MustParsePrefix(q) == p {
				return nil, "ipv6CidrBlocks " + b + " is listed twice"
			}
		}
		out = append(out, p.String())
	}
	return out, ""
}

// MaxSubnetIPv6Prefixes bounds a subnet's IPv6 prefixes. The SDK says only
// "must not exceed the limit of IPv6 prefixes allowed to a subnet"
// (core/create_subnet_details.go) without the number: 3 is cloudsim's choice.
const MaxSubnetIPv6Prefixes = 3

// subnetIPv6 is the subnet's IPv6 prefixes (none: not IPv6-enabled).
func (d *Dialect) subnetIPv6(subnetID string) []netip.Prefix {
	s, ok := d.net.subnet(subnetID)
	if !ok {
		return nil
	}
	out := make([]netip.Prefix, 0, len(s.IPv6CIDRBlocks))
	for _, b := range s.IPv6CIDRBlocks {
		if p, err := netip.ParsePrefix(b); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// vnicIPv6 is the IPv6 address of an instance's primary VNIC in an
// IPv6-enabled subnet: the subnet's first prefix, the private IPv4 in the
// low 32 bits. Invalid when the subnet has no IPv6 prefix.
func vnicIPv6(prefixes []netip.Prefix, privateIPv4 string) netip.Addr {
	v4, err := netip.ParseAddr(privateIPv4)
	if len(prefixes) == 0 || err != nil || !v4.Is4() {
		return netip.Addr{}
	}
	b := prefixes[0].Masked().Addr().As16()
	copy(b[12:], v4.AsSlice())
	return netip.AddrFrom16(b)
}

func ipv6ID(instanceOCID string) string {
	return strings.Replace(instanceOCID, "ocid1.instance.", "ocid1.ipv6.", 1)
}

// vnicIPv6Addresses is Vnic.ipv6Addresses for an instance's primary VNIC.
func (d *Dialect) vnicIPv6Addresses(subnetID, privateIPv4 string) []string {
	if a := vnicIPv6(d.subnetIPv6(subnetID), privateIPv4); a.IsValid() {
		return []string{a.String()}
	}
	return nil
}

func (d *Dialect) routeIPv6() {
	d.mux.Handle("GET "+PrefixCore+"/ipv6", d.route("virtualnetwork", "ListIpv6s", false, d.listIpv6s))
}

// listIpv6s implements ListIpv6s. The SDK's doc comment
// (core_virtualnetwork_client.go, ListIpv6s) lists the IPv6 objects "based
// on one of these filters: Subnet OCID, VNIC OCID, Both IPv6 address and
// subnet OCID"; as ListPrivateIps, a call with none of them is refused as a
// missing parameter. Items come in creation order.
func (d *Dialect) listIpv6s(c *call) (*reply, error) {
	subnet, vnic, ip := c.query("subnetId"), c.query("vnicId"), c.query("ipAddress")
	if subnet == "" && vnic == "" {
		return nil, missing("subnetId or vnicId")
	}
	if subnet != "" && !core.ValidOCID(subnet, "subnet") {
		return nil, badRequest("The subnetId %q is not a valid subnet OCID.", subnet)
	}
	if vnic != "" && !core.ValidOCID(vnic, "vnic") {
		return nil, badRequest("The vnicId %q is not a valid VNIC OCID.", vnic)
	}
	var want netip.Addr
	if ip != "" {
		a, err := netip.ParseAddr(ip)
		if err != nil || !a.Is6() {
			return nil, badRequest("The ipAddress %q is not an IPv6 address.", ip)
		}
		want = a
	}
	now := d.core.Now()
	defs := d.placementDefaults()
	prefixes := map[string][]netip.Prefix{}
	items := []ocicore.Ipv6{}
	for _, r := range d.instances() {
		p := placementWith(r, defs)
		if !hasVnic(d.ociState(r, now)) || (subnet != "" && subnet != p.subnet) || (vnic != "" && vnic != vnicID(r.OCID)) {
			continue
		}
		ps, seen := prefixes[p.subnet]
		if !seen {
			ps = d.subnetIPv6(p.subnet)
			prefixes[p.subnet] = ps
		}
		a := vnicIPv6(ps, r.PrivateIP)
		if !a.IsValid() || (want.IsValid() && want != a) {
			continue
		}
		items = append(items, ocicore.Ipv6{
			CompartmentId:  common.String(p.compartment),
			DisplayName:    common.String(a.String()),
			Id:             common.String(ipv6ID(r.OCID)),
			IpAddress:      common.String(a.String()),
			LifecycleState: ocicore.Ipv6LifecycleStateAvailable,
			SubnetId:       common.String(p.subnet),
			TimeCreated:    sdkTime(r.Created),
			VnicId:         common.String(vnicID(r.OCID)),
			IpState:        ocicore.Ipv6IpStateAssigned,
			Lifetime:       ocicore.Ipv6LifetimeEphemeral,
			FreeformTags:   map[string]string{},
			DefinedTags:    map[string]map[string]interface{}{},
		})
	}
	return page(c, items, nil)
}

// ---- network load balancers ----

// checkNLBIPVersion validates CreateNetworkLoadBalancerDetails.nlbIpVersion
// and assignedIpv6 ("This IP address has to be part of one of the prefixes
// supported by the subnet", the SDK's create_network_load_balancer_details.go)
// and returns the version and the assigned address. An NLB with IPv6 needs
// an IPv6-enabled subnet; refusing one without is cloudsim's reading of
// the same comment (400 InvalidParameter is cloudsim's choice of code).
func (d *Dialect) checkNLBIPVersion(subnetID string, version nlb.NlbIpVersionEnum, assigned *string) (nlb.NlbIpVersionEnum, netip.Addr, error) {
	if version == "" {
		version = nlb.NlbIpVersionIpv4 // the API's default
	}
	if _, ok := nlb.GetMappingNlbIpVersionEnum(string(version)); !ok {
		return "", netip.Addr{}, badRequest("The nlbIpVersion %q must be one of %s.", version, strings.Join(nlb.GetNlbIpVersionEnumStringValues(), ", "))
	}
	version, _ = nlb.GetMappingNlbIpVersionEnum(string(version))
	prefixes := d.subnetIPv6(subnetID)
	if version != nlb.NlbIpVersionIpv4 && len(prefixes) == 0 {
		return "", netip.Addr{}, badRequest("The subnet %s has no IPv6 prefix; a network load balancer of nlbIpVersion %s needs one.", subnetID, version)
	}
	if assigned == nil || *assigned == "" {
		return version, netip.Addr{}, nil
	}
	if version == nlb.NlbIpVersionIpv4 {
		return "", netip.Addr{}, badRequest("The assignedIpv6 needs nlbIpVersion IPV6 or IPV4_AND_IPV6.")
	}
	a, err := netip.ParseAddr(*assigned)
	if err != nil || !a.Is6() || a.Is4In6() {
		return "", netip.Addr{}, badRequest("The assignedIpv6 %q is not an IPv6 address.", *assigned)
	}
	in := false
	for _, p := range prefixes {
		in = in || p.Contains(a)
	}
	if !in {
		return "", netip.Addr{}, badRequest("The assignedIpv6 %s is not in an IPv6 prefix of subnet %s.", a, subnetID)
	}
	d.lbs.mu.Lock()
	defer d.lbs.mu.Unlock()
	for _, b := range d.lbs.byID {
		if b.lifecycle != stateDeleted && b.kind == kindNLB && len(b.subnetIDs) > 0 && b.subnetIDs[0] == subnetID && d.nlbIPv6Of(b) == a {
			return "", netip.Addr{}, badRequest("The assignedIpv6 %s is already the address of network load balancer %s.", a, b.id)
		}
	}
	return version, a, nil
}

// nlbIPv6Of is an NLB's IPv6 address: the assigned one, else one derived
// from its OCID in its subnet's first IPv6 prefix (cloudsim's choice).
// Invalid for an IPV4 NLB.
func (d *Dialect) nlbIPv6Of(b *balancer) netip.Addr {
	if b.nlbIPVersion == "" || b.nlbIPVersion == nlb.NlbIpVersionIpv4 {
		return netip.Addr{}
	}
	if b.ipv6.IsValid() {
		return b.ipv6
	}
	if len(b.subnetIDs) == 0 {
		return netip.Addr{}
	}
	ps := d.subnetIPv6(b.subnetIDs[0])
	if len(ps) == 0 {
		return netip.Addr{}
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(b.id))
	n := h.Sum64() | 1<<16 // never one of the prefix's lowest addresses, which derived VNIC addresses use
	a := ps[0].Masked().Addr().As16()
	for i := range 8 {
		a[15-i] = byte(n >> (8 * i))
	}
	return netip.AddrFrom16(a)
}

// nlbModelIPv6 adds the NLB's IPv6 address to its model; an IPV6 NLB
// lists only it (the IPv4 VIP cloudsim still holds for it is not its
// address).
func (d *Dialect) nlbModelIPv6(b *balancer, m *nlb.NetworkLoadBalancer) {
	if b.nlbIPVersion == "" {
		return
	}
	m.NlbIpVersion = b.nlbIPVersion
	a := d.nlbIPv6Of(b)
	if !a.IsValid() || len(m.IpAddresses) == 0 {
		return // no addresses yet (CREATING, FAILED, DELETED)
	}
	v6 := nlb.IpAddress{IpAddress: common.String(a.String()), IsPublic: common.Bool(!b.isPrivate), IpVersion: nlb.IpVersionIpv6}
	if b.nlbIPVersion == nlb.NlbIpVersionIpv6 {
		m.IpAddresses = []nlb.IpAddress{v6}
		return
	}
	m.IpAddresses = append(m.IpAddresses, v6)
}

// ipVersionOr is an ipVersion field with the API's default, IPV4.
func ipVersionOr(v nlb.IpVersionEnum) (nlb.IpVersionEnum, bool) {
	if v == "" {
		return nlb.IpVersionIpv4, true
	}
	return nlb.GetMappingIpVersionEnum(string(v))
}

// checkBackendIP validates a backend's ipAddress against its backend set's
// ipVersion.
func checkBackendIP(what, s string, v nlb.IpVersionEnum) (string, error) {
	if v != nlb.IpVersionIpv6 {
		return checkIPv4(what, s)
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() || a.Is4In6() {
		return "", badRequest("The %s %q is not an IPv6 address (the backend set's ipVersion is IPV6).", what, s)
	}
	return a.String(), nil
}

// checkNLBListeners checks what spans an NLB's listeners: ports
// (checkNLBListenerPorts), and IP versions. A listener's ipVersion must be
// one the NLB has, and its default backend set's ("the listener and its
// backend set must be of the same IP version": cloudsim's reading of the
// public OCI CCM, which always pairs them; 400 is cloudsim's choice).
func checkNLBListeners(b *balancer) error {
	if err := checkNLBListenerPorts(b.nlbListeners); err != nil {
		return err
	}
	nv := b.nlbIPVersion
	if nv == "" {
		nv = nlb.NlbIpVersionIpv4
	}
	for name, l := range b.nlbListeners {
		switch {
		case l.IpVersion == nlb.IpVersionIpv6 && nv == nlb.NlbIpVersionIpv4:
			return badRequest("The listener %s is IPV6 but the network load balancer is IPV4.", name)
		case l.IpVersion == nlb.IpVersionIpv4 && nv == nlb.NlbIpVersionIpv6:
			return badRequest("The listener %s is IPV4 but the network load balancer is IPV6.", name)
		}
		if bs, ok := b.nlbBackendSets[deref(l.DefaultBackendSetName)]; ok && bs.IpVersion != l.IpVersion {
			return badRequest("The listener %s is %s but its backend set %s is %s.", name, l.IpVersion, *l.DefaultBackendSetName, bs.IpVersion)
		}
	}
	return nil
}
