package tencent

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
)

func TestCLBAsyncTasks(t *testing.T) {
	e := newCLBEnv(t, CLBOptions{TaskLatency: 300 * time.Millisecond}, dataplane.Config{Disabled: true})
	req := clb.NewCreateLoadBalancerRequest()
	req.LoadBalancerType = common.StringPtr("OPEN")
	resp, err := e.api.CreateLoadBalancer(req)
	if err != nil {
		t.Fatal(err)
	}
	id, createTask := *resp.Response.LoadBalancerIds[0], *resp.Response.RequestId

	// While the create task runs: Status 0, no VIP, task status 2, and any
	// mutation of the LB is refused.
	lb := e.describeLB(t, id)
	if *lb.Status != 0 || len(lb.LoadBalancerVips) != 0 {
		t.Fatalf("a creating LB: status %d, VIPs %v", *lb.Status, lb.LoadBalancerVips)
	}
	if st, _ := e.taskStatus(t, createTask); st != 2 {
		t.Fatalf("task status %d while creating, want 2", st)
	}
	lreq := clb.NewCreateListenerRequest()
	lreq.LoadBalancerId, lreq.Protocol, lreq.Ports = common.StringPtr(id), common.StringPtr("TCP"), []*int64{common.Int64Ptr(80)}
	if _, err := e.api.CreateListener(lreq); sdkCode(err) != "FailedOperation.ResourceInOperating" {
		t.Fatalf("CreateListener during the create task: %v", err)
	}
	if a, _ := e.clb.LoadBalancer(id); a.InOperation != "CreateLoadBalancer" {
		t.Fatalf("admin view InOperation %q", a.InOperation)
	}

	if st, _ := e.waitTask(t, createTask); st != 0 {
		t.Fatalf("create task ended with %d", st)
	}
	lb = e.describeLB(t, id)
	if *lb.Status != 1 || len(lb.LoadBalancerVips) != 1 {
		t.Fatalf("after the task: status %d, VIPs %v", *lb.Status, lb.LoadBalancerVips)
	}

	// One task at a time: the second listener waits for the first.
	lresp, err := e.api.CreateListener(lreq)
	if err != nil {
		t.Fatal(err)
	}
	lreq2 := clb.NewCreateListenerRequest()
	lreq2.LoadBalancerId, lreq2.Protocol, lreq2.Ports = common.StringPtr(id), common.StringPtr("TCP"), []*int64{common.Int64Ptr(81)}
	if _, err := e.api.CreateListener(lreq2); sdkCode(err) != "FailedOperation.ResourceInOperating" {
		t.Fatalf("a second CreateListener during the first: %v", err)
	}
	// Reads are fine meanwhile; the listener appears when the task ends.
	dl := clb.NewDescribeListenersRequest()
	dl.LoadBalancerId = common.StringPtr(id)
	if r, err := e.api.DescribeListeners(dl); err != nil || len(r.Response.Listeners) != 0 {
		t.Fatalf("DescribeListeners during the task: %v %v", r, err)
	}
	if st, _ := e.waitTask(t, *lresp.Response.RequestId); st != 0 {
		t.Fatalf("listener task ended with %d", st)
	}
	if r, err := e.api.DescribeListeners(dl); err != nil || len(r.Response.Listeners) != 1 ||
		*r.Response.Listeners[0].ListenerId != *lresp.Response.ListenerIds[0] {
		t.Fatalf("DescribeListeners after the task: %v %v", r, err)
	}

	// Unknown tasks.
	treq := clb.NewDescribeTaskStatusRequest()
	if _, err := e.api.DescribeTaskStatus(treq); sdkCode(err) != "MissingParameter" {
		t.Fatalf("no TaskId: %v", err)
	}
	treq.TaskId = common.StringPtr("no-such-task")
	if _, err := e.api.DescribeTaskStatus(treq); sdkCode(err) != "InvalidParameter" {
		t.Fatalf("unknown TaskId: %v", err)
	}
}

