package clbops

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	tcerr "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/errors"
)

// fakeCLB is an in-memory CLB API with the semantics the operations rely
// on: asynchronous tasks (a CLB is busy, and refuses other writes with
// ResourceInOperating, until its task has been polled taskPolls times),
// CLBs in state 0 until their create task is done, ClientToken
// idempotency (also for deleted CLBs), tag filters and the documented
// per-call limits.
type fakeCLB struct {
	mu sync.Mutex

	vpcID     string
	taskPolls int // DescribeTaskStatus calls a task takes to finish

	lbs      map[string]*fakeLB
	order    []string
	tokens   map[string]string // ClientToken -> CLB id
	tasks    map[string]*fakeTask
	seq      int
	calls    []string
	failNext map[string][]error  // action -> errors returned before the call is applied
	failTask map[string]string   // action -> message of a failing task
	failBind map[string][]string // listener id -> Messages of the next BatchRegisterTargets calls failing for it
	noBatch  bool                // Batch*Targets answer InvalidAction
	nullHC   bool                // DescribeListeners answers null for every nullable health check field
	requests []any
}

type fakeLB struct {
	sdk       *clb.LoadBalancer
	listeners []*clb.Listener
	targets   map[string][]*clb.Backend // listener id -> targets
	busyTask  string                    // running task id, "" when idle
}

type fakeTask struct {
	lb       string
	polls    int
	status   int64
	message  string
	onFinish func()
}

func newFakeCLB() *fakeCLB {
	return &fakeCLB{
		vpcID: testVPC, taskPolls: 1,
		lbs: map[string]*fakeLB{}, tokens: map[string]string{}, tasks: map[string]*fakeTask{},
		failNext: map[string][]error{}, failTask: map[string]string{}, failBind: map[string][]string{},
	}
}

func sdkErr(code, msg string) error { return tcerr.NewTencentCloudSDKError(code, msg, "req-err") }

// busyErr is how an action answers while a task runs on the CLB: the
// actions whose SDK error list lacks ResourceInOperating answer plain
// FailedOperation (clb@v1.3.105 client.go).
func busyErr(action, lbID string) error {
	switch action {
	case "DeleteLoadBalancer", "DeleteListener", "DeregisterTargets", "BatchDeregisterTargets":
		return sdkErr(codeFailedOperation, "Your task is working on CLB "+lbID)
	}
	return sdkErr(codeResourceInOperating, "CLB "+lbID+" is busy")
}

// begin records a call and returns an injected error, if any.
func (f *fakeCLB) begin(action string, req any) error {
	f.calls = append(f.calls, action)
	f.requests = append(f.requests, req)
	if errs := f.failNext[action]; len(errs) > 0 {
		f.failNext[action] = errs[1:]
		return errs[0]
	}
	return nil
}

func (f *fakeCLB) next(prefix string) string {
	f.seq++
	return fmt.Sprintf("%s-%08d", prefix, f.seq)
}

// startTask makes lb busy until the task finishes.
func (f *fakeCLB) startTask(action, lbID string, onFinish func()) (string, error) {
	lb := f.lbs[lbID]
	if lb == nil {
		return "", sdkErr(codeLBNotFound, "no CLB "+lbID)
	}
	if lb.busyTask != "" {
		return "", busyErr(action, lbID)
	}
	id := f.next("req")
	t := &fakeTask{lb: lbID, polls: f.taskPolls, status: taskRunning, onFinish: onFinish}
	if msg, ok := f.failTask[action]; ok {
		t.message = msg
		t.status = taskFailed
		delete(f.failTask, action)
	}
	f.tasks[id] = t
	lb.busyTask = id
	return id, nil
}

func (f *fakeCLB) count(action string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c == action {
			n++
		}
	}
	return n
}

func (f *fakeCLB) writes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if !strings.HasPrefix(c, "Describe") {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakeCLB) resetCalls() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls, f.requests = nil, nil
}

