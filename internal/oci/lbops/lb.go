package lbops

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"

	"github.com/ccmkit/ccm/internal/oci/ocierr"
)

// ShapeFlexible is the flexible LB shape, sized by min/max bandwidth.
const ShapeFlexible = "flexible"

// lbDriver is the OCI Load Balancer service.
type lbDriver struct {
	api         LBAPI
	compartment string
	lists       *gatherer[loadbalancer.LoadBalancer]
}

func (lbDriver) kind() Kind { return KindLB }

// find returns the load balancer under the first of names that has one
// (gather.go: concurrent finds share a listing).
func (d lbDriver) find(ctx context.Context, notBefore time.Time, names ...string) (*actual, error) {
	found, err := d.lists.lookup(ctx, names, notBefore)
	if err != nil {
		return nil, err
	}
	return d.first(names, found)
}

// findNow is find by filtered calls made now (gather.go, lookupNow).
func (d lbDriver) findNow(ctx context.Context, names ...string) (*actual, error) {
	found, err := d.lists.lookupNow(ctx, names)
	if err != nil {
		return nil, err
	}
	return d.first(names, found)
}

// first is the load balancer under the first of names that has one.
func (d lbDriver) first(names []string, found map[string][]loadbalancer.LoadBalancer) (*actual, error) {
	lb, ok, err := d.lists.kind.only("load balancers", names, found)
	if !ok {
		return nil, err
	}
	return lbActual(lb), nil
}

// newLBLists is the load balancers' gathered lookup by name.
func newLBLists(api LBAPI, compartment string) *gatherer[loadbalancer.LoadBalancer] {
	return newGatherer(listing[loadbalancer.LoadBalancer]{
		action: "ListLoadBalancers", compartment: compartment,
		page: func(ctx context.Context, displayName, token *string) ([]loadbalancer.LoadBalancer, *string, error) {
			resp, err := api.ListLoadBalancers(ctx, loadbalancer.ListLoadBalancersRequest{CompartmentId: &compartment,
				DisplayName: displayName, Page: token, Limit: common.Int64(pageSize)})
			return resp.Items, resp.OpcNextPage, err
		},
		nameOf: func(lb loadbalancer.LoadBalancer) string { return deref(lb.DisplayName) },
		idOf:   func(lb loadbalancer.LoadBalancer) string { return deref(lb.Id) },
		live: func(lb loadbalancer.LoadBalancer) bool {
			return lb.LifecycleState != loadbalancer.LoadBalancerLifecycleStateDeleted &&
				lb.LifecycleState != loadbalancer.LoadBalancerLifecycleStateDeleting
		},
	})
}

func (d lbDriver) get(ctx context.Context, id string) (*actual, error) {
	resp, err := d.api.GetLoadBalancer(ctx, loadbalancer.GetLoadBalancerRequest{LoadBalancerId: &id})
	if err != nil {
		return nil, ocierr.Wrap("GetLoadBalancer", id, err)
	}
	return lbActual(resp.LoadBalancer), nil
}

