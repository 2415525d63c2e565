package cloudsim

import (
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

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
func (s *Sim) CreateSecurityGroup(sg tencent.SecurityGroup) (tencent.SecurityGroup, error) {
	return s.tencent.SecurityGroups().Create(sg)
}

// SecurityGroups returns every Tencent security group.
func (s *Sim) SecurityGroups() []tencent.SecurityGroup { return s.tencent.SecurityGroups().List() }

// SecurityGroup returns one Tencent security group.
func (s *Sim) SecurityGroup(id string) (tencent.SecurityGroup, error) {
	return s.tencent.SecurityGroups().Get(id)
}

// SetSecurityGroupPolicies replaces a group's policies out of band (nil
// keeps a direction as it is).
func (s *Sim) SetSecurityGroupPolicies(id string, ingress, egress []*vpc.SecurityGroupPolicy) (tencent.SecurityGroup, error) {
	return s.tencent.SecurityGroups().SetPolicies(id, ingress, egress)
}

// DeleteSecurityGroup deletes a group out of band (refused while in use).
func (s *Sim) DeleteSecurityGroup(id string) error { return s.tencent.SecurityGroups().Delete(id) }

// SetInstanceSecurityGroups binds an instance to Tencent security groups,
// in priority order (none: cloudsim admits every flow to it).
func (s *Sim) SetInstanceSecurityGroups(instanceID string, ids ...string) (Instance, error) {
	return s.tencent.SecurityGroups().SetInstanceSecurityGroups(instanceID, ids...)
}

// SetCLBSecurityGroups binds a Tencent load balancer to security groups
// out of band, as a console user would (none unbinds).
func (s *Sim) SetCLBSecurityGroups(lbID string, ids ...string) (tencent.CLBLoadBalancer, error) {
	return s.tencent.CLB().SetSecurityGroups(lbID, ids...)
}
