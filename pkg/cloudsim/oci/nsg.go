package oci

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// Network security groups: sets of security rules for the VNICs (and load
// balancers) added to them, in one VCN. "NSG security rules function the
// same as security list rules", but a rule's source or destination may be
// an NSG (https://docs.oracle.com/en-us/iaas/Content/Network/Concepts/networksecuritygroups.htm).
const (
	// MaxNSGRules bounds an NSG's rules, ingress and egress together: the
	// figure OCI's Networking service limits give (120); the SDK comments
	// do not state it, so it is cloudsim's reading of the limits page.
	MaxNSGRules = 120
	// MaxNSGRulesPerCall: "You can add up to 25 rules in a single
	// AddNetworkSecurityGroupSecurityRules operation"
	// (AddNetworkSecurityGroupSecurityRulesDetails); cloudsim applies the
	// same bound to updates.
	MaxNSGRulesPerCall = 25
)

// NSG is a network security group as seeds and the admin API give it, with
// rules in the SDK's type (ids are assigned when empty).
type NSG struct {
	ID            string                 `json:"id,omitempty"`    // generated if empty
	VCNID         string                 `json:"vcnId,omitempty"` // default DefaultVCNID
	CompartmentID string                 `json:"compartmentId,omitempty"`
	DisplayName   string                 `json:"displayName,omitempty"`
	SecurityRules []ocicore.SecurityRule `json:"securityRules,omitempty"`
}

type nsgRec struct {
	NSG
	created      time.Time
	version      int
	freeformTags map[string]string
	definedTags  map[string]map[string]interface{}
}

// nsgStore holds the NSGs and which load balancers are in them. Its lock is
// never held while calling into the load balancers or the data plane, so
// the data plane's firewall may read it at any time.
type nsgStore struct {
	mu   sync.Mutex
	byID map[string]*nsgRec
	// lbs: NSG -> load balancer id -> its private address, published by
	// the load balancers' syncs.
	lbs core.Members
}

func newNSGStore() *nsgStore {
	return &nsgStore{byID: map[string]*nsgRec{}, lbs: core.Members{}}
}

// bindLB records the NSGs a load balancer is in and its private address,
// replacing what was recorded; none unbinds it.
func (s *nsgStore) bindLB(lbID string, addr netip.Addr, nsgs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lbs.Bind(lbID, addr, nsgs)
}

// rules returns copies of the NSGs' rules (unknown NSGs have none).
func (s *nsgStore) rules(ids []string) map[string][]ocicore.SecurityRule {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]ocicore.SecurityRule{}
	for _, id := range ids {
		if n := s.byID[id]; n != nil {
			out[id] = slices.Clone(n.SecurityRules)
		}
	}
	return out
}

// lbMembers are the private addresses of the load balancers in an NSG.
func (s *nsgStore) lbMembers(id string) []netip.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Values(s.lbs[id]))
}

// getLocked returns an NSG, or the API's 404. Callers hold s.mu.
func (s *nsgStore) getLocked(id string) (*nsgRec, error) {
	n := s.byID[id]
	if n == nil {
		return nil, notFound("network security group", id)
	}
	return n, nil
}

// vcnOf returns an NSG's VCN, or "" if it does not exist.
func (s *nsgStore) vcnOf(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.byID[id]; n != nil {
		return n.VCNID
	}
	return ""
}

// checkMembership validates NSG ids for a VNIC or load balancer in vcn.
func (s *nsgStore) checkMembership(where, vcn string, ids []string) *Error {
	if len(ids) > core.MaxNSGsPerVNIC {
		return Errorf(http.StatusBadRequest, CodeLimitExceeded, "%s: at most %d network security groups, got %d.", where, core.MaxNSGsPerVNIC, len(ids))
	}
	for _, id := range ids {
		switch v := s.vcnOf(id); {
		case v == "":
			return Errorf(http.StatusBadRequest, CodeRelatedResourceNotFound, "%s: network security group %s does not exist.", where, id)
		case vcn != "" && v != vcn:
			return badRequest("%s: network security group %s is in VCN %s, not %s.", where, id, v, vcn)
		}
	}
	return nil
}

func newRuleID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return strings.ToUpper(hex.EncodeToString(b))
}