// addLB adds a CLB directly (e.g. one made by hand, to be adopted).
func (f *fakeCLB) addLB(id, vpc string, tags map[string]string) *fakeLB {
	f.mu.Lock()
	defer f.mu.Unlock()
	lb := &fakeLB{sdk: &clb.LoadBalancer{
		LoadBalancerId: common.StringPtr(id), LoadBalancerName: common.StringPtr("hand-made"),
		LoadBalancerType: common.StringPtr(typePublic), VpcId: common.StringPtr(vpc),
		Status: common.Uint64Ptr(lbNormal), LoadBalancerVips: common.StringPtrs([]string{"203.0.113.9"}),
	}, targets: map[string][]*clb.Backend{}}
	for _, k := range sortedKeys(tags) {
		lb.sdk.Tags = append(lb.sdk.Tags, &clb.TagInfo{TagKey: common.StringPtr(k), TagValue: common.StringPtr(tags[k])})
	}
	f.lbs[id] = lb
	f.order = append(f.order, id)
	return lb
}

func (f *fakeCLB) addListener(lbID, name, protocol string, port int64) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.next("lbl")
	lb := f.lbs[lbID]
	lb.listeners = append(lb.listeners, &clb.Listener{ListenerId: common.StringPtr(id), ListenerName: common.StringPtr(name),
		Protocol: common.StringPtr(protocol), Port: common.Int64Ptr(port), HealthCheck: &clb.HealthCheck{HealthSwitch: common.Int64Ptr(1)}})
	return id
}

// listenerNames returns "name:protocol/port" of every listener of a CLB.
func (f *fakeCLB) listenerNames(lbID string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, l := range f.lbs[lbID].listeners {
		out = append(out, fmt.Sprintf("%s:%s/%d", *l.ListenerName, *l.Protocol, *l.Port))
	}
	slices.Sort(out)
	return out
}

// targetsOf returns "instance:port" of a listener's targets, by name.
func (f *fakeCLB) targetsOf(lbID, listenerName string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	lb := f.lbs[lbID]
	for _, l := range lb.listeners {
		if *l.ListenerName == listenerName {
			var out []string
			for _, t := range lb.targets[*l.ListenerId] {
				out = append(out, fmt.Sprintf("%s:%d", *t.InstanceId, *t.Port))
			}
			slices.Sort(out)
			return out
		}
	}
	return nil
}

func (f *fakeCLB) listener(lbID, name string) *clb.Listener {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range f.lbs[lbID].listeners {
		if *l.ListenerName == name {
			return l
		}
	}
	return nil
}

func (f *fakeCLB) lbIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.order)
}

func (f *fakeCLB) CreateLoadBalancerWithContext(_ context.Context, req *clb.CreateLoadBalancerRequest) (*clb.CreateLoadBalancerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.begin("CreateLoadBalancer", req); err != nil {
		return nil, err
	}
	resp := clb.NewCreateLoadBalancerResponse()
	resp.Response = &clb.CreateLoadBalancerResponseParams{}
	if req.ClientToken != nil {
		if id, ok := f.tokens[*req.ClientToken]; ok {
			// Idempotent: the same answer, even if the CLB is gone since,
			// and no task: the replay's RequestId is no TaskId.
			resp.Response.LoadBalancerIds = common.StringPtrs([]string{id})
			resp.Response.RequestId = common.StringPtr(f.next("req"))
			return resp, nil
		}
	}
	if deref(req.LoadBalancerType) == typeInternal && deref(req.SubnetId) == "" {
		return nil, sdkErr("InvalidParameter", "SubnetId is required for INTERNAL")
	}
	if len(req.Tags) > 20 {
		return nil, sdkErr("InvalidParameterValue.Length", "too many tags")
	}
	id := f.next("lb")
	vip := fmt.Sprintf("203.0.113.%d", len(f.lbs)+1)
	lb := &fakeLB{sdk: &clb.LoadBalancer{
		LoadBalancerId: common.StringPtr(id), LoadBalancerName: req.LoadBalancerName,
		LoadBalancerType: req.LoadBalancerType, VpcId: req.VpcId, SubnetId: req.SubnetId,
		Status: common.Uint64Ptr(lbCreating), Tags: req.Tags, LoadBalancerPassToTarget: common.BoolPtr(deref(req.LoadBalancerPassToTarget)),
	}, targets: map[string][]*clb.Backend{}}
	f.lbs[id] = lb
	f.order = append(f.order, id)
	if req.ClientToken != nil {
		f.tokens[*req.ClientToken] = id
	}
	taskID, _ := f.startTask("CreateLoadBalancer", id, func() {
		lb.sdk.Status = common.Uint64Ptr(lbNormal)
		lb.sdk.LoadBalancerVips = common.StringPtrs([]string{vip})
	})
	resp.Response.LoadBalancerIds = common.StringPtrs([]string{id})
	resp.Response.RequestId = common.StringPtr(taskID)
	return resp, nil
}

