package lbops

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	"github.com/oracle/oci-go-sdk/v65/networkloadbalancer"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/lb/lbkit"
	"github.com/ccmkit/ccm/internal/oci/ocierr"
)

// Network security groups (NSGs) of a load balancer.
//
// The Service's NSGs (Settings.NSGs) are the load balancer's whole list,
// as the public OCI CCM keeps it: set at creation (networkSecurityGroupIds)
// and replaced with UpdateNetworkSecurityGroups when it differs, so that an
// NSG dropped from the annotation is detached.
//
// In mode SecurityRuleNSG (security-rule-management-mode: NSG) the CCM
// also manages a frontend NSG of the Service's own, attached with them:
//
//   - it is found by display name (nsgName) in the compartment and
//     recognized by its freeform tags (ours, or those of the public OCI
//     CCM for the same Service, so that a cluster moving over keeps its
//     NSG), and created only when there is none: a retried sync finds the
//     one the last try created;
//   - its rules are the Service's ingress rules: from each source range
//     (0.0.0.0/0 without) to each listener port; with backend NSGs
//     (Settings.BackendNSGs), egress rules to each of them on the NodePorts
//     and the health check ports;
//   - each backend NSG gets ingress rules from the frontend NSG on those
//     ports (and, for an NLB that preserves the client's address, from the
//     source ranges on the NodePorts, as the nodes see the clients);
//   - it is deleted with the Service, after its load balancer and after
//     our rules in the backend NSGs, which name it (OCI refuses to delete an
//     NSG that a load balancer or another NSG's rule still uses).
//
// Our rules carry ruleMarker in their description (the public OCI CCM's
// carry the bare Service UID; both are ours to replace). No other rule,
// and no NSG we did not create, is ever changed.
const SecurityRuleNSG = "NSG"

// MaxNSGsPerLB: "A VNIC can be added to a maximum of five NSGs" (the
// Networking NSG page); both load balancer services refuse more
// (cloudsim's MaxNSGs). The managed frontend NSG counts.
const MaxNSGsPerLB = 5

// maxNSGRulesPerAdd: "You can add up to 25 rules in a single
// AddNetworkSecurityGroupSecurityRules operation" (oci-go-sdk v65
// core.AddNetworkSecurityGroupSecurityRulesDetails).
const maxNSGRulesPerAdd = 25

// Freeform tags of the public OCI CCM's managed NSG, recognized so that a
// Service it managed keeps its NSG.
const (
	upstreamTagCreatedBy  = "CreatedBy"
	upstreamTagServiceUID = "ServiceUid"
)

// nsgName is the managed frontend NSG's display name, the public OCI
// CCM's form (namespace/name/uid/nsg), cut to 255 characters.
func nsgName(d *Desired) string {
	name := fmt.Sprintf("%s/%s/%s/nsg", d.Ref.Service.Namespace, d.Ref.Service.Name, d.Ref.UID)
	if len(name) > 255 {
		name = name[:255]
	}
	return name
}

// isOurNSG reports whether an NSG's tags say it is the Service's managed one.
func isOurNSG(d *Desired, tags map[string]string) bool {
	uid := string(d.Ref.UID)
	return tags[TagServiceUID] == uid || (tags[upstreamTagCreatedBy] == "CCM" && tags[upstreamTagServiceUID] == uid)
}

// isOurRule reports whether a rule's description marks it as the Service's.
func isOurRule(d *Desired, description string) bool {
	return description == ruleMarker(d) || description == string(d.Ref.UID)
}

// nsgRule identifies a rule by what matters to us; peer is a CIDR, or an
// NSG when peerNSG.
type nsgRule struct {
	ingress  bool
	peer     string
	peerNSG  bool
	protocol string
	port     int
}

// frontendRules are the rules of the managed frontend NSG.
func frontendRules(d *Desired) map[nsgRule]bool {
	out := map[nsgRule]bool{}
	sources := d.SourceRanges
	if len(sources) == 0 {
		sources = []string{"0.0.0.0/0"}
	}
	for _, src := range sources {
		for _, l := range d.Listeners {
			out[nsgRule{ingress: true, peer: src, protocol: protocolNumber(l.Protocol), port: int(l.Port)}] = true
		}
	}
	for _, b := range d.BackendNSGs {
		for _, p := range backendPorts(d) {
			out[nsgRule{peer: b, peerNSG: true, protocol: p.protocol, port: p.port}] = true
		}
	}
	return out
}