// requireRuleTypes refuses an API rule without the type of its peer:
// SourceType "Required if `direction` = `INGRESS`", DestinationType
// "Required if `direction` = `EGRESS`" (oci-go-sdk v65.130.0
// core/add_security_rule_details.go and update_security_rule_details.go).
// Seeds may leave it out: it then defaults to CIDR_BLOCK (cloudsim's
// choice, for hand-written seeds).
func requireRuleTypes(where string, dir, sourceType, destType string) *Error {
	switch {
	case dir == string(ocicore.SecurityRuleDirectionIngress) && sourceType == "":
		return missing(where + ".sourceType (required if direction = INGRESS)")
	case dir == string(ocicore.SecurityRuleDirectionEgress) && destType == "":
		return missing(where + ".destinationType (required if direction = EGRESS)")
	}
	return nil
}

// checkRule validates a rule as the API does, for an NSG in vcn.
func (s *nsgStore) checkRuleLocked(where, vcn string, r *ocicore.SecurityRule) *Error {
	switch r.Direction {
	case ocicore.SecurityRuleDirectionIngress:
		if r.SourceType == "" {
			r.SourceType = ocicore.SecurityRuleSourceTypeCidrBlock
		}
		if e := validateRule(where, r.Protocol, r.Source, "source", string(r.SourceType), r.TcpOptions, r.UdpOptions); e != nil {
			return e
		}
		if r.SourceType == ocicore.SecurityRuleSourceTypeNetworkSecurityGroup {
			if n := s.byID[*r.Source]; n == nil || n.VCNID != vcn {
				return Errorf(http.StatusBadRequest, CodeRelatedResourceNotFound, "%s.source: network security group %s does not exist in VCN %s.", where, *r.Source, vcn)
			}
		}
		r.Destination, r.DestinationType = nil, ""
	case ocicore.SecurityRuleDirectionEgress:
		if r.DestinationType == "" {
			r.DestinationType = ocicore.SecurityRuleDestinationTypeCidrBlock
		}
		if e := validateRule(where, r.Protocol, r.Destination, "destination", string(r.DestinationType), r.TcpOptions, r.UdpOptions); e != nil {
			return e
		}
		if r.DestinationType == ocicore.SecurityRuleDestinationTypeNetworkSecurityGroup {
			if n := s.byID[*r.Destination]; n == nil || n.VCNID != vcn {
				return Errorf(http.StatusBadRequest, CodeRelatedResourceNotFound, "%s.destination: network security group %s does not exist in VCN %s.", where, *r.Destination, vcn)
			}
		}
		r.Source, r.SourceType = nil, ""
	case "":
		return missing(where + ".direction")
	default:
		return badRequest("%s.direction %q must be INGRESS or EGRESS.", where, r.Direction)
	}
	if r.IsStateless == nil {
		r.IsStateless = common.Bool(false)
	}
	r.IsValid = common.Bool(true)
	return nil
}

// ---- routes ----

func (d *Dialect) routeNSG() {
	const vn = "virtualnetwork"
	base := PrefixCore + "/networkSecurityGroups"
	d.mux.Handle("POST "+base, d.route(vn, "CreateNetworkSecurityGroup", true, d.createNSG))
	d.mux.Handle("GET "+base, d.route(vn, "ListNetworkSecurityGroups", false, d.listNSGs))
	d.mux.Handle("GET "+base+"/{nsgId}", d.route(vn, "GetNetworkSecurityGroup", false, d.getNSG))
	d.mux.Handle("PUT "+base+"/{nsgId}", d.route(vn, "UpdateNetworkSecurityGroup", true, d.updateNSG))
	d.mux.Handle("DELETE "+base+"/{nsgId}", d.route(vn, "DeleteNetworkSecurityGroup", true, d.deleteNSG))
	d.mux.Handle("GET "+base+"/{nsgId}/securityRules", d.route(vn, "ListNetworkSecurityGroupSecurityRules", false, d.listNSGRules))
	d.mux.Handle("GET "+base+"/{nsgId}/vnics", d.route(vn, "ListNetworkSecurityGroupVnics", false, d.listNSGVnics))
	d.mux.Handle("POST "+base+"/{nsgId}/actions/addSecurityRules", d.route(vn, "AddNetworkSecurityGroupSecurityRules", true, d.addNSGRules))
	d.mux.Handle("POST "+base+"/{nsgId}/actions/removeSecurityRules", d.route(vn, "RemoveNetworkSecurityGroupSecurityRules", true, d.removeNSGRules))
	d.mux.Handle("POST "+base+"/{nsgId}/actions/updateSecurityRules", d.route(vn, "UpdateNetworkSecurityGroupSecurityRules", true, d.updateNSGRules))
	d.mux.Handle("PUT "+PrefixCore+"/vnics/{vnicId}", d.route(vn, "UpdateVnic", true, d.updateVnic))
}

