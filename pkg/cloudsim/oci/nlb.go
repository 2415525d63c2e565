package oci

import (
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	nlb "github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// Network Load Balancing enumerations cloudsim accepts.
var (
	nlbPolicies        = []string{"FIVE_TUPLE", "THREE_TUPLE", "TWO_TUPLE"}
	nlbListenerProtos  = []string{"TCP", "UDP", "TCP_AND_UDP", "ANY", "L3IP"}
	nlbHealthProtocols = []string{"HTTP", "HTTPS", "TCP", "UDP", "DNS"}
)

const nlbPrefix = "nlb:" // second action prefix: "oci:nlb:CreateBackendSet"

func (d *Dialect) routeNLB() {
	const svc = "networkloadbalancer"
	h := func(method, path, op string, mutation bool, fn opFunc) {
		d.mux.Handle(method+" "+PrefixNLB+path, d.route(svc, nlbPrefix+op, mutation, fn))
	}
	p := "/networkLoadBalancers"
	h("POST", p, "CreateNetworkLoadBalancer", true, d.createNLB)
	h("GET", p, "ListNetworkLoadBalancers", false, d.listNLBs)
	h("GET", p+"/{nlbId}", "GetNetworkLoadBalancer", false, d.getNLB)
	h("PUT", p+"/{nlbId}", "UpdateNetworkLoadBalancer", true, d.updateNLB)
	h("DELETE", p+"/{nlbId}", "DeleteNetworkLoadBalancer", true, d.deleteNLB)
	h("POST", p+"/{nlbId}/backendSets", "CreateBackendSet", true, d.createNLBBackendSet)
	h("GET", p+"/{nlbId}/backendSets", "ListBackendSets", false, d.listNLBBackendSets)
	h("GET", p+"/{nlbId}/backendSets/{backendSetName}", "GetBackendSet", false, d.getNLBBackendSet)
	h("PUT", p+"/{nlbId}/backendSets/{backendSetName}", "UpdateBackendSet", true, d.updateNLBBackendSet)
	h("DELETE", p+"/{nlbId}/backendSets/{backendSetName}", "DeleteBackendSet", true, d.deleteNLBBackendSet)
	h("GET", p+"/{nlbId}/backendSets/{backendSetName}/health", "GetBackendSetHealth", false, d.getNLBBackendSetHealth)
	h("POST", p+"/{nlbId}/listeners", "CreateListener", true, d.createNLBListener)
	h("GET", p+"/{nlbId}/listeners", "ListListeners", false, d.listNLBListeners)
	h("GET", p+"/{nlbId}/listeners/{listenerName}", "GetListener", false, d.getNLBListener)
	h("PUT", p+"/{nlbId}/listeners/{listenerName}", "UpdateListener", true, d.updateNLBListener)
	h("DELETE", p+"/{nlbId}/listeners/{listenerName}", "DeleteListener", true, d.deleteNLBListener)
	h("GET", "/workRequests", "ListWorkRequests", false, d.listNLBWorkRequests)
	h("GET", "/workRequests/{workRequestId}", "GetWorkRequest", false, d.getNLBWorkRequest)
	h("GET", "/workRequests/{workRequestId}/errors", "ListWorkRequestErrors", false, d.listNLBWorkRequestErrors)
}

func nlbID(c *call) (string, error) { return pathID(c, "nlbId", "networkloadbalancer") }

// ---- validation ----

func nlbHealthChecker(where string, in *nlb.HealthCheckerDetails) (*nlb.HealthChecker, error) {
	if in == nil {
		return nil, missing(where + ".healthChecker")
	}
	proto := strings.ToUpper(string(in.Protocol))
	if !slices.Contains(nlbHealthProtocols, proto) {
		return nil, badRequest("%s.healthChecker.protocol must be one of %s.", where, strings.Join(nlbHealthProtocols, ", "))
	}
	hc := &nlb.HealthChecker{
		Protocol: nlb.HealthCheckProtocolsEnum(proto), Port: in.Port,
		Retries: common.Int(3), TimeoutInMillis: common.Int(3000), IntervalInMillis: common.Int(10000),
		UrlPath: in.UrlPath, ResponseBodyRegex: in.ResponseBodyRegex, ReturnCode: in.ReturnCode,
		RequestData: in.RequestData, ResponseData: in.ResponseData, Dns: in.Dns,
	}
	if in.Port != nil {
		if err := checkPort(where+".healthChecker.port", in.Port, true); err != nil {
			return nil, err
		}
	}
	if (proto == "HTTP" || proto == "HTTPS") && (in.UrlPath == nil || !strings.HasPrefix(*in.UrlPath, "/")) {
		return nil, badRequest("%s.healthChecker.urlPath must be an absolute path for an %s health check.", where, proto)
	}
	if (proto == "HTTP" || proto == "HTTPS") && hc.ReturnCode == nil {
		hc.ReturnCode = common.Int(200)
	}
	if proto == "DNS" && in.Dns == nil {
		return nil, missing(where + ".healthChecker.dns")
	}
	for _, f := range []struct {
		name   string
		v      *int
		lo, hi int
		dst    **int
	}{
		{"retries", in.Retries, 1, 10, &hc.Retries},
		{"timeoutInMillis", in.TimeoutInMillis, 1, 600000, &hc.TimeoutInMillis},
		{"intervalInMillis", in.IntervalInMillis, 1000, 1800000, &hc.IntervalInMillis},
		{"returnCode", in.ReturnCode, 100, 599, &hc.ReturnCode},
	} {
		if f.v == nil {
			continue
		}
		if *f.v < f.lo || *f.v > f.hi {
			return nil, badRequest("%s.healthChecker.%s %d must be from %d to %d.", where, f.name, *f.v, f.lo, f.hi)
		}
		*f.dst = f.v
	}
	return hc, nil
}

// nlbBackends validates backends: an ipAddress, or a targetId naming an
// instance (traffic goes to its private IP).
func (d *Dialect) nlbBackends(where string, in []nlb.BackendDetails, ver nlb.IpVersionEnum) ([]nlb.Backend, error) {
	out := []nlb.Backend{}
	seen := map[string]bool{}
	for i, b := range in {
		w := fmt.Sprintf("%s.backends[%d]", where, i)
		if err := checkPort(w+".port", b.Port, true); err != nil {
			return nil, err
		}
		var ip, target, key string
		switch {
		case b.IpAddress != nil && *b.IpAddress != "":
			v, err := checkBackendIP(w+".ipAddress", *b.IpAddress, ver)
			if err != nil {
				return nil, err
			}
			ip, key = v, v
		case b.TargetId != nil && *b.TargetId != "" && ver == nlb.IpVersionIpv6:
			return nil, badRequest("%s.targetId: an IPV6 backend set takes IPv6 addresses, not targets (cloudsim's choice).", w)
		case b.TargetId != nil && *b.TargetId != "":
			if !core.ValidOCID(*b.TargetId, "instance") {
				return nil, badRequest("%s.targetId %q is not an instance OCID.", w, *b.TargetId)
			}
			if r, err := d.instanceRecord(*b.TargetId); err != nil || r.State == core.StateTerminating {
				return nil, relatedNotFound("instance", *b.TargetId)
			}
			target, key = *b.TargetId, *b.TargetId
		default:
			return nil, missing(w + ".ipAddress or targetId")
		}
		name := fmt.Sprintf("%s:%d", key, *b.Port)
		if b.Name != nil && *b.Name != "" && *b.Name != name {
			return nil, badRequest("%s.name %q must be %q (<address or target>:<port>).", w, *b.Name, name)
		}
		if seen[name] {
			return nil, badRequest("%s: the backend %s is listed twice.", where, name)
		}
		seen[name] = true
		weight := DefaultLBWeight
		if b.Weight != nil {
			if *b.Weight < 1 || *b.Weight > MaxLBWeight {
				return nil, badRequest("%s.weight %d must be from 1 to %d.", w, *b.Weight, MaxLBWeight)
			}
			weight = *b.Weight
		}
		nb := nlb.Backend{Port: b.Port, Name: common.String(name), Weight: common.Int(weight),
			IsDrain: boolOr(b.IsDrain), IsBackup: boolOr(b.IsBackup), IsOffline: boolOr(b.IsOffline)}
		if ip != "" {
			nb.IpAddress = common.String(ip)
		}
		if target != "" {
			nb.TargetId = common.String(target)
		}
		out = append(out, nb)
	}
	return out, nil
}

// checkPreserveSource refuses a backend set that turns isPreserveSource
// off on a network load balancer with isPreserveSourceDestination on: "If
// the isPreserveSourceDestination parameter is enabled for the network load
// balancer resource, then this parameter cannot be disabled" (oci-go-sdk
// v65.130.0 networkloadbalancer/create_backend_set_details.go,
// update_backend_set_details.go, backend_set_details.go, IsPreserveSource).
// The code (400 InvalidParameter) is cloudsim's choice. Turning
// isPreserveSourceDestination on over such a set (UpdateNetworkLoadBalancer)
// is not refused: what the service does then is not documented.
func checkPreserveSource(b *balancer) error {
	if b.kind != kindNLB || !b.preserveSourceDest {
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(b.nlbBackendSets)) {
		if p := b.nlbBackendSets[name].IsPreserveSource; p != nil && !*p {
			return badRequest("backendSets[%s].isPreserveSource cannot be false: the network load balancer has isPreserveSourceDestination enabled.", name)
		}
	}
	return nil
}

// nlbBackendSetSpec is the union of the create, update and inline forms.
type nlbBackendSetSpec struct {
	policy                             *string
	hc                                 *nlb.HealthCheckerDetails
	backends                           []nlb.BackendDetails
	preserveSource, failOpen           *bool
	instantFailover, instantFailoverRs *bool
	activeBackendsPreferred            *bool
	ipVersion                          nlb.IpVersionEnum
}

func (d *Dialect) nlbBackendSet(name string, s nlbBackendSetSpec) (nlb.BackendSet, error) {
	where := "backendSets[" + name + "]"
	if err := checkName("backend set", name); err != nil {
		return nlb.BackendSet{}, err
	}
	policy := "FIVE_TUPLE"
	if s.policy != nil {
		policy = strings.ToUpper(*s.policy)
	}
	if !slices.Contains(nlbPolicies, policy) {
		return nlb.BackendSet{}, badRequest("%s.policy %q must be one of %s.", where, policy, strings.Join(nlbPolicies, ", "))
	}
	ver, known := ipVersionOr(s.ipVersion)
	if !known {
		return nlb.BackendSet{}, badRequest("%s.ipVersion %q must be IPV4 or IPV6.", where, s.ipVersion)
	}
	hc, err := nlbHealthChecker(where, s.hc)
	if err != nil {
		return nlb.BackendSet{}, err
	}
	bs, err := d.nlbBackends(where, s.backends, ver)
	if err != nil {
		return nlb.BackendSet{}, err
	}
	preserve := s.preserveSource
	if preserve == nil {
		preserve = common.Bool(true) // the API's default
	}
	return nlb.BackendSet{
		Name: common.String(name), HealthChecker: hc, Policy: nlb.NetworkLoadBalancingPolicyEnum(policy),
		IsPreserveSource: preserve, IsFailOpen: boolOr(s.failOpen), IsInstantFailoverEnabled: boolOr(s.instantFailover),
		IsInstantFailoverTcpResetEnabled: boolOr(s.instantFailoverRs), AreOperationallyActiveBackendsPreferred: boolOr(s.activeBackendsPreferred),
		IpVersion: ver, Backends: bs,
	}, nil
}

type nlbListenerSpec struct {
	defaultBackendSet *string
	port              *int
	protocol          nlb.ListenerProtocolsEnum
	ipVersion         nlb.IpVersionEnum
	tcpIdle, udpIdle  *int
	ppv2              *bool // isPpv2Enabled (proxyprotocol.go)
}

func nlbListener(name string, s nlbListenerSpec, backendSets map[string]nlb.BackendSet) (nlb.Listener, error) {
	where := "listeners[" + name + "]"
	if err := checkName("listener", name); err != nil {
		return nlb.Listener{}, err
	}
	proto := strings.ToUpper(string(s.protocol))
	if !slices.Contains(nlbListenerProtos, proto) {
		return nlb.Listener{}, badRequest("%s.protocol must be one of %s.", where, strings.Join(nlbListenerProtos, ", "))
	}
	if err := checkPort(where+".port", s.port, proto == "ANY" || proto == "L3IP"); err != nil {
		return nlb.Listener{}, err
	}
	if s.defaultBackendSet == nil || *s.defaultBackendSet == "" {
		return nlb.Listener{}, missing(where + ".defaultBackendSetName")
	}
	if _, ok := backendSets[*s.defaultBackendSet]; !ok {
		return nlb.Listener{}, badRequest("%s: the default backend set %q does not exist.", where, *s.defaultBackendSet)
	}
	ver, known := ipVersionOr(s.ipVersion)
	if !known {
		return nlb.Listener{}, badRequest("%s.ipVersion %q must be IPV4 or IPV6.", where, s.ipVersion)
	}
	for _, t := range []*int{s.tcpIdle, s.udpIdle} {
		if t != nil && (*t < 1 || *t > 3600) {
			return nlb.Listener{}, badRequest("%s: idle timeouts must be from 1 to 3600 seconds.", where)
		}
	}
	return nlb.Listener{
		Name: common.String(name), DefaultBackendSetName: s.defaultBackendSet, Port: s.port,
		Protocol: nlb.ListenerProtocolsEnum(proto), IpVersion: ver, TcpIdleTimeout: s.tcpIdle, UdpIdleTimeout: s.udpIdle,
		IsPpv2Enabled: ppv2OrOff(s.ppv2),
	}, nil
}

// checkNLBListenerPorts rejects two listeners that would take one port
// and protocol.
func checkNLBListenerPorts(ls map[string]nlb.Listener) error {
	taken := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(ls)) {
		l := ls[name]
		var protos []string
		switch l.Protocol {
		case nlb.ListenerProtocolsTcpAndUdp:
			protos = []string{"TCP", "UDP"}
		default:
			protos = []string{string(l.Protocol)}
		}
		for _, p := range protos {
			k := fmt.Sprintf("%s/%d/%s", p, *l.Port, l.IpVersion) // an IPv4 and an IPv6 listener have different addresses
			if other, dup := taken[k]; dup {
				return badRequest("The listeners %s and %s both use %s port %d.", other, name, p, *l.Port)
			}
			taken[k] = name
		}
	}
	return nil
}

