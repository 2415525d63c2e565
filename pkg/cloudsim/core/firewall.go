package core

import (
	"fmt"
	"regexp"
	"slices"
)

// The fleet carries each instance's firewall memberships, so that one seed
// serves both dialects; the dialects own the groups and their rules and
// judge traffic with them.
const (
	// MaxNSGsPerVNIC: "A VNIC can be added to a maximum of five NSGs"
	// (https://docs.oracle.com/en-us/iaas/Content/Network/Concepts/securityrules.htm).
	MaxNSGsPerVNIC = 5
	// MaxInstanceSecurityGroups bounds an instance's Tencent security
	// groups. No per-instance limit is documented in the SDK (vpc
	// DescribeSecurityGroupLimits reports an account's
	// InstanceSecurityGroupLimit); 50 is cloudsim's choice, high enough
	// not to refuse what a real account allows.
	MaxInstanceSecurityGroups = 50
)

var securityGroupIDRe = regexp.MustCompile(`^sg-[a-z0-9]{8}$`)

// ValidSecurityGroupID reports whether id has Tencent's format "sg-"
// followed by 8 lowercase letters or digits.
func ValidSecurityGroupID(id string) bool { return securityGroupIDRe.MatchString(id) }

// checkFirewalls validates an instance's security group and NSG ids.
func checkFirewalls(in *Instance) error {
	if len(in.SecurityGroupIDs) > MaxInstanceSecurityGroups {
		return fmt.Errorf("%d security groups; at most %d", len(in.SecurityGroupIDs), MaxInstanceSecurityGroups)
	}
	for _, id := range in.SecurityGroupIDs {
		if !ValidSecurityGroupID(id) {
			return fmt.Errorf("security group id %q is malformed: want \"sg-\" followed by 8 lowercase letters or digits", id)
		}
	}
	if dup := firstDup(in.SecurityGroupIDs); dup != "" {
		return fmt.Errorf("security group %s is listed twice", dup)
	}
	if len(in.NSGIDs) > MaxNSGsPerVNIC {
		return fmt.Errorf("%d network security groups; a VNIC can be in at most %d", len(in.NSGIDs), MaxNSGsPerVNIC)
	}
	for _, id := range in.NSGIDs {
		if !ValidOCID(id, "networksecuritygroup") {
			return fmt.Errorf("nsgId %q is not a network security group OCID", id)
		}
	}
	if dup := firstDup(in.NSGIDs); dup != "" {
		return fmt.Errorf("network security group %s is listed twice", dup)
	}
	return nil
}

func firstDup(ids []string) string {
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			return id
		}
		seen[id] = true
	}
	return ""
}

// Firewalls is a change of an instance's firewall memberships; a nil field
// keeps the current value, an empty one clears it.
type Firewalls struct {
	SecurityGroupIDs *[]string `json:"securityGroupIds,omitempty"`
	NSGIDs           *[]string `json:"nsgIds,omitempty"`
}

// SetInstanceFirewalls changes an instance's security groups or NSGs (id
// may be its OCID). The dialect checks that the groups exist.
func (c *Core) SetInstanceFirewalls(id string, f Firewalls) (Instance, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fleet.gc(c.clock(), c.linger)
	r := c.fleet.lookup(id)
	if r == nil {
		return Instance{}, fmt.Errorf("instance %q: %w", id, ErrNotFound)
	}
	next := r.Instance.clone()
	if f.SecurityGroupIDs != nil {
		next.SecurityGroupIDs = slices.Clone(*f.SecurityGroupIDs)
	}
	if f.NSGIDs != nil {
		next.NSGIDs = slices.Clone(*f.NSGIDs)
	}
	if err := checkFirewalls(&next); err != nil {
		return Instance{}, fmt.Errorf("%w: instance %s: %v", ErrInvalid, r.ID, err)
	}
	r.Instance = next
	return next.clone(), nil
}

// AddInstanceCheck registers a dialect's check of new instances, e.g. that
// the security groups they name exist. The checks run before the fleet's
// own validation, without the fleet's lock held.
func (c *Core) AddInstanceCheck(check func(Instance) error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checks = append(c.checks, check)
}

func (c *Core) runChecks(in []Instance) error {
	c.mu.Lock()
	checks := slices.Clone(c.checks)
	c.mu.Unlock()
	for i, inst := range in {
		for _, check := range checks {
			if err := check(inst); err != nil {
				return fmt.Errorf("%w: instance %d (%s): %v", ErrInvalid, i, inst.ID, err)
			}
		}
	}
	return nil
}

// RegionOf is the region an instance lives in (see Record.Region).
func (c *Core) RegionOf(in Instance) string { return Record{Instance: in}.Region(c.region) }