func nsgModel(n *nsgRec) ocicore.NetworkSecurityGroup {
	return ocicore.NetworkSecurityGroup{
		CompartmentId: common.String(n.CompartmentID), Id: common.String(n.ID), VcnId: common.String(n.VCNID),
		LifecycleState: ocicore.NetworkSecurityGroupLifecycleStateAvailable, TimeCreated: sdkTime(n.created),
		DisplayName: common.String(n.DisplayName), FreeformTags: orEmpty(n.freeformTags), DefinedTags: orEmptyDefined(n.definedTags),
	}
}

func (d *Dialect) vcnExists(id string) (compartment string, ok bool) {
	d.net.mu.Lock()
	defer d.net.mu.Unlock()
	v := d.net.vcns[id]
	if v == nil {
		return "", false
	}
	return v.CompartmentID, true
}

func (d *Dialect) createNSG(c *call) (*reply, error) {
	var req ocicore.CreateNetworkSecurityGroupDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	switch {
	case req.CompartmentId == nil || *req.CompartmentId == "":
		return nil, missing("compartmentId")
	case req.VcnId == nil || *req.VcnId == "":
		return nil, missing("vcnId")
	case !d.knownCompartment(c, *req.CompartmentId):
		return nil, notFound("compartment", *req.CompartmentId)
	}
	if _, ok := d.vcnExists(*req.VcnId); !ok {
		return nil, Errorf(http.StatusBadRequest, CodeRelatedResourceNotFound, "VCN %s does not exist.", *req.VcnId)
	}
	n := &nsgRec{NSG: NSG{ID: core.NewOCID("networksecuritygroup"), VCNID: *req.VcnId, CompartmentID: *req.CompartmentId},
		created: d.core.Now().UTC().Truncate(time.Second), version: 1, freeformTags: maps.Clone(req.FreeformTags), definedTags: maps.Clone(req.DefinedTags)}
	n.DisplayName = n.ID
	if req.DisplayName != nil && *req.DisplayName != "" {
		n.DisplayName = *req.DisplayName
	}
	d.nsgs.mu.Lock()
	d.nsgs.byID[n.ID] = n
	m := nsgModel(n)
	d.nsgs.mu.Unlock()
	rp := ok(m).with("etag", etag(n.ID, n.version))
	rp.created = n.ID
	return rp, nil
}

// nsgFromPath reads the NSG OCID of the path.
func (d *Dialect) nsgFromPath(c *call) (string, error) {
	return pathID(c, "nsgId", "networksecuritygroup")
}

func (d *Dialect) getNSG(c *call) (*reply, error) {
	id, err := d.nsgFromPath(c)
	if err != nil {
		return nil, err
	}
	d.nsgs.mu.Lock()
	defer d.nsgs.mu.Unlock()
	n, err := d.nsgs.getLocked(id)
	if err != nil {
		return nil, err
	}
	return ok(nsgModel(n)).with("etag", etag(n.ID, n.version)), nil
}

func (d *Dialect) listNSGs(c *call) (*reply, error) {
	comp, vcn := c.query("compartmentId"), c.query("vcnId")
	if comp == "" && vcn == "" {
		return nil, missing("compartmentId or vcnId")
	}
	if comp != "" && !d.knownCompartment(c, comp) {
		return nil, notFound("compartment", comp)
	}
	d.nsgs.mu.Lock()
	items := []ocicore.NetworkSecurityGroup{}
	for _, id := range slices.Sorted(maps.Keys(d.nsgs.byID)) {
		n := d.nsgs.byID[id]
		if (comp == "" || n.CompartmentID == comp) && (vcn == "" || n.VCNID == vcn) && (c.query("displayName") == "" || c.query("displayName") == n.DisplayName) {
			items = append(items, nsgModel(n))
		}
	}
	d.nsgs.mu.Unlock()
	return page(c, items, nil)
}

