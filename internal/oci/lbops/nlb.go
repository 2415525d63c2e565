package lbops

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/internal/oci/ocierr"
)

// nlbDriver is the OCI Network Load Balancer service.
type nlbDriver struct {
	api         NLBAPI
	compartment string
	lists       *gatherer[networkloadbalancer.NetworkLoadBalancerSummary]
}

func (nlbDriver) kind() Kind { return KindNLB }

// find returns the network load balancer under the first of names that
// has one (gather.go: concurrent finds share a listing).
func (d nlbDriver) find(ctx context.Context, notBefore time.Time, names ...string) (*actual, error) {
	found, err := d.lists.lookup(ctx, names, notBefore)
	if err != nil {
		return nil, err
	}
	return d.first(ctx, names, found)
}

// findNow is find by filtered calls made now (gather.go, lookupNow).
func (d nlbDriver) findNow(ctx context.Context, names ...string) (*actual, error) {
	found, err := d.lists.lookupNow(ctx, names)
	if err != nil {
		return nil, err
	}
	return d.first(ctx, names, found)
}

// first is the network load balancer under the first of names that has
// one, read whole.
func (d nlbDriver) first(ctx context.Context, names []string, found map[string][]networkloadbalancer.NetworkLoadBalancerSummary) (*actual, error) {
	n, ok, err := d.lists.kind.only("network load balancers", names, found)
	if !ok {
		return nil, err
	}
	// The summary may omit listeners and backend sets; read it whole.
	return d.get(ctx, deref(n.Id))
}

// newNLBLists is the network load balancers' gathered lookup by name.
func newNLBLists(api NLBAPI, compartment string) *gatherer[networkloadbalancer.NetworkLoadBalancerSummary] {
	return newGatherer(listing[networkloadbalancer.NetworkLoadBalancerSummary]{
		action: "ListNetworkLoadBalancers", compartment: compartment,
		page: func(ctx context.Context, displayName, token *string) ([]networkloadbalancer.NetworkLoadBalancerSummary, *string, error) {
			resp, err := api.ListNetworkLoadBalancers(ctx, networkloadbalancer.ListNetworkLoadBalancersRequest{CompartmentId: &compartment,
				DisplayName: displayName, Page: token, Limit: common.Int(pageSize)})
			return resp.Items, resp.OpcNextPage, err
		},
		nameOf: func(n networkloadbalancer.NetworkLoadBalancerSummary) string { return deref(n.DisplayName) },
		idOf:   func(n networkloadbalancer.NetworkLoadBalancerSummary) string { return deref(n.Id) },
		live: func(n networkloadbalancer.NetworkLoadBalancerSummary) bool {
			return n.LifecycleState != networkloadbalancer.LifecycleStateDeleted &&
				n.LifecycleState != networkloadbalancer.LifecycleStateDeleting
		},
	})
}

func (d nlbDriver) get(ctx context.Context, id string) (*actual, error) {
	resp, err := d.api.GetNetworkLoadBalancer(ctx, networkloadbalancer.GetNetworkLoadBalancerRequest{NetworkLoadBalancerId: &id})
	if err != nil {
		return nil, ocierr.Wrap("GetNetworkLoadBalancer", id, err)
	}
	n := resp.NetworkLoadBalancer
	a := &actual{
		ID: deref(n.Id), State: string(n.LifecycleState), Internal: deref(n.IsPrivate),
		NSGs: slices.Sorted(slices.Values(n.NetworkSecurityGroupIds)), Listeners: map[string]listenerModel{}, BackendSets: map[string]backendSetModel{},
		DisplayName: deref(n.DisplayName), Tags: n.FreeformTags,
	}
	if s := deref(n.SubnetId); s != "" {
		a.Subnets = []string{s}
	}
	a.IPVersion = string(n.NlbIpVersion)
	if a.IPVersion == "" {
		a.IPVersion = IPVersion4 // the API's default
	}
	for _, ip := range n.IpAddresses {
		if v := deref(ip.IpAddress); v != "" {
			a.IPs = append(a.IPs, ipModel{IP: v, Public: isPublic(ip.IsPublic, a.Internal), Reserved: ip.ReservedIp != nil})
		}
	}
	for name, l := range n.Listeners {
		a.Listeners[name] = listenerModel{Name: name, Protocol: string(l.Protocol), Port: deref(l.Port), BackendSet: deref(l.DefaultBackendSetName),
			ProxyVersion: nlbProxyVersion(l.IsPpv2Enabled),
			IPVersion:    ipVersionOf(l.IpVersion)}
	}
	for name, bs := range n.BackendSets {
		m := backendSetModel{Name: name, Policy: string(bs.Policy), PreserveSource: deref(bs.IsPreserveSource), IPVersion: ipVersionOf(bs.IpVersion)}
		if hc := bs.HealthChecker; hc != nil {
			m.Health = healthModel{
				Protocol: string(hc.Protocol), Port: deref(hc.Port), Retries: deref(hc.Retries),
				IntervalMs: deref(hc.IntervalInMillis), TimeoutMs: deref(hc.TimeoutInMillis),
			}
			if m.Health.Protocol == "HTTP" {
				m.Health.Path, m.Health.ReturnCode = deref(hc.UrlPath), deref(hc.ReturnCode)
			}
		}
		for _, b := range bs.Backends {
			m.Backends = append(m.Backends, backendModel{IP: deref(b.IpAddress), Port: deref(b.Port), Drain: deref(b.IsDrain)})
		}
		sortBackends(m.Backends)
		a.BackendSets[name] = m
	}
	return a, nil
}

