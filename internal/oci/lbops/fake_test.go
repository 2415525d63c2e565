package lbops

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	"github.com/oracle/oci-go-sdk/v65/networkloadbalancer"
)

type svcErr struct {
	status int
	code   string
}

func (e svcErr) Error() string           { return fmt.Sprintf("%d %s", e.status, e.code) }
func (e svcErr) GetHTTPStatusCode() int  { return e.status }
func (e svcErr) GetMessage() string      { return "injected" }
func (e svcErr) GetCode() string         { return e.code }
func (e svcErr) GetOpcRequestID() string { return "req" }

var (
	errBusy    = svcErr{http.StatusConflict, "IncorrectState"}
	errEtag    = svcErr{http.StatusPreconditionFailed, "NoEtagMatch"}
	errMissing = svcErr{http.StatusNotFound, "NotAuthorizedOrNotFound"}
)

// fakeWR is a work request that succeeds (or fails) after polls reads.
type fakeWR struct {
	lbID   string
	polls  int
	failed bool
}

// fakeCloud fakes the LB, NLB and VirtualNetwork APIs: changes apply at
// once, and work requests report IN_PROGRESS for wrPolls reads.
type fakeCloud struct {
	mu      sync.Mutex
	seq     int
	lbs     map[string]*loadbalancer.LoadBalancer
	nlbs    map[string]*networkloadbalancer.NetworkLoadBalancer
	wrs     map[string]*fakeWR
	tokens  map[string]string // retry token -> load balancer id
	wrPolls int
	busy    bool // every change answers 409 IncorrectState
	// invalidateTokens: a retry token whose load balancer is gone answers
	// 409 InvalidatedRetryToken (else it replays the old creation).
	invalidateTokens bool
	failWR           bool // the next work request fails
	// failCreates: so many creations fail (FAILED work request, the load
	// balancer FAILED), as an injected task fault does in cloudsim.
	failCreates int
	busyCode    string   // the code of the 409 while busy (default IncorrectState)
	usedTokens  []string // the retry token of every create call
	writes      []string
	reads       int

	// security lists
	subnets  map[string][]string // subnet -> security lists
	cidrs    map[string]string   // subnet -> CIDR (all in fakeVCN)
	seclists map[string]*core.SecurityList
	etags    map[string]int
	staleTag bool // the next update answers 412
}

func newFakeCloud() *fakeCloud {
	return &fakeCloud{
		lbs: map[string]*loadbalancer.LoadBalancer{}, nlbs: map[string]*networkloadbalancer.NetworkLoadBalancer{},
		wrs: map[string]*fakeWR{}, tokens: map[string]string{},
		subnets: map[string][]string{"ocid1.subnet.oc1.iad.a": {"ocid1.securitylist.oc1.iad.a"}, "ocid1.subnet.oc1.iad.b": {"ocid1.securitylist.oc1.iad.b"},
			"ocid1.subnet.oc1.iad.nodes": {"ocid1.securitylist.oc1.iad.nodes"}},
		cidrs:    map[string]string{"ocid1.subnet.oc1.iad.a": "10.0.100.0/24", "ocid1.subnet.oc1.iad.b": "10.0.101.0/24", "ocid1.subnet.oc1.iad.nodes": "10.0.0.0/24"},
		seclists: map[string]*core.SecurityList{}, etags: map[string]int{},
	}
}

func (f *fakeCloud) write(op string) error {
	f.writes = append(f.writes, op)
	if f.busy {
		if f.busyCode != "" {
			return svcErr{http.StatusConflict, f.busyCode}
		}
		return errBusy
	}
	return nil
}

func (f *fakeCloud) newWR(lbID string) *string {
	f.seq++
	id := fmt.Sprintf("ocid1.wr.%d", f.seq)
	f.wrs[id] = &fakeWR{lbID: lbID, polls: f.wrPolls, failed: f.failWR}
	f.failWR = false
	return &id
}