func (d *Dialect) nlbModel(b *balancer) nlb.NetworkLoadBalancer {
	m := nlb.NetworkLoadBalancer{
		Id: common.String(b.id), CompartmentId: common.String(b.compartmentID), DisplayName: common.String(b.displayName),
		LifecycleState: nlb.LifecycleStateEnum(b.lifecycle), TimeCreated: sdkTime(b.created), TimeUpdated: sdkTime(b.updated),
		IpAddresses: []nlb.IpAddress{}, SubnetId: common.String(b.subnetIDs[0]), NlbIpVersion: nlb.NlbIpVersionIpv4,
		IsPrivate: common.Bool(b.isPrivate), IsPreserveSourceDestination: common.Bool(b.preserveSourceDest),
		IsSymmetricHashEnabled: common.Bool(b.symmetricHash), NetworkSecurityGroupIds: slices.Clone(b.nsgIDs),
		Listeners: maps.Clone(b.nlbListeners), BackendSets: maps.Clone(b.nlbBackendSets),
		FreeformTags: orEmpty(b.freeformTags), DefinedTags: orEmptyDefined(b.definedTags), SystemTags: map[string]map[string]interface{}{},
	}
	if b.vip.IsValid() && b.lifecycle != stateCreating && b.lifecycle != stateFailed && b.lifecycle != stateDeleted {
		vip := nlb.IpAddress{IpAddress: common.String(b.vip.String()), IsPublic: common.Bool(!b.isPrivate), IpVersion: nlb.IpVersionIpv4}
		if b.reservedIPID != "" {
			vip.ReservedIp = &nlb.ReservedIp{Id: common.String(b.reservedIPID)}
		}
		m.IpAddresses = []nlb.IpAddress{vip}
		if !b.isPrivate {
			// A public NLB lists its private address in its subnet too,
			// IsPublic false, as the real one does ("A public NLB lists
			// its private IP too", ../shared/reference/oci-api.md; OKE's
			// docs: "by default, the kubectl get service command returns
			// both the network load balancer's public IP address and its
			// private IP address", https://docs.oracle.com/en-us/iaas/Content/ContEng/Tasks/contengconfiguringloadbalancersnetworkloadbalancers-subtopic.htm).
			// Private first, so that a client sorting or taking the first
			// address is caught: the order is cloudsim's choice.
			if p := d.privateAddrOf(b); p.IsValid() {
				priv := nlb.IpAddress{IpAddress: common.String(p.String()), IsPublic: common.Bool(false), IpVersion: nlb.IpVersionIpv4}
				m.IpAddresses = []nlb.IpAddress{priv, vip}
			}
		}
	}
	d.nlbModelIPv6(b, &m)
	return m
}

