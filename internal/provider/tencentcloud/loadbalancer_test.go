package tencentcloud

import (
	"context"
	"maps"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/lb/lbkit"
	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/internal/tencent/clbops"
)

func lbService(ann map[string]string) *v1.Service {
	return &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cart", UID: "uid-1", Annotations: ann},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer, Ports: []v1.ServicePort{
			{Protocol: v1.ProtocolTCP, Port: 80, NodePort: 30080},
		}},
	}
}

func TestPlacement(t *testing.T) {
	var (
		seedType   = annotations.TencentLBType.String()
		seedSubnet = string(annotations.TencentLBInternalSubnetID)
		tkeSubnet  = string(annotations.TKEInternalSubnetID)
		adopt      = string(annotations.TKEExistedLBID)
		name       = string(annotations.TencentLBName)
		kind       = annotations.TencentLBKind.String()
	)
	tests := []struct {
		name    string
		ann     map[string]string
		want    lbspec.Placement
		wantErr string
	}{
		{"default: public", nil, lbspec.Placement{Name: "k8s-shop-cart"}, ""},
		{"seed private with subnet", map[string]string{seedType: "private", seedSubnet: "subnet-abcd1234"},
			lbspec.Placement{Name: "k8s-shop-cart", Internal: true, SubnetID: "subnet-abcd1234"}, ""},
		{"TKE subnet implies private", map[string]string{tkeSubnet: "subnet-abcd1234"},
			lbspec.Placement{Name: "k8s-shop-cart", Internal: true, SubnetID: "subnet-abcd1234"}, ""},
		{"private without subnet", map[string]string{seedType: "private"}, lbspec.Placement{},
			"a private (internal) CLB needs a subnet: set annotation service.beta.kubernetes.io/tencentcloud-loadbalancer-type-internal-subnet-id"},
		{"private without subnet, adopting", map[string]string{seedType: "private", adopt: "lb-abcd1234"},
			lbspec.Placement{Name: "k8s-shop-cart", Internal: true, AdoptID: "lb-abcd1234"}, ""},
		{"public with TKE subnet", map[string]string{seedType: "public", tkeSubnet: "subnet-abcd1234"}, lbspec.Placement{},
			"is public but service.kubernetes.io/qcloud-loadbalancer-internal-subnetid asks for a private CLB"},
		{"two different subnets", map[string]string{seedSubnet: "subnet-abcd1234", tkeSubnet: "subnet-efgh5678"}, lbspec.Placement{},
			"name different subnets"},
		{"bad type", map[string]string{seedType: "internal"}, lbspec.Placement{},
			`annotation service.beta.kubernetes.io/tencentcloud-loadbalancer-type: invalid value "internal": must be one of public, private`},
		{"bad subnet", map[string]string{seedType: "private", seedSubnet: "default"}, lbspec.Placement{},
			`invalid value "default": must be a subnet id`},
		{"bad adopt id", map[string]string{adopt: "my-lb"}, lbspec.Placement{},
			`annotation service.kubernetes.io/tke-existed-lbid: invalid value "my-lb": must be a CLB id`},
		{"classic", map[string]string{kind: "classic"}, lbspec.Placement{}, "classic CLBs are not supported"},
		{"application", map[string]string{kind: "Application"}, lbspec.Placement{Name: "k8s-shop-cart"}, ""},
		{"name", map[string]string{name: "shop_cart-1"}, lbspec.Placement{Name: "shop_cart-1"}, ""},
		{"bad name", map[string]string{name: "shop cart"}, lbspec.Placement{}, `invalid value "shop cart": must be 1-80 letters`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := placement("k8s", lbService(tc.ann))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("placement = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDefaultLBName(t *testing.T) {
	svc := lbService(nil)
	if got := defaultLBName("kubernetes", svc); got != "kubernetes-shop-cart" {
		t.Errorf("name = %q", got)
	}
	if got := defaultLBName("prod.eu/1", svc); got != "prod-eu-1-shop-cart" {
		t.Errorf("unsafe characters: name = %q", got)
	}
	svc.Name = strings.Repeat("x", 63)
	svc.Namespace = strings.Repeat("y", 63)
	if got := defaultLBName("kubernetes", svc); len(got) != 80 {
		t.Errorf("long name has %d characters, want 80", len(got))
	}
	if got := (&clbTranslator{}).Name("c", lbService(map[string]string{string(annotations.TencentLBName): "mine"})); got != "mine" {
		t.Errorf("GetLoadBalancerName = %q, want the annotation's", got)
	}
}

func TestNodeInstanceID(t *testing.T) {
	tests := []struct{ providerID, want, wantErr string }{
		{"tencentcloud:///ap-guangzhou-3/ins-abcd1234", "ins-abcd1234", ""},
		{"qcloud:///100003/ins-abcd1234", "ins-abcd1234", ""},
		{"", "", "no providerID yet"},
		{"aws:///x/i-1", "", "not a Tencent Cloud providerID"},
	}
	for _, tc := range tests {
		got, err := nodeInstanceID(&v1.Node{Spec: v1.NodeSpec{ProviderID: tc.providerID}})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err = %v, want %q", tc.providerID, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: id = %q, err %v", tc.providerID, got, err)
		}
	}
}

// noCalls panics on any CLB call (its embedded API is nil): bad input
// must be refused before the cloud is asked anything.
type noCalls struct{ clbops.API }

func TestBadAnnotationTouchesNothing(t *testing.T) {
	lb := lbkit.New[*clbops.Desired](&clbTranslator{}, func(lbkit.Hooks) lbkit.Ops[*clbops.Desired] {
		return clbops.New(noCalls{}, clbops.Config{VpcID: testVPC})
	}, lbkit.Config{Provider: ProviderName})
	svc := lbService(map[string]string{
		annotations.HealthCheckInterval.String(): "often",
		annotations.TencentLBType.String():       "private",
	})
	nodes := []*v1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: v1.NodeSpec{ProviderID: "tencentcloud:///ap-guangzhou-3/ins-abcd1234"}}}
	for name, call := range map[string]func() error{
		"Ensure": func() error { _, err := lb.EnsureLoadBalancer(context.Background(), "k8s", svc, nodes); return err },
		"Update": func() error { return lb.UpdateLoadBalancer(context.Background(), "k8s", svc, nodes) },
	} {
		err := call()
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		for _, want := range []string{
			`annotation lb.ccmkit.io/health-check-interval: invalid value "often"`,
			"a private (internal) CLB needs a subnet",
			"Service shop/cart: ",
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q lacks %q", name, err, want)
			}
		}
	}
}

