package oci

import (
	"fmt"
	"hash/fnv"
	"net/netip"
	"slices"
	"strings"

	ocicore "github.com/oracle/oci-go-sdk/v65/core"

	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// The security rules of security lists and NSGs filter every flow the data
// plane carries for a load balancer, as OCI's virtual firewalls do:
//
//   - A packet leaves a VNIC if an egress rule of its subnet's security
//     lists or of its NSGs allows it, and enters one if an ingress rule
//     does ("Without security rules, no traffic is allowed into and out of
//     VNICs in the VCN"; the rules of every list and NSG add up:
//     https://docs.oracle.com/en-us/iaas/Content/Network/Concepts/securityrules.htm).
//   - Stateful rules admit the replies. "If both stateful and stateless
//     rules are configured, and there's traffic that matches both ... the
//     stateless rule takes precedence and the connection is not tracked.
//     In this case a corresponding rule in the other direction is needed
//     for the response traffic" (same page): a flow admitted by a
//     stateless rule also needs a rule for its replies. The source port of
//     a flow the load balancer opens is not known in advance: a reply rule
//     must cover the whole ephemeral range (EphemeralPortMin-Max).
//   - For a Network Load Balancer "the rules assigned to a backend will
//     always be stateful even though you configure them as stateless"
//     (https://www.ateam-oracle.com/security-rules-and-monitoring-rule-events).
//
// The flows, with the load balancer's side being its first subnet's
// security lists and its NSGs:
//
//   - client -> listener: the load balancer side's ingress rules must allow
//     the client (and, if the client is an instance of the VCN, its egress
//     rules the listener);
//   - load balancer -> backend, and every health check: egress from the
//     load balancer side to the backend, ingress at the backend (its
//     instance's subnet and NSGs, or the VCN subnet holding its address)
//     from the load balancer's private address in its subnet. "The
//     security lists for all subnets that involve the LB and backend
//     servers need to be updated"
//     (https://docs.oracle.com/en/engineered-systems/private-cloud-appliance/3.0-latest/security/security-lbaas-backend-security.html);
//   - a Network Load Balancer backend set that preserves the source
//     ("Backends see the original source IP", BackendSet.IsPreserveSource)
//     shows the client's address to the backend, whose ingress rules must
//     then allow the clients; health checks still come from the NLB.
//
// A backend outside every subnet of the VCN has no rules to pass (only the
// load balancer's egress applies): cloudsim's choice.
const (
	// EphemeralPortMin and EphemeralPortMax bound the source ports the
	// load balancers open flows from: Linux's default
	// ip_local_port_range (cloudsim's choice; OCI does not document them).
	EphemeralPortMin = 32768
	EphemeralPortMax = 60999
)

// ociFirewall is one load balancer's view for the data plane, a snapshot
// of what the balancer itself decides (subnet, NSGs, preserved sources);
// the rules, subnets and instances are read when a flow starts.
type ociFirewall struct {
	d        *Dialect
	kind     string
	subnet   string
	vcn      string
	nsgs     []string
	addr     netip.Addr      // the private address in its subnet
	addr6    netip.Addr      // a dual-stack NLB's IPv6 address (firewall_ipv6.go)
	preserve map[string]bool // data-plane listener id -> the backend set preserves the client's address
}

// lbPrivateAddr is the private address a load balancer sends from: a
// stable address of its subnet, past the two OCI reserves at its start.
func lbPrivateAddr(cidr netip.Prefix, id string) netip.Addr {
	base := cidr.Masked().Addr().As4()
	n := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
	size := uint32(1) << (32 - cidr.Bits())
	if size <= 4 {
		return cidr.Masked().Addr()
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	n += 2 + h.Sum32()%(size-3) // neither the first two nor the last address
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

// firewallFor snapshots b for the data plane and publishes its NSG
// membership. Callers hold d.lbs.mu.
func (d *Dialect) firewallFor(b *balancer) *ociFirewall {
	f := &ociFirewall{d: d, kind: b.kind, nsgs: slices.Clone(b.nsgIDs), preserve: map[string]bool{}}
	if len(b.subnetIDs) > 0 {
		f.subnet = b.subnetIDs[0]
		d.net.mu.Lock()
		if s := d.net.subnets[f.subnet]; s != nil {
			f.vcn = s.VCNID
			f.addr = lbPrivateAddr(netip.MustParsePrefix(s.CIDRBlock), b.id)
		}
		d.net.mu.Unlock()
	}
	if b.kind == kindNLB {
		f.addr6 = d.nlbIPv6Of(b)
		for name, l := range b.nlbListeners {
			bs := b.nlbBackendSets[*l.DefaultBackendSetName]
			keep := bs.IsPreserveSource == nil || *bs.IsPreserveSource || b.preserveSourceDest
			f.preserve[name], f.preserve[name+"/"+dataplane.TCP], f.preserve[name+"/"+dataplane.UDP] = keep, keep, keep
		}
	}
	d.nsgs.bindLB(b.id, f.addr, b.nsgIDs)
	return f
}

// endpoint is one side of a flow inside the VCN: the rules of a subnet's
// security lists and of NSGs.
type endpoint struct {
	name     string
	secLists []string
	nsgs     []string
	stateful bool // every rule counts as stateful (NLB backends)
}

func (f *ociFirewall) lbEndpoint() *endpoint {
	return &endpoint{name: "the load balancer's subnet " + f.subnet, secLists: f.subnetLists(f.subnet), nsgs: f.nsgs}
}

func (f *ociFirewall) subnetLists(id string) []string {
	f.d.net.mu.Lock()
	defer f.d.net.mu.Unlock()
	if s := f.d.net.subnets[id]; s != nil {
		return slices.Clone(s.SecurityListIDs)
	}
	return nil
}

// hostEndpoint finds the side of addr: an instance of the load balancer's
// VCN with that private IP, else the VCN's subnet holding it; nil outside.
func (f *ociFirewall) hostEndpoint(addr netip.Addr) *endpoint {
	if addr.Is6() && !addr.Is4In6() {
		return f.ipv6Endpoint(addr)
	}
	ip := addr.String()
	for _, r := range f.d.core.Snapshot() {
		if r.PrivateIP == ip && f.d.vcnOfInstance(r) == f.vcn {
			subnet := f.d.placementOf(r).subnet
			return &endpoint{name: "instance " + r.OCID + " (subnet " + subnet + ")", secLists: f.subnetLists(subnet), nsgs: r.NSGIDs}
		}
	}
	f.d.net.mu.Lock()
	defer f.d.net.mu.Unlock()
	for _, s := range f.d.net.subnets {
		if s.VCNID == f.vcn && netip.MustParsePrefix(s.CIDRBlock).Contains(addr) {
			return &endpoint{name: "subnet " + s.ID, secLists: slices.Clone(s.SecurityListIDs)}
		}
	}
	return nil
}

// rule is one security rule in a form both kinds of rule reduce to.
type rule struct {
	where     string
	stateless bool
	proto     string
	peerCIDR  netip.Prefix // valid for CIDR rules
	peerNSG   string       // for NSG rules
	tcp       *ocicore.TcpOptions
	udp       *ocicore.UdpOptions
}

// rulesOf collects an endpoint's ingress or egress rules.
func (f *ociFirewall) rulesOf(e *endpoint, ingress bool) []rule {
	var out []rule
	f.d.net.mu.Lock()
	for _, id := range e.secLists {
		sl := f.d.net.secLists[id]
		if sl == nil {
			continue
		}
		if ingress {
			for i, r := range sl.IngressSecurityRules {
				out = append(out, ruleOf(fmt.Sprintf("security list %s ingress rule %d", id, i), r.IsStateless, r.Protocol, r.Source, string(r.SourceType), r.TcpOptions, r.UdpOptions))
			}
		} else {
			for i, r := range sl.EgressSecurityRules {
				out = append(out, ruleOf(fmt.Sprintf("security list %s egress rule %d", id, i), r.IsStateless, r.Protocol, r.Destination, string(r.DestinationType), r.TcpOptions, r.UdpOptions))
			}
		}
	}
	f.d.net.mu.Unlock()
	for id, rules := range f.d.nsgs.rules(e.nsgs) {
		for _, r := range rules {
			if r.IsValid != nil && !*r.IsValid {
				continue // it names a deleted NSG: it matches nothing (nsg.go, invalidateLocked)
			}
			switch {
			case ingress && r.Direction == ocicore.SecurityRuleDirectionIngress:
				out = append(out, ruleOf(fmt.Sprintf("NSG %s rule %s", id, deref(r.Id)), r.IsStateless, r.Protocol, r.Source, string(r.SourceType), r.TcpOptions, r.UdpOptions))
			case !ingress && r.Direction == ocicore.SecurityRuleDirectionEgress:
				out = append(out, ruleOf(fmt.Sprintf("NSG %s rule %s", id, deref(r.Id)), r.IsStateless, r.Protocol, r.Destination, string(r.DestinationType), r.TcpOptions, r.UdpOptions))
			}
		}
	}
	return out
}

func ruleOf(where string, stateless *bool, proto, peer *string, peerType string, tcp *ocicore.TcpOptions, udp *ocicore.UdpOptions) rule {
	r := rule{where: where, stateless: stateless != nil && *stateless, proto: deref(proto), tcp: tcp, udp: udp}
	switch peerType {
	case "", "CIDR_BLOCK":
		r.peerCIDR, _ = netip.ParsePrefix(deref(peer))
	case "NETWORK_SECURITY_GROUP":
		r.peerNSG = deref(peer)
	}
	return r
}

// inRange reports whether port is in r (nil: every port); port 0 is a
// source port not known in advance, which a range must cover entirely.
func inRange(r *ocicore.PortRange, port int) bool {
	if r == nil || r.Min == nil || r.Max == nil {
		return true
	}
	if port == 0 {
		return *r.Min <= EphemeralPortMin && *r.Max >= EphemeralPortMax
	}
	return port >= *r.Min && port <= *r.Max
}

// matches reports whether the rule allows proto from or to peer, to port
// dport from port sport.
func (f *ociFirewall) matches(r rule, peer netip.Addr, proto string, dport, sport int) bool {
	if r.proto != "all" && r.proto != proto {
		return false
	}
	switch {
	case r.peerCIDR.IsValid():
		if !r.peerCIDR.Contains(peer) {
			return false
		}
	case r.peerNSG != "":
		if !f.inNSG(r.peerNSG, peer) {
			return false
		}
	default:
		return false // a service CIDR label: no flow of the data plane goes there
	}
	if r.tcp != nil && (!inRange(r.tcp.DestinationPortRange, dport) || !inRange(r.tcp.SourcePortRange, sport)) {
		return false
	}
	if r.udp != nil && (!inRange(r.udp.DestinationPortRange, dport) || !inRange(r.udp.SourcePortRange, sport)) {
		return false
	}
	return true
}

// inNSG reports whether addr is a VNIC of the NSG: an instance's private
// IP or a load balancer's private address.
func (f *ociFirewall) inNSG(nsg string, addr netip.Addr) bool {
	if slices.Contains(f.d.nsgs.lbMembers(nsg), addr) {
		return true
	}
	ip := addr.String()
	for _, r := range f.d.core.Snapshot() {
		if r.PrivateIP == ip && slices.Contains(r.NSGIDs, nsg) {
			return true
		}
	}
	return false
}

// admit finds whether rules allow the packet; stateless reports that a
// stateless rule does (it takes precedence: the replies need a rule).
func (f *ociFirewall) admit(rules []rule, peer netip.Addr, proto string, dport, sport int) (ok, stateless bool) {
	for _, r := range rules {
		if f.matches(r, peer, proto, dport, sport) {
			ok = true
			stateless = stateless || r.stateless
		}
	}
	return ok, stateless
}

// pass judges a flow of proto from src (at srcAddr, port sport; 0 when
// ephemeral) to dst (dstAddr:dport). A nil side is outside the VCN.
func (f *ociFirewall) pass(src, dst *endpoint, srcAddr, dstAddr netip.Addr, proto string, dport, sport int) error {
	p := map[string]string{dataplane.TCP: "6", dataplane.UDP: "17", dataplane.ICMP: "17"}[proto]
	if src != nil {
		ok, stateless := f.admit(f.rulesOf(src, false), dstAddr, p, dport, sport)
		if !ok {
			return fmt.Errorf("no egress rule of %s (security lists %s; NSGs %s) allows %s to %s port %d",
				src.name, list(src.secLists), list(src.nsgs), proto, dstAddr, dport)
		}
		if stateless && !src.stateful {
			if ok, _ := f.admit(f.rulesOf(src, true), dstAddr, p, sport, dport); !ok {
				return fmt.Errorf("a stateless egress rule of %s allows %s to %s port %d, but no ingress rule allows the replies",
					src.name, proto, dstAddr, dport)
			}
		}
	}
	if dst != nil {
		ok, stateless := f.admit(f.rulesOf(dst, true), srcAddr, p, dport, sport)
		if !ok {
			return fmt.Errorf("no ingress rule of %s (security lists %s; NSGs %s) allows %s from %s to port %d",
				dst.name, list(dst.secLists), list(dst.nsgs), proto, srcAddr, dport)
		}
		if stateless && !dst.stateful {
			if ok, _ := f.admit(f.rulesOf(dst, false), srcAddr, p, sport, dport); !ok {
				return fmt.Errorf("a stateless ingress rule of %s allows %s from %s to port %d, but no egress rule allows the replies",
					dst.name, proto, srcAddr, dport)
			}
		}
	}
	return nil
}

func list(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

func (f *ociFirewall) Inbound(fl dataplane.Flow) error {
	client := fl.Client.Addr()
	return f.pass(f.hostEndpoint(client), f.lbEndpoint(), client, fl.VIP.Addr(), fl.Protocol, int(fl.VIP.Port()), int(fl.Client.Port()))
}

func (f *ociFirewall) Forward(fl dataplane.Flow) error {
	src, sport := f.sourceFor(fl.Target.Addr()), 0
	if f.preserve[fl.Listener] {
		src, sport = fl.Client.Addr(), int(fl.Client.Port())
	}
	return f.toBackend(fl, src, sport)
}

// Probe: health checks come from the load balancer. OCI's UDP and DNS
// checks send datagrams, which the data plane runs as PING checks.
func (f *ociFirewall) Probe(fl dataplane.Flow) error {
	return f.toBackend(fl, f.sourceFor(fl.Target.Addr()), 0)
}

func (f *ociFirewall) toBackend(fl dataplane.Flow, src netip.Addr, sport int) error {
	backend := f.hostEndpoint(fl.Target.Addr())
	if backend != nil && f.kind == kindNLB {
		backend.stateful = true
	}
	// The load balancer's egress is judged against the backend; the
	// backend's ingress against the flow's source.
	if err := f.pass(f.lbEndpoint(), nil, f.sourceFor(fl.Target.Addr()), fl.Target.Addr(), fl.Protocol, int(fl.Target.Port()), 0); err != nil {
		return err
	}
	return f.pass(nil, backend, src, fl.Target.Addr(), fl.Protocol, int(fl.Target.Port()), sport)
}