// privateAddrOf is a load balancer's private address in its (first)
// subnet: the address it sends to backends from (firewall.go).
func (d *Dialect) privateAddrOf(b *balancer) netip.Addr {
	if b.privateIPv4.IsValid() {
		return b.privateIPv4
	}
	if len(b.subnetIDs) == 0 {
		return netip.Addr{}
	}
	s, ok := d.net.subnet(b.subnetIDs[0])
	if !ok {
		return netip.Addr{}
	}
	p, err := netip.ParsePrefix(s.CIDRBlock)
	if err != nil {
		return netip.Addr{}
	}
	return lbPrivateAddr(p, b.id)
}

// ---- network load balancers ----

func (d *Dialect) createNLB(c *call) (*reply, error) {
	var req nlb.CreateNetworkLoadBalancerDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	switch {
	case req.CompartmentId == nil || *req.CompartmentId == "":
		return nil, missing("compartmentId")
	case !d.knownCompartment(c, *req.CompartmentId):
		return nil, notFound("compartment", *req.CompartmentId)
	case req.DisplayName == nil || strings.TrimSpace(*req.DisplayName) == "":
		return nil, missing("displayName")
	case req.SubnetId == nil || *req.SubnetId == "":
		return nil, missing("subnetId")
	case len(req.NetworkSecurityGroupIds) > MaxNSGs:
		return nil, Errorf(http.StatusBadRequest, CodeLimitExceeded, "A network load balancer takes at most %d network security groups.", MaxNSGs)
	}
	if err := d.checkSubnets([]string{*req.SubnetId}); err != nil {
		return nil, err
	}
	if err := d.checkBalancerNSGs(*req.SubnetId, req.NetworkSecurityGroupIds); err != nil {
		return nil, err
	}
	reserved, err := reservedIPOf(nlbReservedIDs(req.ReservedIps), req.IsPrivate != nil && *req.IsPrivate)
	if err != nil {
		return nil, err
	}
	priv, err := d.checkAssignedPrivateIPv4(*req.SubnetId, req.AssignedPrivateIpv4)
	if err != nil {
		return nil, err
	}
	ipVersion, ipv6, err := d.checkNLBIPVersion(*req.SubnetId, req.NlbIpVersion, req.AssignedIpv6)
	if err != nil {
		return nil, err
	}
	b := &balancer{
		kind: kindNLB, reservedIPID: reserved, privateIPv4: priv, nlbIPVersion: ipVersion, ipv6: ipv6, compartmentID: *req.CompartmentId, displayName: *req.DisplayName,
		isPrivate: req.IsPrivate != nil && *req.IsPrivate, subnetIDs: []string{*req.SubnetId},
		nsgIDs: slices.Clone(req.NetworkSecurityGroupIds), freeformTags: maps.Clone(req.FreeformTags), definedTags: maps.Clone(req.DefinedTags),
		preserveSourceDest: req.IsPreserveSourceDestination != nil && *req.IsPreserveSourceDestination,
		symmetricHash:      req.IsSymmetricHashEnabled != nil && *req.IsSymmetricHashEnabled,
		nlbListeners:       map[string]nlb.Listener{}, nlbBackendSets: map[string]nlb.BackendSet{},
	}
	for _, name := range slices.Sorted(maps.Keys(req.BackendSets)) {
		in := req.BackendSets[name]
		var policy *string
		if in.Policy != "" {
			policy = common.String(string(in.Policy))
		}
		var hcd *nlb.HealthCheckerDetails
		if h := in.HealthChecker; h != nil {
			hcd = &nlb.HealthCheckerDetails{Protocol: h.Protocol, Port: h.Port, Retries: h.Retries, TimeoutInMillis: h.TimeoutInMillis,
				IntervalInMillis: h.IntervalInMillis, UrlPath: h.UrlPath, ResponseBodyRegex: h.ResponseBodyRegex, ReturnCode: h.ReturnCode,
				RequestData: h.RequestData, ResponseData: h.ResponseData, Dns: h.Dns}
		}
		backends := make([]nlb.BackendDetails, len(in.Backends))
		for i, be := range in.Backends {
			backends[i] = nlb.BackendDetails{Port: be.Port, Name: be.Name, IpAddress: be.IpAddress, TargetId: be.TargetId,
				Weight: be.Weight, IsBackup: be.IsBackup, IsDrain: be.IsDrain, IsOffline: be.IsOffline}
		}
		bs, err := d.nlbBackendSet(name, nlbBackendSetSpec{policy: policy, hc: hcd, backends: backends,
			preserveSource: in.IsPreserveSource, failOpen: in.IsFailOpen, instantFailover: in.IsInstantFailoverEnabled,
			instantFailoverRs: in.IsInstantFailoverTcpResetEnabled, activeBackendsPreferred: in.AreOperationallyActiveBackendsPreferred, ipVersion: in.IpVersion})
		if err != nil {
			return nil, err
		}
		b.nlbBackendSets[name] = bs
	}
	for _, key := range slices.Sorted(maps.Keys(req.Listeners)) {
		in := req.Listeners[key]
		if in.Name == nil || *in.Name != key {
			return nil, badRequest("listeners[%s]: the name must equal the map key.", key)
		}
		l, err := nlbListener(key, nlbListenerSpec{defaultBackendSet: in.DefaultBackendSetName, port: in.Port, protocol: in.Protocol,
			ipVersion: in.IpVersion, tcpIdle: in.TcpIdleTimeout, udpIdle: in.UdpIdleTimeout, ppv2: in.IsPpv2Enabled}, b.nlbBackendSets)
		if err != nil {
			return nil, err
		}
		b.nlbListeners[key] = l
	}
	if err := checkNLBListeners(b); err != nil {
		return nil, err
	}
	if err := checkPreserveSource(b); err != nil {
		return nil, err
	}
	if err := d.checkLimits(b); err != nil {
		return nil, err
	}
	wr, err := d.create(c, b, "", string(nlb.OperationTypeCreateNetworkLoadBalancer))
	if err != nil {
		return nil, err
	}
	nb, err := d.lbs.get(b.id, kindNLB, d.core.Now(), d.retention)
	if err != nil {
		return nil, err
	}
	// Unlike Load Balancing, the create answers the new resource.
	return (&reply{status: http.StatusOK, body: d.nlbModel(nb), created: b.id}).
		with("opc-work-request-id", wr).with("etag", nb.etag()), nil
}

