package clbops

import (
	"context"
	"errors"
	"fmt"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
)

// attributeDiffs is what differs on the CLB itself from spec. Only CLBs we
// created or took over are ours to change: an adopted CLB keeps its
// attributes, and so does any CLB under KeepPassToTarget.
//
// LoadBalancerPassToTarget: "开启放通（true）：只验证CLB上的安全组；不开启放通
// （false）：需同时验证CLB和后端实例上的安全组" (CreateLoadBalancer). Off, the
// nodes' security groups must admit every client on the NodePorts and the
// CLB's VIP for health checks, which clusters rarely do; so we turn it on
// by default, and correct a CLB created before (or changed by hand).
func attributeDiffs(lb *loadBalancer, spec *Desired) []string {
	if lb.adopted || spec.KeepPassToTarget || lb.passToTarget == spec.PassToTarget {
		return nil
	}
	return []string{fmt.Sprintf("LoadBalancerPassToTarget is %t, want %t", lb.passToTarget, spec.PassToTarget)}
}

// reconcileAttributes writes the attributes that differ, and waits for the
// task.
func (o *Ops) reconcileAttributes(ctx context.Context, lb *loadBalancer, spec *Desired) error {
	if len(attributeDiffs(lb, spec)) == 0 {
		return nil
	}
	req := clb.NewModifyLoadBalancerAttributesRequest()
	req.LoadBalancerId = common.StringPtr(lb.id)
	req.LoadBalancerPassToTarget = common.BoolPtr(spec.PassToTarget)
	logWrite(ctx, "Setting CLB LoadBalancerPassToTarget", "clb", lb.id, "service", spec.Service, "from", lb.passToTarget, "to", spec.PassToTarget)
	var resp *clb.ModifyLoadBalancerAttributesResponse
	if err := o.call(ctx, "ModifyLoadBalancerAttributes", lb.String(), func() (err error) {
		resp, err = o.api.ModifyLoadBalancerAttributesWithContext(ctx, req)
		return err
	}); err != nil {
		return err
	}
	if resp == nil || resp.Response == nil {
		return callError("ModifyLoadBalancerAttributes", lb.String(), errors.New("malformed answer: no Response"))
	}
	if _, err := o.waitTask(ctx, "ModifyLoadBalancerAttributes", lb.String(), requestID(resp.Response.RequestId), ""); err != nil {
		return err
	}
	lb.passToTarget = spec.PassToTarget
	return nil
}
