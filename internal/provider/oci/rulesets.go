package oci

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/lb/lbkit"
	"github.com/ccmkit/ccm/internal/oci/lbops"
)

// EventReasonRuleSetsNotOnNLB is the reason of the Warning Event on a
// Service whose Network Load Balancer carries the rule sets annotation: rule
// sets are a Load Balancer feature, so it is ignored (nothing is deleted).
const EventReasonRuleSetsNotOnNLB = "RuleSetsNotOnNetworkLoadBalancer"

// readRuleSets reads oci-load-balancer-rule-sets into s.RuleSets (s.Kind is
// set; issue 14 item 6). A bad value is an error naming the annotation,
// reported with the Service's other problems before anything is written.
func readRuleSets(svc *corev1.Service, s *lbops.Settings, warnings *[]lbkit.Warning) error {
	v, err := annotations.OCILBRuleSets.StringFromService(svc)
	if errors.Is(err, annotations.ErrNotSet) {
		return nil
	}
	if err != nil {
		return err
	}
	if s.Kind == lbops.KindNLB {
		*warnings = append(*warnings, lbkit.Warning{Reason: EventReasonRuleSetsNotOnNLB, Message: fmt.Sprintf(
			"%s applies to the OCI Load Balancer only; the network load balancer has no rule sets, so it is ignored", annotations.OCILBRuleSets)})
		return nil
	}
	rs, err := lbops.ParseRuleSets(v)
	if err != nil {
		return annotations.OCILBRuleSets.Invalid(v, "%v", err)
	}
	s.RuleSets = rs
	return nil
}
