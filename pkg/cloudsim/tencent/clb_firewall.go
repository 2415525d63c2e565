package tencent

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// clbFirewall is what the security groups let through to and from one CLB,
// for the data plane. It is a snapshot of the CLB's bindings, replaced on
// every sync; the groups' policies and the instances' bindings are read
// when a flow starts, so their changes apply at once.
//
//   - Clients to the VIP: the CLB's security groups, in the order bound. A
//     CLB bound to none admits every client: a CLB security group is what
//     isolates its traffic ("After a CLB instance is created, you can
//     configure a CLB security group to isolate public network traffic",
//     https://www.tencentcloud.com/document/product/214/14733).
//   - The CLB to a target: with LoadBalancerPassToTarget, nothing more
//     ("开启放通（true）：只验证CLB上的安全组"). Without it the target
//     instance's security groups are checked too ("不开启放通（false）：需同时
//     验证CLB和后端实例上的安全组", CreateLoadBalancerRequestParams), with the
//     client's address as the source: a layer-4 CLB keeps it, so "You need
//     to allow the client IP and open the service port in the CVM security
//     group" (https://www.tencentcloud.com/document/product/214/6157).
//   - Health checks come from the CLB's VIP: without pass-to-target "You
//     need to allow the CLB VIP in the security group of the backend CVM"
//     (same page); with it "the real server allows traffic from CLB by
//     default" (214/14733), probes included.
//   - An instance bound to no security group (possible only in cloudsim)
//     admits everything (cloudsim's choice, so that fleets seeded without
//     groups keep working). So does a target that is not an instance.
type clbFirewall struct {
	sgs          *SecurityGroups
	core         *core.Core
	vpcID        string
	vip          netip.Addr
	groups       []string
	passToTarget bool
}

func (l *CLB) firewall(lb *clbLB) dataplane.Firewall {
	return clbFirewall{sgs: l.sgs, core: l.core, vpcID: lb.vpcID, vip: lb.vip,
		groups: slices.Clone(lb.securityGroups), passToTarget: lb.passToTarget}
}

func (f clbFirewall) Inbound(fl dataplane.Flow) error {
	if len(f.groups) == 0 {
		return nil
	}
	if err := f.sgs.AdmitIngress(f.groups, fl.Client.Addr(), fl.Protocol, int(fl.VIP.Port())); err != nil {
		return fmt.Errorf("the CLB's security groups: %w", err)
	}
	return nil
}

func (f clbFirewall) Forward(fl dataplane.Flow) error {
	return f.toTarget(fl, fl.Client.Addr())
}

func (f clbFirewall) Probe(fl dataplane.Flow) error {
	return f.toTarget(fl, f.vip)
}

func (f clbFirewall) toTarget(fl dataplane.Flow, src netip.Addr) error {
	if f.passToTarget {
		return nil
	}
	id, groups := f.targetGroups(fl)
	if len(groups) == 0 {
		return nil
	}
	if err := f.sgs.AdmitIngress(groups, src, fl.Protocol, int(fl.Target.Port())); err != nil {
		return fmt.Errorf("instance %s's security groups (LoadBalancerPassToTarget is off): %w", id, err)
	}
	return nil
}

// targetGroups finds the target's instance (by id, or by private IP in
// the CLB's VPC for an EniIp target) and its security groups.
func (f clbFirewall) targetGroups(fl dataplane.Flow) (string, []string) {
	if core.ValidInstanceID(fl.TargetID) {
		if r, err := f.core.InstanceRecord(fl.TargetID); err == nil {
			return r.ID, r.SecurityGroupIDs
		}
		return fl.TargetID, nil
	}
	ip := fl.Target.Addr().String()
	for _, r := range f.core.Snapshot() {
		if r.PrivateIP == ip && r.VpcID == f.vpcID {
			return r.ID, r.SecurityGroupIDs
		}
	}
	return ip, nil
}