func (d *Dialect) getNLB(c *call) (*reply, error) {
	b, err := d.balancerAt(c, kindNLB)
	if err != nil {
		return nil, err
	}
	if m := c.r.Header.Get("if-none-match"); m != "" && m == b.etag() {
		return (&reply{status: http.StatusNotModified}).with("etag", b.etag()), nil
	}
	return ok(d.nlbModel(b)).with("etag", b.etag()), nil
}

func (d *Dialect) listNLBs(c *call) (*reply, error) {
	bs, err := d.listBalancers(c, kindNLB)
	if err != nil {
		return nil, err
	}
	items := make([]nlb.NetworkLoadBalancerSummary, len(bs))
	for i, b := range bs {
		m := d.nlbModel(b)
		items[i] = nlb.NetworkLoadBalancerSummary{
			Id: m.Id, CompartmentId: m.CompartmentId, DisplayName: m.DisplayName, LifecycleState: m.LifecycleState,
			TimeCreated: m.TimeCreated, IpAddresses: m.IpAddresses, SubnetId: m.SubnetId, NlbIpVersion: m.NlbIpVersion,
			TimeUpdated: m.TimeUpdated, IsPrivate: m.IsPrivate, IsPreserveSourceDestination: m.IsPreserveSourceDestination,
			IsSymmetricHashEnabled: m.IsSymmetricHashEnabled, NetworkSecurityGroupIds: m.NetworkSecurityGroupIds,
			Listeners: m.Listeners, BackendSets: m.BackendSets, FreeformTags: m.FreeformTags, DefinedTags: m.DefinedTags, SystemTags: m.SystemTags,
		}
	}
	return page(c, items, func(p []nlb.NetworkLoadBalancerSummary) any { return nlb.NetworkLoadBalancerCollection{Items: p} })
}