func (f *fakeCLB) DescribeLoadBalancersWithContext(_ context.Context, req *clb.DescribeLoadBalancersRequest) (*clb.DescribeLoadBalancersResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.begin("DescribeLoadBalancers", req); err != nil {
		return nil, err
	}
	if len(req.LoadBalancerIds) > maxLoadBalancerIDs || deref(req.Limit) > maxPageSize || deref(req.Limit) < 0 {
		return nil, sdkErr("InvalidParameterValue.Length", "limit exceeded")
	}
	var match []*clb.LoadBalancer
	for _, id := range f.order {
		lb, ok := f.lbs[id]
		if !ok {
			continue
		}
		if len(req.LoadBalancerIds) > 0 && !slices.Contains(common.StringValues(req.LoadBalancerIds), id) {
			continue
		}
		ok = true
		for _, flt := range req.Filters {
			if len(flt.Values) > maxFilterValues {
				return nil, sdkErr("InvalidParameterValue.Length", "too many filter values")
			}
			key, isTag := strings.CutPrefix(deref(flt.Name), "tag:")
			if !isTag {
				return nil, sdkErr("InvalidParameter.FormatError", "unsupported filter "+deref(flt.Name))
			}
			found := false
			for _, t := range lb.sdk.Tags {
				if deref(t.TagKey) == key && slices.Contains(common.StringValues(flt.Values), deref(t.TagValue)) {
					found = true
				}
			}
			ok = ok && found
		}
		if ok {
			c := *lb.sdk // a copy: the fake keeps changing its own
			match = append(match, &c)
		}
	}
	offset, limit := int(deref(req.Offset)), 20
	if req.Limit != nil {
		limit = int(*req.Limit)
	}
	total := len(match)
	match = match[min(offset, total):min(offset+limit, total)]
	resp := clb.NewDescribeLoadBalancersResponse()
	resp.Response = &clb.DescribeLoadBalancersResponseParams{TotalCount: common.Uint64Ptr(uint64(total)), LoadBalancerSet: match, RequestId: common.StringPtr(f.next("req"))}
	return resp, nil
}

func (f *fakeCLB) DeleteLoadBalancerWithContext(_ context.Context, req *clb.DeleteLoadBalancerRequest) (*clb.DeleteLoadBalancerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.begin("DeleteLoadBalancer", req); err != nil {
		return nil, err
	}
	id := deref(req.LoadBalancerIds[0])
	taskID, err := f.startTask("DeleteLoadBalancer", id, func() {
		delete(f.lbs, id)
		f.order = slices.DeleteFunc(f.order, func(s string) bool { return s == id })
	})
	if err != nil {
		return nil, err
	}
	resp := clb.NewDeleteLoadBalancerResponse()
	resp.Response = &clb.DeleteLoadBalancerResponseParams{RequestId: common.StringPtr(taskID)}
	return resp, nil
}

func (f *fakeCLB) ModifyLoadBalancerAttributesWithContext(_ context.Context, req *clb.ModifyLoadBalancerAttributesRequest) (*clb.ModifyLoadBalancerAttributesResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.begin("ModifyLoadBalancerAttributes", req); err != nil {
		return nil, err
	}
	id := deref(req.LoadBalancerId)
	taskID, err := f.startTask("ModifyLoadBalancerAttributes", id, func() {
		if req.LoadBalancerPassToTarget != nil {
			f.lbs[id].sdk.LoadBalancerPassToTarget = common.BoolPtr(*req.LoadBalancerPassToTarget)
		}
	})
	if err != nil {
		return nil, err
	}
	resp := clb.NewModifyLoadBalancerAttributesResponse()
	resp.Response = &clb.ModifyLoadBalancerAttributesResponseParams{RequestId: common.StringPtr(taskID)}
	return resp, nil
}

