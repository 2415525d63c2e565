package oci

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/lb/lbdrift"
	"github.com/ccmkit/ccm/internal/lb/lbkit"
	"github.com/ccmkit/ccm/internal/oci/config"
	"github.com/ccmkit/ccm/internal/oci/lbops"
)

// fakeOps records what the interface layer asks of the operations layer.
type fakeOps struct {
	ensured, updated, deleted []*lbops.Desired
}

func (f *fakeOps) Get(context.Context, *lbops.Desired) (*corev1.LoadBalancerStatus, bool, error) {
	return nil, false, nil
}
func (f *fakeOps) Ensure(_ context.Context, d *lbops.Desired) (*corev1.LoadBalancerStatus, error) {
	f.ensured = append(f.ensured, d)
	return &corev1.LoadBalancerStatus{}, nil
}
func (f *fakeOps) Update(_ context.Context, d *lbops.Desired) error {
	f.updated = append(f.updated, d)
	return nil
}
func (f *fakeOps) Delete(_ context.Context, d *lbops.Desired) error {
	f.deleted = append(f.deleted, d)
	return nil
}
func (f *fakeOps) DriftAll(context.Context, []*lbops.Desired) map[types.UID]lbdrift.Result {
	return nil
}

func lbService(ann map[string]string, ports ...corev1.ServicePort) *corev1.Service {
	if len(ports) == 0 {
		ports = []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080}}
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "1234-uid", Annotations: ann},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: ports},
	}
}

func lbNode(name, ip string, initialized bool) *corev1.Node {
	n := node(name, internalIP(ip))
	if initialized {
		n.Spec.ProviderID = "oci://" + instanceOCID(len(name))
	}
	return n
}

func testLB(cfg config.LoadBalancerConfig) (*loadBalancers, *fakeOps) {
	f := &fakeOps{}
	return withOps(cfg, f), f
}

// withOps is the provider's pipeline around ops instead of lbops.
func withOps(cfg config.LoadBalancerConfig, ops lbkit.Ops[*lbops.Desired]) *loadBalancers {
	return lbkit.New[*lbops.Desired](&ociTranslator{cfg: cfg}, func(lbkit.Hooks) lbkit.Ops[*lbops.Desired] { return ops },
		lbkit.Config{Provider: ProviderName})
}

var lbCfg = config.LoadBalancerConfig{Subnet1: testSubnet, Subnet2: otherSubnet}

func TestEnsureLoadBalancerDefaults(t *testing.T) {
	lb, f := testLB(lbCfg)
	nodes := []*corev1.Node{lbNode("a", "10.0.0.1", true), lbNode("bb", "10.0.0.2", true), lbNode("ccc", "10.0.0.3", false)}
	if _, err := lb.EnsureLoadBalancer(context.Background(), "k", lbService(nil), nodes); err != nil {
		t.Fatal(err)
	}
	d := f.ensured[0]
	if d.Kind != lbops.KindLB || d.Name != "1234-uid" || d.Shape != "flexible" || d.FlexMinMbps != 10 || d.FlexMaxMbps != 100 ||
		d.ListenerProtocol != "TCP" || d.Policy != "ROUND_ROBIN" || d.SecurityListMode != config.SecurityListModeNone || d.Internal {
		t.Errorf("desired = %+v", d)
	}
	if len(d.Subnets) != 2 || d.Subnets[0] != testSubnet || d.Subnets[1] != otherSubnet {
		t.Errorf("subnets = %v", d.Subnets)
	}
	if len(d.Backends) != 2 || d.Backends[0].Address != "10.0.0.1" || d.Backends[1].Address != "10.0.0.2" {
		t.Errorf("backends = %+v (an uninitialized node is not a backend)", d.Backends)
	}
	if hc := d.HealthCheck; hc.Protocol != "HTTP" || hc.Port != 10256 || hc.Path != "/healthz" || hc.UnhealthyThreshold != 3 || hc.Interval != 5*time.Second {
		t.Errorf("health check = %+v", hc)
	}
	if lb.GetLoadBalancerName(context.Background(), "k", lbService(nil)) != "1234-uid" {
		t.Error("name is not the UID")
	}
}