// backendRules are our rules in each backend NSG.
func backendRules(d *Desired, frontend string) map[nsgRule]bool {
	out := map[nsgRule]bool{}
	for _, p := range backendPorts(d) {
		out[nsgRule{ingress: true, peer: frontend, peerNSG: true, protocol: p.protocol, port: p.port}] = true
	}
	if d.Kind == KindNLB && d.PreserveSource {
		sources := d.SourceRanges
		if len(sources) == 0 {
			sources = []string{"0.0.0.0/0"}
		}
		for _, src := range sources {
			for _, l := range d.Listeners {
				out[nsgRule{ingress: true, peer: src, protocol: protocolNumber(l.Protocol), port: int(l.NodePort)}] = true
			}
		}
	}
	return out
}

type protoPort struct {
	protocol string
	port     int
}

// backendPorts are the ports a load balancer opens to a node: each
// listener's NodePort and its backend set's health check port (TCP or
// HTTP on its port; a UDP set's default check is HTTP on kube-proxy's).
func backendPorts(d *Desired) []protoPort {
	var out []protoPort
	add := func(p protoPort) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, l := range d.Listeners {
		add(protoPort{protocolNumber(l.Protocol), int(l.NodePort)})
		add(protoPort{"6", healthFor(d, l).Port})
	}
	return out
}

// newFrontendNSG stands for the id of the frontend NSG a plan creates,
// in the rules that name it, until it is created.
const newFrontendNSG = "(the new frontend NSG)"

// nsgPlan is what a sync writes to NSGs before it touches the load
// balancer (in mode SecurityRuleNSG: the managed frontend NSG, found or
// created, with its rules, and our rules in the backend NSGs), computed
// reading only.
type nsgPlan struct {
	// create: the managed frontend NSG is created first.
	create bool
	// rules are the rule changes per NSG; newFrontendNSG stands for the
	// frontend NSG's id when it is created.
	rules []nsgRulesUpdate
}

// nsgRulesUpdate is one NSG's rule changes.
type nsgRulesUpdate struct {
	nsg    string
	remove []string                      // rule ids
	add    []core.AddSecurityRuleDetails // in chunks of maxNSGRulesPerAdd when applied
}

// planNSGs computes, reading only, the NSG writes and d.attachNSGs
// (with newFrontendNSG for a frontend NSG still to create).
func (o *Ops) planNSGs(ctx context.Context, d *Desired) (nsgPlan, error) {
	d.attachNSGs = slices.Clone(d.NSGs)
	if d.SecurityListMode != SecurityRuleNSG {
		return nsgPlan{}, nil
	}
	if o.net == nil {
		return nsgPlan{}, fmt.Errorf("security rule mode NSG needs the VirtualNetwork API")
	}
	if len(d.NSGs)+1 > MaxNSGsPerLB {
		return nsgPlan{}, fmt.Errorf("%d network security groups and the managed frontend one make %d; a load balancer takes at most %d",
			len(d.NSGs), len(d.NSGs)+1, MaxNSGsPerLB)
	}
	var p nsgPlan
	frontend, err := o.findNSG(ctx, d)
	if err != nil {
		return nsgPlan{}, err
	}
	if frontend == "" {
		p.create, frontend = true, newFrontendNSG
	}
	if !slices.Contains(d.attachNSGs, frontend) {
		d.attachNSGs = append(d.attachNSGs, frontend)
	}
	up, err := o.planNSGRules(ctx, d, frontend, frontendRules(d), p.create)
	if err != nil {
		return nsgPlan{}, err
	}
	p.rules = append(p.rules, up)
	want := backendRules(d, frontend)
	for _, b := range d.BackendNSGs {
		up, err := o.planNSGRules(ctx, d, b, want, false)
		if err != nil {
			return nsgPlan{}, err
		}
		p.rules = append(p.rules, up)
	}
	return p, nil
}