// failingCreate reports whether this creation fails (failCreates), and
// makes its work request fail.
func (f *fakeCloud) failingCreate() bool {
	if f.failCreates == 0 {
		return false
	}
	f.failCreates--
	f.failWR = true
	return true
}

func (f *fakeCloud) nextID(kind string) string {
	f.seq++
	return fmt.Sprintf("ocid1.%s.oc1.iad.%d", kind, f.seq)
}

func (f *fakeCloud) writesOf() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.writes...)
}
func (f *fakeCloud) resetWrites() { f.mu.Lock(); f.writes = nil; f.mu.Unlock() }

// ---- Load Balancer ----

func (f *fakeCloud) ListLoadBalancers(_ context.Context, req loadbalancer.ListLoadBalancersRequest) (loadbalancer.ListLoadBalancersResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	var out []loadbalancer.LoadBalancer
	for _, lb := range f.lbs {
		if req.DisplayName == nil || *lb.DisplayName == *req.DisplayName {
			out = append(out, *lb)
		}
	}
	return loadbalancer.ListLoadBalancersResponse{Items: out}, nil
}

func (f *fakeCloud) GetLoadBalancer(_ context.Context, req loadbalancer.GetLoadBalancerRequest) (loadbalancer.GetLoadBalancerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	lb, ok := f.lbs[*req.LoadBalancerId]
	if !ok {
		return loadbalancer.GetLoadBalancerResponse{}, errMissing
	}
	return loadbalancer.GetLoadBalancerResponse{LoadBalancer: *lb}, nil
}

func (f *fakeCloud) CreateLoadBalancer(_ context.Context, req loadbalancer.CreateLoadBalancerRequest) (loadbalancer.CreateLoadBalancerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("CreateLoadBalancer"); err != nil {
		return loadbalancer.CreateLoadBalancerResponse{}, err
	}
	f.usedTokens = append(f.usedTokens, *req.OpcRetryToken)
	if id, ok := f.tokens[*req.OpcRetryToken]; ok {
		if _, alive := f.lbs[id]; !alive && f.invalidateTokens {
			return loadbalancer.CreateLoadBalancerResponse{}, svcErr{http.StatusConflict, "InvalidatedRetryToken"}
		}
		return loadbalancer.CreateLoadBalancerResponse{OpcWorkRequestId: f.newWR(id)}, nil
	}
	d := req.CreateLoadBalancerDetails
	id := f.nextID("loadbalancer")
	lb := &loadbalancer.LoadBalancer{
		Id: &id, DisplayName: d.DisplayName, CompartmentId: d.CompartmentId, LifecycleState: loadbalancer.LoadBalancerLifecycleStateActive,
		ShapeName: d.ShapeName, ShapeDetails: d.ShapeDetails, SubnetIds: d.SubnetIds, IsPrivate: d.IsPrivate,
		IpAddresses: []loadbalancer.IpAddress{{IpAddress: common.String(fmt.Sprintf("127.0.9.%d", f.seq))}},
		Listeners:   map[string]loadbalancer.Listener{}, BackendSets: map[string]loadbalancer.BackendSet{},
	}
	for name, bs := range d.BackendSets {
		lb.BackendSets[name] = lbBackendSet(name, bs.Policy, bs.HealthChecker, bs.Backends)
	}
	for name, l := range d.Listeners {
		lb.Listeners[name] = loadbalancer.Listener{Name: common.String(name), DefaultBackendSetName: l.DefaultBackendSetName, Port: l.Port,
			Protocol: l.Protocol, ConnectionConfiguration: l.ConnectionConfiguration}
	}
	f.lbs[id] = lb
	f.tokens[*req.OpcRetryToken] = id
	if f.failingCreate() {
		lb.LifecycleState = loadbalancer.LoadBalancerLifecycleStateFailed
	}
	return loadbalancer.CreateLoadBalancerResponse{OpcWorkRequestId: f.newWR(id)}, nil
}

