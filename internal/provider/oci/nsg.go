package oci

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/oci/config"
	"github.com/ccmkit/ccm/internal/oci/lbops"
)

// nsgOCID is the shape of a network security group OCID.
var nsgOCID = config.OCIDPattern("networksecuritygroup")

// ruleModes maps security-rule-management-mode's values (the public OCI
// CCM's) onto our modes: the SL-* ones are the security list modes.
var ruleModes = map[string]string{
	"NSG":         lbops.SecurityRuleNSG,
	"SL-All":      config.SecurityListModeAll,
	"SL-Frontend": config.SecurityListModeFrontend,
	"None":        config.SecurityListModeNone,
}

// readNSGs reads the NSG annotations into s, whose SecurityListMode is
// already set: security-rule-management-mode, when present, overrides it
// (as upstream).
func readNSGs(svc *corev1.Service, s *lbops.Settings) []error {
	var errs annotations.Problems
	if v, err := annotations.OCISecurityRuleManagementMode.FromService(svc); errs.Check(err) {
		s.SecurityListMode = ruleModes[v]
	}
	list := annotations.OCINetworkSecurityGroups
	if s.Kind == lbops.KindNLB {
		list = annotations.OCINLBNetworkSecurityGroups
	}
	limit := lbops.MaxNSGsPerLB
	if s.SecurityListMode == lbops.SecurityRuleNSG {
		limit-- // the managed frontend NSG takes a place
	}
	if ids, err := nsgList(svc, list); errs.Check(err) {
		if len(ids) > limit {
			errs = append(errs, list.Invalid(svc.Annotations[string(list)], "%d network security groups; at most %d (a load balancer is in at most %d, the managed one of mode NSG included)",
				len(ids), limit, lbops.MaxNSGsPerLB))
		} else {
			s.NSGs = ids
		}
	}
	if s.SecurityListMode == lbops.SecurityRuleNSG {
		if ids, err := nsgList(svc, annotations.OCIBackendNetworkSecurityGroup); errs.Check(err) {
			s.BackendNSGs = ids
		}
	}
	return errs
}

// nsgList reads comma-separated NSG OCIDs, without duplicates, in order.
func nsgList(svc *corev1.Service, n annotations.Name) ([]string, error) {
	v, err := n.StringFromService(svc)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, id := range strings.Split(v, ",") {
		id = strings.TrimSpace(id)
		if !nsgOCID.MatchString(id) {
			return nil, n.Invalid(v, "%q is not a network security group OCID (ocid1.networksecuritygroup...)", id)
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}