// applyNSGs writes an NSG plan: the frontend NSG first, then each NSG's
// rule changes, with the new frontend NSG's id in place of newFrontendNSG.
func (o *Ops) applyNSGs(ctx context.Context, d *Desired, p nsgPlan) error {
	id := newFrontendNSG
	if p.create {
		var err error
		if id, err = o.createNSG(ctx, d); err != nil {
			return err
		}
		for i, n := range d.attachNSGs {
			if n == newFrontendNSG {
				d.attachNSGs[i] = id
			}
		}
	}
	fill := func(s *string) *string {
		if deref(s) == newFrontendNSG {
			return &id
		}
		return s
	}
	for _, up := range p.rules {
		nsg := deref(fill(&up.nsg))
		if len(up.remove) > 0 {
			klog.FromContext(ctx).V(2).Info("Removing NSG rules", "nsg", nsg, "rules", len(up.remove), "service", d.Ref.Service)
			if _, err := o.net.RemoveNetworkSecurityGroupSecurityRules(ctx, core.RemoveNetworkSecurityGroupSecurityRulesRequest{
				NetworkSecurityGroupId: &nsg, RemoveNetworkSecurityGroupSecurityRulesDetails: core.RemoveNetworkSecurityGroupSecurityRulesDetails{SecurityRuleIds: up.remove},
			}); err != nil {
				return ocierr.Wrap("RemoveNetworkSecurityGroupSecurityRules", nsg, err)
			}
		}
		for chunk := range slices.Chunk(up.add, maxNSGRulesPerAdd) {
			for i := range chunk {
				chunk[i].Source, chunk[i].Destination = fill(chunk[i].Source), fill(chunk[i].Destination)
			}
			klog.FromContext(ctx).V(2).Info("Adding NSG rules", "nsg", nsg, "rules", len(chunk), "service", d.Ref.Service)
			if _, err := o.net.AddNetworkSecurityGroupSecurityRules(ctx, core.AddNetworkSecurityGroupSecurityRulesRequest{
				NetworkSecurityGroupId: &nsg, AddNetworkSecurityGroupSecurityRulesDetails: core.AddNetworkSecurityGroupSecurityRulesDetails{SecurityRules: chunk},
			}); err != nil {
				return ocierr.Wrap("AddNetworkSecurityGroupSecurityRules", nsg, err)
			}
		}
	}
	return nil
}

// writes are the plan's writes, for a Plan.
func (p nsgPlan) writes() []lbkit.PlannedWrite {
	var out []lbkit.PlannedWrite
	if p.create {
		out = append(out, lbkit.PlannedWrite{Action: "CreateNetworkSecurityGroup", Object: "the managed frontend NSG"})
	}
	for _, up := range p.rules {
		if len(up.remove) > 0 {
			out = append(out, lbkit.PlannedWrite{Action: "RemoveNetworkSecurityGroupSecurityRules", Object: "NSG " + up.nsg,
				Change: fmt.Sprintf("-%d rules", len(up.remove))})
		}
		for chunk := range slices.Chunk(up.add, maxNSGRulesPerAdd) {
			out = append(out, lbkit.PlannedWrite{Action: "AddNetworkSecurityGroupSecurityRules", Object: "NSG " + up.nsg,
				Change: fmt.Sprintf("+%d rules", len(chunk))})
		}
	}
	return out
}

// attachNSGs replaces the load balancer's NSGs when they differ from
// d.attachNSGs; order does not matter.
func (o *Ops) attachNSGs(ctx context.Context, drv driver, d *Desired, a *actual) error {
	want := slices.Sorted(slices.Values(d.attachNSGs))
	if slices.Equal(want, a.NSGs) {
		return nil
	}
	klog.FromContext(ctx).Info("Updating load balancer NSGs", "service", d.Ref.Service, "kind", d.Kind, "id", a.ID, "from", a.NSGs, "to", want)
	return o.apply(ctx, drv, a.ID, func(ctx context.Context) (string, error) { return drv.setNSGs(ctx, a.ID, want) })
}