func (d *Dialect) updateNLB(c *call) (*reply, error) {
	id, err := nlbID(c)
	if err != nil {
		return nil, err
	}
	var req nlb.UpdateNetworkLoadBalancerDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	if req.DisplayName != nil && strings.TrimSpace(*req.DisplayName) == "" {
		return nil, badRequest("The displayName must not be empty.")
	}
	return d.mutate(c, kindNLB, id, "", string(nlb.OperationTypeUpdateNetworkLoadBalancer), "UPDATED", func(*balancer) (change, error) {
		return func(b *balancer) error {
			if req.DisplayName != nil {
				b.displayName = *req.DisplayName
			}
			if req.IsPreserveSourceDestination != nil {
				b.preserveSourceDest = *req.IsPreserveSourceDestination
			}
			if req.IsSymmetricHashEnabled != nil {
				b.symmetricHash = *req.IsSymmetricHashEnabled
			}
			if req.FreeformTags != nil {
				b.freeformTags = maps.Clone(req.FreeformTags)
			}
			if req.DefinedTags != nil {
				b.definedTags = maps.Clone(req.DefinedTags)
			}
			return nil
		}, nil
	})
}

func (d *Dialect) deleteNLB(c *call) (*reply, error) {
	id, err := nlbID(c)
	if err != nil {
		return nil, err
	}
	return d.remove(c, kindNLB, id, "", string(nlb.OperationTypeDeleteNetworkLoadBalancer))
}

