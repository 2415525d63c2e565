package cloudsim

import (
	"context"
	"net/http"
	"net/url"

	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// SecurityGroups lists every Tencent security group.
func (c *AdminClient) SecurityGroups(ctx context.Context) ([]tencent.SecurityGroup, error) {
	var out []tencent.SecurityGroup
	err := c.do(ctx, http.MethodGet, "tencent/securitygroups", nil, &out)
	return out, err
}

// CreateSecurityGroup creates a Tencent security group with its policies.
func (c *AdminClient) CreateSecurityGroup(ctx context.Context, sg tencent.SecurityGroup) (tencent.SecurityGroup, error) {
	var out tencent.SecurityGroup
	err := c.do(ctx, http.MethodPost, "tencent/securitygroups", sg, &out)
	return out, err
}

// SetSecurityGroupPolicies replaces a group's policies (nil keeps a
// direction).
func (c *AdminClient) SetSecurityGroupPolicies(ctx context.Context, id string, ingress, egress []*vpc.SecurityGroupPolicy) (tencent.SecurityGroup, error) {
	var out tencent.SecurityGroup
	err := c.do(ctx, http.MethodPut, "tencent/securitygroups/"+url.PathEscape(id), tencent.SecurityGroupPoliciesBody{Ingress: ingress, Egress: egress}, &out)
	return out, err
}

// DeleteSecurityGroup deletes a Tencent security group.
func (c *AdminClient) DeleteSecurityGroup(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "tencent/securitygroups/"+url.PathEscape(id), nil, nil)
}

// SetInstanceSecurityGroups binds an instance to Tencent security groups.
func (c *AdminClient) SetInstanceSecurityGroups(ctx context.Context, instanceID string, ids ...string) (Instance, error) {
	if ids == nil {
		ids = []string{}
	}
	var out Instance
	err := c.do(ctx, http.MethodPut, "tencent/instances/"+url.PathEscape(instanceID)+"/securitygroups", tencent.InstanceSecurityGroupsBody{SecurityGroupIDs: ids}, &out)
	return out, err
}

// SetCLBSecurityGroups binds a Tencent load balancer to security groups.
func (c *AdminClient) SetCLBSecurityGroups(ctx context.Context, lbID string, ids ...string) (tencent.CLBLoadBalancer, error) {
	if ids == nil {
		ids = []string{}
	}
	var out tencent.CLBLoadBalancer
	err := c.do(ctx, http.MethodPut, "tencent/loadbalancers/"+url.PathEscape(lbID)+"/securitygroups", tencent.CLBSecurityGroupsBody{SecurityGroups: ids}, &out)
	return out, err
}