func (f *fakeCLB) CreateListenerWithContext(_ context.Context, req *clb.CreateListenerRequest) (*clb.CreateListenerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.begin("CreateListener", req); err != nil {
		return nil, err
	}
	lbID := deref(req.LoadBalancerId)
	lb := f.lbs[lbID]
	if lb == nil {
		return nil, sdkErr(codeLBNotFound, "no CLB")
	}
	if deref(lb.sdk.Status) != lbNormal {
		return nil, sdkErr(codeResourceInOperating, "CLB is being created")
	}
	for _, p := range req.Ports {
		for _, l := range lb.listeners {
			if *l.Port == *p && *l.Protocol == *req.Protocol {
				return nil, sdkErr("InvalidParameter.PortCheckFailed", "port in use")
			}
		}
	}
	var ids []string
	var created []*clb.Listener
	for i, p := range req.Ports {
		id := f.next("lbl")
		ids = append(ids, id)
		created = append(created, &clb.Listener{ListenerId: common.StringPtr(id), ListenerName: req.ListenerNames[i],
			Protocol: req.Protocol, Port: p, HealthCheck: req.HealthCheck, SessionExpireTime: req.SessionExpireTime})
	}
	taskID, err := f.startTask("CreateListener", lbID, nil)
	if err != nil {
		return nil, err
	}
	lb.listeners = append(lb.listeners, created...)
	resp := clb.NewCreateListenerResponse()
	resp.Response = &clb.CreateListenerResponseParams{ListenerIds: common.StringPtrs(ids), RequestId: common.StringPtr(taskID)}
	return resp, nil
}

func (f *fakeCLB) DescribeListenersWithContext(_ context.Context, req *clb.DescribeListenersRequest) (*clb.DescribeListenersResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.begin("DescribeListeners", req); err != nil {
		return nil, err
	}
	lb := f.lbs[deref(req.LoadBalancerId)]
	if lb == nil {
		return nil, sdkErr(codeLBNotFound, "no CLB")
	}
	resp := clb.NewDescribeListenersResponse()
	var listeners []*clb.Listener
	for _, l := range lb.listeners {
		c := *l
		if f.nullHC && c.HealthCheck != nil {
			hc := *c.HealthCheck
			hc.CheckPort, hc.HttpCode, hc.HttpCheckPath, hc.HttpCheckDomain, hc.HttpCheckMethod, hc.HttpVersion = nil, nil, nil, nil, nil, nil
			c.HealthCheck = &hc
		}
		listeners = append(listeners, &c)
	}
	resp.Response = &clb.DescribeListenersResponseParams{Listeners: listeners,
		TotalCount: common.Uint64Ptr(uint64(len(lb.listeners))), RequestId: common.StringPtr(f.next("req"))}
	return resp, nil
}

func (f *fakeCLB) ModifyListenerWithContext(_ context.Context, req *clb.ModifyListenerRequest) (*clb.ModifyListenerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.begin("ModifyListener", req); err != nil {
		return nil, err
	}
	lbID := deref(req.LoadBalancerId)
	taskID, err := f.startTask("ModifyListener", lbID, nil)
	if err != nil {
		return nil, err
	}
	for _, l := range f.lbs[lbID].listeners {
		if *l.ListenerId == deref(req.ListenerId) {
			if req.HealthCheck != nil {
				hc := *req.HealthCheck
				if deref(hc.CheckPort) == -1 {
					hc.CheckPort = nil
				}
				l.HealthCheck = &hc
			}
			if req.SessionExpireTime != nil {
				l.SessionExpireTime = req.SessionExpireTime
			}
		}
	}
	resp := clb.NewModifyListenerResponse()
	resp.Response = &clb.ModifyListenerResponseParams{RequestId: common.StringPtr(taskID)}
	return resp, nil
}