// deleteNSGs removes, once the load balancer is gone, our rules from the
// backend NSGs and then the managed frontend NSG.
func (o *Ops) deleteNSGs(ctx context.Context, d *Desired) error {
	if d.SecurityListMode != SecurityRuleNSG || o.net == nil {
		return nil
	}
	for _, b := range d.BackendNSGs {
		up, err := o.planNSGRules(ctx, d, b, nil, false)
		if err != nil {
			return err
		}
		if err := o.applyNSGs(ctx, d, nsgPlan{rules: []nsgRulesUpdate{up}}); err != nil {
			return err
		}
	}
	frontend, err := o.findNSG(ctx, d)
	if err != nil || frontend == "" {
		return err
	}
	klog.FromContext(ctx).Info("Deleting the managed frontend NSG", "service", d.Ref.Service, "nsg", frontend)
	_, err = o.net.DeleteNetworkSecurityGroup(ctx, core.DeleteNetworkSecurityGroupRequest{NetworkSecurityGroupId: &frontend})
	if ocierr.IsNotFound(err) {
		return nil
	}
	return ocierr.Wrap("DeleteNetworkSecurityGroup", frontend, err)
}

// findNSG returns the Service's managed frontend NSG, or "".
func (o *Ops) findNSG(ctx context.Context, d *Desired) (string, error) {
	name := nsgName(d)
	req := core.ListNetworkSecurityGroupsRequest{CompartmentId: &o.compartment, DisplayName: &name, Limit: common.Int(pageSize)}
	var found []string
	for range maxPages {
		resp, err := o.net.ListNetworkSecurityGroups(ctx, req)
		if err != nil {
			return "", ocierr.Wrap("ListNetworkSecurityGroups", "displayName="+name, err)
		}
		for _, n := range resp.Items {
			live := n.LifecycleState == "" || n.LifecycleState == core.NetworkSecurityGroupLifecycleStateAvailable ||
				n.LifecycleState == core.NetworkSecurityGroupLifecycleStateProvisioning
			if live && isOurNSG(d, n.FreeformTags) {
				found = append(found, deref(n.Id))
			}
		}
		if resp.OpcNextPage == nil {
			break
		}
		req.Page = resp.OpcNextPage
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	slices.Sort(found)
	return "", fmt.Errorf("%d managed NSGs named %s in compartment %s: %v; delete the extra ones", len(found), name, o.compartment, found)
}

// createNSG creates the managed frontend NSG in the VCN of the load
// balancer's subnet. No retry token: a retry token replays a deleted NSG
// for 24 hours, and a create whose answer was lost is found by findNSG on
// the next sync.
func (o *Ops) createNSG(ctx context.Context, d *Desired) (string, error) {
	if len(d.Subnets) == 0 {
		return "", fmt.Errorf("no subnet to find the VCN of the managed NSG")
	}
	s, err := o.net.GetSubnet(ctx, core.GetSubnetRequest{SubnetId: &d.Subnets[0]})
	if err != nil {
		return "", ocierr.Wrap("GetSubnet", d.Subnets[0], err)
	}
	name := nsgName(d)
	resp, err := o.net.CreateNetworkSecurityGroup(ctx, core.CreateNetworkSecurityGroupRequest{CreateNetworkSecurityGroupDetails: core.CreateNetworkSecurityGroupDetails{
		CompartmentId: &o.compartment, VcnId: s.VcnId, DisplayName: &name, FreeformTags: freeformTags(d),
	}})
	if err != nil {
		return "", ocierr.Wrap("CreateNetworkSecurityGroup", name, err)
	}
	klog.FromContext(ctx).Info("Created the managed frontend NSG", "service", d.Ref.Service, "nsg", deref(resp.Id), "vcn", deref(s.VcnId))
	return deref(resp.Id), nil
}

// planNSGRules computes the changes that make our rules in NSG id equal
// want (nil: none), reading only; fresh: the NSG is still to be created,
// so it has no rule yet.
func (o *Ops) planNSGRules(ctx context.Context, d *Desired, id string, want map[nsgRule]bool, fresh bool) (nsgRulesUpdate, error) {
	up := nsgRulesUpdate{nsg: id}
	have := map[nsgRule]bool{}
	req := core.ListNetworkSecurityGroupSecurityRulesRequest{NetworkSecurityGroupId: &id, Limit: common.Int(pageSize)}
	for page := 0; !fresh && page < maxPages; page++ {
		resp, err := o.net.ListNetworkSecurityGroupSecurityRules(ctx, req)
		if err != nil {
			return up, ocierr.Wrap("ListNetworkSecurityGroupSecurityRules", id, err)
		}
		for _, r := range resp.Items {
			if !isOurRule(d, deref(r.Description)) {
				continue
			}
			k := ruleOfNSG(r)
			if want[k] && !have[k] {
				have[k] = true
				continue
			}
			up.remove = append(up.remove, deref(r.Id)) // not wanted, or a duplicate
		}
		if resp.OpcNextPage == nil {
			break
		}
		req.Page = resp.OpcNextPage
	}
	for _, k := range sortedNSGRules(want) {
		if !have[k] {
			up.add = append(up.add, addDetails(k, ruleMarker(d)))
		}
	}
	return up, nil
}

// ruleOfNSG reads a rule as an nsgRule.
func ruleOfNSG(r core.SecurityRule) nsgRule {
	k := nsgRule{ingress: r.Direction == core.SecurityRuleDirectionIngress, protocol: deref(r.Protocol), port: portOf(r.TcpOptions, r.UdpOptions)}
	if k.ingress {
		k.peer, k.peerNSG = deref(r.Source), r.SourceType == core.SecurityRuleSourceTypeNetworkSecurityGroup
	} else {
		k.peer, k.peerNSG = deref(r.Destination), r.DestinationType == core.SecurityRuleDestinationTypeNetworkSecurityGroup
	}
	return k
}

// addDetails is the stateful rule k, marked as ours.
func addDetails(k nsgRule, marker string) core.AddSecurityRuleDetails {
	r := core.AddSecurityRuleDetails{Protocol: common.String(k.protocol), IsStateless: common.Bool(false), Description: common.String(marker)}
	r.TcpOptions, r.UdpOptions = portOptions(ruleKey{peer: k.peer, protocol: k.protocol, port: k.port})
	switch {
	case k.ingress:
		r.Direction, r.Source, r.SourceType = core.AddSecurityRuleDetailsDirectionIngress, common.String(k.peer), core.AddSecurityRuleDetailsSourceTypeCidrBlock
		if k.peerNSG {
			r.SourceType = core.AddSecurityRuleDetailsSourceTypeNetworkSecurityGroup
		}
	default:
		r.Direction, r.Destination, r.DestinationType = core.AddSecurityRuleDetailsDirectionEgress, common.String(k.peer), core.AddSecurityRuleDetailsDestinationTypeCidrBlock
		if k.peerNSG {
			r.DestinationType = core.AddSecurityRuleDetailsDestinationTypeNetworkSecurityGroup
		}
	}
	return r
}

func sortedNSGRules(m map[nsgRule]bool) []nsgRule {
	out := make([]nsgRule, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b nsgRule) int {
		return strings.Compare(fmt.Sprintf("%v/%s/%s/%05d", a.ingress, a.peer, a.protocol, a.port), fmt.Sprintf("%v/%s/%s/%05d", b.ingress, b.peer, b.protocol, b.port))
	})
	return out
}

