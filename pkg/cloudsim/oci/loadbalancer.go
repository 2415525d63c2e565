package oci

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
)

// Load Balancing shapes: "flexible" with a bandwidth range, or one of the
// fixed (legacy) shapes, which only a tenancy older than May 2023 may still
// create (Options.FixedShapes):
//
//	oci-go-sdk v65.129.0 loadbalancer/create_load_balancer_details.go,
//	CreateLoadBalancerDetails.ShapeName: "NOTE: After May 2023, Fixed
//	shapes - 10Mbps, 100Mbps, 400Mbps, 8000Mbps would be deprecated and
//	only shape allowed would be `Flexible`"
//
// The answer to a fixed shape in a newer tenancy (400 InvalidParameter) is
// cloudsim's choice of code: the SDK names none.
const (
	ShapeFlexible   = "flexible"
	MinFlexMbps     = 10
	MaxFlexMbps     = 8000
	MaxLBSubnets    = 2
	MaxNSGs         = 5
	DefaultLBWeight = 1
	MaxLBWeight     = 100
)

// MinLBMaxConnections: a backend set's backendMaxConnections and a
// backend's maxConnections are 0 (unlimited) or at least 256: "If setting
// backendMaxConnections to some value other than 0 then that value must be
// greater or equal to 256" (oci-go-sdk v65.130.0
// loadbalancer/create_backend_set_details.go, update_backend_set_details.go,
// backend_set_details.go; the same for maxConnections in backend_details.go).
// A lower value is 400 InvalidParameter at once (cloudsim's choice of code
// and of refusing the call rather than failing its work request).
const MinLBMaxConnections = 256

// checkMaxConnections refuses a connection limit the API does not take.
func checkMaxConnections(field string, v *int) error {
	if v != nil && *v != 0 && *v < MinLBMaxConnections {
		return badRequest("%s %d must be 0 (unlimited) or at least %d.", field, *v, MinLBMaxConnections)
	}
	return nil
}

var fixedShapes = []string{"10Mbps", "10Mbps-Micro", "100Mbps", "400Mbps", "8000Mbps"}

// Load Balancing enumerations cloudsim accepts.
var (
	lbPolicies        = []string{"ROUND_ROBIN", "LEAST_CONNECTIONS", "IP_HASH"}
	lbListenerProtos  = []string{"TCP", "HTTP", "HTTP2", "GRPC"}
	lbHealthProtocols = []string{"HTTP", "TCP"}
)

func (d *Dialect) routeLoadBalancer() {
	const svc = "loadbalancer"
	p := PrefixLoadBalancer + "/loadBalancers"
	d.mux.Handle("POST "+p, d.route(svc, "CreateLoadBalancer", true, d.createLoadBalancer))
	d.mux.Handle("GET "+p, d.route(svc, "ListLoadBalancers", false, d.listLoadBalancers))
	d.mux.Handle("GET "+p+"/{loadBalancerId}", d.route(svc, "GetLoadBalancer", false, d.getLoadBalancer))
	d.mux.Handle("PUT "+p+"/{loadBalancerId}", d.route(svc, "UpdateLoadBalancer", true, d.updateLoadBalancer))
	d.mux.Handle("DELETE "+p+"/{loadBalancerId}", d.route(svc, "DeleteLoadBalancer", true, d.deleteLoadBalancer))
	d.mux.Handle("PUT "+p+"/{loadBalancerId}/updateShape", d.route(svc, "UpdateLoadBalancerShape", true, d.updateLoadBalancerShape))
	d.mux.Handle("POST "+p+"/{loadBalancerId}/backendSets", d.route(svc, "CreateBackendSet", true, d.createLBBackendSet))
	d.mux.Handle("GET "+p+"/{loadBalancerId}/backendSets", d.route(svc, "ListBackendSets", false, d.listLBBackendSets))
	d.mux.Handle("GET "+p+"/{loadBalancerId}/backendSets/{backendSetName}", d.route(svc, "GetBackendSet", false, d.getLBBackendSet))
	d.mux.Handle("PUT "+p+"/{loadBalancerId}/backendSets/{backendSetName}", d.route(svc, "UpdateBackendSet", true, d.updateLBBackendSet))
	d.mux.Handle("DELETE "+p+"/{loadBalancerId}/backendSets/{backendSetName}", d.route(svc, "DeleteBackendSet", true, d.deleteLBBackendSet))
	d.mux.Handle("GET "+p+"/{loadBalancerId}/backendSets/{backendSetName}/health", d.route(svc, "GetBackendSetHealth", false, d.getLBBackendSetHealth))
	d.mux.Handle("POST "+p+"/{loadBalancerId}/listeners", d.route(svc, "CreateListener", true, d.createLBListener))
	d.mux.Handle("PUT "+p+"/{loadBalancerId}/listeners/{listenerName}", d.route(svc, "UpdateListener", true, d.updateLBListener))
	d.mux.Handle("DELETE "+p+"/{loadBalancerId}/listeners/{listenerName}", d.route(svc, "DeleteListener", true, d.deleteLBListener))
	d.routeCertificates(p)
	d.mux.Handle("GET "+p+"/{loadBalancerId}/workRequests", d.route(svc, "ListWorkRequests", false, d.listLBWorkRequests))
	d.routeRuleSets()
	d.mux.Handle("GET "+PrefixLoadBalancer+"/loadBalancerShapes", d.route(svc, "ListShapes", false, d.listShapes))
	d.mux.Handle("GET "+PrefixLoadBalancer+"/loadBalancerWorkRequests/{workRequestId}", d.route(svc, "GetWorkRequest", false, d.getLBWorkRequest))
}