func nlbHealth(h healthModel) *networkloadbalancer.HealthCheckerDetails {
	d := &networkloadbalancer.HealthCheckerDetails{
		Protocol: networkloadbalancer.HealthCheckProtocolsEnum(h.Protocol), Port: common.Int(h.Port), Retries: common.Int(h.Retries),
		IntervalInMillis: common.Int(h.IntervalMs), TimeoutInMillis: common.Int(h.TimeoutMs),
	}
	if h.Protocol == "HTTP" {
		d.UrlPath, d.ReturnCode = common.String(h.Path), common.Int(h.ReturnCode)
	}
	return d
}

func nlbBackends(bs []backendModel) []networkloadbalancer.BackendDetails {
	out := make([]networkloadbalancer.BackendDetails, 0, len(bs))
	for _, b := range bs {
		out = append(out, networkloadbalancer.BackendDetails{IpAddress: common.String(b.IP), Port: common.Int(b.Port), IsDrain: common.Bool(b.Drain)})
	}
	return out
}

func (d nlbDriver) create(ctx context.Context, want *Desired, ls []listenerModel, bss []backendSetModel, token string) (string, error) {
	details := networkloadbalancer.CreateNetworkLoadBalancerDetails{
		CompartmentId: &d.compartment, DisplayName: common.String(want.Name), SubnetId: common.String(want.Subnets[0]),
		IsPrivate: common.Bool(want.Internal), Listeners: map[string]networkloadbalancer.ListenerDetails{},
		BackendSets: map[string]networkloadbalancer.BackendSetDetails{}, FreeformTags: createFreeformTags(want),
		DefinedTags:             want.InitialDefinedTags,
		NetworkSecurityGroupIds: want.attachNSGs,
	}
	if want.reservedIPID != "" {
		details.ReservedIps = []networkloadbalancer.ReservedIp{{Id: common.String(want.reservedIPID)}}
	}
	if want.AssignedPrivateIPv4 != "" {
		details.AssignedPrivateIpv4 = common.String(want.AssignedPrivateIPv4)
	}
	details.NlbIpVersion = networkloadbalancer.NlbIpVersionEnum(nlbIPVersion(want))
	if want.AssignedIPv6 != "" {
		details.AssignedIpv6 = common.String(want.AssignedIPv6)
	}
	for _, bs := range bss {
		hc := nlbHealth(bs.Health)
		details.BackendSets[bs.Name] = networkloadbalancer.BackendSetDetails{
			Policy: networkloadbalancer.NetworkLoadBalancingPolicyEnum(bs.Policy), IsPreserveSource: common.Bool(bs.PreserveSource),
			HealthChecker: &networkloadbalancer.HealthChecker{Protocol: hc.Protocol, Port: hc.Port, Retries: hc.Retries,
				IntervalInMillis: hc.IntervalInMillis, TimeoutInMillis: hc.TimeoutInMillis, UrlPath: hc.UrlPath, ReturnCode: hc.ReturnCode},
			Backends: nlbBackendsFull(bs.Backends), IpVersion: networkloadbalancer.IpVersionEnum(bs.IPVersion),
		}
	}
	for _, l := range ls {
		details.Listeners[l.Name] = networkloadbalancer.ListenerDetails{
			Name: common.String(l.Name), DefaultBackendSetName: common.String(l.BackendSet), Port: common.Int(l.Port),
			Protocol: networkloadbalancer.ListenerProtocolsEnum(l.Protocol), IsPpv2Enabled: nlbPpv2(l),
			IpVersion: networkloadbalancer.IpVersionEnum(l.IPVersion),
		}
	}
	resp, err := d.api.CreateNetworkLoadBalancer(ctx, networkloadbalancer.CreateNetworkLoadBalancerRequest{
		CreateNetworkLoadBalancerDetails: details, OpcRetryToken: common.String(token),
	})
	if err != nil {
		return "", ocierr.Wrap("CreateNetworkLoadBalancer", want.Name, err)
	}
	return deref(resp.OpcWorkRequestId), nil
}

