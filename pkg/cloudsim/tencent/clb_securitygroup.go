package tencent

import (
	"fmt"
	"slices"
	"strings"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
)

// MaxCLBSecurityGroups is the default quota of security groups bound to
// one CLB: "Each CLB instance can bind up to 5 security groups. To request
// a higher quota, go to Quota Management"
// (https://www.tencentcloud.com/document/product/214/14733). The SDK's
// SetLoadBalancerSecurityGroups comment allows up to 50 ("一个负载均衡实例最多
// 可绑定50个安全组") for raised quotas; cloudsim plays an account with the
// default quota.
const MaxCLBSecurityGroups = 5

// checkSecurityGroups validates the groups to bind to a CLB: at most the
// quota, no duplicates, each existing in the region.
func (l *CLB) checkSecurityGroups(region string, ids []string) *Error {
	if len(ids) > MaxCLBSecurityGroups {
		return Errorf("LimitExceeded", "A load balancer can be bound to at most %d security groups (the default quota), got %d.", MaxCLBSecurityGroups, len(ids))
	}
	if dup := firstDuplicate(ids); dup != "" {
		return Errorf("InvalidParameterValue", "The security group `%s` appears more than once.", dup)
	}
	return l.sgs.checkGroups(region, ids)
}

// setLoadBalancerSecurityGroups implements SetLoadBalancerSecurityGroups:
// "本接口是set语义" — the groups given replace the bound ones; none unbinds
// them all. It answers at once (no task), but like every write it is
// refused while a task runs on the CLB (FailedOperation.ResourceInOperating
// is among its documented codes).
func (l *CLB) setLoadBalancerSecurityGroups(call *Call, body []byte) (any, error) {
	var req clb.SetLoadBalancerSecurityGroupsRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	ids := ptrStrs(req.SecurityGroups)
	if e := l.checkSecurityGroups(call.Region, ids); e != nil {
		return nil, e
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	lb, e := l.lbLocked(call.Region, ptrStr(req.LoadBalancerId))
	if e != nil {
		return nil, e
	}
	if e := l.notBusy(lb.id); e != nil {
		return nil, e
	}
	l.bindLocked(lb, ids)
	return &clb.SetLoadBalancerSecurityGroupsResponseParams{}, nil
}

// setSecurityGroupForLoadbalancers implements
// SetSecurityGroupForLoadbalancers: one group bound to (ADD) or unbound
// from (DEL) up to 20 CLBs ("列表支持的最大长度为20"), all or nothing.
func (l *CLB) setSecurityGroupForLoadbalancers(call *Call, body []byte) (any, error) {
	var req clb.SetSecurityGroupForLoadbalancersRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	sg := ptrStr(req.SecurityGroup)
	if sg == "" {
		return nil, errMissing("SecurityGroup")
	}
	op := strings.ToUpper(ptrStr(req.OperationType))
	if op != "ADD" && op != "DEL" {
		return nil, Errorf("InvalidParameterValue", "`OperationType` must be ADD or DEL, got `%s`.", ptrStr(req.OperationType))
	}
	ids := ptrStrs(req.LoadBalancerIds)
	if len(ids) == 0 {
		return nil, errMissing("LoadBalancerIds")
	}
	if len(ids) > MaxLoadBalancerIDs {
		return nil, Errorf("InvalidParameterValue.Length", "The number of `LoadBalancerIds` (%d) exceeds the limit of %d.", len(ids), MaxLoadBalancerIDs)
	}
	if e := l.sgs.checkGroups(call.Region, []string{sg}); e != nil {
		return nil, e
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	next := map[*clbLB][]string{}
	for _, id := range ids {
		lb, e := l.lbLocked(call.Region, id)
		if e != nil {
			return nil, e
		}
		if e := l.notBusy(lb.id); e != nil {
			return nil, e
		}
		groups := slices.DeleteFunc(slices.Clone(lb.securityGroups), func(x string) bool { return x == sg })
		if op == "ADD" {
			groups = append(groups, sg)
			if len(groups) > MaxCLBSecurityGroups {
				return nil, Errorf("LimitExceeded", "LoadBalancer `%s` would be bound to %d security groups; the default quota is %d.", lb.id, len(groups), MaxCLBSecurityGroups)
			}
		}
		next[lb] = groups
	}
	for lb, groups := range next {
		l.bindLocked(lb, groups)
	}
	return &clb.SetSecurityGroupForLoadbalancersResponseParams{}, nil
}

// notBusy refuses a change while a task runs on the load balancer.
func (l *CLB) notBusy(id string) *Error {
	if holder, busy := l.tasks.Busy(id); busy {
		return Errorf("FailedOperation.ResourceInOperating",
			"Your task is working (%s) on LoadBalancer `%s`. Please wait for the task to complete and try again.", holder, id)
	}
	return nil
}

// bindLocked binds lb to groups and hands the data plane the new firewall.
// Callers hold l.mu.
func (l *CLB) bindLocked(lb *clbLB, groups []string) {
	lb.securityGroups = slices.Clone(groups)
	l.sgs.bindCLB(lb.id, lb.vip, lb.securityGroups)
	l.syncPlaneLocked(lb.id)
}

// SetSecurityGroups binds a load balancer to security groups out of band
// (in priority order; none unbinds), validated as
// SetLoadBalancerSecurityGroups validates them but never refused for a
// running task: a console user's change.
func (l *CLB) SetSecurityGroups(id string, ids ...string) (CLBLoadBalancer, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lb := l.lbs[id]
	if lb == nil {
		return CLBLoadBalancer{}, fmt.Errorf("%w: %q", ErrCLBNotFound, id)
	}
	if e := l.checkSecurityGroups(lb.region, ids); e != nil {
		return CLBLoadBalancer{}, invalid(e)
	}
	l.bindLocked(lb, ids)
	return l.exportLocked(lb), nil
}

// CLBSecurityGroupsBody is the body of PUT
// /admin/tencent/loadbalancers/{id}/securitygroups.
type CLBSecurityGroupsBody struct {
	SecurityGroups []string `json:"securityGroups"`
}