// ---- validation: details in, models out ----

func checkShape(name *string, det *loadbalancer.ShapeDetails, allowFixed bool) error {
	if name == nil || *name == "" {
		return missing("shapeName")
	}
	if *name == ShapeFlexible {
		if det == nil || det.MinimumBandwidthInMbps == nil || det.MaximumBandwidthInMbps == nil {
			return badRequest("The flexible shape needs shapeDetails with minimumBandwidthInMbps and maximumBandwidthInMbps.")
		}
		lo, hi := *det.MinimumBandwidthInMbps, *det.MaximumBandwidthInMbps
		if lo < MinFlexMbps || hi > MaxFlexMbps || lo > hi {
			return badRequest("The flexible shape's bandwidth must satisfy %d <= minimumBandwidthInMbps (%d) <= maximumBandwidthInMbps (%d) <= %d.", MinFlexMbps, lo, hi, MaxFlexMbps)
		}
		return nil
	}
	if !slices.Contains(fixedShapes, *name) {
		return badRequest("The shape %q is not a load balancer shape (%s or one of %s).", *name, ShapeFlexible, strings.Join(fixedShapes, ", "))
	}
	if !allowFixed {
		return badRequest("The fixed shape %q is deprecated: since May 2023 only the %s shape can be created "+
			"(cloudsim plays a tenancy created after May 2023; start it with --oci-fixed-shapes for an older one).", *name, ShapeFlexible)
	}
	if det != nil {
		return badRequest("shapeDetails apply only to the %s shape, not %q.", ShapeFlexible, *name)
	}
	return nil
}