func (f *fakeCLB) DeleteListenerWithContext(_ context.Context, req *clb.DeleteListenerRequest) (*clb.DeleteListenerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.begin("DeleteListener", req); err != nil {
		return nil, err
	}
	lbID, id := deref(req.LoadBalancerId), deref(req.ListenerId)
	lb := f.lbs[lbID]
	// DeleteListener documents no "not found" code: the generic one.
	if lb == nil || !slices.ContainsFunc(lb.listeners, func(l *clb.Listener) bool { return *l.ListenerId == id }) {
		return nil, sdkErr("InvalidParameter", "no such CLB or listener")
	}
	taskID, err := f.startTask("DeleteListener", lbID, nil)
	if err != nil {
		return nil, err
	}
	lb.listeners = slices.DeleteFunc(lb.listeners, func(l *clb.Listener) bool { return *l.ListenerId == id })
	delete(lb.targets, id)
	resp := clb.NewDeleteListenerResponse()
	resp.Response = &clb.DeleteListenerResponseParams{RequestId: common.StringPtr(taskID)}
	return resp, nil
}

func (f *fakeCLB) DescribeTargetsWithContext(_ context.Context, req *clb.DescribeTargetsRequest) (*clb.DescribeTargetsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.begin("DescribeTargets", req); err != nil {
		return nil, err
	}
	if len(req.ListenerIds) > maxTargetsListeners {
		return nil, sdkErr("InvalidParameterValue.Length", "too many listener ids")
	}
	lb := f.lbs[deref(req.LoadBalancerId)]
	if lb == nil {
		return nil, sdkErr(codeLBNotFound, "no CLB")
	}
	var out []*clb.ListenerBackend
	for _, l := range lb.listeners {
		if len(req.ListenerIds) > 0 && !slices.Contains(common.StringValues(req.ListenerIds), *l.ListenerId) {
			continue
		}
		out = append(out, &clb.ListenerBackend{ListenerId: l.ListenerId, Protocol: l.Protocol, Port: l.Port, Targets: slices.Clone(lb.targets[*l.ListenerId])})
	}
	resp := clb.NewDescribeTargetsResponse()
	resp.Response = &clb.DescribeTargetsResponseParams{Listeners: out, RequestId: common.StringPtr(f.next("req"))}
	return resp, nil
}

func (f *fakeCLB) applyTargets(lb *fakeLB, listenerID string, instance string, port int64, register bool) {
	list := lb.targets[listenerID]
	list = slices.DeleteFunc(list, func(b *clb.Backend) bool { return *b.InstanceId == instance && *b.Port == port })
	if register {
		list = append(list, &clb.Backend{Type: common.StringPtr("CVM"), InstanceId: common.StringPtr(instance), Port: common.Int64Ptr(port), Weight: common.Int64Ptr(defaultWeight)})
	}
	lb.targets[listenerID] = list
}

func (f *fakeCLB) batch(action string, lbID string, targets []*clb.BatchTarget, register bool) (string, error) {
	if err := f.begin(action, targets); err != nil {
		return "", err
	}
	if f.noBatch {
		return "", sdkErr(codeInvalidAction, "no such action")
	}
	if len(targets) > maxBatchTargets {
		return "", sdkErr("InvalidParameterValue.Length", "too many targets")
	}
	lb := f.lbs[lbID]
	taskID, err := f.startTask(action, lbID, nil)
	if err != nil {
		return "", err
	}
	for _, t := range targets {
		f.applyTargets(lb, *t.ListenerId, *t.InstanceId, *t.Port, register)
	}
	return taskID, nil
}

