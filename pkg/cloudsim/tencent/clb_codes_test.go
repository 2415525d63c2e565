package tencent

import (
	"strings"
	"testing"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
)

func TestDocumentedCode(t *testing.T) {
	tests := []struct{ action, code, want string }{
		{"CreateListener", "FailedOperation.ResourceInOperating", "FailedOperation.ResourceInOperating"},
		{"DeleteListener", "FailedOperation.ResourceInOperating", "FailedOperation"},
		{"DeleteListener", "InvalidParameter.ListenerIdNotFound", "InvalidParameter"},
		{"DeleteListener", "InvalidParameter.LBIdNotFound", "InvalidParameter"},
		{"BatchRegisterTargets", "InvalidParameter.ListenerIdNotFound", "InvalidParameter.ListenerIdNotFound"},
		{"DeleteLoadBalancer", "FailedOperation.FrequencyCheckRisk", "FailedOperation.FrequencyCheckRisk"},
		{"DeleteListener", "LimitExceeded", "LimitExceeded"}, // a common code
		{"NotACLBAction", "Anything.Else", "Anything.Else"},
	}
	for _, tt := range tests {
		if got := documentedCode(tt.action, tt.code); got != tt.want {
			t.Errorf("documentedCode(%s, %s) = %s, want %s", tt.action, tt.code, got, tt.want)
		}
	}
}

// TestCLBBusyCodes: while a task runs on a load balancer, the writes whose
// SDK error list has FailedOperation.ResourceInOperating answer it, and the
// others answer plain FailedOperation with the same busy message
// (clb@v1.3.105 client.go, "可能返回的错误码" of each action).
func TestCLBBusyCodes(t *testing.T) {
	e := newCLBEnv(t, CLBOptions{TaskLatency: 3 * time.Second}, dataplane.Config{Disabled: true})
	// Out of band, so that the setup starts no task.
	lb, err := e.clb.CreateLoadBalancer(CLBSpec{VpcID: clbTestVPC, Listeners: []CLBListenerSpec{{
		Protocol: "TCP", Port: 80, Targets: []CLBTarget{{EniIP: "10.9.0.1", Port: 30080}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	id, lis := lb.ID, lb.Listeners[0].ID
	target := &clb.Target{EniIp: common.StringPtr("10.9.0.1"), Port: common.Int64Ptr(30080)}
	newTarget := &clb.Target{EniIp: common.StringPtr("10.9.0.2"), Port: common.Int64Ptr(30080)}
	rreq := clb.NewRegisterTargetsRequest()
	rreq.LoadBalancerId, rreq.ListenerId, rreq.Targets = common.StringPtr(id), common.StringPtr(lis), []*clb.Target{newTarget}
	mreq := clb.NewModifyListenerRequest()
	mreq.LoadBalancerId, mreq.ListenerId, mreq.ListenerName = common.StringPtr(id), common.StringPtr(lis), common.StringPtr("busy")
	if _, err := e.api.ModifyListener(mreq); err != nil {
		t.Fatal(err)
	}

	batch := []*clb.BatchTarget{{ListenerId: common.StringPtr(lis), EniIp: common.StringPtr("10.9.0.1"), Port: common.Int64Ptr(30080)}}
	const documented, plain = "FailedOperation.ResourceInOperating", "FailedOperation"
	calls := []struct {
		action string
		want   string
		call   func() error
	}{
		{"ModifyLoadBalancerAttributes", documented, func() error {
			r := clb.NewModifyLoadBalancerAttributesRequest()
			r.LoadBalancerId, r.LoadBalancerName = common.StringPtr(id), common.StringPtr("x")
			_, err := e.api.ModifyLoadBalancerAttributes(r)
			return err
		}},
		{"CreateListener", documented, func() error {
			r := clb.NewCreateListenerRequest()
			r.LoadBalancerId, r.Protocol, r.Ports = common.StringPtr(id), common.StringPtr("TCP"), []*int64{common.Int64Ptr(81)}
			_, err := e.api.CreateListener(r)
			return err
		}},
		{"ModifyListener", documented, func() error { _, err := e.api.ModifyListener(mreq); return err }},
		{"DeleteLoadBalancerListeners", documented, func() error {
			r := clb.NewDeleteLoadBalancerListenersRequest()
			r.LoadBalancerId = common.StringPtr(id)
			_, err := e.api.DeleteLoadBalancerListeners(r)
			return err
		}},
		{"RegisterTargets", documented, func() error { _, err := e.api.RegisterTargets(rreq); return err }},
		{"BatchRegisterTargets", documented, func() error {
			r := clb.NewBatchRegisterTargetsRequest()
			r.LoadBalancerId = common.StringPtr(id)
			r.Targets = []*clb.BatchTarget{{ListenerId: common.StringPtr(lis), EniIp: common.StringPtr("10.9.0.2"), Port: common.Int64Ptr(30080)}}
			_, err := e.api.BatchRegisterTargets(r)
			return err
		}},
		{"ModifyTargetWeight", documented, func() error {
			r := clb.NewModifyTargetWeightRequest()
			r.LoadBalancerId, r.ListenerId, r.Targets = common.StringPtr(id), common.StringPtr(lis), []*clb.Target{target}
			_, err := e.api.ModifyTargetWeight(r)
			return err
		}},
		{"DeleteListener", plain, func() error {
			r := clb.NewDeleteListenerRequest()
			r.LoadBalancerId, r.ListenerId = common.StringPtr(id), common.StringPtr(lis)
			_, err := e.api.DeleteListener(r)
			return err
		}},
		{"DeregisterTargets", plain, func() error {
			r := clb.NewDeregisterTargetsRequest()
			r.LoadBalancerId, r.ListenerId, r.Targets = common.StringPtr(id), common.StringPtr(lis), []*clb.Target{target}
			_, err := e.api.DeregisterTargets(r)
			return err
		}},
		{"BatchDeregisterTargets", plain, func() error {
			r := clb.NewBatchDeregisterTargetsRequest()
			r.LoadBalancerId, r.Targets = common.StringPtr(id), batch
			_, err := e.api.BatchDeregisterTargets(r)
			return err
		}},
		{"DeleteLoadBalancer", plain, func() error {
			r := clb.NewDeleteLoadBalancerRequest()
			r.LoadBalancerIds = common.StringPtrs([]string{id})
			_, err := e.api.DeleteLoadBalancer(r)
			return err
		}},
	}
	for _, c := range calls {
		err := c.call()
		if got := sdkCode(err); got != c.want || !strings.Contains(err.Error(), "Your task is working") {
			t.Errorf("%s while a task runs: %v; want %s with the busy message", c.action, err, c.want)
		}
	}
	// The refused DeleteLoadBalancer did not count toward the frequency check.
	e.clb.mu.Lock()
	defer e.clb.mu.Unlock()
	if n := len(e.clb.deletions[testRegion]); n != 0 {
		t.Errorf("a refused deletion was counted: %d", n)
	}
}