func (d *Dialect) updateNSG(c *call) (*reply, error) {
	id, err := d.nsgFromPath(c)
	if err != nil {
		return nil, err
	}
	var req ocicore.UpdateNetworkSecurityGroupDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	d.nsgs.mu.Lock()
	defer d.nsgs.mu.Unlock()
	n, err := d.nsgs.getLocked(id)
	if err != nil {
		return nil, err
	}
	if e := checkIfMatch(c, etag(n.ID, n.version), "the network security group's current etag"); e != nil {
		return nil, e
	}
	if req.DisplayName != nil {
		n.DisplayName = *req.DisplayName
	}
	if req.FreeformTags != nil {
		n.freeformTags = maps.Clone(req.FreeformTags)
	}
	if req.DefinedTags != nil {
		n.definedTags = maps.Clone(req.DefinedTags)
	}
	n.version++
	return ok(nsgModel(n)).with("etag", etag(n.ID, n.version)), nil
}

// deleteNSG refuses an NSG that VNICs or load balancers are still in: "The
// group must not contain any VNICs" (oci-go-sdk v65.130.0
// core/core_virtualnetwork_client.go, DeleteNetworkSecurityGroup; a load
// balancer's VNICs count, cloudsim's reading). Rules of other NSGs that
// name it stay, with isValid false: SecurityRule.IsValid "changes to
// `False` if that network security group is deleted" (core/security_rule.go).
func (d *Dialect) deleteNSG(c *call) (*reply, error) {
	id, err := d.nsgFromPath(c)
	if err != nil {
		return nil, err
	}
	instances := d.core.Snapshot()
	d.nsgs.mu.Lock()
	defer d.nsgs.mu.Unlock()
	n, err := d.nsgs.getLocked(id)
	if err != nil {
		return nil, err
	}
	if e := checkIfMatch(c, etag(n.ID, n.version), "the network security group's current etag"); e != nil {
		return nil, e
	}
	if e := d.nsgs.inUseLocked(n, instances); e != nil {
		return nil, e
	}
	delete(d.nsgs.byID, id)
	d.nsgs.invalidateLocked(id)
	return &reply{status: http.StatusNoContent}, nil
}

// invalidateLocked marks every rule that names the deleted NSG id as its
// source or destination isValid false. The data plane skips such rules
// (firewall.go): they match nothing, as the NSG they name has no members.
func (s *nsgStore) invalidateLocked(id string) {
	for _, o := range s.byID {
		var changed []ocicore.SecurityRule
		for i, r := range o.SecurityRules {
			if namesNSG(r, id) {
				if changed == nil {
					changed = slices.Clone(o.SecurityRules) // rules() hands out copies of the slice
				}
				changed[i].IsValid = common.Bool(false)
			}
		}
		if changed != nil {
			o.SecurityRules = changed
		}
	}
}

// namesNSG reports whether a rule's source or destination is the NSG id.
func namesNSG(r ocicore.SecurityRule, id string) bool {
	return (r.SourceType == ocicore.SecurityRuleSourceTypeNetworkSecurityGroup && deref(r.Source) == id) ||
		(r.DestinationType == ocicore.SecurityRuleDestinationTypeNetworkSecurityGroup && deref(r.Destination) == id)
}

func (s *nsgStore) inUseLocked(n *nsgRec, instances []core.Record) *Error {
	for _, r := range instances {
		if slices.Contains(r.NSGIDs, n.ID) {
			return incorrectState("The network security group %s still has VNICs (instance %s): remove them first.", n.ID, r.OCID)
		}
	}
	for lb := range s.lbs[n.ID] {
		return incorrectState("The network security group %s still has a load balancer (%s): remove it first.", n.ID, lb)
	}
	return nil
}

func (d *Dialect) listNSGRules(c *call) (*reply, error) {
	id, err := d.nsgFromPath(c)
	if err != nil {
		return nil, err
	}
	dir := strings.ToUpper(c.query("direction"))
	if dir != "" && dir != "INGRESS" && dir != "EGRESS" {
		return nil, badRequest("The direction %q must be INGRESS or EGRESS.", c.query("direction"))
	}
	d.nsgs.mu.Lock()
	n := d.nsgs.byID[id]
	if n == nil {
		d.nsgs.mu.Unlock()
		return nil, notFound("network security group", id)
	}
	items := []ocicore.SecurityRule{}
	for _, r := range n.SecurityRules {
		if dir == "" || string(r.Direction) == dir {
			items = append(items, r)
		}
	}
	d.nsgs.mu.Unlock()
	return page(c, items, nil)
}

