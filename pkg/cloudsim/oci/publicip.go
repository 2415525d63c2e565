package oci

import (
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	"github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// Reserved public IPs: addresses a tenancy keeps for itself and names when
// it creates a load balancer (CreateLoadBalancerDetails.reservedIps,
// CreateNetworkLoadBalancerDetails.reservedIps). Only RESERVED ones are
// modeled: an EPHEMERAL public IP belongs to a private IP, which cloudsim
// does not model. A reserved IP's address comes from the data plane's VIP
// pool (cloudsim's choice: a real one is a public address, but the load
// balancer that takes it must be reachable on loopback).
//
// Lifecycle (oci-go-sdk v65 core/public_ip.go, PublicIpLifecycleStateEnum):
// AVAILABLE while unassigned, ASSIGNED while a load balancer holds it;
// cloudsim moves between them at once (real OCI passes ASSIGNING and
// UNASSIGNING). The assigned entity is the load balancer's private IP
// (assignedEntityType PRIVATE_IP, the only entity a reserved IP can be
// assigned to besides a NAT gateway); cloudsim names it by an OCID derived
// from the load balancer's.

type publicIPRec struct {
	id, compartmentID, displayName string
	addr                           netip.Addr
	created                        time.Time
	assignedTo                     string // load balancer id; "" when AVAILABLE
	freeformTags                   map[string]string
	definedTags                    map[string]map[string]interface{}
}

// publicIPStore holds the reserved public IPs. Lock order: d.lbs.mu, then
// mu (a load balancer's deletion unassigns its reserved IP).
type publicIPStore struct {
	mu   sync.Mutex
	byID map[string]*publicIPRec
}

func newPublicIPStore() *publicIPStore { return &publicIPStore{byID: map[string]*publicIPRec{}} }

func (d *Dialect) routePublicIPs() {
	const vn = "virtualnetwork"
	p := PrefixCore + "/publicIps"
	d.mux.Handle("POST "+p, d.route(vn, "CreatePublicIp", true, d.createPublicIP))
	d.mux.Handle("GET "+p, d.route(vn, "ListPublicIps", false, d.listPublicIPs))
	d.mux.Handle("POST "+p+"/actions/getByIpAddress", d.route(vn, "GetPublicIpByIpAddress", false, d.getPublicIPByAddress))
	d.mux.Handle("GET "+p+"/{publicIpId}", d.route(vn, "GetPublicIp", false, d.getPublicIP))
	d.mux.Handle("DELETE "+p+"/{publicIpId}", d.route(vn, "DeletePublicIp", true, d.deletePublicIP))
}

// lbPrivateIPID is the OCID cloudsim gives a load balancer's private IP,
// the entity its reserved public IP is assigned to.
func lbPrivateIPID(lbID string) string { return stableOCID("privateip", lbID) }

func publicIPModel(r *publicIPRec) ocicore.PublicIp {
	m := ocicore.PublicIp{
		Id: common.String(r.id), CompartmentId: common.String(r.compartmentID), DisplayName: common.String(r.displayName),
		IpAddress: common.String(r.addr.String()), Lifetime: ocicore.PublicIpLifetimeReserved, Scope: ocicore.PublicIpScopeRegion,
		LifecycleState: ocicore.PublicIpLifecycleStateAvailable, TimeCreated: sdkTime(r.created),
		FreeformTags: orEmpty(r.freeformTags), DefinedTags: orEmptyDefined(r.definedTags),
	}
	if r.assignedTo != "" {
		m.LifecycleState = ocicore.PublicIpLifecycleStateAssigned
		m.AssignedEntityId, m.AssignedEntityType = common.String(lbPrivateIPID(r.assignedTo)), ocicore.PublicIpAssignedEntityTypePrivateIp
		m.PrivateIpId = m.AssignedEntityId
	}
	return m
}

func (d *Dialect) createPublicIP(c *call) (*reply, error) {
	var req ocicore.CreatePublicIpDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	switch {
	case req.CompartmentId == nil || *req.CompartmentId == "":
		return nil, missing("compartmentId")
	case req.Lifetime == "":
		return nil, missing("lifetime")
	case !d.knownCompartment(c, *req.CompartmentId):
		return nil, notFound("compartment", *req.CompartmentId)
	case req.Lifetime != ocicore.CreatePublicIpDetailsLifetimeReserved:
		return nil, badRequest("cloudsim emulates only RESERVED public IPs (lifetime %s).", req.Lifetime)
	case req.PrivateIpId != nil && *req.PrivateIpId != "":
		return nil, badRequest("cloudsim does not emulate private IPs (privateIpId); a reserved public IP is assigned by naming it in a load balancer's reservedIps.")
	case req.PublicIpPoolId != nil && *req.PublicIpPoolId != "":
		return nil, badRequest("cloudsim does not emulate public IP pools (publicIpPoolId).")
	}
	r := &publicIPRec{id: core.NewOCID("publicip"), compartmentID: *req.CompartmentId, created: d.core.Now().UTC().Truncate(time.Second),
		freeformTags: maps.Clone(req.FreeformTags), definedTags: maps.Clone(req.DefinedTags)}
	r.displayName = r.id
	if req.DisplayName != nil && *req.DisplayName != "" {
		r.displayName = *req.DisplayName
	}
	addr, err := d.plane.AllocVIP(r.id)
	if err != nil {
		return nil, Errorf(http.StatusBadRequest, CodeLimitExceeded, "cloudsim: no free address left for a public IP: %v", err)
	}
	r.addr = addr
	d.pips.mu.Lock()
	d.pips.byID[r.id] = r
	m := publicIPModel(r)
	d.pips.mu.Unlock()
	rp := ok(m).with("etag", etag(r.id, 1))
	rp.created = r.id
	return rp, nil
}

func (d *Dialect) getPublicIP(c *call) (*reply, error) {
	id, err := pathID(c, "publicIpId", "publicip")
	if err != nil {
		return nil, err
	}
	d.pips.mu.Lock()
	defer d.pips.mu.Unlock()
	r := d.pips.byID[id]
	if r == nil {
		return nil, notFound("public IP", id)
	}
	return ok(publicIPModel(r)).with("etag", etag(r.id, 1)), nil
}

// getPublicIPByAddress answers 404 for an address no public IP has, as for
// an unknown id.
func (d *Dialect) getPublicIPByAddress(c *call) (*reply, error) {
	var req ocicore.GetPublicIpByIpAddressDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	if req.IpAddress == nil || *req.IpAddress == "" {
		return nil, missing("ipAddress")
	}
	addr, err := netip.ParseAddr(*req.IpAddress)
	if err != nil {
		return nil, badRequest("The ipAddress %q is not an IP address.", *req.IpAddress)
	}
	d.pips.mu.Lock()
	defer d.pips.mu.Unlock()
	for _, r := range d.pips.byID {
		if r.addr == addr {
			return ok(publicIPModel(r)).with("etag", etag(r.id, 1)), nil
		}
	}
	return nil, notFound("public IP", addr.String())
}

// listPublicIPs: scope and compartmentId are mandatory (ListPublicIpsRequest);
// reserved IPs have scope REGION, so AVAILABILITY_DOMAIN lists none here.
func (d *Dialect) listPublicIPs(c *call) (*reply, error) {
	scope := c.query("scope")
	switch {
	case scope == "":
		return nil, missing("scope")
	case scope != string(ocicore.ListPublicIpsScopeRegion) && scope != string(ocicore.ListPublicIpsScopeAvailabilityDomain):
		return nil, badRequest("The scope %q must be REGION or AVAILABILITY_DOMAIN.", scope)
	}
	comp, err := d.compartmentParam(c)
	if err != nil {
		return nil, err
	}
	lifetime := c.query("lifetime")
	items := []ocicore.PublicIp{}
	d.pips.mu.Lock()
	for _, id := range slices.Sorted(maps.Keys(d.pips.byID)) {
		r := d.pips.byID[id]
		if scope == string(ocicore.ListPublicIpsScopeRegion) && r.compartmentID == comp &&
			(lifetime == "" || lifetime == string(ocicore.PublicIpLifetimeReserved)) {
			items = append(items, publicIPModel(r))
		}
	}
	d.pips.mu.Unlock()
	return page(c, items, nil)
}

// deletePublicIP refuses a reserved IP a load balancer holds: OCI
// unassigns a public IP from a private IP on delete, but a load balancer's
// address goes only with the load balancer (the 409 is cloudsim's choice).
func (d *Dialect) deletePublicIP(c *call) (*reply, error) {
	id, err := pathID(c, "publicIpId", "publicip")
	if err != nil {
		return nil, err
	}
	d.pips.mu.Lock()
	defer d.pips.mu.Unlock()
	r := d.pips.byID[id]
	switch {
	case r == nil:
		return nil, notFound("public IP", id)
	case r.assignedTo != "":
		return nil, incorrectState("The public IP %s (%s) is assigned to load balancer %s; delete the load balancer first.", id, r.addr, r.assignedTo)
	}
	delete(d.pips.byID, id)
	d.plane.ReleaseVIP(r.addr)
	return &reply{status: http.StatusNoContent}, nil
}

// reservedIPOf reads a new load balancer's reservedIps: at most one
// (cloudsim's choice: a Load Balancing load balancer takes one public one;
// a network load balancer one of each kind, and cloudsim models public
// ones only), which a private load balancer cannot take.
func reservedIPOf(ids []*string, private bool) (string, error) {
	switch {
	case len(ids) == 0:
		return "", nil
	case len(ids) > 1:
		return "", badRequest("cloudsim emulates one reserved public IP per load balancer (got %d reservedIps).", len(ids))
	case ids[0] == nil || *ids[0] == "":
		return "", missing("reservedIps[0].id")
	case private:
		return "", badRequest("A private load balancer cannot take a reserved public IP (reservedIps[0].id %s).", *ids[0])
	}
	return *ids[0], nil
}

// assignReservedIP assigns reserved public IP id to load balancer lbID and
// returns its address. It must exist and be AVAILABLE; the 400 codes are
// cloudsim's choice (the SDK names none).
func (d *Dialect) assignReservedIP(lbID, id string) (netip.Addr, error) {
	d.pips.mu.Lock()
	defer d.pips.mu.Unlock()
	r := d.pips.byID[id]
	switch {
	case r == nil:
		return netip.Addr{}, Errorf(http.StatusBadRequest, CodeRelatedResourceNotFound, "The reserved public IP %s does not exist.", id)
	case r.assignedTo != "":
		return netip.Addr{}, badRequest("The reserved public IP %s (%s) is already assigned to %s.", id, r.addr, r.assignedTo)
	}
	r.assignedTo = lbID
	return r.addr, nil
}

// unassignReservedIP makes a load balancer's reserved IP AVAILABLE again
// (the load balancer was deleted, or its creation refused).
func (d *Dialect) unassignReservedIP(id string) {
	if id == "" {
		return
	}
	d.pips.mu.Lock()
	defer d.pips.mu.Unlock()
	if r := d.pips.byID[id]; r != nil {
		r.assignedTo = ""
	}
}

func lbReservedIDs(in []loadbalancer.ReservedIp) []*string {
	out := make([]*string, 0, len(in))
	for _, r := range in {
		out = append(out, r.Id)
	}
	return out
}

func nlbReservedIDs(in []networkloadbalancer.ReservedIp) []*string {
	out := make([]*string, 0, len(in))
	for _, r := range in {
		out = append(out, r.Id)
	}
	return out
}
