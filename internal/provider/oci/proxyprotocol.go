package oci

import (
	"errors"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/oci/lbops"
)

// readProxyProtocol reads the PROXY protocol annotation of s.Kind into
// s.ProxyProtocol (issue 14 item 5): the Load Balancer's version (1 or 2),
// the Network Load Balancer's is-ppv2-enabled (version 2). Each kind reads
// only its own name, as the public OCI CCM does. A bad value is an error
// naming the annotation, reported before anything changes.
func readProxyProtocol(svc *corev1.Service, s *lbops.Settings) error {
	if s.Kind == lbops.KindNLB {
		on, err := annotations.OCINLBIsPpv2Enabled.FromService(svc)
		if errors.Is(err, annotations.ErrNotSet) {
			return nil
		}
		if on {
			s.ProxyProtocol = 2
		}
		return err
	}
	// The versions by name rather than the descriptor's "between 1 and 2".
	version := annotations.OCILBConnectionProxyProtocolVersion
	v, err := version.FromServiceIn(svc, 0, 0)
	switch {
	case errors.Is(err, annotations.ErrNotSet):
		return nil
	case err != nil:
		return err
	case v < version.Min || v > version.Max:
		return version.Invalid(svc.Annotations[version.String()], "must be 1 or 2 (the PROXY protocol versions)")
	}
	s.ProxyProtocol = v
	return nil
}
