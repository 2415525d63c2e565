package oci

import (
	"reflect"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// TestPlaneHeaderRules: an HTTP listener's header rules become the data
// plane's header edits, in the listener's rule set order; other rules,
// TCP listeners and listeners with the PROXY protocol stay at layer 4.
func TestPlaneHeaderRules(t *testing.T) {
	b := &balancer{ruleSets: map[string]loadbalancer.RuleSet{
		"env": {Items: []loadbalancer.Rule{
			loadbalancer.AddHttpRequestHeaderRule{Header: common.String("x-env"), Value: common.String("prod")},
			loadbalancer.RemoveHttpResponseHeaderRule{Header: common.String("server")},
		}},
		"ext": {Items: []loadbalancer.Rule{
			loadbalancer.ExtendHttpRequestHeaderValueRule{Header: common.String("x-env"), Suffix: common.String("-1")},
			loadbalancer.AddHttpResponseHeaderRule{Header: common.String("x-lb"), Value: common.String("oci")},
		}},
		"acl": {Items: []loadbalancer.Rule{loadbalancer.AllowRule{Conditions: []loadbalancer.RuleCondition{
			loadbalancer.SourceIpAddressCondition{AttributeValue: common.String("10.0.0.0/8")}}}}},
	}}
	targets := []dataplane.Target{{ID: "n1"}}
	tests := []struct {
		name     string
		protocol string
		sets     []string
		proxy    int
		want     *dataplane.HTTP
	}{
		{"HTTP with header rules", "HTTP", []string{"ext", "env", "acl"}, dataplane.ProxyOff, &dataplane.HTTP{
			Rules: []dataplane.HTTPRule{{ID: "TCP-80", Domain: "default", URL: "/", Default: true, Targets: targets}},
			RequestHeaders: []dataplane.HeaderEdit{{Op: dataplane.HeaderExtend, Name: "x-env", Suffix: "-1"},
				{Op: dataplane.HeaderSet, Name: "x-env", Value: "prod"}},
			ResponseHeaders: []dataplane.HeaderEdit{{Op: dataplane.HeaderSet, Name: "x-lb", Value: "oci"},
				{Op: dataplane.HeaderRemove, Name: "server"}},
		}},
		{"HTTP with no header rule", "HTTP", []string{"acl"}, dataplane.ProxyOff, nil},
		{"HTTP without rule sets", "HTTP", nil, dataplane.ProxyOff, nil},
		{"TCP", "TCP", []string{"env"}, dataplane.ProxyOff, nil},
		{"HTTP with the PROXY protocol", "HTTP", []string{"env"}, dataplane.ProxyV2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := dataplane.Listener{Targets: targets, ProxyProtocol: tt.proxy}
			l := loadbalancer.Listener{Name: common.String("TCP-80"), Protocol: common.String(tt.protocol), RuleSetNames: tt.sets}
			planeHeaderRules(b, l, &out)
			if !reflect.DeepEqual(out.HTTP, tt.want) {
				t.Errorf("HTTP %+v, want %+v", out.HTTP, tt.want)
			}
		})
	}
}