func (d *Dialect) listNSGVnics(c *call) (*reply, error) {
	id, err := d.nsgFromPath(c)
	if err != nil {
		return nil, err
	}
	if d.nsgs.vcnOf(id) == "" {
		return nil, notFound("network security group", id)
	}
	items := []ocicore.NetworkSecurityGroupVnic{}
	for _, r := range d.core.Snapshot() {
		if slices.Contains(r.NSGIDs, id) {
			items = append(items, ocicore.NetworkSecurityGroupVnic{VnicId: common.String(vnicID(r.OCID)), ResourceId: common.String(r.OCID)})
		}
	}
	return page(c, items, nil)
}

func (d *Dialect) addNSGRules(c *call) (*reply, error) {
	id, err := d.nsgFromPath(c)
	if err != nil {
		return nil, err
	}
	var req ocicore.AddNetworkSecurityGroupSecurityRulesDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	if len(req.SecurityRules) > MaxNSGRulesPerCall {
		return nil, Errorf(http.StatusBadRequest, CodeLimitExceeded, "You can add up to %d rules in a single AddNetworkSecurityGroupSecurityRules operation, got %d.", MaxNSGRulesPerCall, len(req.SecurityRules))
	}
	d.nsgs.mu.Lock()
	defer d.nsgs.mu.Unlock()
	n, err := d.nsgs.getLocked(id)
	if err != nil {
		return nil, err
	}
	now := d.core.Now().UTC().Truncate(time.Second)
	var added []ocicore.SecurityRule
	for i, in := range req.SecurityRules {
		if e := requireRuleTypes(fmt.Sprintf("securityRules[%d]", i), string(in.Direction), string(in.SourceType), string(in.DestinationType)); e != nil {
			return nil, e
		}
		r := ocicore.SecurityRule{
			Direction: ocicore.SecurityRuleDirectionEnum(in.Direction), Protocol: in.Protocol, Description: in.Description,
			Destination: in.Destination, DestinationType: ocicore.SecurityRuleDestinationTypeEnum(in.DestinationType),
			Source: in.Source, SourceType: ocicore.SecurityRuleSourceTypeEnum(in.SourceType), IcmpOptions: in.IcmpOptions,
			IsStateless: in.IsStateless, TcpOptions: in.TcpOptions, UdpOptions: in.UdpOptions,
			Id: common.String(newRuleID()), TimeCreated: sdkTime(now),
		}
		if e := d.nsgs.checkRuleLocked(fmt.Sprintf("securityRules[%d]", i), n.VCNID, &r); e != nil {
			return nil, e
		}
		added = append(added, r)
	}
	if len(n.SecurityRules)+len(added) > MaxNSGRules {
		return nil, Errorf(http.StatusBadRequest, CodeLimitExceeded, "A network security group has at most %d security rules; %s would have %d.", MaxNSGRules, id, len(n.SecurityRules)+len(added))
	}
	n.SecurityRules = append(slices.Clone(n.SecurityRules), added...)
	n.version++
	if added == nil {
		added = []ocicore.SecurityRule{}
	}
	return ok(ocicore.AddedNetworkSecurityGroupSecurityRules{SecurityRules: added}), nil
}

func (d *Dialect) removeNSGRules(c *call) (*reply, error) {
	id, err := d.nsgFromPath(c)
	if err != nil {
		return nil, err
	}
	var req ocicore.RemoveNetworkSecurityGroupSecurityRulesDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	d.nsgs.mu.Lock()
	defer d.nsgs.mu.Unlock()
	n, err := d.nsgs.getLocked(id)
	if err != nil {
		return nil, err
	}
	for _, rid := range req.SecurityRuleIds {
		if !slices.ContainsFunc(n.SecurityRules, func(r ocicore.SecurityRule) bool { return deref(r.Id) == rid }) {
			return nil, badRequest("The security rule %s does not exist in network security group %s.", rid, id)
		}
	}
	n.SecurityRules = slices.DeleteFunc(slices.Clone(n.SecurityRules), func(r ocicore.SecurityRule) bool { return slices.Contains(req.SecurityRuleIds, deref(r.Id)) })
	n.version++
	return &reply{status: http.StatusNoContent}, nil
}

