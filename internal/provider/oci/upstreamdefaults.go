package oci

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/internal/oci/config"
	"github.com/ccmkit/ccm/internal/oci/lbops"
)

// The public OCI cloud-controller-manager's defaults (oracle/
// oci-cloud-controller-manager v1.35, pkg/cloudprovider/providers/oci),
// which defaults: upstream makes ours, so that taking its load balancers
// over writes nothing the user did not ask for (docs/migration.md has the
// table). The ones equal to ours need nothing here: the health check's
// protocol, port and path (HTTP /healthz on 10256, or on the
// healthCheckNodePort with externalTrafficPolicy Local), its 3 retries,
// the policies (ROUND_ROBIN, FIVE_TUPLE), the listener and backend set
// names and the flexible shape's bandwidth when the Service names it.
const (
	// upstreamHealthCheckInterval and upstreamHealthCheckTimeout: its
	// getHealthCheckInterval (10000 ms) and getHealthCheckTimeout (3000 ms)
	// in load_balancer_spec.go.
	upstreamHealthCheckInterval = 10 * time.Second
	upstreamHealthCheckTimeout  = 3 * time.Second
)

// upstreamHealthCheck sets the public CCM's interval and timeout where
// neither our neutral annotations nor the OCI ones set them (the OCI ones
// are applied after, by hcOverrides).
func upstreamHealthCheck(svc *corev1.Service, hc *lbspec.HealthCheck) {
	if !annotations.HealthCheckInterval.IsSet(svc) {
		hc.Interval = upstreamHealthCheckInterval
	}
	if !annotations.HealthCheckTimeout.IsSet(svc) {
		hc.Timeout = upstreamHealthCheckTimeout
	}
}

// defaultSecurityListMode is the security list mode of a Service without
// the annotation: the config's, when it chooses one; else None, or with
// defaults: upstream the public CCM's: All for a Load Balancer, None for a
// Network Load Balancer (its getSecurityListManagementMode, whose answer
// is never empty, so that v1.35 never falls back on its config's mode).
func (t *ociTranslator) defaultSecurityListMode(k lbops.Kind) string {
	if !t.upstream || t.cfg.SecurityListModeSet() {
		return t.cfg.SecurityListMode()
	}
	if k == lbops.KindNLB {
		return config.SecurityListModeNone
	}
	return config.SecurityListModeAll
}

// serviceNodePorts are the Service's NodePorts and healthCheckNodePort,
// ports no other Service has: a security list rule of the public OCI CCM
// on one of them is this Service's (lbops/seclist.go).
func serviceNodePorts(svc *corev1.Service) []int {
	var out []int
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			out = append(out, int(p.NodePort))
		}
	}
	if svc.Spec.HealthCheckNodePort != 0 && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal {
		out = append(out, int(svc.Spec.HealthCheckNodePort))
	}
	return out
}