// lbActual translates an LB into the neutral model.
func lbActual(lb loadbalancer.LoadBalancer) *actual {
	a := &actual{
		ID: deref(lb.Id), State: string(lb.LifecycleState), Internal: deref(lb.IsPrivate),
		Subnets: slices.Sorted(slices.Values(lb.SubnetIds)), Shape: deref(lb.ShapeName),
		NSGs:      slices.Sorted(slices.Values(lb.NetworkSecurityGroupIds)),
		Listeners: map[string]listenerModel{}, BackendSets: map[string]backendSetModel{}, Certificates: map[string]bool{},
		RuleSets: lbRuleSetsOf(lb), DisplayName: deref(lb.DisplayName), Tags: lb.FreeformTags,
	}
	for name := range lb.Certificates {
		a.Certificates[name] = true
	}
	if sd := lb.ShapeDetails; sd != nil {
		a.FlexMinMbps, a.FlexMaxMbps = deref(sd.MinimumBandwidthInMbps), deref(sd.MaximumBandwidthInMbps)
	}
	for _, ip := range lb.IpAddresses {
		if v := deref(ip.IpAddress); v != "" {
			a.IPs = append(a.IPs, ipModel{IP: v, Public: isPublic(ip.IsPublic, a.Internal), Reserved: ip.ReservedIp != nil})
		}
	}
	for name, l := range lb.Listeners {
		m := listenerModel{Name: name, Protocol: deref(l.Protocol), Port: deref(l.Port), BackendSet: deref(l.DefaultBackendSetName),
			SSL: sslOf(l.SslConfiguration)}
		if cc := l.ConnectionConfiguration; cc != nil {
			m.IdleTimeoutSec = deref(cc.IdleTimeout)
		}
		m.ProxyVersion = lbProxyVersion(l.ConnectionConfiguration)
		m.RuleSets = slices.Sorted(slices.Values(l.RuleSetNames))
		a.Listeners[name] = m
	}
	for name, bs := range lb.BackendSets {
		m := backendSetModel{Name: name, Policy: deref(bs.Policy), SSL: sslOf(bs.SslConfiguration)}
		if hc := bs.HealthChecker; hc != nil {
			m.Health = healthModel{
				Protocol: deref(hc.Protocol), Port: deref(hc.Port), Retries: deref(hc.Retries),
				IntervalMs: deref(hc.IntervalInMillis), TimeoutMs: deref(hc.TimeoutInMillis), ForcePlainText: deref(hc.IsForcePlainText),
			}
			if m.Health.Protocol == "HTTP" {
				m.Health.Path, m.Health.ReturnCode = deref(hc.UrlPath), deref(hc.ReturnCode)
			}
		}
		for _, b := range bs.Backends {
			m.Backends = append(m.Backends, backendModel{IP: deref(b.IpAddress), Port: deref(b.Port), Drain: deref(b.Drain)})
		}
		sortBackends(m.Backends)
		a.BackendSets[name] = m
	}
	return a
}

// isPublic reads IpAddress.isPublic; an address without it is as public
// as its load balancer.
func isPublic(flag *bool, internal bool) bool {
	if flag == nil {
		return !internal
	}
	return *flag
}

func lbListenerDetails(l listenerModel) (string, int, *loadbalancer.ConnectionConfiguration) {
	return l.Protocol, l.Port, lbConnection(l)
}

func lbHealth(h healthModel) *loadbalancer.HealthCheckerDetails {
	d := &loadbalancer.HealthCheckerDetails{
		Protocol: common.String(h.Protocol), Port: common.Int(h.Port), Retries: common.Int(h.Retries),
		IntervalInMillis: common.Int(h.IntervalMs), TimeoutInMillis: common.Int(h.TimeoutMs),
	}
	if h.ForcePlainText {
		d.IsForcePlainText = common.Bool(true)
	}
	if h.Protocol == "HTTP" {
		d.UrlPath, d.ReturnCode = common.String(h.Path), common.Int(h.ReturnCode)
	}
	return d
}

func lbBackends(bs []backendModel) []loadbalancer.BackendDetails {
	out := make([]loadbalancer.BackendDetails, 0, len(bs))
	for _, b := range bs {
		out = append(out, loadbalancer.BackendDetails{IpAddress: common.String(b.IP), Port: common.Int(b.Port), Drain: common.Bool(b.Drain)})
	}
	return out
}