func lbHealthChecker(where string, in *loadbalancer.HealthCheckerDetails) (*loadbalancer.HealthChecker, error) {
	if in == nil {
		return nil, missing(where + ".healthChecker")
	}
	if in.Protocol == nil || !slices.Contains(lbHealthProtocols, strings.ToUpper(*in.Protocol)) {
		return nil, badRequest("%s.healthChecker.protocol must be one of %s.", where, strings.Join(lbHealthProtocols, ", "))
	}
	hc := &loadbalancer.HealthChecker{
		Protocol:          common.String(strings.ToUpper(*in.Protocol)),
		Port:              common.Int(0),
		ReturnCode:        common.Int(200),
		ResponseBodyRegex: common.String(""),
		UrlPath:           in.UrlPath,
		Retries:           common.Int(3),
		TimeoutInMillis:   common.Int(3000),
		IntervalInMillis:  common.Int(10000),
		IsForcePlainText:  common.Bool(false),
	}
	if in.Port != nil {
		if err := checkPort(where+".healthChecker.port", in.Port, true); err != nil {
			return nil, err
		}
		hc.Port = in.Port
	}
	if *hc.Protocol == "HTTP" && (in.UrlPath == nil || !strings.HasPrefix(*in.UrlPath, "/")) {
		return nil, badRequest("%s.healthChecker.urlPath must be an absolute path for an HTTP health check.", where)
	}
	for _, f := range []struct {
		name   string
		v      *int
		lo, hi int
		dst    **int
	}{
		{"returnCode", in.ReturnCode, 100, 599, &hc.ReturnCode},
		{"retries", in.Retries, 1, 10, &hc.Retries},
		{"timeoutInMillis", in.TimeoutInMillis, 1, 600000, &hc.TimeoutInMillis},
		{"intervalInMillis", in.IntervalInMillis, 1000, 1800000, &hc.IntervalInMillis},
	} {
		if f.v == nil {
			continue
		}
		if *f.v < f.lo || *f.v > f.hi {
			return nil, badRequest("%s.healthChecker.%s %d must be from %d to %d.", where, f.name, *f.v, f.lo, f.hi)
		}
		*f.dst = f.v
	}
	if in.ResponseBodyRegex != nil {
		hc.ResponseBodyRegex = in.ResponseBodyRegex
	}
	if in.IsForcePlainText != nil {
		hc.IsForcePlainText = in.IsForcePlainText
	}
	return hc, nil
}

func lbBackends(where string, in []loadbalancer.BackendDetails) ([]loadbalancer.Backend, error) {
	out := []loadbalancer.Backend{}
	seen := map[string]bool{}
	for i, b := range in {
		w := fmt.Sprintf("%s.backends[%d]", where, i)
		if b.IpAddress == nil {
			return nil, missing(w + ".ipAddress")
		}
		ip, err := checkIPv4(w+".ipAddress", *b.IpAddress)
		if err != nil {
			return nil, err
		}
		if err := checkPort(w+".port", b.Port, false); err != nil {
			return nil, err
		}
		if err := checkMaxConnections(w+".maxConnections", b.MaxConnections); err != nil {
			return nil, err
		}
		name := fmt.Sprintf("%s:%d", ip, *b.Port)
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
		out = append(out, loadbalancer.Backend{
			Name: common.String(name), IpAddress: common.String(ip), Port: b.Port, Weight: common.Int(weight),
			Drain: boolOr(b.Drain), Backup: boolOr(b.Backup), Offline: boolOr(b.Offline), MaxConnections: b.MaxConnections,
		})
	}
	return out, nil
}

func boolOr(b *bool) *bool {
	if b == nil {
		return common.Bool(false)
	}
	return b
}

// lbBackendSet builds a backend set from its details.
func lbBackendSet(name, policy string, hcIn *loadbalancer.HealthCheckerDetails, backends []loadbalancer.BackendDetails,
	ssl *loadbalancer.SslConfigurationDetails, sp *loadbalancer.SessionPersistenceConfigurationDetails,
	cookie *loadbalancer.LbCookieSessionPersistenceConfigurationDetails, maxConns *int) (loadbalancer.BackendSet, error) {
	where := "backendSets[" + name + "]"
	if err := checkName("backend set", name); err != nil {
		return loadbalancer.BackendSet{}, err
	}
	if !slices.Contains(lbPolicies, policy) {
		return loadbalancer.BackendSet{}, badRequest("%s.policy %q must be one of %s.", where, policy, strings.Join(lbPolicies, ", "))
	}
	if err := checkMaxConnections(where+".backendMaxConnections", maxConns); err != nil {
		return loadbalancer.BackendSet{}, err
	}
	sslConf, err := lbSSLConfig(where, ssl)
	if err != nil {
		return loadbalancer.BackendSet{}, err
	}
	hc, err := lbHealthChecker(where, hcIn)
	if err != nil {
		return loadbalancer.BackendSet{}, err
	}
	bs, err := lbBackends(where, backends)
	if err != nil {
		return loadbalancer.BackendSet{}, err
	}
	return loadbalancer.BackendSet{
		Name: common.String(name), Policy: common.String(policy), Backends: bs, HealthChecker: hc,
		BackendMaxConnections: maxConns, SessionPersistenceConfiguration: sp, LbCookieSessionPersistenceConfiguration: cookie,
		SslConfiguration: sslConf,
	}, nil
}

