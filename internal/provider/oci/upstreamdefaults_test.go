package oci

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/oci/config"
	"github.com/ccmkit/ccm/internal/oci/lbops"
)

// defaults: upstream makes each default the public OCI CCM's; ccmkit's
// stay where it is not set, and what a Service or the config says wins in
// both.
func TestUpstreamDefaults(t *testing.T) {
	type want struct {
		interval, timeout time.Duration
		mode              string
		publishPrivate    bool
		preserveSource    bool
		name              string
	}
	nlb := map[string]string{annotations.OCILoadBalancerType.String(): "nlb"}
	local := func(s *corev1.Service) { s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal }
	for _, tc := range []struct {
		name     string
		upstream bool
		cfg      config.LoadBalancerConfig
		ann      map[string]string
		edit     func(*corev1.Service)
		want     want
	}{
		{name: "ccmkit LB", want: want{interval: 5 * time.Second, timeout: 2 * time.Second, mode: "None", name: "1234-uid"}},
		{name: "upstream LB", upstream: true, want: want{interval: 10 * time.Second, timeout: 3 * time.Second, mode: "All", name: "1234-uid"}},
		{name: "upstream LB with a prefix", upstream: true, cfg: config.LoadBalancerConfig{NamePrefix: "oke"},
			want: want{interval: 10 * time.Second, timeout: 3 * time.Second, mode: "All", name: "oke-1234-uid"}},
		{name: "upstream LB, the config's mode", upstream: true, cfg: config.LoadBalancerConfig{SecurityListManagementMode: "Frontend"},
			want: want{interval: 10 * time.Second, timeout: 3 * time.Second, mode: "Frontend", name: "1234-uid"}},
		{name: "upstream LB, annotations win", upstream: true, ann: map[string]string{
			annotations.OCILBHealthCheckInterval.String(): "20000", annotations.HealthCheckTimeout.String(): "4s",
			annotations.OCILBSecurityListManagementMode.String(): "None"},
			want: want{interval: 20 * time.Second, timeout: 4 * time.Second, mode: "None", name: "1234-uid"}},
		{name: "ccmkit NLB", ann: nlb, edit: local, want: want{interval: 5 * time.Second, timeout: 2 * time.Second, mode: "None", name: "1234-uid"}},
		{name: "upstream NLB, Cluster", upstream: true, ann: nlb,
			want: want{interval: 10 * time.Second, timeout: 3 * time.Second, mode: "None", publishPrivate: true, name: "default/web/1234-uid"}},
		{name: "upstream NLB, Local", upstream: true, ann: nlb, edit: local,
			want: want{interval: 10 * time.Second, timeout: 3 * time.Second, mode: "None", publishPrivate: true, preserveSource: true, name: "default/web/1234-uid"}},
		{name: "upstream NLB, annotations win", upstream: true, edit: local, ann: map[string]string{annotations.OCILoadBalancerType.String(): "nlb",
			annotations.OCINLBIsPreserveSource.String(): "false", annotations.OCINLBExternalIPOnly.String(): "true"},
			want: want{interval: 10 * time.Second, timeout: 3 * time.Second, mode: "None", name: "default/web/1234-uid"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Subnet1 = testSubnet
			tr := &ociTranslator{cfg: cfg, upstream: tc.upstream, naming: lbops.Naming{Prefix: cfg.NamePrefix, UpstreamNLB: tc.upstream}}
			svc := lbService(tc.ann)
			if tc.edit != nil {
				tc.edit(svc)
			}
			d, _, err := tr.Desired("k", svc, []*corev1.Node{lbNode("a", "10.0.0.1", true)})
			if err != nil {
				t.Fatal(err)
			}
			got := want{interval: d.HealthCheck.Interval, timeout: d.HealthCheck.Timeout, mode: d.SecurityListMode,
				publishPrivate: d.PublishPrivate, preserveSource: d.PreserveSource, name: d.Name}
			if got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
			if n := tr.Name("k", svc); n != tc.want.name {
				t.Errorf("Name = %q, want %q", n, tc.want.name)
			}
			// Ref (find and delete) agrees on what it needs (a mode
			// annotation of None leaves it the default's, so that the rules
			// written before are removed).
			ref := tr.Ref(svc)
			_, modeSet := tc.ann[annotations.OCILBSecurityListManagementMode.String()]
			if (!modeSet && ref.SecurityListMode != d.SecurityListMode) || ref.PublishPrivate != d.PublishPrivate {
				t.Errorf("Ref mode %s, publish private %v; Desired %s, %v", ref.SecurityListMode, ref.PublishPrivate, d.SecurityListMode, d.PublishPrivate)
			}
		})
	}
}

// A Service that names no shape keeps the shape its load balancer has.
func TestShapeFromDefault(t *testing.T) {
	tr := &ociTranslator{cfg: config.LoadBalancerConfig{Subnet1: testSubnet}}
	for ann, want := range map[string]bool{"": true, string(annotations.OCILBShape): false, annotations.OCILBShapeFlexMax.String(): false} {
		a := map[string]string{}
		if ann != "" {
			a[ann] = map[string]string{string(annotations.OCILBShape): "flexible", annotations.OCILBShapeFlexMax.String(): "200"}[ann]
		}
		d, _, err := tr.Desired("k", lbService(a), nil)
		if err != nil {
			t.Fatal(err)
		}
		if d.ShapeFromDefault != want {
			t.Errorf("annotation %q: ShapeFromDefault = %v, want %v", ann, d.ShapeFromDefault, want)
		}
	}
}