func (d *Dialect) updateNSGRules(c *call) (*reply, error) {
	id, err := d.nsgFromPath(c)
	if err != nil {
		return nil, err
	}
	var req ocicore.UpdateNetworkSecurityGroupSecurityRulesDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	if len(req.SecurityRules) > MaxNSGRulesPerCall {
		return nil, Errorf(http.StatusBadRequest, CodeLimitExceeded, "At most %d rules per call, got %d.", MaxNSGRulesPerCall, len(req.SecurityRules))
	}
	d.nsgs.mu.Lock()
	defer d.nsgs.mu.Unlock()
	n, err := d.nsgs.getLocked(id)
	if err != nil {
		return nil, err
	}
	next := slices.Clone(n.SecurityRules)
	var updated []ocicore.SecurityRule
	for i, in := range req.SecurityRules {
		where := fmt.Sprintf("securityRules[%d]", i)
		if in.Id == nil {
			return nil, missing(where + ".id")
		}
		if e := requireRuleTypes(where, string(in.Direction), string(in.SourceType), string(in.DestinationType)); e != nil {
			return nil, e
		}
		j := slices.IndexFunc(next, func(r ocicore.SecurityRule) bool { return deref(r.Id) == *in.Id })
		if j < 0 {
			return nil, badRequest("%s: the security rule %s does not exist in network security group %s.", where, *in.Id, id)
		}
		r := ocicore.SecurityRule{
			Direction: ocicore.SecurityRuleDirectionEnum(in.Direction), Protocol: in.Protocol, Description: in.Description,
			Destination: in.Destination, DestinationType: ocicore.SecurityRuleDestinationTypeEnum(in.DestinationType),
			Source: in.Source, SourceType: ocicore.SecurityRuleSourceTypeEnum(in.SourceType), IcmpOptions: in.IcmpOptions,
			IsStateless: in.IsStateless, TcpOptions: in.TcpOptions, UdpOptions: in.UdpOptions,
			Id: in.Id, TimeCreated: next[j].TimeCreated,
		}
		if e := d.nsgs.checkRuleLocked(where, n.VCNID, &r); e != nil {
			return nil, e
		}
		next[j] = r
		updated = append(updated, r)
	}
	n.SecurityRules = next
	n.version++
	if updated == nil {
		updated = []ocicore.SecurityRule{}
	}
	return ok(ocicore.UpdatedNetworkSecurityGroupSecurityRules{SecurityRules: updated}), nil
}

// updateVnic implements UpdateVnic for nsgIds, the membership of the
// instance's primary VNIC ("you can add an existing instance to an NSG
// with UpdateVnic"); the other fields are not emulated.
func (d *Dialect) updateVnic(c *call) (*reply, error) {
	id, err := pathID(c, "vnicId", "vnic")
	if err != nil {
		return nil, err
	}
	var req ocicore.UpdateVnicDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	if req.DisplayName != nil || req.HostnameLabel != nil || req.SkipSourceDestCheck != nil || req.FreeformTags != nil || req.DefinedTags != nil {
		return nil, badRequest("cloudsim emulates only nsgIds of UpdateVnic.")
	}
	r, err := d.instanceRecord(instanceOfVnic(id))
	if err != nil {
		return nil, notFound("VNIC", id)
	}
	if req.NsgIds != nil {
		if e := d.nsgs.checkMembership("nsgIds", d.vcnOfInstance(r), req.NsgIds); e != nil {
			return nil, e
		}
		ids := slices.Clone(req.NsgIds)
		if _, err := d.core.SetInstanceFirewalls(r.ID, core.Firewalls{NSGIDs: &ids}); err != nil {
			return nil, badRequest("%v", err)
		}
	}
	return d.getVnic(c)
}

// vcnOfInstance is the VCN an instance's VNIC is in.
func (d *Dialect) vcnOfInstance(r core.Record) string {
	if core.ValidOCID(r.VpcID, "vcn") {
		return r.VpcID
	}
	subnet := d.placementOf(r).subnet
	d.net.mu.Lock()
	defer d.net.mu.Unlock()
	if s := d.net.subnets[subnet]; s != nil {
		return s.VCNID
	}
	return DefaultVCNID
}

// ---- seeds and the admin view ----

