package tencent

import (
	"fmt"
	"net/http"
	"slices"

	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// ErrSecurityGroupNotFound is returned (wrapped) for an unknown security
// group.
var ErrSecurityGroupNotFound = fmt.Errorf("security group %w", core.ErrNotFound)

// export is the admin view of a group. Callers hold s.mu.
func (s *SecurityGroups) exportLocked(g *sgRec) SecurityGroup {
	set := g.policySetSDK(nil)
	return SecurityGroup{ID: g.id, Name: g.name, Description: g.desc, Region: g.region,
		Ingress: set.Ingress, Egress: set.Egress, Version: g.version, CLBs: s.boundCLBsLocked(g.id)}
}

// Create adds a security group with its policies out of band, as the
// console would, all or nothing. The policies are validated as
// CreateSecurityGroupPolicies validates them.
func (s *SecurityGroups) Create(in SecurityGroup) (SecurityGroup, error) {
	if in.Region == "" {
		in.Region = s.core.Region()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if in.ID == "" {
		in.ID = s.newIDLocked()
	}
	if !core.ValidSecurityGroupID(in.ID) {
		return SecurityGroup{}, fmt.Errorf("%w: security group id %q: want sg- and 8 lowercase letters or digits", core.ErrInvalid, in.ID)
	}
	if s.groups[in.ID] != nil {
		return SecurityGroup{}, fmt.Errorf("%w: security group %s already exists", core.ErrInvalid, in.ID)
	}
	if in.Name == "" {
		in.Name = in.ID
	}
	now := s.core.Now()
	s.seq++
	g := &sgRec{id: in.ID, name: in.Name, desc: in.Description, region: in.Region, created: now, updated: now, seq: s.seq}
	// A group may reference itself: add it first, drop it on failure.
	s.groups[g.id] = g
	if err := s.setPoliciesLocked(g, in.Ingress, in.Egress); err != nil {
		delete(s.groups, g.id)
		return SecurityGroup{}, err
	}
	g.version = 1
	return s.exportLocked(g), nil
}

// SetPolicies replaces a group's policies out of band (nil keeps a
// direction as it is).
func (s *SecurityGroups) SetPolicies(id string, ingress, egress []*vpc.SecurityGroupPolicy) (SecurityGroup, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[id]
	if g == nil {
		return SecurityGroup{}, fmt.Errorf("%w: %q", ErrSecurityGroupNotFound, id)
	}
	if ingress == nil {
		ingress = g.policySetSDK(nil).Ingress
	}
	if egress == nil {
		egress = g.policySetSDK(nil).Egress
	}
	if err := s.setPoliciesLocked(g, ingress, egress); err != nil {
		return SecurityGroup{}, err
	}
	return s.exportLocked(g), nil
}

func (s *SecurityGroups) setPoliciesLocked(g *sgRec, ingress, egress []*vpc.SecurityGroupPolicy) error {
	now := s.core.Now()
	var next [2][]sgPolicy
	for k, list := range [][]*vpc.SecurityGroupPolicy{ingress, egress} {
		dir := []string{"ingress", "egress"}[k]
		for i, p := range list {
			if p != nil {
				q := *p
				q.PolicyIndex, q.ModifyTime = nil, nil
				p = &q
			}
			c, e := s.compilePolicy(fmt.Sprintf("%s[%d]", dir, i), g.region, p, now)
			if e != nil {
				return fmt.Errorf("%w: security group %s: %s", core.ErrInvalid, g.id, e.Message)
			}
			next[k] = append(next[k], c)
		}
	}
	if n := len(next[0]) + len(next[1]); n > MaxSecurityGroupPolicies {
		return fmt.Errorf("%w: security group %s: %d policies, at most %d", core.ErrInvalid, g.id, n, MaxSecurityGroupPolicies)
	}
	g.ingress, g.egress = next[0], next[1]
	g.changed(now)
	return nil
}

// List returns every security group, in creation order.
func (s *SecurityGroups) List() []SecurityGroup {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []SecurityGroup{}
	for _, g := range s.sortedLocked() {
		out = append(out, s.exportLocked(g))
	}
	return out
}

// Get returns one security group.
func (s *SecurityGroups) Get(id string) (SecurityGroup, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[id]
	if g == nil {
		return SecurityGroup{}, fmt.Errorf("%w: %q", ErrSecurityGroupNotFound, id)
	}
	return s.exportLocked(g), nil
}

// Delete removes a security group out of band; like the API it refuses
// one still in use.
func (s *SecurityGroups) Delete(id string) error {
	instances := s.core.Snapshot()
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[id]
	if g == nil {
		return fmt.Errorf("%w: %q", ErrSecurityGroupNotFound, id)
	}
	if e := s.inUseLocked(g, instances); e != nil {
		return fmt.Errorf("%w: %s", core.ErrInvalid, e.Message)
	}
	delete(s.groups, id)
	return nil
}

// SetInstanceSecurityGroups binds an instance to groups (in priority
// order), replacing its bindings; the groups must exist in the instance's
// region. No groups: cloudsim lets every flow reach the instance.
func (s *SecurityGroups) SetInstanceSecurityGroups(instanceID string, ids ...string) (core.Instance, error) {
	rec, err := s.core.InstanceRecord(instanceID)
	if err != nil {
		return core.Instance{}, err
	}
	if e := s.checkGroups(rec.Region(s.core.Region()), ids); e != nil {
		return core.Instance{}, fmt.Errorf("%w: %s", core.ErrInvalid, e.Message)
	}
	ids = slices.Clone(ids)
	if ids == nil {
		ids = []string{}
	}
	return s.core.SetInstanceFirewalls(rec.ID, core.Firewalls{SecurityGroupIDs: &ids})
}

// InstanceSecurityGroupsBody is the body of PUT
// /admin/tencent/instances/{id}/securitygroups.
type InstanceSecurityGroupsBody struct {
	SecurityGroupIDs []string `json:"securityGroupIds"`
}

// SecurityGroupPoliciesBody is the body of PUT
// /admin/tencent/securitygroups/{id}: the policies to set (a direction
// left out keeps its policies).
type SecurityGroupPoliciesBody struct {
	Ingress []*vpc.SecurityGroupPolicy `json:"ingress,omitempty"`
	Egress  []*vpc.SecurityGroupPolicy `json:"egress,omitempty"`
}

// registerAdmin adds the security group endpoints:
//
//	GET    /admin/tencent/securitygroups                  every group with its policies and CLBs
//	POST   /admin/tencent/securitygroups                  create one (SecurityGroup; id optional)
//	GET    /admin/tencent/securitygroups/{id}             one group
//	PUT    /admin/tencent/securitygroups/{id}             replace its policies (SecurityGroupPoliciesBody)
//	DELETE /admin/tencent/securitygroups/{id}             delete it (refused while in use)
//	PUT    /admin/tencent/instances/{id}/securitygroups   bind an instance (InstanceSecurityGroupsBody)
func (s *SecurityGroups) registerAdmin() {
	const base = "/admin/tencent/securitygroups"
	h := s.core.HandleAdminFunc
	h("GET "+base, func(*http.Request) (int, any, error) { return http.StatusOK, s.List(), nil })
	h("POST "+base, func(r *http.Request) (int, any, error) {
		var in SecurityGroup
		if err := core.DecodeAdmin(r, &in); err != nil {
			return 0, nil, err
		}
		in.CLBs, in.Version = nil, 0
		out, err := s.Create(in)
		return http.StatusCreated, out, err
	})
	h("GET "+base+"/{id}", func(r *http.Request) (int, any, error) {
		g, err := s.Get(r.PathValue("id"))
		return http.StatusOK, g, err
	})
	h("PUT "+base+"/{id}", func(r *http.Request) (int, any, error) {
		var in SecurityGroupPoliciesBody
		if err := core.DecodeAdmin(r, &in); err != nil {
			return 0, nil, err
		}
		g, err := s.SetPolicies(r.PathValue("id"), in.Ingress, in.Egress)
		return http.StatusOK, g, err
	})
	h("DELETE "+base+"/{id}", func(r *http.Request) (int, any, error) {
		return http.StatusNoContent, nil, s.Delete(r.PathValue("id"))
	})
	h("PUT /admin/tencent/instances/{id}/securitygroups", func(r *http.Request) (int, any, error) {
		var in InstanceSecurityGroupsBody
		if err := core.DecodeAdmin(r, &in); err != nil {
			return 0, nil, err
		}
		if in.SecurityGroupIDs == nil {
			return 0, nil, fmt.Errorf("%w: body must be {\"securityGroupIds\": [...]}", core.ErrInvalid)
		}
		inst, err := s.SetInstanceSecurityGroups(r.PathValue("id"), in.SecurityGroupIDs...)
		return http.StatusOK, inst, err
	})
}