func lbBackendSet(name string, policy *string, hc *loadbalancer.HealthCheckerDetails, bs []loadbalancer.BackendDetails) loadbalancer.BackendSet {
	out := loadbalancer.BackendSet{Name: common.String(name), Policy: policy, HealthChecker: &loadbalancer.HealthChecker{
		Protocol: hc.Protocol, Port: hc.Port, Retries: hc.Retries, IntervalInMillis: hc.IntervalInMillis, TimeoutInMillis: hc.TimeoutInMillis,
		UrlPath: hc.UrlPath, ReturnCode: hc.ReturnCode,
	}}
	for _, b := range bs {
		out.Backends = append(out.Backends, loadbalancer.Backend{IpAddress: b.IpAddress, Port: b.Port,
			Name: common.String(fmt.Sprintf("%s:%d", *b.IpAddress, *b.Port))})
	}
	return out
}

func (f *fakeCloud) DeleteLoadBalancer(_ context.Context, req loadbalancer.DeleteLoadBalancerRequest) (loadbalancer.DeleteLoadBalancerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("DeleteLoadBalancer"); err != nil {
		return loadbalancer.DeleteLoadBalancerResponse{}, err
	}
	delete(f.lbs, *req.LoadBalancerId)
	return loadbalancer.DeleteLoadBalancerResponse{OpcWorkRequestId: f.newWR(*req.LoadBalancerId)}, nil
}

func (f *fakeCloud) CreateBackendSet(_ context.Context, req loadbalancer.CreateBackendSetRequest) (loadbalancer.CreateBackendSetResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("CreateBackendSet " + *req.Name); err != nil {
		return loadbalancer.CreateBackendSetResponse{}, err
	}
	f.lbs[*req.LoadBalancerId].BackendSets[*req.Name] = lbBackendSet(*req.Name, req.Policy, req.HealthChecker, req.Backends)
	return loadbalancer.CreateBackendSetResponse{OpcWorkRequestId: f.newWR(*req.LoadBalancerId)}, nil
}

func (f *fakeCloud) UpdateBackendSet(_ context.Context, req loadbalancer.UpdateBackendSetRequest) (loadbalancer.UpdateBackendSetResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("UpdateBackendSet " + *req.BackendSetName); err != nil {
		return loadbalancer.UpdateBackendSetResponse{}, err
	}
	f.lbs[*req.LoadBalancerId].BackendSets[*req.BackendSetName] = lbBackendSet(*req.BackendSetName, req.Policy, req.HealthChecker, req.Backends)
	return loadbalancer.UpdateBackendSetResponse{OpcWorkRequestId: f.newWR(*req.LoadBalancerId)}, nil
}

func (f *fakeCloud) DeleteBackendSet(_ context.Context, req loadbalancer.DeleteBackendSetRequest) (loadbalancer.DeleteBackendSetResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("DeleteBackendSet " + *req.BackendSetName); err != nil {
		return loadbalancer.DeleteBackendSetResponse{}, err
	}
	lb := f.lbs[*req.LoadBalancerId]
	for _, l := range lb.Listeners {
		if *l.DefaultBackendSetName == *req.BackendSetName {
			return loadbalancer.DeleteBackendSetResponse{}, svcErr{400, "InvalidParameter"}
		}
	}
	delete(lb.BackendSets, *req.BackendSetName)
	return loadbalancer.DeleteBackendSetResponse{OpcWorkRequestId: f.newWR(*req.LoadBalancerId)}, nil
}

func (f *fakeCloud) CreateListener(_ context.Context, req loadbalancer.CreateListenerRequest) (loadbalancer.CreateListenerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("CreateListener " + *req.Name); err != nil {
		return loadbalancer.CreateListenerResponse{}, err
	}
	lb := f.lbs[*req.LoadBalancerId]
	if _, ok := lb.BackendSets[*req.DefaultBackendSetName]; !ok {
		return loadbalancer.CreateListenerResponse{}, svcErr{400, "InvalidParameter"}
	}
	lb.Listeners[*req.Name] = loadbalancer.Listener{Name: req.Name, DefaultBackendSetName: req.DefaultBackendSetName, Port: req.Port,
		Protocol: req.Protocol, ConnectionConfiguration: req.ConnectionConfiguration}
	return loadbalancer.CreateListenerResponse{OpcWorkRequestId: f.newWR(*req.LoadBalancerId)}, nil
}

