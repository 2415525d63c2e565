package oci

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/lb/lbkit"
	"github.com/ccmkit/ccm/internal/oci/lbops"
)

// Dual-stack (issue 14 item 7). The IP families come from what Kubernetes
// allocated to the Service, spec.ipFamilies (which the apiserver fills from
// ipFamilyPolicy and the cluster's service CIDRs): both families make a
// dual-stack NLB (IPV4_AND_IPV6), IPv6 alone an IPV6 one, anything else an
// IPV4 one. Unlike the public OCI CCM, PreferDualStack on a single-stack
// Service (one family allocated) does not make the NLB dual-stack: the
// load balancer serves the families the Service has.
//
// The flexible Load Balancer (lb) stays IPv4 here: its ipMode IPV6 gives
// it an IPv6 address, but its listeners and backends have no IP version in
// the API (loadbalancer.ListenerDetails, BackendDetails), the public OCI CCM
// also keeps its backends IPv4 and refuses IPv6-only ("SingleStack IPv6 is
// not supported for OCI LBaaS"), and cloudsim does not emulate ipMode. So
// a RequireDualStack or IPv6-only Service of kind lb is refused (the error
// becomes the Service's Event), and a PreferDualStack one gets an IPv4 load
// balancer with a Warning Event saying why.

// Event reasons of the dual-stack checks.
const reasonIPv4Only = "LoadBalancerIPv4Only"

// readIPFamilies sets s.IPVersion and s.AssignedIPv6 from the Service (s.Kind
// set), and returns the problems and the warning, if any.
func readIPFamilies(svc *corev1.Service, s *lbops.Settings) ([]error, *lbkit.Warning) {
	v4 := slices.Contains(svc.Spec.IPFamilies, corev1.IPv4Protocol) || len(svc.Spec.IPFamilies) == 0
	v6 := slices.Contains(svc.Spec.IPFamilies, corev1.IPv6Protocol)
	var errs []error
	var warning *lbkit.Warning
	if s.Kind == lbops.KindLB {
		if annotations.OCINLBAssignedIPv6.IsSet(svc) {
			errs = append(errs, annotations.OCINLBAssignedIPv6.Invalid(svc.Annotations[string(annotations.OCINLBAssignedIPv6)],
				"applies to a network load balancer only; set %s: nlb", annotations.OCILoadBalancerType))
		}
		if v6 {
			policy := corev1.IPFamilyPolicySingleStack
			if svc.Spec.IPFamilyPolicy != nil {
				policy = *svc.Spec.IPFamilyPolicy
			}
			if !v4 || policy == corev1.IPFamilyPolicyRequireDualStack {
				errs = append(errs, fmt.Errorf("spec.ipFamilies %v (ipFamilyPolicy %s): the OCI Load Balancer (%s: lb) serves IPv4 only here; "+
					"use %s: nlb for IPv6 or dual-stack", svc.Spec.IPFamilies, policy, annotations.OCILoadBalancerType, annotations.OCILoadBalancerType))
			} else {
				warning = &lbkit.Warning{Reason: reasonIPv4Only, Message: fmt.Sprintf("the OCI Load Balancer serves IPv4 only: the Service's IPv6 family "+
					"gets no load balancer address (use %s: nlb for dual-stack)", annotations.OCILoadBalancerType)}
			}
		}
		return errs, warning
	}
	switch {
	case v4 && v6:
		s.IPVersion = lbops.IPVersionDual
	case v6:
		s.IPVersion = lbops.IPVersion6
	default:
		s.IPVersion = lbops.IPVersion4
	}
	v, err := annotations.OCINLBAssignedIPv6.StringFromService(svc)
	switch {
	case errors.Is(err, annotations.ErrNotSet):
	case err != nil:
		errs = append(errs, err)
	case !v6:
		errs = append(errs, annotations.OCINLBAssignedIPv6.Invalid(v, "the Service has no IPv6 family (spec.ipFamilies %v)", svc.Spec.IPFamilies))
	default:
		if a, perr := netip.ParseAddr(v); perr != nil || !a.Is6() || a.Is4In6() {
			errs = append(errs, annotations.OCINLBAssignedIPv6.Invalid(v, "must be an IPv6 address in one of the network load balancer's subnet's IPv6 prefixes"))
		} else {
			s.AssignedIPv6 = a.String()
		}
	}
	return errs, warning
}