// setNSGs of the two services: UpdateNetworkSecurityGroups, whose list
// replaces the load balancer's (UpdateNetworkSecurityGroupsDetails).
func (d lbDriver) setNSGs(ctx context.Context, lbID string, ids []string) (string, error) {
	resp, err := d.api.UpdateNetworkSecurityGroups(ctx, loadbalancer.UpdateNetworkSecurityGroupsRequest{LoadBalancerId: &lbID,
		UpdateNetworkSecurityGroupsDetails: loadbalancer.UpdateNetworkSecurityGroupsDetails{NetworkSecurityGroupIds: nonNil(ids)}})
	if err != nil {
		return "", ocierr.Wrap("UpdateNetworkSecurityGroups", lbID, err)
	}
	return deref(resp.OpcWorkRequestId), nil
}

func (d nlbDriver) setNSGs(ctx context.Context, lbID string, ids []string) (string, error) {
	resp, err := d.api.UpdateNetworkSecurityGroups(ctx, networkloadbalancer.UpdateNetworkSecurityGroupsRequest{NetworkLoadBalancerId: &lbID,
		UpdateNetworkSecurityGroupsDetails: networkloadbalancer.UpdateNetworkSecurityGroupsDetails{NetworkSecurityGroupIds: nonNil(ids)}})
	if err != nil {
		return "", ocierr.Wrap("UpdateNetworkSecurityGroups", lbID, err)
	}
	return deref(resp.OpcWorkRequestId), nil
}

// nonNil sends an empty list as [] (detach all), not as an absent field.
func nonNil(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}