func TestEnsureLoadBalancerAnnotations(t *testing.T) {
	tests := []struct {
		name  string
		svc   *corev1.Service
		check func(t *testing.T, d *lbops.Desired)
	}{
		{name: "nlb", svc: lbService(map[string]string{
			annotations.OCILoadBalancerType.String(): "nlb", string(annotations.OCINLBSubnet): otherSubnet,
			annotations.OCINLBIsPreserveSource.String(): "true", annotations.OCINLBHealthCheckInterval.String(): "10000",
		}, corev1.ServicePort{Protocol: corev1.ProtocolUDP, Port: 53, NodePort: 30053}), check: func(t *testing.T, d *lbops.Desired) {
			if d.Kind != lbops.KindNLB || d.Subnets[0] != otherSubnet || len(d.Subnets) != 1 || d.Policy != "FIVE_TUPLE" || !d.PreserveSource ||
				d.HealthCheck.Interval != 10*time.Second {
				t.Errorf("desired = %+v", d)
			}
		}},
		{name: "internal uses subnet1 only", svc: lbService(map[string]string{annotations.OCILBInternal.String(): "true"}),
			check: func(t *testing.T, d *lbops.Desired) {
				if !d.Internal || len(d.Subnets) != 1 {
					t.Errorf("internal=%v subnets=%v", d.Internal, d.Subnets)
				}
			}},
		{name: "shape and listener", svc: lbService(map[string]string{
			annotations.OCILBShapeFlexMin.String(): "50", annotations.OCILBShapeFlexMax.String(): "400",
			annotations.OCILBBackendProtocol.String(): "http", annotations.OCILBConnectionIdleTimeout.String(): "120",
			annotations.OCILBHealthCheckRetries.String(): "5", annotations.OCILBHealthCheckTimeout.String(): "3000",
			annotations.OCILBSecurityListManagementMode.String(): "frontend",
		}), check: func(t *testing.T, d *lbops.Desired) {
			if d.FlexMinMbps != 50 || d.FlexMaxMbps != 400 || d.ListenerProtocol != "HTTP" || d.IdleTimeout != 120*time.Second ||
				d.HealthCheck.UnhealthyThreshold != 5 || d.HealthCheck.Timeout != 3*time.Second || d.SecurityListMode != "Frontend" {
				t.Errorf("desired = %+v", d)
			}
		}},
		{name: "nlb external-ip-only false", svc: lbService(map[string]string{
			annotations.OCILoadBalancerType.String(): "nlb", annotations.OCINLBExternalIPOnly.String(): "false"}),
			check: func(t *testing.T, d *lbops.Desired) {
				if !d.PublishPrivate {
					t.Errorf("desired = %+v", d)
				}
			}},
		{name: "nlb publishes public addresses only by default", svc: lbService(map[string]string{annotations.OCILoadBalancerType.String(): "nlb"}),
			check: func(t *testing.T, d *lbops.Desired) {
				if d.PublishPrivate {
					t.Errorf("desired = %+v", d)
				}
			}},
		{name: "local policy", svc: func() *corev1.Service {
			s := lbService(nil)
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
			s.Spec.HealthCheckNodePort = 32100
			return s
		}(), check: func(t *testing.T, d *lbops.Desired) {
			if hc := d.HealthCheck; hc.Protocol != "HTTP" || hc.Port != 32100 || hc.Path != "/healthz" {
				t.Errorf("health check = %+v", hc)
			}
		}},
		{name: "client IP affinity", svc: func() *corev1.Service {
			s := lbService(map[string]string{annotations.OCILoadBalancerType.String(): "nlb"})
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			return s
		}(), check: func(t *testing.T, d *lbops.Desired) {
			if d.Policy != "TWO_TUPLE" {
				t.Errorf("policy = %q", d.Policy)
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

// A fixed shape (deprecated since May 2023) is created as flexible with
// minimum = maximum = its bandwidth, with a Warning Event saying so.
func TestFixedShapeIsFlexible(t *testing.T) {
	for _, tt := range []struct {
		shape string
		mbps  int
	}{{"10Mbps", 10}, {"100mbps", 100}, {"400Mbps", 400}, {"8000Mbps", 8000}} {
		t.Run(tt.shape, func(t *testing.T) {
			lb, f := testLB(lbCfg)
			events := record.NewFakeRecorder(10)
			lb.UseRecorder(events)
			svc := lbService(map[string]string{string(annotations.OCILBShape): tt.shape, annotations.OCILBShapeFlexMax.String(): "800"})
			if _, err := lb.EnsureLoadBalancer(context.Background(), "k", svc, []*corev1.Node{lbNode("a", "10.0.0.1", true)}); err != nil {
				t.Fatal(err)
			}
			d := f.ensured[0]
			if d.Shape != lbops.ShapeFlexible || d.FlexMinMbps != tt.mbps || d.FlexMaxMbps != tt.mbps || !strings.EqualFold(d.FixedShape, tt.shape) {
				t.Errorf("desired shape %s %d-%d (fixed %q)", d.Shape, d.FlexMinMbps, d.FlexMaxMbps, d.FixedShape)
			}
			select {
			case e := <-events.Events:
				want := fmt.Sprintf("Warning %s %s %s is a fixed shape", EventReasonFixedShape, annotations.OCILBShape, d.FixedShape)
				if !strings.HasPrefix(e, want) || !strings.Contains(e, fmt.Sprintf("flexible with %d-%d Mbps", tt.mbps, tt.mbps)) ||
					!strings.Contains(e, "are ignored") {
					t.Errorf("event %q, want %q...", e, want)
				}
			default:
				t.Error("no Warning Event")
			}
		})
	}
	lb, _ := testLB(lbCfg)
	events := record.NewFakeRecorder(10)
	lb.UseRecorder(events)
	if _, err := lb.EnsureLoadBalancer(context.Background(), "k", lbService(nil), []*corev1.Node{lbNode("a", "10.0.0.1", true)}); err != nil {
		t.Fatal(err)
	}
	if len(events.Events) != 0 {
		t.Errorf("an event for a flexible shape: %q", <-events.Events)
	}
}

// Every problem is reported at once, before any call.
func TestEnsureLoadBalancerRejectsBadServices(t *testing.T) {
	tests := []struct {
		name string
		cfg  config.LoadBalancerConfig
		svc  *corev1.Service
		want []string
	}{
		{name: "everything wrong", cfg: lbCfg, svc: lbService(map[string]string{
			string(annotations.OCILBShape):                  "huge",
			annotations.OCILBShapeFlexMin.String():          "500",
			annotations.OCILBShapeFlexMax.String():          "100",
			string(annotations.OCILBSubnet1):                "subnet-1",
			annotations.OCILBHealthCheckInterval.String():   "soon",
			annotations.OCILBConnectionIdleTimeout.String(): "0",
			string(annotations.HealthCheckPath):             "no-slash",
		}, corev1.ServicePort{Protocol: corev1.ProtocolUDP, Port: 53, NodePort: 30053}),
			want: []string{"oci-load-balancer-shape", "oci-load-balancer-shape-flex-max", "oci-load-balancer-subnet1",
				"oci-load-balancer-health-check-interval", "oci-load-balancer-connection-idle-timeout", "health-check-path",
				"port 53/UDP: the OCI Load Balancer carries TCP only"}},
		{name: "no subnet", svc: lbService(nil), want: []string{"no subnet for the load balancer: set loadBalancer.subnet1"}},
		{name: "no subnet nlb", svc: lbService(map[string]string{annotations.OCILoadBalancerType.String(): "nlb"}),
			want: []string{"no subnet for the network load balancer"}},
		{name: "bad type", cfg: lbCfg, svc: lbService(map[string]string{annotations.OCILoadBalancerType.String(): "alb"}),
			want: []string{`oci.oraclecloud.com/load-balancer-type: invalid value "alb"`}},
		{name: "health checks off", cfg: lbCfg, svc: lbService(map[string]string{annotations.HealthCheckEnabled.String(): "false"}),
			want: []string{"always have a health check"}},
		{name: "timeout not below interval", cfg: lbCfg, svc: lbService(map[string]string{
			annotations.OCILBHealthCheckInterval.String(): "2000", annotations.OCILBHealthCheckTimeout.String(): "3000"}),
			want: []string{"must be shorter than its interval"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lb, f := testLB(tt.cfg)
			_, err := lb.EnsureLoadBalancer(context.Background(), "k", tt.svc, []*corev1.Node{lbNode("a", "10.0.0.1", true)})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
			if len(f.ensured) != 0 {
				t.Error("the operations layer was called for a bad Service")
			}
			if err := lb.UpdateLoadBalancer(context.Background(), "k", tt.svc, nil); err == nil || len(f.updated) != 0 {
				t.Errorf("Update: err = %v, calls = %d", err, len(f.updated))
			}
		})
	}
}

// A Service broken by an edit can still be deleted, and rules written under
// a per-Service security list mode are cleaned up.
func TestEnsureLoadBalancerDeleted(t *testing.T) {
	lb, f := testLB(lbCfg)
	svc := lbService(map[string]string{
		string(annotations.OCILBShape): "huge", annotations.OCILBSecurityListManagementMode.String(): "Frontend",
	})
	if err := lb.EnsureLoadBalancerDeleted(context.Background(), "k", svc); err != nil {
		t.Fatal(err)
	}
	if d := f.deleted[0]; d.Name != "1234-uid" || d.SecurityListMode != "Frontend" {
		t.Errorf("delete desired = %+v", d)
	}
}

func TestOCIAnnotationNames(t *testing.T) {
	for _, n := range []annotations.Name{annotations.OCILBInternal.Name, annotations.OCILBShape, annotations.OCILBShapeFlexMin.Name,
		annotations.OCILBShapeFlexMax.Name, annotations.OCILBSubnet1, annotations.OCILBSubnet2, annotations.OCILBHealthCheckRetries.Name,
		annotations.OCILBHealthCheckInterval.Name, annotations.OCILBHealthCheckTimeout.Name, annotations.OCILBConnectionIdleTimeout.Name,
		annotations.OCILBBackendProtocol.Name, annotations.OCILBSecurityListManagementMode.Name} {
		if !strings.HasPrefix(string(n), "service.beta.kubernetes.io/oci-load-balancer-") {
			t.Errorf("%s: not the public OCI CCM's prefix", n)
		}
	}
	for _, n := range []annotations.Name{annotations.OCINLBInternal.Name, annotations.OCINLBSubnet, annotations.OCINLBHealthCheckRetries.Name,
		annotations.OCINLBHealthCheckInterval.Name, annotations.OCINLBHealthCheckTimeout.Name, annotations.OCINLBBackendPolicy.Name,
		annotations.OCINLBIsPreserveSource.Name, annotations.OCINLBSecurityListManagementMode.Name, annotations.OCINLBExternalIPOnly.Name} {
		if !strings.HasPrefix(string(n), "oci-network-load-balancer.oraclecloud.com/") {
			t.Errorf("%s: not the public OCI CCM's NLB prefix", n)
		}
	}
}

// The OCI enum annotations declare their values in internal/annotations,
// which cannot import the config; they must be the values this package
// maps: the security list modes, and security-rule-management-mode's.
func TestEnumAnnotationValuesAreMapped(t *testing.T) {
	modes := []string{config.SecurityListModeNone, config.SecurityListModeFrontend, config.SecurityListModeAll}
	for _, e := range []annotations.Enum{annotations.OCILBSecurityListManagementMode, annotations.OCINLBSecurityListManagementMode} {
		if fmt.Sprint(e.Values) != fmt.Sprint(modes) {
			t.Errorf("%s: values %v, want the config's %v", e, e.Values, modes)
		}
	}
	values := annotations.OCISecurityRuleManagementMode.Values
	if len(values) != len(ruleModes) {
		t.Errorf("%s: %d values, ruleModes maps %d", annotations.OCISecurityRuleManagementMode, len(values), len(ruleModes))
	}
	for _, v := range values {
		if _, ok := ruleModes[v]; !ok {
			t.Errorf("%s: value %s is not in ruleModes", annotations.OCISecurityRuleManagementMode, v)
		}
	}
}
