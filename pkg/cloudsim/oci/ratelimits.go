package oci

import "github.com/ccmkit/ccm/pkg/cloudsim/core"

// NodeReadRateLimit is the per-operation request rate cloudsim allows the
// node-side reads (NodeReadActions) before answering 429 TooManyRequests.
//
// OCI documents the answer, not the rate: HTTP 429 with code
// TooManyRequests when a caller sends too many requests in too short a
// time (API errors,
// https://docs.oracle.com/iaas/Content/API/References/apierrors.htm). It
// publishes no requests-per-second figure for the Compute or
// VirtualNetwork operations, and the SDK's request models document none. The number is cloudsim's choice: the rate the
// public OCI cloud-controller-manager's client limiter allows by default
// (20 per second, its rateLimiter.rateLimitQPSRead), i.e. what that CCM's
// authors consider safe to send. The burst is the rate (core.Allow).
const NodeReadRateLimit = 20

// NodeReadActions are the reads the node controllers make: instance and
// VNIC lookups and the batched address listings. Other operations keep no
// limit unless one is set (cloudsim.Options.RateLimits), so that existing
// load-balancer scenarios are unaffected.
var NodeReadActions = []string{
	"GetInstance", "ListInstances", "ListVnicAttachments", "GetVnic",
	"GetSubnet", "ListPrivateIps", "ListPublicIps", "ListIpv6s",
}

// registerRateLimits sets the node reads' default limits on c; options and
// the admin API may still override them.
func registerRateLimits(c *core.Core) {
	for _, op := range NodeReadActions {
		c.SetDefaultRateLimit(ActionPrefix+op, NodeReadRateLimit)
	}
}
