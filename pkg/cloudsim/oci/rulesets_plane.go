package oci

import (
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// planeHeaderRules makes an HTTP listener whose rule sets edit headers a
// layer-7 proxy that makes those edits: the six header rules (add, extend,
// remove, on requests and responses), which the SDK models say "apply only
// to HTTP listeners". Every other rule is stored, not enforced
// (docs/loadbalancers.md#rule-sets-on-oci), and a listener without header
// rules stays at layer 4 (traffic.go). A listener that sends the PROXY
// protocol or speaks TLS to its backends stays at layer 4 too: the data
// plane's layer-7 proxy does neither (cloudsim's limit).
func planeHeaderRules(b *balancer, l loadbalancer.Listener, out *dataplane.Listener) {
	if l.Protocol == nil || *l.Protocol != "HTTP" || out.ProxyProtocol != dataplane.ProxyOff || out.BackendTLS != nil {
		return
	}
	var req, resp []dataplane.HeaderEdit
	for _, name := range l.RuleSetNames { // applied in the listener's order
		for _, r := range b.ruleSets[name].Items {
			switch r := r.(type) {
			case loadbalancer.AddHttpRequestHeaderRule:
				req = append(req, dataplane.HeaderEdit{Op: dataplane.HeaderSet, Name: *r.Header, Value: *r.Value})
			case loadbalancer.ExtendHttpRequestHeaderValueRule:
				req = append(req, dataplane.HeaderEdit{Op: dataplane.HeaderExtend, Name: *r.Header, Prefix: deref(r.Prefix), Suffix: deref(r.Suffix)})
			case loadbalancer.RemoveHttpRequestHeaderRule:
				req = append(req, dataplane.HeaderEdit{Op: dataplane.HeaderRemove, Name: *r.Header})
			case loadbalancer.AddHttpResponseHeaderRule:
				resp = append(resp, dataplane.HeaderEdit{Op: dataplane.HeaderSet, Name: *r.Header, Value: *r.Value})
			case loadbalancer.ExtendHttpResponseHeaderValueRule:
				resp = append(resp, dataplane.HeaderEdit{Op: dataplane.HeaderExtend, Name: *r.Header, Prefix: deref(r.Prefix), Suffix: deref(r.Suffix)})
			case loadbalancer.RemoveHttpResponseHeaderRule:
				resp = append(resp, dataplane.HeaderEdit{Op: dataplane.HeaderRemove, Name: *r.Header})
			}
		}
	}
	if len(req) == 0 && len(resp) == 0 {
		return
	}
	// One rule for every host and path: the listener's default backend set.
	out.HTTP = &dataplane.HTTP{
		Rules:          []dataplane.HTTPRule{{ID: *l.Name, Domain: "default", URL: "/", Default: true, Targets: out.Targets}},
		RequestHeaders: req, ResponseHeaders: resp,
	}
}