func (f *fakeCloud) UpdateListener(_ context.Context, req loadbalancer.UpdateListenerRequest) (loadbalancer.UpdateListenerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("UpdateListener " + *req.ListenerName); err != nil {
		return loadbalancer.UpdateListenerResponse{}, err
	}
	f.lbs[*req.LoadBalancerId].Listeners[*req.ListenerName] = loadbalancer.Listener{Name: req.ListenerName,
		DefaultBackendSetName: req.DefaultBackendSetName, Port: req.Port, Protocol: req.Protocol, ConnectionConfiguration: req.ConnectionConfiguration}
	return loadbalancer.UpdateListenerResponse{OpcWorkRequestId: f.newWR(*req.LoadBalancerId)}, nil
}

func (f *fakeCloud) DeleteListener(_ context.Context, req loadbalancer.DeleteListenerRequest) (loadbalancer.DeleteListenerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("DeleteListener " + *req.ListenerName); err != nil {
		return loadbalancer.DeleteListenerResponse{}, err
	}
	delete(f.lbs[*req.LoadBalancerId].Listeners, *req.ListenerName)
	return loadbalancer.DeleteListenerResponse{OpcWorkRequestId: f.newWR(*req.LoadBalancerId)}, nil
}

// poll advances a work request by one read.
func (f *fakeCloud) poll(id string) *fakeWR {
	f.reads++
	wr := f.wrs[id]
	if wr.polls > 0 {
		wr.polls--
		return &fakeWR{lbID: wr.lbID, polls: wr.polls + 1}
	}
	return wr
}

func (f *fakeCloud) GetWorkRequest(_ context.Context, req loadbalancer.GetWorkRequestRequest) (loadbalancer.GetWorkRequestResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	wr := f.poll(*req.WorkRequestId)
	state := loadbalancer.WorkRequestLifecycleStateSucceeded
	switch {
	case wr.polls > 0:
		state = loadbalancer.WorkRequestLifecycleStateInProgress
	case wr.failed:
		state = loadbalancer.WorkRequestLifecycleStateFailed
	}
	return loadbalancer.GetWorkRequestResponse{WorkRequest: loadbalancer.WorkRequest{Id: req.WorkRequestId, LoadBalancerId: &wr.lbID,
		LifecycleState: state, Message: common.String("injected failure")}}, nil
}

// ---- Network Load Balancer ----

func (f *fakeCloud) ListNetworkLoadBalancers(_ context.Context, req networkloadbalancer.ListNetworkLoadBalancersRequest) (networkloadbalancer.ListNetworkLoadBalancersResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	var out []networkloadbalancer.NetworkLoadBalancerSummary
	for _, n := range f.nlbs {
		if req.DisplayName == nil || *n.DisplayName == *req.DisplayName {
			out = append(out, networkloadbalancer.NetworkLoadBalancerSummary{Id: n.Id, DisplayName: n.DisplayName, LifecycleState: n.LifecycleState})
		}
	}
	return networkloadbalancer.ListNetworkLoadBalancersResponse{NetworkLoadBalancerCollection: networkloadbalancer.NetworkLoadBalancerCollection{Items: out}}, nil
}

func (f *fakeCloud) GetNetworkLoadBalancer(_ context.Context, req networkloadbalancer.GetNetworkLoadBalancerRequest) (networkloadbalancer.GetNetworkLoadBalancerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	n, ok := f.nlbs[*req.NetworkLoadBalancerId]
	if !ok {
		return networkloadbalancer.GetNetworkLoadBalancerResponse{}, errMissing
	}
	return networkloadbalancer.GetNetworkLoadBalancerResponse{NetworkLoadBalancer: *n}, nil
}