// lbListener builds a listener; backendSets are the sets it may use.
func lbListener(name string, in loadbalancer.ListenerDetails, backendSets map[string]loadbalancer.BackendSet) (loadbalancer.Listener, error) {
	where := "listeners[" + name + "]"
	if err := checkName("listener", name); err != nil {
		return loadbalancer.Listener{}, err
	}
	if in.Protocol == nil || !slices.Contains(lbListenerProtos, strings.ToUpper(*in.Protocol)) {
		return loadbalancer.Listener{}, badRequest("%s.protocol must be one of %s.", where, strings.Join(lbListenerProtos, ", "))
	}
	proto := strings.ToUpper(*in.Protocol)
	if err := checkPort(where+".port", in.Port, false); err != nil {
		return loadbalancer.Listener{}, err
	}
	if in.DefaultBackendSetName == nil || *in.DefaultBackendSetName == "" {
		return loadbalancer.Listener{}, missing(where + ".defaultBackendSetName")
	}
	if _, ok := backendSets[*in.DefaultBackendSetName]; !ok {
		return loadbalancer.Listener{}, badRequest("%s: the default backend set %q does not exist.", where, *in.DefaultBackendSetName)
	}
	if len(in.HostnameNames) > 0 || in.PathRouteSetName != nil || in.RoutingPolicyName != nil {
		return loadbalancer.Listener{}, badRequest("%s: cloudsim does not emulate hostnames, path route sets or routing policies.", where)
	}
	sslConf, err := lbSSLConfig(where, in.SslConfiguration)
	if err != nil {
		return loadbalancer.Listener{}, err
	}
	cc := in.ConnectionConfiguration
	if cc == nil {
		// The API's defaults: 300 s for TCP, 60 s for HTTP.
		idle := int64(60)
		if proto == "TCP" {
			idle = 300
		}
		cc = &loadbalancer.ConnectionConfiguration{IdleTimeout: common.Int64(idle)}
	} else {
		if cc.IdleTimeout == nil || *cc.IdleTimeout < 1 || *cc.IdleTimeout > 7200 {
			return loadbalancer.Listener{}, badRequest("%s.connectionConfiguration.idleTimeout must be from 1 to 7200 seconds.", where)
		}
		if err := checkProxyProtocol(where, cc); err != nil {
			return loadbalancer.Listener{}, err
		}
	}
	return loadbalancer.Listener{
		Name: common.String(name), DefaultBackendSetName: in.DefaultBackendSetName, Port: in.Port,
		Protocol: common.String(proto), HostnameNames: []string{}, RuleSetNames: append([]string{}, in.RuleSetNames...), ConnectionConfiguration: cc,
		SslConfiguration: sslConf,
	}, nil
}

// checkListenerPorts rejects two listeners on one port.
func checkListenerPorts(ls map[string]loadbalancer.Listener) error {
	byPort := map[int]string{}
	for _, name := range slices.Sorted(maps.Keys(ls)) {
		p := *ls[name].Port
		if other, dup := byPort[p]; dup {
			return badRequest("The listeners %s and %s both use port %d.", other, name, p)
		}
		byPort[p] = name
	}
	return nil
}

