package oci

import (
	"encoding/json"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/oci/lbops"
)

// readOptions reads the options of issue 14 items 4 and 6 into s (whose
// Kind is set): spec.loadBalancerIP (a reserved public IP), the LB policy,
// tags at creation, the status' ipMode and the NLB's private address. Each
// problem names its annotation or field.
func readOptions(svc *corev1.Service, s *lbops.Settings, internal bool) []error {
	var errs annotations.Problems
	if ip := svc.Spec.LoadBalancerIP; ip != "" {
		switch a, err := netip.ParseAddr(ip); {
		case err != nil || !a.Is4():
			errs = append(errs, fmt.Errorf("spec.loadBalancerIP %q: must be the IPv4 address of a reserved public IP", ip))
		case internal:
			errs = append(errs, fmt.Errorf("spec.loadBalancerIP %s: a private (internal) load balancer cannot take a reserved public IP; "+
				"clear spec.loadBalancerIP or make the load balancer public", ip))
		default:
			s.LoadBalancerIP = ip
		}
	}
	if v, err := ingressIPMode(svc); errs.Check(err) {
		s.IngressIPMode = v
	}
	freeform, defined := annotations.OCIInitialFreeformTags, annotations.OCIInitialDefinedTags
	if s.Kind == lbops.KindNLB {
		freeform, defined = annotations.OCINLBInitialFreeformTags, annotations.OCINLBInitialDefinedTags
		// The deprecated names count when the current ones are not set.
		if !freeform.IsSet(svc) {
			freeform = annotations.OCINLBFreeformTags
		}
		if !defined.IsSet(svc) {
			defined = annotations.OCINLBDefinedTags
		}
	}
	if v, err := jsonTags[map[string]string](svc, freeform); errs.Check(err) {
		s.InitialFreeformTags = v
	}
	if v, err := jsonTags[map[string]map[string]interface{}](svc, defined); errs.Check(err) {
		s.InitialDefinedTags = v
	}

	if s.Kind == lbops.KindLB {
		if v, err := annotations.OCILBPolicy.FromService(svc); errs.Check(err) {
			s.Policy = v
		}
		if annotations.OCINLBAssignedPrivateIPv4.IsSet(svc) {
			errs = append(errs, annotations.OCINLBAssignedPrivateIPv4.Invalid(svc.Annotations[string(annotations.OCINLBAssignedPrivateIPv4)],
				"applies to a network load balancer only; set %s: nlb", annotations.OCILoadBalancerType))
		}
		return errs
	}
	if v, err := annotations.OCINLBAssignedPrivateIPv4.StringFromService(svc); errs.Check(err) {
		if a, err := netip.ParseAddr(v); err != nil || !a.Is4() {
			errs = append(errs, annotations.OCINLBAssignedPrivateIPv4.Invalid(v, "must be an IPv4 address in the network load balancer's subnet"))
		} else {
			s.AssignedPrivateIPv4 = a.String()
		}
	}
	return errs
}

// ingressIPMode reads oci.oraclecloud.com/ingress-ip-mode.
func ingressIPMode(svc *corev1.Service) (corev1.LoadBalancerIPMode, error) {
	v, err := annotations.OCIIngressIPMode.FromService(svc)
	return corev1.LoadBalancerIPMode(v), err
}

// jsonTags parses a tags annotation; an empty value is no tags, as
// upstream.
func jsonTags[T any](svc *corev1.Service, n annotations.Name) (T, error) {
	var tags T
	v, err := n.StringFromService(svc)
	if err != nil || v == "" {
		return tags, err
	}
	if err := json.Unmarshal([]byte(v), &tags); err != nil {
		return tags, n.Invalid(v, "must be a JSON object such as %s: %v", map[bool]string{true: `{"team": "web"}`, false: `{"Operations": {"CostCenter": "42"}}`}[isFreeform(n)], err)
	}
	return tags, nil
}

func isFreeform(n annotations.Name) bool {
	switch n {
	case annotations.OCIInitialFreeformTags, annotations.OCINLBInitialFreeformTags, annotations.OCINLBFreeformTags:
		return true
	}
	return false
}