func (f *fakeCloud) CreateNetworkLoadBalancer(_ context.Context, req networkloadbalancer.CreateNetworkLoadBalancerRequest) (networkloadbalancer.CreateNetworkLoadBalancerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("CreateNetworkLoadBalancer"); err != nil {
		return networkloadbalancer.CreateNetworkLoadBalancerResponse{}, err
	}
	d := req.CreateNetworkLoadBalancerDetails
	id := f.nextID("networkloadbalancer")
	n := &networkloadbalancer.NetworkLoadBalancer{
		Id: &id, DisplayName: d.DisplayName, LifecycleState: networkloadbalancer.LifecycleStateActive, SubnetId: d.SubnetId, IsPrivate: d.IsPrivate,
		IpAddresses: []networkloadbalancer.IpAddress{{IpAddress: common.String(fmt.Sprintf("127.0.8.%d", f.seq))}},
		Listeners:   map[string]networkloadbalancer.Listener{}, BackendSets: map[string]networkloadbalancer.BackendSet{},
	}
	for name, bs := range d.BackendSets {
		n.BackendSets[name] = networkloadbalancer.BackendSet{Name: common.String(name), Policy: bs.Policy, IsPreserveSource: bs.IsPreserveSource,
			HealthChecker: bs.HealthChecker, Backends: bs.Backends}
	}
	for name, l := range d.Listeners {
		n.Listeners[name] = networkloadbalancer.Listener{Name: l.Name, DefaultBackendSetName: l.DefaultBackendSetName, Port: l.Port, Protocol: l.Protocol}
	}
	f.nlbs[id] = n
	f.usedTokens = append(f.usedTokens, *req.OpcRetryToken)
	if f.failingCreate() {
		n.LifecycleState = networkloadbalancer.LifecycleStateFailed
	}
	return networkloadbalancer.CreateNetworkLoadBalancerResponse{OpcWorkRequestId: f.newWR(id)}, nil
}

func (f *fakeCloud) DeleteNetworkLoadBalancer(_ context.Context, req networkloadbalancer.DeleteNetworkLoadBalancerRequest) (networkloadbalancer.DeleteNetworkLoadBalancerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("DeleteNetworkLoadBalancer"); err != nil {
		return networkloadbalancer.DeleteNetworkLoadBalancerResponse{}, err
	}
	delete(f.nlbs, *req.NetworkLoadBalancerId)
	return networkloadbalancer.DeleteNetworkLoadBalancerResponse{OpcWorkRequestId: f.newWR(*req.NetworkLoadBalancerId)}, nil
}

func nlbBS(name string, policy string, preserve *bool, hc *networkloadbalancer.HealthCheckerDetails, bs []networkloadbalancer.BackendDetails) networkloadbalancer.BackendSet {
	out := networkloadbalancer.BackendSet{Name: common.String(name), Policy: networkloadbalancer.NetworkLoadBalancingPolicyEnum(policy),
		IsPreserveSource: preserve, HealthChecker: &networkloadbalancer.HealthChecker{Protocol: hc.Protocol, Port: hc.Port, Retries: hc.Retries,
			IntervalInMillis: hc.IntervalInMillis, TimeoutInMillis: hc.TimeoutInMillis, UrlPath: hc.UrlPath, ReturnCode: hc.ReturnCode}}
	for _, b := range bs {
		out.Backends = append(out.Backends, networkloadbalancer.Backend{IpAddress: b.IpAddress, Port: b.Port})
	}
	return out
}

func (f *fakeCloud) setNLBBackendSet(id string, d networkloadbalancer.CreateBackendSetDetails) {
	f.nlbs[id].BackendSets[*d.Name] = nlbBS(*d.Name, string(d.Policy), d.IsPreserveSource, d.HealthChecker, d.Backends)
}

// nlbFake adapts fakeCloud to NLBAPI, whose method names collide with LBAPI's.
type nlbFake struct{ *fakeCloud }