// ---- backend sets ----

func (d *Dialect) createNLBBackendSet(c *call) (*reply, error) {
	id, err := nlbID(c)
	if err != nil {
		return nil, err
	}
	var req nlb.CreateBackendSetDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	if req.Name == nil {
		return nil, missing("name")
	}
	name := *req.Name
	var policy *string
	if req.Policy != "" {
		policy = common.String(string(req.Policy))
	}
	bs, err := d.nlbBackendSet(name, nlbBackendSetSpec{policy: policy, hc: req.HealthChecker, backends: req.Backends,
		preserveSource: req.IsPreserveSource, failOpen: req.IsFailOpen, instantFailover: req.IsInstantFailoverEnabled,
		instantFailoverRs: req.IsInstantFailoverTcpResetEnabled, activeBackendsPreferred: req.AreOperationallyActiveBackendsPreferred, ipVersion: req.IpVersion})
	if err != nil {
		return nil, err
	}
	return createChild(d, c, kindNLB, id, name, "", string(nlb.OperationTypeCreateBackendset), bs, func(b *balancer) map[string]nlb.BackendSet { return b.nlbBackendSets })
}

// updateNLBBackendSet changes the fields given; the others keep their
// values (unlike Load Balancing, whose update replaces the backend set).
func (d *Dialect) updateNLBBackendSet(c *call) (*reply, error) {
	id, name, err := childPath(c, kindNLB, "backendSetName")
	if err != nil {
		return nil, err
	}
	var req nlb.UpdateBackendSetDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	build := func(b *balancer) error {
		cur, ok := b.nlbBackendSets[name]
		if !ok {
			return notFound("backend set", name)
		}
		s := nlbBackendSetSpec{policy: common.String(string(cur.Policy)), preserveSource: cur.IsPreserveSource, failOpen: cur.IsFailOpen,
			instantFailover: cur.IsInstantFailoverEnabled, instantFailoverRs: cur.IsInstantFailoverTcpResetEnabled,
			activeBackendsPreferred: cur.AreOperationallyActiveBackendsPreferred}
		h := cur.HealthChecker
		s.hc = &nlb.HealthCheckerDetails{Protocol: h.Protocol, Port: h.Port, Retries: h.Retries, TimeoutInMillis: h.TimeoutInMillis,
			IntervalInMillis: h.IntervalInMillis, UrlPath: h.UrlPath, ResponseBodyRegex: h.ResponseBodyRegex, ReturnCode: h.ReturnCode,
			RequestData: h.RequestData, ResponseData: h.ResponseData, Dns: h.Dns}
		for _, be := range cur.Backends {
			s.backends = append(s.backends, nlb.BackendDetails{Port: be.Port, IpAddress: be.IpAddress, TargetId: be.TargetId,
				Weight: be.Weight, IsBackup: be.IsBackup, IsDrain: be.IsDrain, IsOffline: be.IsOffline})
		}
		if req.Policy != nil {
			s.policy = req.Policy
		}
		if req.HealthChecker != nil {
			s.hc = req.HealthChecker
		}
		if req.Backends != nil {
			s.backends = req.Backends
		}
		for _, f := range []struct{ src, dst **bool }{
			{&req.IsPreserveSource, &s.preserveSource}, {&req.IsFailOpen, &s.failOpen}, {&req.IsInstantFailoverEnabled, &s.instantFailover},
			{&req.IsInstantFailoverTcpResetEnabled, &s.instantFailoverRs}, {&req.AreOperationallyActiveBackendsPreferred, &s.activeBackendsPreferred},
		} {
			if *f.src != nil {
				*f.dst = *f.src
			}
		}
		s.ipVersion = cur.IpVersion
		if req.IpVersion != "" {
			s.ipVersion = req.IpVersion
		}
		bs, err := d.nlbBackendSet(name, s)
		if err != nil {
			return err
		}
		b.nlbBackendSets[name] = bs
		if err := checkNLBListeners(b); err != nil {
			return err
		}
		if err := checkPreserveSource(b); err != nil {
			return err
		}
		return d.checkLimits(b)
	}
	return d.mutate(c, kindNLB, id, "", string(nlb.OperationTypeUpdateBackendset), "UPDATED", checkedChange(build))
}