func (d *Dialect) lbModel(b *balancer) loadbalancer.LoadBalancer {
	m := loadbalancer.LoadBalancer{
		Id: common.String(b.id), CompartmentId: common.String(b.compartmentID), DisplayName: common.String(b.displayName),
		LifecycleState: loadbalancer.LoadBalancerLifecycleStateEnum(b.lifecycle), TimeCreated: sdkTime(b.created),
		ShapeName: common.String(b.shapeName), ShapeDetails: b.shapeDetails, IpAddresses: []loadbalancer.IpAddress{},
		IsPrivate: common.Bool(b.isPrivate), IsDeleteProtectionEnabled: common.Bool(b.deleteProtection),
		IsRequestIdEnabled: common.Bool(false), SubnetIds: slices.Clone(b.subnetIDs), NetworkSecurityGroupIds: slices.Clone(b.nsgIDs),
		Listeners: maps.Clone(b.listeners), BackendSets: maps.Clone(b.backendSets),
		Hostnames: map[string]loadbalancer.Hostname{}, SslCipherSuites: map[string]loadbalancer.SslCipherSuite{},
		Certificates: certificateModels(b), PathRouteSets: map[string]loadbalancer.PathRouteSet{},
		FreeformTags: orEmpty(b.freeformTags), DefinedTags: orEmptyDefined(b.definedTags), SystemTags: map[string]map[string]interface{}{},
		RuleSets: orEmptyRuleSets(b.ruleSets), RoutingPolicies: map[string]loadbalancer.RoutingPolicy{},
		IpMode: loadbalancer.LoadBalancerIpModeIpv4,
	}
	// The address is assigned when provisioning completes.
	if b.vip.IsValid() && (b.lifecycle == stateActive || b.lifecycle == stateDeleting) {
		m.IpAddresses = []loadbalancer.IpAddress{{IpAddress: common.String(b.vip.String()), IsPublic: common.Bool(!b.isPrivate)}}
		if b.reservedIPID != "" {
			m.IpAddresses[0].ReservedIp = &loadbalancer.ReservedIp{Id: common.String(b.reservedIPID)}
		}
	}
	return m
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return maps.Clone(m)
}

func orEmptyDefined(m map[string]map[string]interface{}) map[string]map[string]interface{} {
	if m == nil {
		return map[string]map[string]interface{}{}
	}
	return maps.Clone(m)
}

// ---- load balancers ----

func (d *Dialect) createLoadBalancer(c *call) (*reply, error) {
	var req loadbalancer.CreateLoadBalancerDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	if req.CompartmentId == nil || *req.CompartmentId == "" {
		return nil, missing("compartmentId")
	}
	if !d.knownCompartment(c, *req.CompartmentId) {
		return nil, notFound("compartment", *req.CompartmentId)
	}
	if req.DisplayName == nil || strings.TrimSpace(*req.DisplayName) == "" {
		return nil, missing("displayName")
	}
	if err := checkShape(req.ShapeName, req.ShapeDetails, d.fixedShapes); err != nil {
		return nil, err
	}
	private := req.IsPrivate != nil && *req.IsPrivate
	switch {
	case len(req.SubnetIds) == 0:
		return nil, missing("subnetIds")
	case len(req.SubnetIds) > MaxLBSubnets || private && len(req.SubnetIds) != 1:
		return nil, badRequest("A public load balancer takes 1 or 2 subnets, a private one exactly 1 (got %d).", len(req.SubnetIds))
	case len(req.NetworkSecurityGroupIds) > MaxNSGs:
		return nil, Errorf(http.StatusBadRequest, CodeLimitExceeded, "A load balancer takes at most %d network security groups.", MaxNSGs)
	case len(req.Hostnames) > 0 || len(req.PathRouteSets) > 0 || len(req.SslCipherSuites) > 0:
		return nil, badRequest("cloudsim does not emulate hostnames, path route sets or custom SSL cipher suites.")
	case req.IpMode != "" && req.IpMode != loadbalancer.CreateLoadBalancerDetailsIpModeIpv4:
		return nil, badRequest("cloudsim emulates only IPV4 load balancers (ipMode %s).", req.IpMode)
	}
	if err := d.checkSubnets(req.SubnetIds); err != nil {
		return nil, err
	}
	if err := d.checkBalancerNSGs(req.SubnetIds[0], req.NetworkSecurityGroupIds); err != nil {
		return nil, err
	}
	reserved, err := reservedIPOf(lbReservedIDs(req.ReservedIps), private)
	if err != nil {
		return nil, err
	}
	b := &balancer{
		kind: kindLB, reservedIPID: reserved, compartmentID: *req.CompartmentId, displayName: *req.DisplayName, isPrivate: private,
		subnetIDs: slices.Clone(req.SubnetIds), nsgIDs: slices.Clone(req.NetworkSecurityGroupIds),
		freeformTags: maps.Clone(req.FreeformTags), definedTags: maps.Clone(req.DefinedTags),
		deleteProtection: req.IsDeleteProtectionEnabled != nil && *req.IsDeleteProtectionEnabled,
		shapeName:        *req.ShapeName, shapeDetails: req.ShapeDetails,
		listeners: map[string]loadbalancer.Listener{}, backendSets: map[string]loadbalancer.BackendSet{},
	}
	if err := createCertificates(b, req.Certificates); err != nil {
		return nil, err
	}
	if b.ruleSets, err = inlineRuleSets(req.RuleSets); err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(req.BackendSets)) {
		in := req.BackendSets[name]
		bs, err := lbBackendSet(name, strOr(in.Policy), in.HealthChecker, in.Backends, in.SslConfiguration,
			in.SessionPersistenceConfiguration, in.LbCookieSessionPersistenceConfiguration, in.BackendMaxConnections)
		if err != nil {
			return nil, err
		}
		b.backendSets[name] = bs
	}
	for _, name := range slices.Sorted(maps.Keys(req.Listeners)) {
		l, err := lbListener(name, req.Listeners[name], b.backendSets)
		if err == nil {
			err = checkRuleSetNames("listeners["+name+"]", l.RuleSetNames, b.ruleSets)
		}
		if err != nil {
			return nil, err
		}
		b.listeners[name] = l
	}
	if err := checkListenerPorts(b.listeners); err != nil {
		return nil, err
	}
	if err := checkSSLReferences(b); err != nil {
		return nil, err
	}
	if err := d.checkLimits(b); err != nil {
		return nil, err
	}
	wr, err := d.create(c, b, "CreateLoadBalancer", "")
	if err != nil {
		return nil, err
	}
	rp := (&reply{status: http.StatusNoContent, created: b.id}).with("opc-work-request-id", wr)
	return rp, nil
}

func strOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (d *Dialect) getLoadBalancer(c *call) (*reply, error) {
	b, err := d.balancerAt(c, kindLB)
	if err != nil {
		return nil, err
	}
	return ok(d.lbModel(b)).with("etag", b.etag()), nil
}

func (d *Dialect) listLoadBalancers(c *call) (*reply, error) {
	bs, err := d.listBalancers(c, kindLB)
	if err != nil {
		return nil, err
	}
	items := make([]loadbalancer.LoadBalancer, len(bs))
	for i, b := range bs {
		items[i] = d.lbModel(b)
	}
	return page(c, items, nil)
}

func (d *Dialect) deleteLoadBalancer(c *call) (*reply, error) {
	id, err := pathID(c, "loadBalancerId", "loadbalancer")
	if err != nil {
		return nil, err
	}
	return d.remove(c, kindLB, id, "DeleteLoadBalancer", "")
}

func (d *Dialect) updateLoadBalancer(c *call) (*reply, error) {
	id, err := pathID(c, "loadBalancerId", "loadbalancer")
	if err != nil {
		return nil, err
	}
	var req loadbalancer.UpdateLoadBalancerDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	if len(req.ReservedIps) > 0 {
		return nil, badRequest("cloudsim does not emulate reserved public IPs (reservedIps).")
	}
	if req.DisplayName != nil && strings.TrimSpace(*req.DisplayName) == "" {
		return nil, badRequest("The displayName must not be empty.")
	}
	return d.mutate(c, kindLB, id, "UpdateLoadBalancer", "", "UPDATED", func(*balancer) (change, error) {
		return func(b *balancer) error {
			if req.DisplayName != nil {
				b.displayName = *req.DisplayName
			}
			if req.FreeformTags != nil {
				b.freeformTags = maps.Clone(req.FreeformTags)
			}
			if req.DefinedTags != nil {
				b.definedTags = maps.Clone(req.DefinedTags)
			}
			if req.IsDeleteProtectionEnabled != nil {
				b.deleteProtection = *req.IsDeleteProtectionEnabled
			}
			return nil
		}, nil
	})
}

func (d *Dialect) updateLoadBalancerShape(c *call) (*reply, error) {
	id, err := pathID(c, "loadBalancerId", "loadbalancer")
	if err != nil {
		return nil, err
	}
	var req loadbalancer.UpdateLoadBalancerShapeDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	if err := checkShape(req.ShapeName, req.ShapeDetails, d.fixedShapes); err != nil {
		return nil, err
	}
	return d.mutate(c, kindLB, id, "UpdateLoadBalancerShape", "", "UPDATED", func(*balancer) (change, error) {
		return func(b *balancer) error {
			b.shapeName, b.shapeDetails = *req.ShapeName, req.ShapeDetails
			return nil
		}, nil
	})
}