// nlbBackendsFull is nlbBackends in the type the create call embeds.
func nlbBackendsFull(bs []backendModel) []networkloadbalancer.Backend {
	out := make([]networkloadbalancer.Backend, 0, len(bs))
	for _, b := range bs {
		out = append(out, networkloadbalancer.Backend{IpAddress: common.String(b.IP), Port: common.Int(b.Port), IsDrain: common.Bool(b.Drain)})
	}
	return out
}

func (d nlbDriver) write(ctx context.Context, id string, s step) (string, error) {
	var wr *string
	var err error
	switch s.action() {
	case action{verbCreate, objBackendSet}:
		var resp networkloadbalancer.CreateBackendSetResponse
		resp, err = d.api.CreateBackendSet(ctx, networkloadbalancer.CreateBackendSetRequest{NetworkLoadBalancerId: &id,
			CreateBackendSetDetails: networkloadbalancer.CreateBackendSetDetails{Name: common.String(s.name),
				Policy: networkloadbalancer.NetworkLoadBalancingPolicyEnum(s.bs.Policy), IsPreserveSource: common.Bool(s.bs.PreserveSource),
				HealthChecker: nlbHealth(s.bs.Health), Backends: nlbBackends(s.bs.Backends), IpVersion: networkloadbalancer.IpVersionEnum(s.bs.IPVersion)}})
		wr = resp.OpcWorkRequestId
	case action{verbUpdate, objBackendSet}:
		var resp networkloadbalancer.UpdateBackendSetResponse
		resp, err = d.api.UpdateBackendSet(ctx, networkloadbalancer.UpdateBackendSetRequest{NetworkLoadBalancerId: &id, BackendSetName: common.String(s.name),
			UpdateBackendSetDetails: networkloadbalancer.UpdateBackendSetDetails{Policy: common.String(s.bs.Policy),
				IsPreserveSource: common.Bool(s.bs.PreserveSource), HealthChecker: nlbHealth(s.bs.Health), Backends: nlbBackends(s.bs.Backends),
				IpVersion: networkloadbalancer.IpVersionEnum(s.bs.IPVersion)}})
		wr = resp.OpcWorkRequestId
	case action{verbDelete, objBackendSet}:
		var resp networkloadbalancer.DeleteBackendSetResponse
		resp, err = d.api.DeleteBackendSet(ctx, networkloadbalancer.DeleteBackendSetRequest{NetworkLoadBalancerId: &id, BackendSetName: common.String(s.name)})
		wr = resp.OpcWorkRequestId
	case action{verbCreate, objListener}:
		var resp networkloadbalancer.CreateListenerResponse
		resp, err = d.api.CreateListener(ctx, networkloadbalancer.CreateListenerRequest{NetworkLoadBalancerId: &id,
			CreateListenerDetails: networkloadbalancer.CreateListenerDetails{Name: common.String(s.name), DefaultBackendSetName: common.String(s.ls.BackendSet),
				Port: common.Int(s.ls.Port), Protocol: networkloadbalancer.ListenerProtocolsEnum(s.ls.Protocol), IsPpv2Enabled: nlbPpv2(s.ls),
				IpVersion: networkloadbalancer.IpVersionEnum(s.ls.IPVersion)}})
		wr = resp.OpcWorkRequestId
	case action{verbUpdate, objListener}:
		var resp networkloadbalancer.UpdateListenerResponse
		resp, err = d.api.UpdateListener(ctx, networkloadbalancer.UpdateListenerRequest{NetworkLoadBalancerId: &id, ListenerName: common.String(s.name),
			UpdateListenerDetails: networkloadbalancer.UpdateListenerDetails{DefaultBackendSetName: common.String(s.ls.BackendSet),
				Port: common.Int(s.ls.Port), Protocol: networkloadbalancer.ListenerProtocolsEnum(s.ls.Protocol), IsPpv2Enabled: nlbPpv2(s.ls),
				IpVersion: networkloadbalancer.IpVersionEnum(s.ls.IPVersion)}})
		wr = resp.OpcWorkRequestId
	case action{verbDelete, objListener}:
		var resp networkloadbalancer.DeleteListenerResponse
		resp, err = d.api.DeleteListener(ctx, networkloadbalancer.DeleteListenerRequest{NetworkLoadBalancerId: &id, ListenerName: common.String(s.name)})
		wr = resp.OpcWorkRequestId
	case action{verbUpdate, objLoadBalancer}:
		var resp networkloadbalancer.UpdateNetworkLoadBalancerResponse
		resp, err = d.api.UpdateNetworkLoadBalancer(ctx, networkloadbalancer.UpdateNetworkLoadBalancerRequest{NetworkLoadBalancerId: &id,
			UpdateNetworkLoadBalancerDetails: networkloadbalancer.UpdateNetworkLoadBalancerDetails{FreeformTags: s.tags}})
		wr = resp.OpcWorkRequestId
	default:
		return "", fmt.Errorf("lbops: unknown step %s", s)
	}
	if err != nil {
		return "", ocierr.Wrap(opName(KindNLB, s), id+" "+s.name, err)
	}
	return deref(wr), nil
}