func (d *Dialect) deleteNLBBackendSet(c *call) (*reply, error) {
	return deleteChild(d, c, kindNLB, "backendSetName", "backend set", "", string(nlb.OperationTypeDeleteBackendset),
		func(b *balancer) map[string]nlb.BackendSet { return b.nlbBackendSets },
		func(b *balancer, name string) error {
			return defaultSetUser(b.nlbListeners, name, func(l nlb.Listener) *string { return l.DefaultBackendSetName })
		})
}

func (d *Dialect) getNLBBackendSet(c *call) (*reply, error) {
	return childAt(d, c, kindNLB, "backendSetName", "backend set", func(b *balancer) map[string]nlb.BackendSet { return b.nlbBackendSets })
}

func (d *Dialect) listNLBBackendSets(c *call) (*reply, error) {
	b, err := d.balancerAt(c, kindNLB)
	if err != nil {
		return nil, err
	}
	items := []nlb.BackendSetSummary{}
	for _, name := range slices.Sorted(maps.Keys(b.nlbBackendSets)) {
		bs := b.nlbBackendSets[name]
		items = append(items, nlb.BackendSetSummary{Name: bs.Name, Policy: bs.Policy, Backends: bs.Backends, HealthChecker: bs.HealthChecker,
			IsPreserveSource: bs.IsPreserveSource, IsFailOpen: bs.IsFailOpen, IsInstantFailoverEnabled: bs.IsInstantFailoverEnabled,
			IsInstantFailoverTcpResetEnabled: bs.IsInstantFailoverTcpResetEnabled, AreOperationallyActiveBackendsPreferred: bs.AreOperationallyActiveBackendsPreferred,
			IpVersion: bs.IpVersion})
	}
	rp, err := page(c, items, func(p []nlb.BackendSetSummary) any { return nlb.BackendSetCollection{Items: p} })
	if err != nil {
		return nil, err
	}
	return rp.with("etag", b.etag()), nil
}

func (d *Dialect) getNLBBackendSetHealth(c *call) (*reply, error) {
	h, total, err := d.backendSetHealthAt(c, kindNLB, func(b *balancer, set string) ([]string, bool) {
		bs, found := b.nlbBackendSets[set]
		return backendNames(bs.Backends, func(be nlb.Backend) *string { return be.Name }), found
	})
	if err != nil {
		return nil, err
	}
	return ok(nlb.BackendSetHealth{
		Status: nlb.BackendSetHealthStatusEnum(h.status), WarningStateBackendNames: h.warning,
		CriticalStateBackendNames: h.critical, UnknownStateBackendNames: h.unknown, TotalBackendCount: common.Int(total),
	}), nil
}