func (d lbDriver) create(ctx context.Context, want *Desired, ls []listenerModel, bss []backendSetModel, token string) (string, error) {
	details := loadbalancer.CreateLoadBalancerDetails{
		CompartmentId: &d.compartment, DisplayName: common.String(want.Name),
		ShapeName: common.String(want.Shape), SubnetIds: want.Subnets, IsPrivate: common.Bool(want.Internal),
		Listeners: map[string]loadbalancer.ListenerDetails{}, BackendSets: map[string]loadbalancer.BackendSetDetails{},
		FreeformTags: createFreeformTags(want), DefinedTags: want.InitialDefinedTags,
		NetworkSecurityGroupIds: want.attachNSGs, RuleSets: lbRuleSetDetails(want.RuleSets),
	}
	if want.reservedIPID != "" {
		details.ReservedIps = []loadbalancer.ReservedIp{{Id: common.String(want.reservedIPID)}}
	}
	if want.Shape == ShapeFlexible {
		details.ShapeDetails = &loadbalancer.ShapeDetails{
			MinimumBandwidthInMbps: common.Int(want.FlexMinMbps), MaximumBandwidthInMbps: common.Int(want.FlexMaxMbps),
		}
	}
	for _, bs := range bss {
		details.BackendSets[bs.Name] = loadbalancer.BackendSetDetails{
			Policy: common.String(bs.Policy), HealthChecker: lbHealth(bs.Health), Backends: lbBackends(bs.Backends),
			SslConfiguration: lbSSLDetails(bs.SSL),
		}
	}
	if certs := wantedCertificates(want, ls, bss); len(certs) > 0 {
		details.Certificates = map[string]loadbalancer.CertificateDetails{}
		for name, c := range certs {
			details.Certificates[name] = lbCertificateDetails(name, c)
		}
	}
	for _, l := range ls {
		proto, port, cc := lbListenerDetails(l)
		details.Listeners[l.Name] = loadbalancer.ListenerDetails{
			DefaultBackendSetName: common.String(l.BackendSet), Port: common.Int(port), Protocol: common.String(proto),
			ConnectionConfiguration: cc, SslConfiguration: lbSSLDetails(l.SSL),
			RuleSetNames: l.RuleSets,
		}
	}
	resp, err := d.api.CreateLoadBalancer(ctx, loadbalancer.CreateLoadBalancerRequest{
		CreateLoadBalancerDetails: details, OpcRetryToken: common.String(token),
	})
	if err != nil {
		return "", ocierr.Wrap("CreateLoadBalancer", want.Name, err)
	}
	return deref(resp.OpcWorkRequestId), nil
}

func (d lbDriver) write(ctx context.Context, id string, s step) (string, error) {
	var wr *string
	var err error
	switch s.action() {
	case action{verbCreate, objBackendSet}:
		var resp loadbalancer.CreateBackendSetResponse
		resp, err = d.api.CreateBackendSet(ctx, loadbalancer.CreateBackendSetRequest{LoadBalancerId: &id,
			CreateBackendSetDetails: loadbalancer.CreateBackendSetDetails{Name: common.String(s.name), Policy: common.String(s.bs.Policy),
				HealthChecker: lbHealth(s.bs.Health), Backends: lbBackends(s.bs.Backends), SslConfiguration: lbSSLDetails(s.bs.SSL)}})
		wr = resp.OpcWorkRequestId
	case action{verbUpdate, objBackendSet}:
		var resp loadbalancer.UpdateBackendSetResponse
		resp, err = d.api.UpdateBackendSet(ctx, loadbalancer.UpdateBackendSetRequest{LoadBalancerId: &id, BackendSetName: common.String(s.name),
			UpdateBackendSetDetails: loadbalancer.UpdateBackendSetDetails{Policy: common.String(s.bs.Policy),
				HealthChecker: lbHealth(s.bs.Health), Backends: lbBackends(s.bs.Backends), SslConfiguration: lbSSLDetails(s.bs.SSL)}})
		wr = resp.OpcWorkRequestId
	case action{verbDelete, objBackendSet}:
		var resp loadbalancer.DeleteBackendSetResponse
		resp, err = d.api.DeleteBackendSet(ctx, loadbalancer.DeleteBackendSetRequest{LoadBalancerId: &id, BackendSetName: common.String(s.name)})
		wr = resp.OpcWorkRequestId
	case action{verbCreate, objListener}:
		proto, port, cc := lbListenerDetails(s.ls)
		var resp loadbalancer.CreateListenerResponse
		resp, err = d.api.CreateListener(ctx, loadbalancer.CreateListenerRequest{LoadBalancerId: &id,
			CreateListenerDetails: loadbalancer.CreateListenerDetails{Name: common.String(s.name), DefaultBackendSetName: common.String(s.ls.BackendSet),
				Port: common.Int(port), Protocol: common.String(proto), ConnectionConfiguration: cc, SslConfiguration: lbSSLDetails(s.ls.SSL),
				RuleSetNames: s.ls.RuleSets}})
		wr = resp.OpcWorkRequestId
	case action{verbUpdate, objListener}:
		proto, port, cc := lbListenerDetails(s.ls)
		var resp loadbalancer.UpdateListenerResponse
		resp, err = d.api.UpdateListener(ctx, loadbalancer.UpdateListenerRequest{LoadBalancerId: &id, ListenerName: common.String(s.name),
			UpdateListenerDetails: loadbalancer.UpdateListenerDetails{DefaultBackendSetName: common.String(s.ls.BackendSet),
				Port: common.Int(port), Protocol: common.String(proto), ConnectionConfiguration: cc, SslConfiguration: lbSSLDetails(s.ls.SSL),
				RuleSetNames: listenerRuleSets(s.ls)}})
		wr = resp.OpcWorkRequestId
	case action{verbDelete, objListener}:
		var resp loadbalancer.DeleteListenerResponse
		resp, err = d.api.DeleteListener(ctx, loadbalancer.DeleteListenerRequest{LoadBalancerId: &id, ListenerName: common.String(s.name)})
		wr = resp.OpcWorkRequestId
	case action{verbCreate, objCertificate}:
		var resp loadbalancer.CreateCertificateResponse
		resp, err = d.api.CreateCertificate(ctx, loadbalancer.CreateCertificateRequest{LoadBalancerId: &id,
			CreateCertificateDetails: loadbalancer.CreateCertificateDetails(lbCertificateDetails(s.name, s.cert))})
		wr = resp.OpcWorkRequestId
	case action{verbDelete, objCertificate}:
		var resp loadbalancer.DeleteCertificateResponse
		resp, err = d.api.DeleteCertificate(ctx, loadbalancer.DeleteCertificateRequest{LoadBalancerId: &id, CertificateName: common.String(s.name)})
		wr = resp.OpcWorkRequestId
	case action{verbCreate, objRuleSet}, action{verbUpdate, objRuleSet}, action{verbDelete, objRuleSet}:
		return d.writeRuleSet(ctx, id, s)
	case action{verbUpdate, objLoadBalancer}:
		var resp loadbalancer.UpdateLoadBalancerResponse
		resp, err = d.api.UpdateLoadBalancer(ctx, loadbalancer.UpdateLoadBalancerRequest{LoadBalancerId: &id,
			UpdateLoadBalancerDetails: loadbalancer.UpdateLoadBalancerDetails{FreeformTags: s.tags}})
		wr = resp.OpcWorkRequestId
	default:
		return "", fmt.Errorf("lbops: unknown step %s", s)
	}
	if err != nil {
		return "", ocierr.Wrap(opName(KindLB, s), id+" "+s.name, err)
	}
	return deref(wr), nil
}