// seedNetwork applies a network seed with its NSGs, all or nothing: the
// NSGs are checked against the VCNs that exist or that the seed adds
// before anything changes.
func (d *Dialect) seedNetwork(s NetworkSeed) error {
	vcnComp := map[string]string{}
	d.net.mu.Lock()
	for id, v := range d.net.vcns {
		vcnComp[id] = v.CompartmentID
	}
	defComp := d.net.defaultComp
	d.net.mu.Unlock()
	if s.DefaultCompartment != "" {
		defComp = s.DefaultCompartment
	}
	for _, v := range s.VCNs {
		if v.ID != "" {
			vcnComp[v.ID] = v.CompartmentID
		}
	}
	now := time.Now().UTC().Truncate(time.Second)
	d.nsgs.mu.Lock()
	next := maps.Clone(d.nsgs.byID)
	d.nsgs.mu.Unlock()
	var recs []*nsgRec
	for i, n := range s.NetworkSecurityGroups {
		where := fmt.Sprintf("networkSecurityGroups[%d]", i)
		var err error
		if n.ID, err = seedID(where, "networksecuritygroup", "network security group", n.ID); err != nil {
			return err
		}
		if n.VCNID == "" {
			n.VCNID = DefaultVCNID
		}
		comp, ok := vcnComp[n.VCNID]
		if !ok {
			return fmt.Errorf("%w: %s: vcnId %s does not exist", core.ErrInvalid, where, n.VCNID)
		}
		if n.CompartmentID == "" {
			n.CompartmentID = comp
		}
		if n.CompartmentID == "" {
			n.CompartmentID = defComp
		}
		if !validCompartment(n.CompartmentID) {
			return fmt.Errorf("%w: %s: compartmentId %q is not a compartment or tenancy OCID", core.ErrInvalid, where, n.CompartmentID)
		}
		if n.DisplayName == "" {
			n.DisplayName = n.ID
		}
		r := &nsgRec{NSG: n, created: now, version: 1}
		r.SecurityRules = nil
		next[n.ID] = r
		recs = append(recs, r)
	}
	// Rules may name NSGs of the same seed: check them once all exist.
	check := &nsgStore{byID: next}
	for i, r := range recs {
		rules := s.NetworkSecurityGroups[i].SecurityRules
		if len(rules) > MaxNSGRules {
			return fmt.Errorf("%w: networkSecurityGroups[%d]: %d rules, at most %d", core.ErrInvalid, i, len(rules), MaxNSGRules)
		}
		for j, rule := range rules {
			if rule.Id == nil || *rule.Id == "" {
				rule.Id = common.String(newRuleID())
			}
			if rule.TimeCreated == nil {
				rule.TimeCreated = sdkTime(now)
			}
			if e := check.checkRuleLocked(fmt.Sprintf("networkSecurityGroups[%d].securityRules[%d]", i, j), r.VCNID, &rule); e != nil {
				return fmt.Errorf("%w: %s", core.ErrInvalid, e.Message)
			}
			r.SecurityRules = append(r.SecurityRules, rule)
		}
	}
	if err := d.net.seed(s); err != nil {
		return err
	}
	d.nsgs.mu.Lock()
	d.nsgs.byID = next
	d.nsgs.mu.Unlock()
	return nil
}

// export lists the NSGs with their rules, by id.
func (s *nsgStore) export() []NSG {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []NSG{}
	for _, id := range slices.Sorted(maps.Keys(s.byID)) {
		n := s.byID[id].NSG
		n.SecurityRules = slices.Clone(n.SecurityRules)
		out = append(out, n)
	}
	return out
}

// checkInstanceNSGs is the fleet's check of a new instance: its NSGs must
// exist in its VCN.
func (d *Dialect) checkInstanceNSGs(in core.Instance) error {
	if len(in.NSGIDs) == 0 {
		return nil
	}
	if e := d.nsgs.checkMembership("nsgIds", d.vcnOfInstance(core.Record{Instance: in}), in.NSGIDs); e != nil {
		return fmt.Errorf("%s", e.Message)
	}
	return nil
}

// checkBalancerNSGs validates the NSGs a new load balancer is added to:
// they must exist in its subnet's VCN.
func (d *Dialect) checkBalancerNSGs(subnet string, ids []string) error {
	d.net.mu.Lock()
	vcn := ""
	if s := d.net.subnets[subnet]; s != nil {
		vcn = s.VCNID
	}
	d.net.mu.Unlock()
	if e := d.nsgs.checkMembership("networkSecurityGroupIds", vcn, ids); e != nil {
		return e
	}
	return nil
}
