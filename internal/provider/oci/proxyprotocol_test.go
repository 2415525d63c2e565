package oci

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/annotations"
)

// TestProxyProtocolAnnotations: each kind reads its own name; a bad value
// is refused with the Service and the annotation named, before the
// operations layer is called (nothing changes in OCI).
func TestProxyProtocolAnnotations(t *testing.T) {
	lbV, nlbOn := annotations.OCILBConnectionProxyProtocolVersion.String(), annotations.OCINLBIsPpv2Enabled.String()
	typ := annotations.OCILoadBalancerType.String()
	tests := []struct {
		name    string
		ann     map[string]string
		want    int
		wantErr string
	}{
		{name: "lb unset", ann: nil, want: 0},
		{name: "lb v1", ann: map[string]string{lbV: "1"}, want: 1},
		{name: "lb v2", ann: map[string]string{lbV: " 2 "}, want: 2},
		{name: "lb v3", ann: map[string]string{lbV: "3"}, wantErr: `connection-proxy-protocol-version: invalid value "3": must be 1 or 2`},
		{name: "lb not a number", ann: map[string]string{lbV: "v2"}, wantErr: `connection-proxy-protocol-version: invalid value "v2"`},
		{name: "lb ignores the nlb name, as upstream", ann: map[string]string{nlbOn: "true"}, want: 0},
		{name: "nlb on", ann: map[string]string{typ: "nlb", nlbOn: "TRUE"}, want: 2},
		{name: "nlb off", ann: map[string]string{typ: "nlb", nlbOn: "false"}, want: 0},
		{name: "nlb ignores the lb name, as upstream", ann: map[string]string{typ: "nlb", lbV: "1"}, want: 0},
		{name: "nlb not a bool", ann: map[string]string{typ: "nlb", nlbOn: "yes please"}, wantErr: `is-ppv2-enabled: invalid value "yes please": must be true or false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lb, f := testLB(lbCfg)
			svc := lbService(tt.ann)
			_, err := lb.EnsureLoadBalancer(context.Background(), "k", svc, []*corev1.Node{lbNode("a", "10.0.0.1", true)})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), svc.Namespace+"/"+svc.Name) {
					t.Fatalf("error %v, want one naming %s/%s and %q", err, svc.Namespace, svc.Name, tt.wantErr)
				}
				if len(f.ensured) != 0 {
					t.Error("the operations layer was called for a bad Service")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := f.ensured[0].ProxyProtocol; got != tt.want {
				t.Errorf("ProxyProtocol = %d, want %d", got, tt.want)
			}
		})
	}
}