// listAll returns the compartment's live load balancers, from a listing that
// began after notBefore (gather.go).
func (d lbDriver) listAll(ctx context.Context, notBefore time.Time) ([]named, error) {
	return d.lists.listNamed(ctx, notBefore)
}

func (d lbDriver) remove(ctx context.Context, id string) (string, error) {
	resp, err := d.api.DeleteLoadBalancer(ctx, loadbalancer.DeleteLoadBalancerRequest{LoadBalancerId: &id})
	if err != nil {
		return "", ocierr.Wrap("DeleteLoadBalancer", id, err)
	}
	return deref(resp.OpcWorkRequestId), nil
}

func (d lbDriver) workRequest(ctx context.Context, id string) (wrState, string, string, error) {
	resp, err := d.api.GetWorkRequest(ctx, loadbalancer.GetWorkRequestRequest{WorkRequestId: &id})
	if err != nil {
		return wrPending, "", "", ocierr.Wrap("GetWorkRequest", id, err)
	}
	wr := resp.WorkRequest
	switch wr.LifecycleState {
	case loadbalancer.WorkRequestLifecycleStateSucceeded:
		return wrSucceeded, "", deref(wr.LoadBalancerId), nil
	case loadbalancer.WorkRequestLifecycleStateFailed:
		msg := deref(wr.Message)
		for _, e := range wr.ErrorDetails {
			if m := deref(e.Message); m != "" && !strings.Contains(msg, m) {
				msg += "; " + string(e.ErrorCode) + ": " + m
			}
		}
		return wrFailed, msg, deref(wr.LoadBalancerId), nil
	}
	return wrPending, "", deref(wr.LoadBalancerId), nil
}

// opName is the OCI operation a step calls on a load balancer of kind k,
// e.g. CreateBackendSet (both services name them alike, but for the load
// balancer itself).
func opName(k Kind, s step) string {
	if s.what == objLoadBalancer && k == KindNLB {
		return s.verb.op() + "NetworkLoadBalancer"
	}
	return s.verb.op() + s.what.op()
}