// ---- listeners ----

func (d *Dialect) createNLBListener(c *call) (*reply, error) {
	id, err := nlbID(c)
	if err != nil {
		return nil, err
	}
	var req nlb.CreateListenerDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	if req.Name == nil {
		return nil, missing("name")
	}
	name := *req.Name
	spec := nlbListenerSpec{defaultBackendSet: req.DefaultBackendSetName, port: req.Port, protocol: req.Protocol,
		ipVersion: req.IpVersion, tcpIdle: req.TcpIdleTimeout, udpIdle: req.UdpIdleTimeout, ppv2: req.IsPpv2Enabled}
	build := func(b *balancer) error {
		if _, dup := b.nlbListeners[name]; dup {
			return Errorf(http.StatusConflict, CodeAlreadyExists, "The listener %s already exists in network load balancer %s.", name, id)
		}
		l, err := nlbListener(name, spec, b.nlbBackendSets)
		if err != nil {
			return err
		}
		b.nlbListeners[name] = l
		if err := d.checkLimits(b); err != nil {
			return err
		}
		return checkNLBListeners(b)
	}
	return d.mutate(c, kindNLB, id, "", string(nlb.OperationTypeCreateListener), "UPDATED", checkedChange(build))
}

// updateNLBListener changes the fields given.
func (d *Dialect) updateNLBListener(c *call) (*reply, error) {
	id, name, err := childPath(c, kindNLB, "listenerName")
	if err != nil {
		return nil, err
	}
	var req nlb.UpdateListenerDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	build := func(b *balancer) error {
		cur, found := b.nlbListeners[name]
		if !found {
			return notFound("listener", name)
		}
		s := nlbListenerSpec{defaultBackendSet: cur.DefaultBackendSetName, port: cur.Port, protocol: cur.Protocol,
			tcpIdle: cur.TcpIdleTimeout, udpIdle: cur.UdpIdleTimeout, ppv2: cur.IsPpv2Enabled}
		if req.IsPpv2Enabled != nil {
			s.ppv2 = req.IsPpv2Enabled
		}
		if req.DefaultBackendSetName != nil {
			s.defaultBackendSet = req.DefaultBackendSetName
		}
		if req.Port != nil {
			s.port = req.Port
		}
		if req.Protocol != "" {
			s.protocol = req.Protocol
		}
		if req.TcpIdleTimeout != nil {
			s.tcpIdle = req.TcpIdleTimeout
		}
		if req.UdpIdleTimeout != nil {
			s.udpIdle = req.UdpIdleTimeout
		}
		s.ipVersion = cur.IpVersion
		if req.IpVersion != "" {
			s.ipVersion = req.IpVersion
		}
		l, err := nlbListener(name, s, b.nlbBackendSets)
		if err != nil {
			return err
		}
		b.nlbListeners[name] = l
		return checkNLBListeners(b)
	}
	return d.mutate(c, kindNLB, id, "", string(nlb.OperationTypeUpdateListener), "UPDATED", checkedChange(build))
}

func (d *Dialect) deleteNLBListener(c *call) (*reply, error) {
	return deleteChild(d, c, kindNLB, "listenerName", "listener", "", string(nlb.OperationTypeDeleteListener),
		func(b *balancer) map[string]nlb.Listener { return b.nlbListeners }, nil)
}

func (d *Dialect) getNLBListener(c *call) (*reply, error) {
	return childAt(d, c, kindNLB, "listenerName", "listener", func(b *balancer) map[string]nlb.Listener { return b.nlbListeners })
}

func (d *Dialect) listNLBListeners(c *call) (*reply, error) {
	b, err := d.balancerAt(c, kindNLB)
	if err != nil {
		return nil, err
	}
	items := []nlb.ListenerSummary{}
	for _, name := range slices.Sorted(maps.Keys(b.nlbListeners)) {
		l := b.nlbListeners[name]
		items = append(items, nlb.ListenerSummary{Name: l.Name, DefaultBackendSetName: l.DefaultBackendSetName, Port: l.Port,
			Protocol: l.Protocol, IpVersion: l.IpVersion, TcpIdleTimeout: l.TcpIdleTimeout, UdpIdleTimeout: l.UdpIdleTimeout, IsPpv2Enabled: l.IsPpv2Enabled})
	}
	rp, err := page(c, items, func(p []nlb.ListenerSummary) any { return nlb.ListenerCollection{Items: p} })
	if err != nil {
		return nil, err
	}
	return rp.with("etag", b.etag()), nil
}
