package cloudsim

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"

	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"
	"sigs.k8s.io/yaml"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// SecurityGroup is a Tencent security group with its policies (see
// tencent.SecurityGroup).
type SecurityGroup = tencent.SecurityGroup

// SecurityGroupPolicy is one policy of a Tencent security group (the SDK's
// type).
type SecurityGroupPolicy = vpc.SecurityGroupPolicy

// CreateSecurityGroup adds a Tencent security group with its policies out
// of band (its id generated when empty), all or nothing.
func (s *Sim) CreateSecurityGroup(sg SecurityGroup) (SecurityGroup, error) {
	return s.tencent.SecurityGroups().Create(sg)
}

// SecurityGroups returns every Tencent security group.
func (s *Sim) SecurityGroups() []SecurityGroup { return s.tencent.SecurityGroups().List() }

// SecurityGroup returns one Tencent security group.
func (s *Sim) SecurityGroup(id string) (SecurityGroup, error) {
	return s.tencent.SecurityGroups().Get(id)
}

// SetSecurityGroupPolicies replaces a group's policies out of band (nil
// keeps a direction as it is).
func (s *Sim) SetSecurityGroupPolicies(id string, ingress, egress []*SecurityGroupPolicy) (SecurityGroup, error) {
	return s.tencent.SecurityGroups().SetPolicies(id, ingress, egress)
}

// DeleteSecurityGroup deletes a group out of band (refused while in use).
func (s *Sim) DeleteSecurityGroup(id string) error { return s.tencent.SecurityGroups().Delete(id) }

// SetInstanceSecurityGroups binds an instance to Tencent security groups,
// in priority order (none: cloudsim admits every flow to it).
func (s *Sim) SetInstanceSecurityGroups(instanceID string, ids ...string) (Instance, error) {
	return s.tencent.SecurityGroups().SetInstanceSecurityGroups(instanceID, ids)
}

// SetCLBSecurityGroups binds a Tencent load balancer to security groups
// out of band, as a console user would (none unbinds).
func (s *Sim) SetCLBSecurityGroups(lbID string, ids ...string) (CLBLoadBalancer, error) {
	return s.clb.SetSecurityGroups(lbID, ids)
}

// SecurityGroupSeed is a security group seed file: {"securityGroups":
// [...]} (a bare list is accepted too).
type SecurityGroupSeed struct {
	SecurityGroups []SecurityGroup `json:"securityGroups"`
}

// LoadSecurityGroups reads a YAML or JSON security group seed file.
func LoadSecurityGroups(path string) ([]SecurityGroup, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("security groups: %w", err)
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("security groups %s: %w: %v", path, core.ErrInvalid, err)
	}
	var list []SecurityGroup
	if err := yaml.UnmarshalStrict(js, &list); err == nil {
		return list, nil
	}
	var seed SecurityGroupSeed
	if err := yaml.UnmarshalStrict(js, &seed); err != nil {
		return nil, fmt.Errorf("security groups %s: %w: %v", path, core.ErrInvalid, err)
	}
	return seed.SecurityGroups, nil
}

// SecurityGroups lists every Tencent security group.
func (c *AdminClient) SecurityGroups(ctx context.Context) ([]SecurityGroup, error) {
	var out []SecurityGroup
	err := c.do(ctx, http.MethodGet, "tencent/securitygroups", nil, &out)
	return out, err
}

// CreateSecurityGroup creates a Tencent security group with its policies.
func (c *AdminClient) CreateSecurityGroup(ctx context.Context, sg SecurityGroup) (SecurityGroup, error) {
	var out SecurityGroup
	err := c.do(ctx, http.MethodPost, "tencent/securitygroups", sg, &out)
	return out, err
}

// SetSecurityGroupPolicies replaces a group's policies (nil keeps a
// direction).
func (c *AdminClient) SetSecurityGroupPolicies(ctx context.Context, id string, ingress, egress []*SecurityGroupPolicy) (SecurityGroup, error) {
	var out SecurityGroup
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
func (c *AdminClient) SetCLBSecurityGroups(ctx context.Context, lbID string, ids ...string) (CLBLoadBalancer, error) {
	if ids == nil {
		ids = []string{}
	}
	var out CLBLoadBalancer
	err := c.do(ctx, http.MethodPut, "tencent/loadbalancers/"+url.PathEscape(lbID)+"/securitygroups", tencent.CLBSecurityGroupsBody{SecurityGroups: ids}, &out)
	return out, err
}