// listShapes implements ListShapes: the shapes this tenancy may create,
// "flexible", and the fixed ones only for a tenancy older than May 2023
// (Options.FixedShapes).
func (d *Dialect) listShapes(c *call) (*reply, error) {
	if _, err := d.compartmentParam(c); err != nil {
		return nil, err
	}
	items := []loadbalancer.LoadBalancerShape{{Name: common.String(ShapeFlexible)}}
	if d.fixedShapes {
		for _, s := range fixedShapes {
			items = append(items, loadbalancer.LoadBalancerShape{Name: common.String(s)})
		}
	}
	return page(c, items, nil)
}

// ---- backend sets ----

func (d *Dialect) createLBBackendSet(c *call) (*reply, error) {
	id, err := pathID(c, "loadBalancerId", "loadbalancer")
	if err != nil {
		return nil, err
	}
	var req loadbalancer.CreateBackendSetDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	if req.Name == nil {
		return nil, missing("name")
	}
	bs, err := lbBackendSet(*req.Name, strOr(req.Policy), req.HealthChecker, req.Backends, req.SslConfiguration,
		req.SessionPersistenceConfiguration, req.LbCookieSessionPersistenceConfiguration, req.BackendMaxConnections)
	if err != nil {
		return nil, err
	}
	name := *req.Name
	if err := d.checkBackendSetSSL(id, bs); err != nil {
		return nil, err
	}
	return createChild(d, c, kindLB, id, name, "CreateBackendSet", "", bs, func(b *balancer) map[string]loadbalancer.BackendSet { return b.backendSets })
}

func (d *Dialect) updateLBBackendSet(c *call) (*reply, error) {
	id, name, err := childPath(c, kindLB, "backendSetName")
	if err != nil {
		return nil, err
	}
	var req loadbalancer.UpdateBackendSetDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	if req.Backends == nil {
		return nil, missing("backends")
	}
	bs, err := lbBackendSet(name, strOr(req.Policy), req.HealthChecker, req.Backends, req.SslConfiguration,
		req.SessionPersistenceConfiguration, req.LbCookieSessionPersistenceConfiguration, req.BackendMaxConnections)
	if err != nil {
		return nil, err
	}
	return d.mutate(c, kindLB, id, "UpdateBackendSet", "", "UPDATED", func(b *balancer) (change, error) {
		if _, ok := b.backendSets[name]; !ok {
			return nil, notFound("backend set", name)
		}
		if err := d.checkLimitsAfter(b, func(b *balancer) { b.backendSets[name] = bs }); err != nil {
			return nil, err
		}
		if err := checkSSLReferences(withBackendSet(b, bs)); err != nil {
			return nil, err
		}
		return func(b *balancer) error {
			if _, ok := b.backendSets[name]; !ok {
				return fmt.Errorf("the backend set %s no longer exists", name)
			}
			b.backendSets[name] = bs
			return nil
		}, nil
	})
}

func (d *Dialect) deleteLBBackendSet(c *call) (*reply, error) {
	return deleteChild(d, c, kindLB, "backendSetName", "backend set", "DeleteBackendSet", "",
		func(b *balancer) map[string]loadbalancer.BackendSet { return b.backendSets },
		func(b *balancer, name string) error {
			return defaultSetUser(b.listeners, name, func(l loadbalancer.Listener) *string { return l.DefaultBackendSetName })
		})
}

func (d *Dialect) getLBBackendSet(c *call) (*reply, error) {
	return childAt(d, c, kindLB, "backendSetName", "backend set", func(b *balancer) map[string]loadbalancer.BackendSet { return b.backendSets })
}

func (d *Dialect) listLBBackendSets(c *call) (*reply, error) {
	b, err := d.balancerAt(c, kindLB)
	if err != nil {
		return nil, err
	}
	items := []loadbalancer.BackendSet{}
	for _, name := range slices.Sorted(maps.Keys(b.backendSets)) {
		items = append(items, b.backendSets[name])
	}
	// The real operation is not paginated.
	return ok(items).with("etag", b.etag()), nil
}