func TestRefIgnoresMalformedAdoption(t *testing.T) {
	ref := func(svc *v1.Service) lbspec.Ref { return (&clbTranslator{}).Ref(svc).Ref }
	if r := ref(lbService(map[string]string{string(annotations.TKEExistedLBID): "garbage"})); r.AdoptID != "" {
		t.Errorf("AdoptID = %q, want it ignored", r.AdoptID)
	}
	if r := ref(lbService(map[string]string{string(annotations.TKEExistedLBID): "lb-abcd1234"})); r.AdoptID != "lb-abcd1234" || r.UID != "uid-1" {
		t.Errorf("ref = %+v", r)
	}
}

func TestSpecPassToTarget(t *testing.T) {
	tests := []struct {
		value string
		want  bool
	}{
		{"", true}, // TKE's default: only the CLB's security groups filter
		{"true", true},
		{"false", false},
		{" FALSE ", false},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			ann := map[string]string{}
			if tc.value != "" {
				ann[annotations.TKEPassToTarget.String()] = tc.value
			}
			spec, _, err := (&clbTranslator{}).Desired("kubernetes", lbTestService(ann), nil)
			if err != nil {
				t.Fatal(err)
			}
			if spec.PassToTarget != tc.want {
				t.Errorf("PassToTarget = %v, want %v", spec.PassToTarget, tc.want)
			}
		})
	}
}

// TestTKEDefaults checks lb_defaults tke against ours: the health check a
// plain Service gets, pass-to-target, and that the annotations still win;
// and that loadbalance-id names the incumbent CLB in both.
func TestTKEDefaults(t *testing.T) {
	tests := []struct {
		name      string
		tke       bool
		ann       map[string]string
		protocol  lbspec.HealthCheckProtocol
		port      int32
		keep, p2t bool
	}{
		{"ours", false, nil, lbspec.HealthCheckHTTP, lbspec.KubeProxyHealthPort, false, true},
		{"TKE's: CLB's TCP check of the NodePort, pass-to-target left alone", true, nil, lbspec.HealthCheckTCP, 0, true, false},
		{"TKE's, annotations win", true, map[string]string{
			annotations.TKEPassToTarget.String(): "true", annotations.HealthCheckProtocol.String(): "http", annotations.HealthCheckPort.String(): "10256",
		}, lbspec.HealthCheckHTTP, 10256, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ann := map[string]string{string(annotations.TKELoadBalanceID): "lb-tke00001"}
			maps.Copy(ann, tc.ann)
			svc := lbTestService(ann)
			tr := &clbTranslator{tkeDefaults: tc.tke}
			spec, _, err := tr.Desired("kubernetes", svc, nil)
			if err != nil {
				t.Fatal(err)
			}
			hc := spec.HealthCheck
			if hc.Protocol != tc.protocol || hc.Port != tc.port || spec.KeepPassToTarget != tc.keep || spec.PassToTarget != tc.p2t {
				t.Errorf("health check %s port %d, keep pass-to-target %t, pass-to-target %t; want %s %d %t %t",
					hc.Protocol, hc.Port, spec.KeepPassToTarget, spec.PassToTarget, tc.protocol, tc.port, tc.keep, tc.p2t)
			}
			if spec.Incumbent != "lb-tke00001" || tr.Ref(svc).Incumbent != "lb-tke00001" {
				t.Errorf("incumbent %q, ref's %q; want lb-tke00001", spec.Incumbent, tr.Ref(svc).Incumbent)
			}
		})
	}
}
