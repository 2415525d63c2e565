package oci

import (
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// DialectName names the dialect in CallInfo and for per-dialect settings.
const DialectName = "oci"

// DefaultLatency is how long the OCI API takes to answer by default. OCI
// publishes no latency figures for its control-plane APIs; these are
// estimates (cloudsim's choice): a read in tens of milliseconds, a write
// (which validates, persists and enqueues a work request) a few times
// longer, each with a tail several times the median. The work requests
// themselves run for DefaultWorkRequestLatency on top.
var DefaultLatency = core.Latency{
	Read:  core.Dist{Median: 50 * time.Millisecond, P99: 250 * time.Millisecond},
	Write: core.Dist{Median: 120 * time.Millisecond, P99: 600 * time.Millisecond},
}
