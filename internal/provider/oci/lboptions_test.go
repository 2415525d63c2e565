package oci

import (
	"context"
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/oci/lbops"
)

func withLBIP(svc *corev1.Service, ip string) *corev1.Service {
	svc.Spec.LoadBalancerIP = ip
	return svc
}

func TestLBOptions(t *testing.T) {
	nlb := annotations.OCILoadBalancerType.String()
	tests := []struct {
		name  string
		svc   *corev1.Service
		check func(t *testing.T, d *lbops.Desired)
	}{
		{name: "defaults: nothing set", svc: lbService(nil), check: func(t *testing.T, d *lbops.Desired) {
			if d.LoadBalancerIP != "" || d.IngressIPMode != "" || d.InitialFreeformTags != nil || d.InitialDefinedTags != nil ||
				d.AssignedPrivateIPv4 != "" || d.Policy != "ROUND_ROBIN" {
				t.Errorf("settings = %+v", d.Settings)
			}
		}},
		{name: "reserved IP", svc: withLBIP(lbService(nil), "203.0.113.5"), check: func(t *testing.T, d *lbops.Desired) {
			if d.LoadBalancerIP != "203.0.113.5" {
				t.Errorf("LoadBalancerIP = %q", d.LoadBalancerIP)
			}
		}},
		{name: "policy, any case", svc: lbService(map[string]string{annotations.OCILBPolicy.String(): "least_connections"}),
			check: func(t *testing.T, d *lbops.Desired) {
				if d.Policy != "LEAST_CONNECTIONS" {
					t.Errorf("policy = %q", d.Policy)
				}
			}},
		{name: "policy beats client IP affinity", svc: func() *corev1.Service {
			s := lbService(map[string]string{annotations.OCILBPolicy.String(): "ROUND_ROBIN"})
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			return s
		}(), check: func(t *testing.T, d *lbops.Desired) {
			if d.Policy != "ROUND_ROBIN" {
				t.Errorf("policy = %q", d.Policy)
			}
		}},
		{name: "lb policy ignored on nlb, as upstream", svc: lbService(map[string]string{nlb: "nlb", annotations.OCILBPolicy.String(): "IP_HASH"}),
			check: func(t *testing.T, d *lbops.Desired) {
				if d.Policy != "FIVE_TUPLE" {
					t.Errorf("policy = %q", d.Policy)
				}
			}},
		{name: "lb tags and ip mode", svc: lbService(map[string]string{
			string(annotations.OCIInitialFreeformTags): `{"team":"web"}`,
			string(annotations.OCIInitialDefinedTags):  `{"Ops":{"CostCenter":"42"}}`,
			annotations.OCIIngressIPMode.String():      "proxy",
		}), check: func(t *testing.T, d *lbops.Desired) {
			if !maps.Equal(d.InitialFreeformTags, map[string]string{"team": "web"}) || d.InitialDefinedTags["Ops"]["CostCenter"] != "42" ||
				d.IngressIPMode != corev1.LoadBalancerIPModeProxy {
				t.Errorf("settings = %+v", d.Settings)
			}
		}},
		{name: "nlb reads its own tag names, the deprecated ones as fallback", svc: lbService(map[string]string{nlb: "nlb",
			string(annotations.OCIInitialFreeformTags):    `{"lb":"ignored"}`,
			string(annotations.OCINLBFreeformTags):        `{"old":"name"}`,
			string(annotations.OCINLBInitialDefinedTags):  `{"Ops":{"a":"b"}}`,
			string(annotations.OCINLBDefinedTags):         `{"Old":{"x":"y"}}`,
			string(annotations.OCINLBAssignedPrivateIPv4): "10.0.100.20",
			annotations.OCIIngressIPMode.String():         "VIP",
		}), check: func(t *testing.T, d *lbops.Desired) {
			if !maps.Equal(d.InitialFreeformTags, map[string]string{"old": "name"}) || len(d.InitialDefinedTags) != 1 ||
				d.InitialDefinedTags["Ops"]["a"] != "b" || d.AssignedPrivateIPv4 != "10.0.100.20" || d.IngressIPMode != corev1.LoadBalancerIPModeVIP {
				t.Errorf("settings = %+v", d.Settings)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lb, f := testLB(lbCfg)
			if _, err := lb.EnsureLoadBalancer(context.Background(), "k", tt.svc, []*corev1.Node{lbNode("a", "10.0.0.1", true)}); err != nil {
				t.Fatal(err)
			}
			tt.check(t, f.ensured[0])
		})
	}
}

func TestLBOptionsRefused(t *testing.T) {
	internal := withLBIP(lbService(map[string]string{annotations.OCILBInternal.String(): "true"}), "203.0.113.5")
	tests := []struct {
		name string
		svc  *corev1.Service
		want []string
	}{
		{name: "everything wrong", svc: withLBIP(lbService(map[string]string{
			annotations.OCILBPolicy.String():              "RANDOM",
			string(annotations.OCIInitialFreeformTags):    `{"a":`,
			string(annotations.OCIInitialDefinedTags):     `{"a":"flat"}`,
			annotations.OCIIngressIPMode.String():         "direct",
			string(annotations.OCINLBAssignedPrivateIPv4): "10.0.100.20",
		}), "not-an-ip"), want: []string{`spec.loadBalancerIP "not-an-ip"`, "loadbalancer-policy", "initial-freeform-tags-override",
			"initial-defined-tags-override", "ingress-ip-mode", "assigned-private-ipv4: invalid value \"10.0.100.20\": applies to a network load balancer only"}},
		{name: "reserved IP on an internal load balancer", svc: internal, want: []string{"spec.loadBalancerIP 203.0.113.5: a private (internal) load balancer cannot take a reserved public IP"}},
		{name: "IPv6 loadBalancerIP", svc: withLBIP(lbService(nil), "2001:db8::1"), want: []string{"must be the IPv4 address of a reserved public IP"}},
		{name: "nlb private address not IPv4", svc: lbService(map[string]string{annotations.OCILoadBalancerType.String(): "nlb",
			string(annotations.OCINLBAssignedPrivateIPv4): "10.0.100"}), want: []string{"assigned-private-ipv4", "must be an IPv4 address"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lb, f := testLB(lbCfg)
			_, err := lb.EnsureLoadBalancer(context.Background(), "k", tt.svc, []*corev1.Node{lbNode("a", "10.0.0.1", true)})
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
			if len(f.ensured) != 0 {
				t.Error("the operations layer was called for a bad Service")
			}
		})
	}
}
