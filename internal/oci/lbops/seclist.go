package lbops

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
	"k8s.io/cloud-provider/api"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/lbspec"
	"github.com/ccmkit/ccm/internal/oci/ocierr"
)

// Security list management modes (loadBalancer.securityListManagementMode
// and the per-Service annotation).
//
//   - None (the default): nothing is touched; the operator opens the load
//     balancer subnet to the clients and the node subnets to the load
//     balancer subnet (see docs/oci.md).
//   - Frontend: the load balancer subnets' ingress rules from the clients
//     to the listener ports.
//   - All: Frontend's rules, plus what the load balancer needs to reach
//     the nodes: the load balancer subnets' egress rules to the node
//     subnets, and the node subnets' ingress rules from the load balancer
//     subnets, on the NodePorts and the health check port (and from the
//     clients for an NLB that preserves their address, which the nodes
//     then see). These are the rules the traffic needs, no more, as the
//     public OCI CCM's modes of the same names write them.
const (
	SecurityListNone     = "None"
	SecurityListFrontend = "Frontend"
	SecurityListAll      = "All"
)

// ruleMarker is the description of every security list rule we write,
// naming the Service's UID: it is how our rules are told apart from
// everyone else's, which are never touched.
func ruleMarker(d *Desired) string { return "ccmkit.io/service-uid=" + string(d.Ref.UID) }

// ruleKey identifies a rule by what matters to us: the peer (the source of
// an ingress rule, the destination of an egress rule), the protocol and
// the destination port.
type ruleKey struct {
	peer, protocol string
	port           int
}

// listRules are the rules we want in one security list.
type listRules struct{ ingress, egress map[ruleKey]bool }

// subnetInfo is what the rules need to know of a subnet.
type subnetInfo struct {
	id, cidr, vcn, compartment string
	list                       string // the security list managed for it
}

// ensureSecurityRules makes the managed security lists hold exactly our
// rules for the Service, per the mode; remove drops them all. Each list is
// written at most once per call, and only when its rules differ.
//
// Updates are read-modify-write with the list's etag in if-match, so that
// a concurrent change by anyone is never overwritten: OCI answers 412 and
// the Service is retried.
func (o *Ops) ensureSecurityRules(ctx context.Context, d *Desired, subnets []string, remove bool) error {
	if d.SecurityListMode != SecurityListFrontend && d.SecurityListMode != SecurityListAll {
		return nil
	}
	if o.net == nil {
		return fmt.Errorf("security list mode %s needs the VirtualNetwork API", d.SecurityListMode)
	}
	lbSubnets := make([]subnetInfo, 0, len(subnets))
	for _, id := range subnets {
		s, err := o.subnet(ctx, id)
		if err != nil {
			return err
		}
		lbSubnets = append(lbSubnets, s)
	}
	want := map[string]*listRules{}
	rulesOf := func(list string) *listRules {
		if want[list] == nil {
			want[list] = &listRules{ingress: map[ruleKey]bool{}, egress: map[ruleKey]bool{}}
		}
		return want[list]
	}
	sources := d.SourceRanges
	if len(sources) == 0 {
		sources = []string{"0.0.0.0/0"}
	}
	for _, s := range lbSubnets {
		r := rulesOf(s.list)
		if remove {
			continue
		}
		for _, src := range sources {
			for _, l := range d.Listeners {
				r.ingress[ruleKey{peer: src, protocol: protocolNumber(l.Protocol), port: int(l.Port)}] = true
			}
		}
	}
	if d.SecurityListMode == SecurityListAll && len(lbSubnets) > 0 {
		if err := o.backendRules(ctx, d, lbSubnets, sources, remove, rulesOf); err != nil {
			return err
		}
	}
	marker := ruleMarker(d)
	for _, id := range sortedKeys(want) {
		if err := o.syncRules(ctx, id, marker, want[id]); err != nil {
			return err
		}
	}
	return nil
}