func (f *fakeCLB) BatchRegisterTargetsWithContext(_ context.Context, req *clb.BatchRegisterTargetsRequest) (*clb.BatchRegisterTargetsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	// Listeners with an armed failure are answered in FailListenerIdSet
	// and their targets left out; the others are bound.
	var failed, msgs []string
	targets := slices.DeleteFunc(slices.Clone(req.Targets), func(t *clb.BatchTarget) bool {
		queue := f.failBind[*t.ListenerId]
		if len(queue) > 0 && !slices.Contains(failed, *t.ListenerId) {
			failed, msgs = append(failed, *t.ListenerId), append(msgs, queue[0])
		}
		return len(queue) > 0
	})
	id, err := f.batch("BatchRegisterTargets", deref(req.LoadBalancerId), targets, true)
	if err != nil {
		return nil, err
	}
	resp := clb.NewBatchRegisterTargetsResponse()
	resp.Response = &clb.BatchRegisterTargetsResponseParams{RequestId: common.StringPtr(id)}
	if len(failed) > 0 {
		for _, l := range failed {
			f.failBind[l] = f.failBind[l][1:]
		}
		resp.Response.FailListenerIdSet = common.StringPtrs(failed)
		resp.Response.Message = common.StringPtr(strings.Join(msgs, "; "))
	}
	return resp, nil
}

func (f *fakeCLB) BatchDeregisterTargetsWithContext(_ context.Context, req *clb.BatchDeregisterTargetsRequest) (*clb.BatchDeregisterTargetsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id, err := f.batch("BatchDeregisterTargets", deref(req.LoadBalancerId), req.Targets, false)
	if err != nil {
		return nil, err
	}
	resp := clb.NewBatchDeregisterTargetsResponse()
	resp.Response = &clb.BatchDeregisterTargetsResponseParams{RequestId: common.StringPtr(id)}
	return resp, nil
}

func (f *fakeCLB) single(action string, lbID, listenerID string, targets []*clb.Target, register bool) (string, error) {
	if err := f.begin(action, targets); err != nil {
		return "", err
	}
	if len(targets) > maxTargetsPerCall {
		return "", sdkErr("InvalidParameterValue.Length", "too many targets")
	}
	lb := f.lbs[lbID]
	taskID, err := f.startTask(action, lbID, nil)
	if err != nil {
		return "", err
	}
	for _, t := range targets {
		f.applyTargets(lb, listenerID, *t.InstanceId, *t.Port, register)
	}
	return taskID, nil
}

func (f *fakeCLB) RegisterTargetsWithContext(_ context.Context, req *clb.RegisterTargetsRequest) (*clb.RegisterTargetsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id, err := f.single("RegisterTargets", deref(req.LoadBalancerId), deref(req.ListenerId), req.Targets, true)
	if err != nil {
		return nil, err
	}
	resp := clb.NewRegisterTargetsResponse()
	resp.Response = &clb.RegisterTargetsResponseParams{RequestId: common.StringPtr(id)}
	return resp, nil
}

func (f *fakeCLB) DeregisterTargetsWithContext(_ context.Context, req *clb.DeregisterTargetsRequest) (*clb.DeregisterTargetsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id, err := f.single("DeregisterTargets", deref(req.LoadBalancerId), deref(req.ListenerId), req.Targets, false)
	if err != nil {
		return nil, err
	}
	resp := clb.NewDeregisterTargetsResponse()
	resp.Response = &clb.DeregisterTargetsResponseParams{RequestId: common.StringPtr(id)}
	return resp, nil
}

func (f *fakeCLB) DescribeTaskStatusWithContext(_ context.Context, req *clb.DescribeTaskStatusRequest) (*clb.DescribeTaskStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.begin("DescribeTaskStatus", req); err != nil {
		return nil, err
	}
	t, ok := f.tasks[deref(req.TaskId)]
	if !ok {
		return nil, sdkErr("InvalidParameter", "no task "+deref(req.TaskId))
	}
	if t.status != taskSucceeded && t.polls > 0 {
		t.polls--
	}
	status := int64(taskRunning)
	if t.polls == 0 || t.status == taskSucceeded {
		status = t.status
		if status == taskRunning {
			status = taskSucceeded
		}
		if lb := f.lbs[t.lb]; lb != nil && lb.busyTask == deref(req.TaskId) {
			lb.busyTask = ""
		}
		if t.onFinish != nil {
			t.onFinish()
			t.onFinish = nil
		}
	}
	resp := clb.NewDescribeTaskStatusResponse()
	resp.Response = &clb.DescribeTaskStatusResponseParams{Status: common.Int64Ptr(status), Message: common.StringPtr(t.message), RequestId: common.StringPtr(f.next("req"))}
	return resp, nil
}