func (f nlbFake) CreateBackendSet(_ context.Context, req networkloadbalancer.CreateBackendSetRequest) (networkloadbalancer.CreateBackendSetResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("nlb.CreateBackendSet " + *req.Name); err != nil {
		return networkloadbalancer.CreateBackendSetResponse{}, err
	}
	f.setNLBBackendSet(*req.NetworkLoadBalancerId, req.CreateBackendSetDetails)
	return networkloadbalancer.CreateBackendSetResponse{OpcWorkRequestId: f.newWR(*req.NetworkLoadBalancerId)}, nil
}

func (f nlbFake) UpdateBackendSet(_ context.Context, req networkloadbalancer.UpdateBackendSetRequest) (networkloadbalancer.UpdateBackendSetResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("nlb.UpdateBackendSet " + *req.BackendSetName); err != nil {
		return networkloadbalancer.UpdateBackendSetResponse{}, err
	}
	f.nlbs[*req.NetworkLoadBalancerId].BackendSets[*req.BackendSetName] = nlbBS(*req.BackendSetName, *req.Policy, req.IsPreserveSource, req.HealthChecker, req.Backends)
	return networkloadbalancer.UpdateBackendSetResponse{OpcWorkRequestId: f.newWR(*req.NetworkLoadBalancerId)}, nil
}

func (f nlbFake) DeleteBackendSet(_ context.Context, req networkloadbalancer.DeleteBackendSetRequest) (networkloadbalancer.DeleteBackendSetResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("nlb.DeleteBackendSet " + *req.BackendSetName); err != nil {
		return networkloadbalancer.DeleteBackendSetResponse{}, err
	}
	delete(f.nlbs[*req.NetworkLoadBalancerId].BackendSets, *req.BackendSetName)
	return networkloadbalancer.DeleteBackendSetResponse{OpcWorkRequestId: f.newWR(*req.NetworkLoadBalancerId)}, nil
}

func (f nlbFake) CreateListener(_ context.Context, req networkloadbalancer.CreateListenerRequest) (networkloadbalancer.CreateListenerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("nlb.CreateListener " + *req.Name); err != nil {
		return networkloadbalancer.CreateListenerResponse{}, err
	}
	f.nlbs[*req.NetworkLoadBalancerId].Listeners[*req.Name] = networkloadbalancer.Listener{Name: req.Name, DefaultBackendSetName: req.DefaultBackendSetName, Port: req.Port, Protocol: req.Protocol}
	return networkloadbalancer.CreateListenerResponse{OpcWorkRequestId: f.newWR(*req.NetworkLoadBalancerId)}, nil
}

func (f nlbFake) UpdateListener(_ context.Context, req networkloadbalancer.UpdateListenerRequest) (networkloadbalancer.UpdateListenerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("nlb.UpdateListener " + *req.ListenerName); err != nil {
		return networkloadbalancer.UpdateListenerResponse{}, err
	}
	f.nlbs[*req.NetworkLoadBalancerId].Listeners[*req.ListenerName] = networkloadbalancer.Listener{Name: req.ListenerName, DefaultBackendSetName: req.DefaultBackendSetName, Port: req.Port, Protocol: req.Protocol}
	return networkloadbalancer.UpdateListenerResponse{OpcWorkRequestId: f.newWR(*req.NetworkLoadBalancerId)}, nil
}

func (f nlbFake) DeleteListener(_ context.Context, req networkloadbalancer.DeleteListenerRequest) (networkloadbalancer.DeleteListenerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("nlb.DeleteListener " + *req.ListenerName); err != nil {
		return networkloadbalancer.DeleteListenerResponse{}, err
	}
	delete(f.nlbs[*req.NetworkLoadBalancerId].Listeners, *req.ListenerName)
	return networkloadbalancer.DeleteListenerResponse{OpcWorkRequestId: f.newWR(*req.NetworkLoadBalancerId)}, nil
}

func (f nlbFake) GetWorkRequest(_ context.Context, req networkloadbalancer.GetWorkRequestRequest) (networkloadbalancer.GetWorkRequestResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	wr := f.poll(*req.WorkRequestId)
	status := networkloadbalancer.OperationStatusSucceeded
	switch {
	case wr.polls > 0:
		status = networkloadbalancer.OperationStatusInProgress
	case wr.failed:
		status = networkloadbalancer.OperationStatusFailed
	}
	return networkloadbalancer.GetWorkRequestResponse{WorkRequest: networkloadbalancer.WorkRequest{Id: req.WorkRequestId, Status: status,
		Resources: []networkloadbalancer.WorkRequestResource{{Identifier: &wr.lbID}}}}, nil
}