// backendRules adds mode All's rules between the load balancer subnets and
// the node subnets: the subnets of the load balancer's VCN that hold a
// backend's address. Every other subnet of the VCN gets no rule of ours,
// so that the rules of nodes that moved away are removed.
func (o *Ops) backendRules(ctx context.Context, d *Desired, lbSubnets []subnetInfo, sources []string, remove bool, rulesOf func(string) *listRules) error {
	vcnSubnets, err := o.vcnSubnets(ctx, lbSubnets[0])
	if err != nil {
		return err
	}
	for _, s := range vcnSubnets {
		rulesOf(s.list)
	}
	if remove {
		return nil
	}
	var nodeSubnets []subnetInfo
	for _, b := range d.Backends {
		ip, err := netip.ParseAddr(b.Address)
		if err != nil {
			return fmt.Errorf("node %s: address %q: %w", b.NodeName, b.Address, err)
		}
		i := slices.IndexFunc(vcnSubnets, func(s subnetInfo) bool {
			p, err := netip.ParsePrefix(s.cidr)
			return err == nil && p.Contains(ip)
		})
		if i < 0 {
			return fmt.Errorf("node %s (%s) is in no subnet of VCN %s (compartment %s), so security list mode All cannot open it to the load balancer: "+
				"use mode Frontend and open the node subnets yourself", b.NodeName, ip, lbSubnets[0].vcn, lbSubnets[0].compartment)
		}
		if !slices.ContainsFunc(nodeSubnets, func(s subnetInfo) bool { return s.id == vcnSubnets[i].id }) {
			nodeSubnets = append(nodeSubnets, vcnSubnets[i])
		}
	}
	for _, lb := range lbSubnets {
		for _, n := range nodeSubnets {
			for _, p := range backendPorts(d) {
				rulesOf(lb.list).egress[ruleKey{peer: n.cidr, protocol: p.protocol, port: p.port}] = true
				rulesOf(n.list).ingress[ruleKey{peer: lb.cidr, protocol: p.protocol, port: p.port}] = true
			}
		}
	}
	// An NLB that preserves the client's address shows it to the nodes.
	if d.Kind == KindNLB && d.PreserveSource {
		for _, n := range nodeSubnets {
			for _, src := range sources {
				for _, l := range d.Listeners {
					rulesOf(n.list).ingress[ruleKey{peer: src, protocol: protocolNumber(l.Protocol), port: int(l.NodePort)}] = true
				}
			}
		}
	}
	return nil
}

// subnet reads a subnet and the security list managed for it.
func (o *Ops) subnet(ctx context.Context, id string) (subnetInfo, error) {
	resp, err := o.net.GetSubnet(ctx, core.GetSubnetRequest{SubnetId: &id})
	if err != nil {
		return subnetInfo{}, ocierr.Wrap("GetSubnet", id, err)
	}
	return o.subnetInfoOf(resp.Subnet)
}

func (o *Ops) subnetInfoOf(s core.Subnet) (subnetInfo, error) {
	id := deref(s.Id)
	out := subnetInfo{id: id, cidr: deref(s.CidrBlock), vcn: deref(s.VcnId), compartment: deref(s.CompartmentId), list: o.secLists[id]}
	if out.list == "" {
		if len(s.SecurityListIds) == 0 {
			return subnetInfo{}, fmt.Errorf("subnet %s has no security list to manage (set loadBalancer.securityLists)", id)
		}
		out.list = s.SecurityListIds[0]
	}
	return out, nil
}

// vcnSubnets lists the subnets of a subnet's VCN, in its compartment.
func (o *Ops) vcnSubnets(ctx context.Context, of subnetInfo) ([]subnetInfo, error) {
	var out []subnetInfo
	req := core.ListSubnetsRequest{CompartmentId: &of.compartment, VcnId: &of.vcn, Limit: common.Int(pageSize)}
	for range maxPages {
		resp, err := o.net.ListSubnets(ctx, req)
		if err != nil {
			return nil, ocierr.Wrap("ListSubnets", "VCN "+of.vcn, err)
		}
		for _, s := range resp.Items {
			if s.LifecycleState != "" && s.LifecycleState != core.SubnetLifecycleStateAvailable {
				continue
			}
			info, err := o.subnetInfoOf(s)
			if err != nil {
				return nil, err
			}
			out = append(out, info)
		}
		if resp.OpcNextPage == nil {
			return out, nil
		}
		req.Page = resp.OpcNextPage
	}
	return nil, fmt.Errorf("ListSubnets of VCN %s: more than %d pages", of.vcn, maxPages)
}