func TestCLBTaskFaults(t *testing.T) {
	e := newCLBEnv(t, CLBOptions{}, dataplane.Config{Disabled: true})
	id := e.createLB(t, nil)

	// A failed listener task: the call succeeds, the task reports 1 with a
	// message, and nothing changes.
	e.core.SetFault(core.Fault{Action: "CreateListener", ErrorRate: 1, FailTask: true, ErrorCode: "FailedOperation"})
	req := clb.NewCreateListenerRequest()
	req.LoadBalancerId, req.Protocol, req.Ports = common.StringPtr(id), common.StringPtr("TCP"), []*int64{common.Int64Ptr(80)}
	resp, err := e.api.CreateListener(req)
	if err != nil {
		t.Fatalf("a task fault must not fail the call: %v", err)
	}
	st, msg := e.waitTask(t, *resp.Response.RequestId)
	if st != 1 || !strings.Contains(msg, "FailedOperation") {
		t.Fatalf("task status %d %q, want 1 with the fault's code", st, msg)
	}
	if lb, _ := e.clb.LoadBalancer(id); len(lb.Listeners) != 0 || lb.InOperation != "" {
		t.Fatalf("after a failed task: %+v", lb)
	}
	e.core.ClearFaults()

	// A failed create: the LB disappears, its quota and VIP are free again,
	// and its ClientToken cannot be reused.
	e.core.SetFault(core.Fault{Action: "*", ErrorRate: 1, FailTask: true})
	creq := clb.NewCreateLoadBalancerRequest()
	creq.LoadBalancerType = common.StringPtr("OPEN")
	creq.ClientToken = common.StringPtr("tok-1")
	cresp, err := e.api.CreateLoadBalancer(creq)
	if err != nil {
		t.Fatalf("a task fault for * must not fail the call: %v", err)
	}
	if st, _ := e.waitTask(t, *cresp.Response.RequestId); st != 1 {
		t.Fatalf("create task %d, want 1", st)
	}
	if e.describeLB(t, *cresp.Response.LoadBalancerIds[0]) != nil {
		t.Fatal("a load balancer whose create failed is still listed")
	}
	e.core.ClearFaults()
	if _, err := e.api.CreateLoadBalancer(creq); sdkCode(err) != "InvalidParameter.ClientTokenLimitExceeded" {
		t.Fatalf("reusing the token of a failed create: %v", err)
	}

	// ErrorRate 0 never fails a task.
	e.core.SetFault(core.Fault{Action: "CreateListener", ErrorRate: 0, FailTask: true})
	resp, err = e.api.CreateListener(req)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := e.waitTask(t, *resp.Response.RequestId); st != 0 {
		t.Fatalf("task %d with error rate 0", st)
	}
}

func TestCLBDeleteLoadBalancer(t *testing.T) {
	e := newCLBEnv(t, CLBOptions{}, dataplane.Config{Disabled: true})
	id := e.createLB(t, nil)
	lis := e.createListener(t, id, "TCP", 80, nil)
	// 20 real servers bound: deleting needs ForceDelete.
	var batch []*clb.BatchTarget
	for i := range 20 {
		batch = append(batch, &clb.BatchTarget{ListenerId: common.StringPtr(lis),
			EniIp: common.StringPtr(fmt.Sprintf("10.9.0.%d", i+1)), Port: common.Int64Ptr(30080)})
	}
	breq := clb.NewBatchRegisterTargetsRequest()
	breq.LoadBalancerId, breq.Targets = common.StringPtr(id), batch
	if _, err := e.api.BatchRegisterTargets(breq); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		ids   []string
		force bool
		code  string
	}{
		{"no ids", nil, false, "MissingParameter"},
		{"21 ids", strings.Split(strings.Repeat(id+",", 21), ",")[:21], false, "InvalidParameterValue.Length"},
		{"unknown", []string{"lb-nothere"}, false, "InvalidParameter.LBIdNotFound"},
		{"20 backends", []string{id}, false, "FailedOperation.TargetNumCheckRisk"},
		{"forced", []string{id}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := clb.NewDeleteLoadBalancerRequest()
			req.LoadBalancerIds = common.StringPtrs(tt.ids)
			if tt.force {
				req.ForceDelete = common.BoolPtr(true)
			}
			_, err := e.api.DeleteLoadBalancer(req)
			if got := sdkCode(err); got != tt.code {
				t.Fatalf("code %q (%v), want %q", got, err, tt.code)
			}
		})
	}
	if e.describeLB(t, id) != nil {
		t.Fatal("the LB is still listed after its delete task")
	}
	dl := clb.NewDescribeListenersRequest()
	dl.LoadBalancerId = common.StringPtr(id)
	if _, err := e.api.DescribeListeners(dl); sdkCode(err) != "InvalidParameter.LBIdNotFound" {
		t.Fatalf("DescribeListeners of a deleted LB: %v", err)
	}
}

func TestCLBModifyLoadBalancerAttributes(t *testing.T) {
	e := newCLBEnv(t, CLBOptions{}, dataplane.Config{Disabled: true})
	a := e.createLB(t, func(r *clb.CreateLoadBalancerRequest) { r.LoadBalancerName = common.StringPtr("a") })
	e.createLB(t, func(r *clb.CreateLoadBalancerRequest) { r.LoadBalancerName = common.StringPtr("b") })
	req := clb.NewModifyLoadBalancerAttributesRequest()
	req.LoadBalancerId, req.LoadBalancerName = common.StringPtr(a), common.StringPtr("b")
	if _, err := e.api.ModifyLoadBalancerAttributes(req); sdkCode(err) != "InvalidParameterValue.Duplicate" {
		t.Fatalf("renaming to a taken name: %v", err)
	}
	req.LoadBalancerName = common.StringPtr("renamed")
	if _, err := e.api.ModifyLoadBalancerAttributes(req); err != nil {
		t.Fatal(err)
	}
	if n := *e.describeLB(t, a).LoadBalancerName; n != "renamed" {
		t.Fatalf("name %q", n)
	}
	req.DeleteProtect = common.BoolPtr(true)
	if _, err := e.api.ModifyLoadBalancerAttributes(req); sdkCode(err) != "UnsupportedOperation" {
		t.Fatalf("DeleteProtect: %v", err)
	}
}
