package tcapi

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// FallbackQPS is the client-side limit for an action with no documented
// limit and no override: 20 requests/s is the limit Tencent Cloud documents
// for most actions.
const FallbackQPS = 20

// documentedLimit returns the documented requests/second of an action:
// cvm DescribeInstances 40; tke Describe* 50 and other tke actions
// (Create*/Delete*) 20; every clb action 20; anything else FallbackQPS.
func documentedLimit(service, action string) float64 {
	switch service {
	case "cvm":
		if action == "DescribeInstances" {
			return 40
		}
	case "tke":
		if strings.HasPrefix(action, "Describe") {
			return 50
		}
		return 20
	case "clb":
		return 20
	}
	return FallbackQPS
}

// Limits holds per-action overrides of the documented limits, keyed by
// "Action" (any service) or "service.Action" (that service only, which wins).
// A QPS of 0 or less disables client-side pacing for the action.
type Limits map[string]float64

// qps returns the limit for one action of one service.
func (l Limits) qps(service, action string) float64 {
	if q, ok := l[service+"."+action]; ok {
		return q
	}
	if q, ok := l[action]; ok {
		return q
	}
	return documentedLimit(service, action)
}

// EffectiveQPS is the client-side limit of service's action under the
// overrides l (nil: none): the override, else the documented limit.
func EffectiveQPS(l Limits, service, action string) float64 { return l.qps(service, action) }

var limitKeyPattern = regexp.MustCompile(`^([a-z][a-z0-9]*\.)?[A-Z][A-Za-z0-9]*$`)

// ParseLimits reads overrides written as "Action=QPS" or
// "service.Action=QPS", separated by commas, e.g.
// "DescribeInstances=20,clb.CreateListener=10". An empty string means none.
func ParseLimits(s string) (Limits, error) {
	out := Limits{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		key, value, ok := strings.Cut(part, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok || !limitKeyPattern.MatchString(key) {
			return nil, fmt.Errorf("%q: want Action=QPS or service.Action=QPS, e.g. DescribeInstances=40", part)
		}
		qps, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsNaN(qps) || math.IsInf(qps, 0) {
			return nil, fmt.Errorf("%q: QPS must be a number (0 or less disables the limit)", part)
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("%q: %s is set twice", part, key)
		}
		out[key] = qps
	}
	return out, nil
}
