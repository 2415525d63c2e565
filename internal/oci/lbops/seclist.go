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

	"github.com/ccmkit/ccm/internal/lb/lbspec"
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
// everyone else's, which are never touched (but the public OCI CCM's for
// the Service, which are taken over: planList).
func ruleMarker(d *Desired) string { return ruleMarkerPrefix + string(d.Ref.UID) }

const ruleMarkerPrefix = "ccmkit.io/service-uid="

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
	ups, err := o.planSecurityRules(ctx, d, subnets, remove)
	if err != nil {
		return err
	}
	return o.applySecurityRules(ctx, ups)
}

// planSecurityRules computes, reading only, the security list updates
// that make the managed lists hold exactly our rules for the Service.
func (o *Ops) planSecurityRules(ctx context.Context, d *Desired, subnets []string, remove bool) ([]listUpdate, error) {
	if d.SecurityListMode != SecurityListFrontend && d.SecurityListMode != SecurityListAll {
		return nil, nil
	}
	if o.net == nil {
		return nil, fmt.Errorf("security list mode %s needs the VirtualNetwork API", d.SecurityListMode)
	}
	lbSubnets := make([]subnetInfo, 0, len(subnets))
	for _, id := range subnets {
		s, err := o.subnet(ctx, id)
		if err != nil {
			return nil, err
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
			return nil, err
		}
	}
	var ups []listUpdate
	for _, id := range sortedKeys(want) {
		up, err := o.planList(ctx, id, d, want[id])
		if err != nil {
			return nil, err
		}
		if up != nil {
			ups = append(ups, *up)
		}
	}
	return ups, nil
}

