package tencent

import (
	"strings"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// DialectName names the dialect in CallInfo and for per-dialect settings.
const DialectName = "tencent"

// DefaultLatency is how long the Tencent Cloud API takes to answer by
// default. Tencent publishes no latency figures for its API 3.0 endpoints;
// these are estimates (cloudsim's choice) in the range seen from clients in
// the same region: tens of milliseconds for a read, about twice that for a
// write, with a tail several times the median.
var DefaultLatency = core.Latency{
	Read:  core.Dist{Median: 40 * time.Millisecond, P99: 200 * time.Millisecond},
	Write: core.Dist{Median: 80 * time.Millisecond, P99: 400 * time.Millisecond},
}

// readPrefixes name the actions that only read, by the API 3.0 naming
// convention (DescribeInstances, InquiryPriceRunInstances, ...).
var readPrefixes = []string{"Describe", "Inquiry", "Get", "Check"}

// callKind tells a read action from a write.
func callKind(action string) core.CallKind {
	for _, p := range readPrefixes {
		if strings.HasPrefix(action, p) {
			return core.Read
		}
	}
	return core.Write
}