func (d *Dialect) getLBBackendSetHealth(c *call) (*reply, error) {
	h, total, err := d.backendSetHealthAt(c, kindLB, func(b *balancer, set string) ([]string, bool) {
		bs, found := b.backendSets[set]
		return backendNames(bs.Backends, func(be loadbalancer.Backend) *string { return be.Name }), found
	})
	if err != nil {
		return nil, err
	}
	return ok(loadbalancer.BackendSetHealth{
		Status:                    loadbalancer.BackendSetHealthStatusEnum(h.status),
		WarningStateBackendNames:  h.warning,
		CriticalStateBackendNames: h.critical,
		UnknownStateBackendNames:  h.unknown,
		TotalBackendCount:         common.Int(total),
	}), nil
}

// ---- listeners ----

func (d *Dialect) createLBListener(c *call) (*reply, error) {
	id, err := pathID(c, "loadBalancerId", "loadbalancer")
	if err != nil {
		return nil, err
	}
	var req loadbalancer.CreateListenerDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	if req.Name == nil {
		return nil, missing("name")
	}
	name := *req.Name
	details := loadbalancer.ListenerDetails{
		DefaultBackendSetName: req.DefaultBackendSetName, Port: req.Port, Protocol: req.Protocol,
		HostnameNames: req.HostnameNames, PathRouteSetName: req.PathRouteSetName, SslConfiguration: req.SslConfiguration,
		ConnectionConfiguration: req.ConnectionConfiguration, RoutingPolicyName: req.RoutingPolicyName, RuleSetNames: req.RuleSetNames,
	}
	build := func(b *balancer) error {
		if _, dup := b.listeners[name]; dup {
			return Errorf(http.StatusConflict, CodeAlreadyExists, "The listener %s already exists in load balancer %s.", name, id)
		}
		l, err := lbListener(name, details, b.backendSets)
		if err == nil {
			err = checkRuleSetNames("listeners["+name+"]", l.RuleSetNames, b.ruleSets)
		}
		if err != nil {
			return err
		}
		b.listeners[name] = l
		if err := d.checkLimits(b); err != nil {
			return err
		}
		if err := checkSSLReferences(b); err != nil {
			return err
		}
		return checkListenerPorts(b.listeners)
	}
	return d.mutate(c, kindLB, id, "CreateListener", "", "UPDATED", checkedChange(build))
}

func (d *Dialect) updateLBListener(c *call) (*reply, error) {
	id, name, err := childPath(c, kindLB, "listenerName")
	if err != nil {
		return nil, err
	}
	var req loadbalancer.UpdateListenerDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	details := loadbalancer.ListenerDetails{
		DefaultBackendSetName: req.DefaultBackendSetName, Port: req.Port, Protocol: req.Protocol,
		HostnameNames: req.HostnameNames, PathRouteSetName: req.PathRouteSetName, SslConfiguration: req.SslConfiguration,
		ConnectionConfiguration: req.ConnectionConfiguration, RoutingPolicyName: req.RoutingPolicyName, RuleSetNames: req.RuleSetNames,
	}
	build := func(b *balancer) error {
		if _, ok := b.listeners[name]; !ok {
			return notFound("listener", name)
		}
		l, err := lbListener(name, details, b.backendSets)
		if err == nil {
			err = checkRuleSetNames("listeners["+name+"]", l.RuleSetNames, b.ruleSets)
		}
		if err != nil {
			return err
		}
		b.listeners[name] = l
		if err := checkSSLReferences(b); err != nil {
			return err
		}
		return checkListenerPorts(b.listeners)
	}
	return d.mutate(c, kindLB, id, "UpdateListener", "", "UPDATED", checkedChange(build))
}

func (d *Dialect) deleteLBListener(c *call) (*reply, error) {
	return deleteChild(d, c, kindLB, "listenerName", "listener", "DeleteListener", "",
		func(b *balancer) map[string]loadbalancer.Listener { return b.listeners }, nil)
}