// applySecurityRules writes planned security list updates.
func (o *Ops) applySecurityRules(ctx context.Context, ups []listUpdate) error {
	for _, up := range ups {
		klog.FromContext(ctx).V(2).Info("Updating security list", "securityList", up.id, "change", up.change)
		_, err := o.net.UpdateSecurityList(ctx, core.UpdateSecurityListRequest{
			SecurityListId: &up.id, IfMatch: up.etag,
			UpdateSecurityListDetails: core.UpdateSecurityListDetails{IngressSecurityRules: up.ingress, EgressSecurityRules: up.egress},
		})
		if ocierr.Status(err) == 412 {
			return api.NewRetryError(fmt.Sprintf("security list %s changed while we updated it (etag mismatch)", up.id), o.timing.Retry)
		}
		if err != nil {
			return ocierr.Wrap("UpdateSecurityList", up.id, err)
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

// listUpdate is one planned UpdateSecurityList: the list's whole new
// rules, sent with the etag they were computed from.
type listUpdate struct {
	id      string
	etag    *string
	ingress []core.IngressSecurityRule
	egress  []core.EgressSecurityRule
	change  string // what changes, for the plan and the log
}

// planList computes the update that makes the rules of security list id
// that are ours equal want; nil when they already do. Ours are the rules
// marked with ruleMarker, and the public OCI CCM's rules on the Service's
// own ports (incumbentRules): those are replaced by ours (or dropped) when
// the list is written. An incumbent rule on another port that allows what
// we want (a listener port, kube-proxy's 10256: ports several Services
// share) counts as present and is left in place, ours to neither write
// again nor delete, since another of its Services may need it.
func (o *Ops) planList(ctx context.Context, id string, d *Desired, want *listRules) (*listUpdate, error) {
	resp, err := o.net.GetSecurityList(ctx, core.GetSecurityListRequest{SecurityListId: &id})
	if err != nil {
		return nil, ocierr.Wrap("GetSecurityList", id, err)
	}
	marker := ruleMarker(d)
	own := map[int]bool{}
	for _, p := range d.ServiceNodePorts {
		own[p] = true
	}
	ins := make([]ruleEntry, len(resp.IngressSecurityRules))
	for i, r := range resp.IngressSecurityRules {
		ins[i] = ruleEntry{key: ruleKey{peer: deref(r.Source), protocol: deref(r.Protocol), port: portOf(r.TcpOptions, r.UdpOptions)},
			desc: deref(r.Description), upstream: upstreamShape(r.Protocol, r.IsStateless, r.TcpOptions, r.UdpOptions, r.IcmpOptions) &&
				(r.SourceType == "" || r.SourceType == core.IngressSecurityRuleSourceTypeCidrBlock)}
	}
	egs := make([]ruleEntry, len(resp.EgressSecurityRules))
	for i, r := range resp.EgressSecurityRules {
		egs[i] = ruleEntry{key: ruleKey{peer: deref(r.Destination), protocol: deref(r.Protocol), port: portOf(r.TcpOptions, r.UdpOptions)},
			desc: deref(r.Description), upstream: upstreamShape(r.Protocol, r.IsStateless, r.TcpOptions, r.UdpOptions, r.IcmpOptions) &&
				(r.DestinationType == "" || r.DestinationType == core.EgressSecurityRuleDestinationTypeCidrBlock)}
	}
	in, eg := classify(ins, want.ingress, marker, own), classify(egs, want.egress, marker, own)
	if in.inSync() && eg.inSync() {
		return nil, nil
	}
	up := &listUpdate{id: id, etag: resp.Etag, ingress: []core.IngressSecurityRule{}, egress: []core.EgressSecurityRule{}}
	for _, i := range in.keep {
		up.ingress = append(up.ingress, resp.IngressSecurityRules[i])
	}
	for _, k := range sortedRuleKeys(in.final) {
		r := core.IngressSecurityRule{Source: common.String(k.peer), SourceType: core.IngressSecurityRuleSourceTypeCidrBlock,
			Protocol: common.String(k.protocol), IsStateless: common.Bool(false), Description: common.String(marker)}
		r.TcpOptions, r.UdpOptions = portOptions(k)
		up.ingress = append(up.ingress, r)
	}
	for _, i := range eg.keep {
		up.egress = append(up.egress, resp.EgressSecurityRules[i])
	}
	for _, k := range sortedRuleKeys(eg.final) {
		r := core.EgressSecurityRule{Destination: common.String(k.peer), DestinationType: core.EgressSecurityRuleDestinationTypeCidrBlock,
			Protocol: common.String(k.protocol), IsStateless: common.Bool(false), Description: common.String(marker)}
		r.TcpOptions, r.UdpOptions = portOptions(k)
		up.egress = append(up.egress, r)
	}
	up.change = fmt.Sprintf("ingress %s; egress %s", in.describe(), eg.describe())
	return up, nil
}

// ruleEntry is a rule of a list as planList sees it: its key, its
// description, and whether it has the shape of the public OCI CCM's rules.
type ruleEntry struct {
	key      ruleKey
	desc     string
	upstream bool
}

// ruleSet is one direction of a security list, sorted out for planList.
type ruleSet struct {
	keep      []int            // the rules (indexes) we leave as they are
	have      map[ruleKey]bool // marked ours
	incumbent map[ruleKey]bool // the public OCI CCM's, on the Service's own ports
	shared    map[ruleKey]bool // wanted keys an incumbent rule on a shared port allows
	want      map[ruleKey]bool
	final     map[ruleKey]bool // the marked rules after a write
}

// classify sorts a list's rules for want.
func classify(rules []ruleEntry, want map[ruleKey]bool, marker string, own map[int]bool) ruleSet {
	s := ruleSet{have: map[ruleKey]bool{}, incumbent: map[ruleKey]bool{}, shared: map[ruleKey]bool{}, want: want, final: map[ruleKey]bool{}}
	for i, r := range rules {
		incumbent := r.desc == "" && r.upstream
		switch {
		case r.desc == marker:
			s.have[r.key] = true
		case incumbent && own[r.key.port]:
			s.incumbent[r.key] = true
		case incumbent && want[r.key]:
			s.shared[r.key] = true
			s.keep = append(s.keep, i)
		default:
			s.keep = append(s.keep, i)
		}
	}
	for k := range want {
		if !s.shared[k] || s.have[k] {
			s.final[k] = true
		}
	}
	return s
}

// upstreamShape: the public OCI CCM writes stateful TCP rules to one
// destination port and nothing else (makeIngressSecurityRule and
// makeEgressSecurityRule in its load_balancer_security_lists.go), with no
// description.
func upstreamShape(protocol *string, stateless *bool, tcp *core.TcpOptions, udp *core.UdpOptions, icmp *core.IcmpOptions) bool {
	if deref(protocol) != "6" || deref(stateless) || udp != nil || icmp != nil || tcp == nil || tcp.SourcePortRange != nil {
		return false
	}
	r := tcp.DestinationPortRange
	return r != nil && r.Min != nil && r.Max != nil && *r.Min == *r.Max
}

// inSync: no write is needed. Every rule we want is there (ours, or the
// incumbent's), and none of ours or of the incumbent's own is unwanted.
func (s ruleSet) inSync() bool {
	for k := range s.final {
		if !s.have[k] && !s.incumbent[k] {
			return false
		}
	}
	for k := range s.have {
		if !s.final[k] {
			return false
		}
	}
	for k := range s.incumbent {
		if !s.want[k] {
			return false
		}
	}
	return true
}

// describe says what a write changes, e.g. "+2 -1 (1 of the public OCI
// CCM's taken over)".
func (s ruleSet) describe() string {
	var add, del, taken int
	for k := range s.final {
		switch {
		case s.incumbent[k]:
			taken++
		case !s.have[k]:
			add++
		}
	}
	for k := range s.have {
		if !s.final[k] {
			del++
		}
	}
	for k := range s.incumbent {
		if !s.want[k] {
			del++
		}
	}
	out := fmt.Sprintf("+%d -%d", add, del)
	if taken > 0 {
		out += fmt.Sprintf(" (%d of the public OCI CCM's taken over)", taken)
	}
	return out
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