// syncRules makes the rules of security list id carrying marker equal
// want, writing only if they differ.
func (o *Ops) syncRules(ctx context.Context, id, marker string, want *listRules) error {
	resp, err := o.net.GetSecurityList(ctx, core.GetSecurityListRequest{SecurityListId: &id})
	if err != nil {
		return ocierr.Wrap("GetSecurityList", id, err)
	}
	var keepIn []core.IngressSecurityRule
	haveIn := map[ruleKey]bool{}
	for _, r := range resp.IngressSecurityRules {
		if deref(r.Description) != marker {
			keepIn = append(keepIn, r)
			continue
		}
		haveIn[ruleKey{peer: deref(r.Source), protocol: deref(r.Protocol), port: portOf(r.TcpOptions, r.UdpOptions)}] = true
	}
	var keepEg []core.EgressSecurityRule
	haveEg := map[ruleKey]bool{}
	for _, r := range resp.EgressSecurityRules {
		if deref(r.Description) != marker {
			keepEg = append(keepEg, r)
			continue
		}
		haveEg[ruleKey{peer: deref(r.Destination), protocol: deref(r.Protocol), port: portOf(r.TcpOptions, r.UdpOptions)}] = true
	}
	if mapsEqual(haveIn, want.ingress) && mapsEqual(haveEg, want.egress) {
		return nil
	}
	for _, k := range sortedRuleKeys(want.ingress) {
		r := core.IngressSecurityRule{Source: common.String(k.peer), SourceType: core.IngressSecurityRuleSourceTypeCidrBlock,
			Protocol: common.String(k.protocol), IsStateless: common.Bool(false), Description: common.String(marker)}
		r.TcpOptions, r.UdpOptions = portOptions(k)
		keepIn = append(keepIn, r)
	}
	for _, k := range sortedRuleKeys(want.egress) {
		r := core.EgressSecurityRule{Destination: common.String(k.peer), DestinationType: core.EgressSecurityRuleDestinationTypeCidrBlock,
			Protocol: common.String(k.protocol), IsStateless: common.Bool(false), Description: common.String(marker)}
		r.TcpOptions, r.UdpOptions = portOptions(k)
		keepEg = append(keepEg, r)
	}
	if keepIn == nil {
		keepIn = []core.IngressSecurityRule{}
	}
	if keepEg == nil {
		keepEg = []core.EgressSecurityRule{}
	}
	klog.V(2).InfoS("Updating security list", "securityList", id, "ingress", len(want.ingress), "egress", len(want.egress), "marker", marker)
	_, err = o.net.UpdateSecurityList(ctx, core.UpdateSecurityListRequest{
		SecurityListId: &id, IfMatch: resp.Etag,
		UpdateSecurityListDetails: core.UpdateSecurityListDetails{IngressSecurityRules: keepIn, EgressSecurityRules: keepEg},
	})
	if ocierr.Status(err) == 412 {
		return api.NewRetryError(fmt.Sprintf("security list %s changed while we updated it (etag mismatch)", id), o.timing.Retry)
	}
	return ocierr.Wrap("UpdateSecurityList", id, err)
}

func portOf(tcp *core.TcpOptions, udp *core.UdpOptions) int {
	switch {
	case tcp != nil && tcp.DestinationPortRange != nil:
		return deref(tcp.DestinationPortRange.Min)
	case udp != nil && udp.DestinationPortRange != nil:
		return deref(udp.DestinationPortRange.Min)
	}
	return 0
}

func portOptions(k ruleKey) (*core.TcpOptions, *core.UdpOptions) {
	ports := &core.PortRange{Min: common.Int(k.port), Max: common.Int(k.port)}
	if k.protocol == "17" {
		return nil, &core.UdpOptions{DestinationPortRange: ports}
	}
	return &core.TcpOptions{DestinationPortRange: ports}, nil
}

func sortedRuleKeys(m map[ruleKey]bool) []ruleKey {
	keys := make([]ruleKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b ruleKey) int {
		return strings.Compare(fmt.Sprintf("%s/%s/%05d", a.peer, a.protocol, a.port), fmt.Sprintf("%s/%s/%05d", b.peer, b.protocol, b.port))
	})
	return keys
}

// protocolNumber is the IANA number OCI security rules use.
func protocolNumber(p lbspec.Protocol) string {
	if p == lbspec.UDP {
		return "17"
	}
	return "6"
}

func mapsEqual(a, b map[ruleKey]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