// listAll returns the compartment's live network load balancers, from a listing that
// began after notBefore (gather.go).
func (d nlbDriver) listAll(ctx context.Context, notBefore time.Time) ([]named, error) {
	return d.lists.listNamed(ctx, notBefore)
}

func (d nlbDriver) remove(ctx context.Context, id string) (string, error) {
	resp, err := d.api.DeleteNetworkLoadBalancer(ctx, networkloadbalancer.DeleteNetworkLoadBalancerRequest{NetworkLoadBalancerId: &id})
	if err != nil {
		return "", ocierr.Wrap("DeleteNetworkLoadBalancer", id, err)
	}
	return deref(resp.OpcWorkRequestId), nil
}

func (d nlbDriver) workRequest(ctx context.Context, id string) (wrState, string, string, error) {
	resp, err := d.api.GetWorkRequest(ctx, networkloadbalancer.GetWorkRequestRequest{WorkRequestId: &id})
	if err != nil {
		return wrPending, "", "", ocierr.Wrap("GetWorkRequest", id, err)
	}
	wr := resp.WorkRequest
	lbID := ""
	for _, r := range wr.Resources {
		if deref(r.Identifier) != "" {
			lbID = deref(r.Identifier)
			break
		}
	}
	switch wr.Status {
	case networkloadbalancer.OperationStatusSucceeded:
		return wrSucceeded, "", lbID, nil
	case networkloadbalancer.OperationStatusFailed, networkloadbalancer.OperationStatusCanceled:
		return wrFailed, d.workRequestErrors(ctx, id, wr.Status), lbID, nil
	}
	return wrPending, "", lbID, nil
}

// workRequestErrors says why an NLB work request failed: the NLB work
// request itself carries no message, ListWorkRequestErrors does ("code:
// message" for each). A failure to list them is said, not returned: the
// work request's outcome is known either way.
func (d nlbDriver) workRequestErrors(ctx context.Context, id string, st networkloadbalancer.OperationStatusEnum) string {
	resp, err := d.api.ListWorkRequestErrors(ctx, networkloadbalancer.ListWorkRequestErrorsRequest{
		WorkRequestId: &id, CompartmentId: &d.compartment, Limit: common.Int(pageSize)})
	if err != nil {
		return fmt.Sprintf("%s (the reason is unknown: %v)", st, ocierr.Wrap("ListWorkRequestErrors", id, err))
	}
	var msgs []string
	for _, e := range resp.Items {
		msgs = append(msgs, strings.TrimPrefix(deref(e.Code)+": ", ": ")+deref(e.Message))
	}
	if len(msgs) == 0 {
		return fmt.Sprintf("%s (OCI lists no error for it)", st)
	}
	return strings.Join(msgs, "; ")
}