func (f nlbFake) ListWorkRequestErrors(_ context.Context, req networkloadbalancer.ListWorkRequestErrorsRequest) (networkloadbalancer.ListWorkRequestErrorsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	var items []networkloadbalancer.WorkRequestError
	if wr := f.wrs[*req.WorkRequestId]; wr != nil && wr.failed {
		items = append(items, networkloadbalancer.WorkRequestError{Code: common.String("InternalServerError"), Message: common.String("injected NLB failure")})
	}
	return networkloadbalancer.ListWorkRequestErrorsResponse{WorkRequestErrorCollection: networkloadbalancer.WorkRequestErrorCollection{Items: items}}, nil
}

// ---- VirtualNetwork (security lists) ----

func (f *fakeCloud) GetSubnet(_ context.Context, req core.GetSubnetRequest) (core.GetSubnetResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	sls, ok := f.subnets[*req.SubnetId]
	if !ok {
		return core.GetSubnetResponse{}, errMissing
	}
	return core.GetSubnetResponse{Subnet: f.subnetLocked(*req.SubnetId, sls)}, nil
}

const fakeVCN = "ocid1.vcn.oc1.iad.v"

func (f *fakeCloud) subnetLocked(id string, sls []string) core.Subnet {
	return core.Subnet{Id: common.String(id), SecurityListIds: sls, CidrBlock: common.String(f.cidrs[id]), VcnId: common.String(fakeVCN),
		CompartmentId: common.String("ocid1.compartment.oc1..net"), LifecycleState: core.SubnetLifecycleStateAvailable}
}

func (f *fakeCloud) ListSubnets(_ context.Context, req core.ListSubnetsRequest) (core.ListSubnetsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if deref(req.VcnId) != fakeVCN || deref(req.CompartmentId) != "ocid1.compartment.oc1..net" {
		return core.ListSubnetsResponse{Items: []core.Subnet{}}, nil
	}
	var out []core.Subnet
	for _, id := range sortedKeys(f.subnets) {
		out = append(out, f.subnetLocked(id, f.subnets[id]))
	}
	return core.ListSubnetsResponse{Items: out}, nil
}

func (f *fakeCloud) GetSecurityList(_ context.Context, req core.GetSecurityListRequest) (core.GetSecurityListResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	sl, ok := f.seclists[*req.SecurityListId]
	if !ok {
		sl = &core.SecurityList{Id: req.SecurityListId, IngressSecurityRules: []core.IngressSecurityRule{
			{Source: common.String("10.0.0.0/16"), Protocol: common.String("all"), Description: common.String("someone else's")},
		}}
		f.seclists[*req.SecurityListId] = sl
	}
	return core.GetSecurityListResponse{SecurityList: *sl, Etag: common.String(fmt.Sprint(f.etags[*req.SecurityListId]))}, nil
}

func (f *fakeCloud) UpdateSecurityList(_ context.Context, req core.UpdateSecurityListRequest) (core.UpdateSecurityListResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes = append(f.writes, "UpdateSecurityList "+*req.SecurityListId)
	if f.staleTag || req.IfMatch == nil || *req.IfMatch != fmt.Sprint(f.etags[*req.SecurityListId]) {
		f.staleTag = false
		return core.UpdateSecurityListResponse{}, errEtag
	}
	f.etags[*req.SecurityListId]++
	if req.IngressSecurityRules != nil {
		f.seclists[*req.SecurityListId].IngressSecurityRules = req.IngressSecurityRules
	}
	if req.EgressSecurityRules != nil {
		f.seclists[*req.SecurityListId].EgressSecurityRules = req.EgressSecurityRules
	}
	return core.UpdateSecurityListResponse{}, nil
}
