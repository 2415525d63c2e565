package tencent

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// matches reports whether the policy covers traffic of proto to port from
// src. members resolves a referenced security group to its addresses.
func (p sgPolicy) matches(src netip.Addr, proto string, port int, members func(sg string) []netip.Addr) bool {
	if p.ipv6 {
		return false // the data plane carries IPv4 only
	}
	switch p.proto {
	case "ALL":
	case "ICMPV6", "GRE":
		return false
	default:
		if p.proto != proto {
			return false
		}
	}
	if p.ports != nil && !slices.ContainsFunc(p.ports, func(r portRange) bool { return port >= r.lo && port <= r.hi }) {
		return false
	}
	if p.sgRef != "" {
		return slices.Contains(members(p.sgRef), src)
	}
	return p.cidr.Contains(src)
}

func (p sgPolicy) String() string {
	from := str(p.in.CidrBlock)
	if p.sgRef != "" {
		from = "security group " + p.sgRef
	}
	return fmt.Sprintf("%s %s port %s from %s", str(p.in.Action), p.proto, str(p.in.Port), from)
}

// AdmitIngress judges traffic of proto (TCP, UDP or ICMP) from src to
// port entering a resource bound to groups, in priority order: the first
// matching ingress policy decides, and traffic that no policy matches is
// dropped. A group that no longer exists has no policies. The caller
// decides what a resource without any group admits.
func (s *SecurityGroups) AdmitIngress(groups []string, src netip.Addr, proto string, port int) error {
	var instances []core.Record
	loaded := false
	s.mu.Lock()
	defer s.mu.Unlock()
	members := func(sg string) []netip.Addr {
		if !loaded {
			instances, loaded = s.core.Snapshot(), true
		}
		var out []netip.Addr
		for _, r := range instances {
			if a, err := netip.ParseAddr(r.PrivateIP); err == nil && slices.Contains(r.SecurityGroupIDs, sg) {
				out = append(out, a)
			}
		}
		for _, vip := range s.bound[sg] {
			if vip.IsValid() {
				out = append(out, vip)
			}
		}
		return out
	}
	for _, id := range groups {
		g := s.groups[id]
		if g == nil {
			continue
		}
		for i, p := range g.ingress {
			if !p.matches(src, proto, port, members) {
				continue
			}
			if p.accept {
				return nil
			}
			return fmt.Errorf("security group %s: ingress policy %d (%s) drops %s from %s to port %d", id, i, p, proto, src, port)
		}
	}
	return fmt.Errorf("no ingress policy of security group %s accepts %s from %s to port %d (a security group drops what no policy accepts)",
		strings.Join(groups, ", "), proto, src, port)
}

// ---- bindings of CLBs, published by the CLB service ----

// checkGroups reports the first of ids that is malformed or does not
// exist in region.
func (s *SecurityGroups) checkGroups(region string, ids []string) *Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if !core.ValidSecurityGroupID(id) {
			return Errorf("InvalidParameter.FormatError", "The security group ID `%s` is malformed: want `sg-` followed by 8 lower-case letters or digits.", id)
		}
		if g := s.groups[id]; g == nil || g.region != region {
			return Errorf("InvalidParameterValue", "The security group `%s` does not exist.", id)
		}
	}
	return nil
}

// bindCLB records the groups a CLB is bound to and its VIP (invalid while
// it is created), replacing what was recorded; no groups unbinds it.
func (s *SecurityGroups) bindCLB(lbID string, vip netip.Addr, groups []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bound.Bind(lbID, vip, groups)
}

// boundCLBs lists the CLBs bound to a group. Callers hold s.mu.
func (s *SecurityGroups) boundCLBsLocked(sg string) []string {
	return slices.Sorted(maps.Keys(s.bound[sg]))
}
