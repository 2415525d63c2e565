package lbspec

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/annotations"
)

var testLimits = Limits{
	HealthCheckInterval:    Range[time.Duration]{Min: 2 * time.Second, Max: 300 * time.Second},
	HealthCheckTimeout:     Range[time.Duration]{Min: 2 * time.Second, Max: 60 * time.Second},
	HealthCheckThreshold:   Range[int]{Min: 2, Max: 10},
	SessionAffinityTimeout: Range[time.Duration]{Min: 30 * time.Second, Max: 3600 * time.Second},
}

func testOptions() Options {
	return Options{
		Limits: testLimits,
		InstanceID: func(n *corev1.Node) (string, error) {
			id, ok := strings.CutPrefix(n.Spec.ProviderID, "fake://")
			if !ok {
				return "", fmt.Errorf("no providerID")
			}
			return id, nil
		},
	}
}

type svcOpt func(*corev1.Service)

func annotate(kv ...string) svcOpt {
	return func(s *corev1.Service) {
		for i := 0; i < len(kv); i += 2 {
			s.Annotations[kv[i]] = kv[i+1]
		}
	}
}

func testService(opts ...svcOpt) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-1", Annotations: map[string]string{}},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{
				{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, NodePort: 30443},
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080},
				{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, NodePort: 30053},
			},
		},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

func node(name, providerID string, labels map[string]string, taints ...string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	for _, t := range taints {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: t, Effect: corev1.TaintEffectNoSchedule})
	}
	return n
}

func TestBuildDefaults(t *testing.T) {
	nodes := []*corev1.Node{
		node("n2", "fake://i-2", nil),
		node("n1", "fake://i-1", map[string]string{corev1.LabelTopologyZone: "zone-a"}),
		node("n3", "", nil), // not initialized yet
	}
	// n1's backend address is its first IPv4 InternalIP: not the external
	// one, not the IPv6 one.
	nodes[1].Status.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeExternalIP, Address: "203.0.113.1"},
		{Type: corev1.NodeInternalIP, Address: "fd00::1"},
		{Type: corev1.NodeInternalIP, Address: "10.0.0.1"},
		{Type: corev1.NodeInternalIP, Address: "10.0.0.2"},
	}
	spec, err := Build(testService(), nodes, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := &Spec{
		Ref: Ref{Service: types.NamespacedName{Namespace: "default", Name: "web"}, UID: "uid-1"},
		Listeners: []Listener{
			{Protocol: TCP, Port: 80, NodePort: 30080},
			{Protocol: TCP, Port: 443, NodePort: 30443},
			{Protocol: UDP, Port: 53, NodePort: 30053},
		},
		Backends: []Backend{{NodeName: "n1", InstanceID: "i-1", Zone: "zone-a", Address: "10.0.0.1", AddressV6: "fd00::1"}, {NodeName: "n2", InstanceID: "i-2"}},
		HealthCheck: HealthCheck{Enabled: true, Protocol: HealthCheckHTTP, Port: KubeProxyHealthPort, Path: "/healthz",
			Interval: 5 * time.Second, Timeout: 2 * time.Second, HealthyThreshold: 3, UnhealthyThreshold: 3},
	}
	if !reflect.DeepEqual(spec, want) {
		t.Errorf("spec =\n%+v\nwant\n%+v", spec, want)
	}
	if got := spec.Listeners[0].Name(); got != "TCP-80" {
		t.Errorf("listener name = %q, want TCP-80", got)
	}
}

func TestBuildHealthCheck(t *testing.T) {
	local := func(s *corev1.Service) {
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = 32000
	}
	def := HealthCheck{Enabled: true, Protocol: HealthCheckHTTP, Port: KubeProxyHealthPort, Path: "/healthz",
		Interval: 5 * time.Second, Timeout: 2 * time.Second, HealthyThreshold: 3, UnhealthyThreshold: 3}
	with := func(f func(*HealthCheck)) HealthCheck { hc := def; f(&hc); return hc }
	tests := []struct {
		name    string
		opts    []svcOpt
		want    HealthCheck
		wantErr []string
	}{
		{"default: HTTP /healthz on kube-proxy's port, which drains", nil, def, nil},
		{"tcp falls back to each NodePort", []svcOpt{annotate(annotations.HealthCheckProtocol.String(), "tcp")},
			with(func(h *HealthCheck) { h.Protocol, h.Port = HealthCheckTCP, 0 }), nil},
		{"tcp on a given port", []svcOpt{annotate(annotations.HealthCheckProtocol.String(), "tcp", annotations.HealthCheckPort.String(), "31000")},
			with(func(h *HealthCheck) { h.Protocol, h.Port = HealthCheckTCP, 31000 }), nil},
		{"Local: HTTP /healthz on healthCheckNodePort", []svcOpt{local},
			with(func(h *HealthCheck) { h.Port = 32000 }), nil},
		{"Local with tcp override", []svcOpt{local, annotate(annotations.HealthCheckProtocol.String(), "TCP")},
			with(func(h *HealthCheck) { h.Protocol, h.Port = HealthCheckTCP, 32000 }), nil},
		{"every annotation", []svcOpt{annotate(
			annotations.HealthCheckEnabled.String(), "true",
			annotations.HealthCheckProtocol.String(), "http",
			annotations.HealthCheckPort.String(), "8080",
			string(annotations.HealthCheckPath), "/ready",
			annotations.HealthCheckInterval.String(), "10s",
			annotations.HealthCheckTimeout.String(), "4",
			annotations.HealthCheckHealthyThreshold.String(), "2",
			annotations.HealthCheckUnhealthyThreshold.String(), "5",
		)}, HealthCheck{Enabled: true, Protocol: HealthCheckHTTP, Port: 8080, Path: "/ready",
			Interval: 10 * time.Second, Timeout: 4 * time.Second, HealthyThreshold: 2, UnhealthyThreshold: 5}, nil},
		{"disabled", []svcOpt{annotate(annotations.HealthCheckEnabled.String(), "false")},
			with(func(h *HealthCheck) { h.Enabled = false }), nil},
		{"bad values are all reported", []svcOpt{annotate(
			annotations.HealthCheckEnabled.String(), "maybe",
			annotations.HealthCheckPort.String(), "70000",
			string(annotations.HealthCheckPath), "healthz",
			annotations.HealthCheckInterval.String(), "1s",
			annotations.HealthCheckUnhealthyThreshold.String(), "11",
		)}, HealthCheck{}, []string{
			`annotation lb.ccmkit.io/health-check-enabled: invalid value "maybe"`,
			`lb.ccmkit.io/health-check-port: invalid value "70000": must be between 1 and 65535`,
			`lb.ccmkit.io/health-check-path: invalid value "healthz"`,
			`lb.ccmkit.io/health-check-interval: invalid value "1s": must be between 2s and 5m0s`,
			`lb.ccmkit.io/health-check-unhealthy-threshold: invalid value "11": must be between 2 and 10`,
		}},
		{"timeout not below interval", []svcOpt{annotate(annotations.HealthCheckTimeout.String(), "5s")},
			HealthCheck{}, []string{`lb.ccmkit.io/health-check-timeout: invalid value "5s": the health check timeout (5s) must be shorter than its interval (5s)`}},
		{"interval not above default timeout", []svcOpt{annotate(annotations.HealthCheckInterval.String(), "2s")},
			HealthCheck{}, []string{`lb.ccmkit.io/health-check-interval: invalid value "2s"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := Build(testService(tc.opts...), nil, testOptions())
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error, want %q", tc.wantErr)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error spans lines: %q", err)
				}
				var inv *annotations.InvalidError
				if !errors.As(err, &inv) {
					t.Errorf("error does not unwrap to *annotations.InvalidError")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if spec.HealthCheck != tc.want {
				t.Errorf("health check = %+v, want %+v", spec.HealthCheck, tc.want)
			}
		})
	}
}

func TestBuildSessionAffinity(t *testing.T) {
	clientIP := func(timeout *int32) svcOpt {
		return func(s *corev1.Service) {
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			if timeout != nil {
				s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: timeout}}
			}
		}
	}
	i32 := func(v int32) *int32 { return &v }
	tests := []struct {
		name    string
		opts    []svcOpt
		want    SessionAffinity
		wantErr string
	}{
		{"none", nil, SessionAffinity{}, ""},
		{"none ignores the annotation", []svcOpt{annotate(annotations.SessionAffinityTimeout.String(), "x")}, SessionAffinity{}, ""},
		{"ClientIP default 10800s clamped", []svcOpt{clientIP(nil)}, SessionAffinity{ClientIP: true, Timeout: time.Hour}, ""},
		{"ClientIP 600s", []svcOpt{clientIP(i32(600))}, SessionAffinity{ClientIP: true, Timeout: 10 * time.Minute}, ""},
		{"ClientIP 1s raised to minimum", []svcOpt{clientIP(i32(1))}, SessionAffinity{ClientIP: true, Timeout: 30 * time.Second}, ""},
		{"annotation wins", []svcOpt{clientIP(i32(600)), annotate(annotations.SessionAffinityTimeout.String(), "2m")},
			SessionAffinity{ClientIP: true, Timeout: 2 * time.Minute}, ""},
		{"annotation out of range", []svcOpt{clientIP(nil), annotate(annotations.SessionAffinityTimeout.String(), "2h")},
			SessionAffinity{}, `lb.ccmkit.io/session-affinity-timeout: invalid value "2h": must be between 30s and 1h0m0s`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := Build(testService(tc.opts...), nil, testOptions())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if spec.SessionAffinity != tc.want {
				t.Errorf("session affinity = %+v, want %+v", spec.SessionAffinity, tc.want)
			}
		})
	}
}

func TestBuildBackends(t *testing.T) {
	nodes := []*corev1.Node{
		node("plain", "fake://i-1", map[string]string{"pool": "web"}),
		node("excluded", "fake://i-2", map[string]string{corev1.LabelNodeExcludeBalancers: "true", "pool": "web"}),
		node("exclusion-false", "fake://i-3", map[string]string{corev1.LabelNodeExcludeBalancers: "false", "pool": "web"}),
		node("exclusion-garbage", "fake://i-4", map[string]string{corev1.LabelNodeExcludeBalancers: "soon", "pool": "web"}),
		node("autoscaled-away", "fake://i-5", map[string]string{"pool": "web"}, ToBeDeletedTaint),
		node("other-pool", "fake://i-6", map[string]string{"pool": "db"}),
		node("uninitialized", "", map[string]string{"pool": "web"}),
		node("same-instance", "fake://i-1", map[string]string{"pool": "web"}),
	}
	deleting := node("deleting", "fake://i-7", map[string]string{"pool": "web"})
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	nodes = append(nodes, deleting)

	dbPool := labels.SelectorFromSet(labels.Set{"pool": "db"}) // a provider's alias of the annotation
	tests := []struct {
		name    string
		opts    []svcOpt
		alias   labels.Selector
		want    []string
		wantErr string
	}{
		{"all eligible", nil, nil, []string{"exclusion-false", "other-pool", "plain"}, ""},
		{"node selector", []svcOpt{annotate(string(annotations.NodeSelector), "pool=web")}, nil, []string{"exclusion-false", "plain"}, ""},
		{"provider's selector", nil, dbPool, []string{"other-pool"}, ""},
		{"the annotation over the provider's", []svcOpt{annotate(string(annotations.NodeSelector), "pool=web")}, dbPool,
			[]string{"exclusion-false", "plain"}, ""},
		{"bad selector", []svcOpt{annotate(string(annotations.NodeSelector), "pool in web")}, nil, nil,
			`annotation lb.ccmkit.io/node-selector: invalid value "pool in web"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := testOptions()
			opts.Placement = func(*corev1.Service) (Placement, error) { return Placement{NodeSelector: tc.alias}, nil }
			spec, err := Build(testService(tc.opts...), nodes, opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range spec.Backends {
				got = append(got, b.NodeName)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("backends = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBuildListenersAndRanges(t *testing.T) {
	tests := []struct {
		name       string
		opts       []svcOpt
		wantRanges []string
		wantErr    string
	}{
		{"SCTP", []svcOpt{func(s *corev1.Service) {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "sig", Protocol: corev1.ProtocolSCTP, Port: 9, NodePort: 30009})
		}}, nil, `port "sig" (9/SCTP): protocol SCTP is not supported`},
		{"no NodePort", []svcOpt{func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 0 }}, nil,
			`port "https" (443/TCP): no NodePort allocated`},
		{"source ranges from spec", []svcOpt{func(s *corev1.Service) {
			s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8", "192.168.1.0/24"}
		}}, []string{"10.0.0.0/8", "192.168.1.0/24"}, ""},
		{"source ranges from annotation", []svcOpt{annotate(corev1.AnnotationLoadBalancerSourceRangesKey, "203.0.113.0/24")},
			[]string{"203.0.113.0/24"}, ""},
		{"allow all", []svcOpt{annotate(corev1.AnnotationLoadBalancerSourceRangesKey, "0.0.0.0/0")}, nil, ""},
		{"bad source range", []svcOpt{annotate(corev1.AnnotationLoadBalancerSourceRangesKey, "everyone")}, nil,
			"service.beta.kubernetes.io/load-balancer-source-ranges: everyone is not valid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := Build(testService(tc.opts...), nil, testOptions())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if !strings.HasPrefix(err.Error(), "Service default/web: ") {
					t.Errorf("err = %q, want it to name the Service", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(spec.SourceRanges, tc.wantRanges) {
				t.Errorf("source ranges = %v, want %v", spec.SourceRanges, tc.wantRanges)
			}
		})
	}
}

func TestBuildPlacement(t *testing.T) {
	opts := testOptions()
	opts.Placement = func(s *corev1.Service) (Placement, error) {
		if s.Annotations["internal"] == "yes" {
			return Placement{}, errors.New("internal needs a subnet")
		}
		return Placement{Name: "lb-name", AdoptID: s.Annotations["adopt"]}, nil
	}
	spec, err := Build(testService(annotate("adopt", "lb-12345678")), nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if spec.AdoptID != "lb-12345678" || spec.Ref.AdoptID != "lb-12345678" || spec.Name != "lb-name" {
		t.Errorf("placement not applied: %+v", spec)
	}
	// Placement errors are reported with the others.
	_, err = Build(testService(annotate("internal", "yes", annotations.HealthCheckPort.String(), "0")), nil, opts)
	if err == nil || !strings.Contains(err.Error(), "internal needs a subnet; ") || !strings.Contains(err.Error(), "health-check-port") {
		t.Errorf("err = %v, want both problems", err)
	}
}

func TestWantsLoadBalancer(t *testing.T) {
	class := "example.com/other"
	svc := testService()
	if !WantsLoadBalancer(svc) {
		t.Error("LoadBalancer Service: want true")
	}
	svc.Spec.LoadBalancerClass = &class
	if WantsLoadBalancer(svc) {
		t.Error("with loadBalancerClass: want false")
	}
	svc = testService(func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort })
	if WantsLoadBalancer(svc) {
		t.Error("NodePort Service: want false")
	}
}

func TestBuildDrainPeriod(t *testing.T) {
	tests := []struct {
		name       string
		annotation string // "" leaves it unset
		configured time.Duration
		want       time.Duration
		wantErr    string
	}{
		{name: "the cloud config's default", configured: 45 * time.Second, want: 45 * time.Second},
		{name: "the annotation wins", annotation: "2m", configured: 45 * time.Second, want: 2 * time.Minute},
		{name: "seconds", annotation: "90", want: 90 * time.Second},
		{name: "0 removes at once", annotation: "0s", configured: time.Minute, want: 0},
		{name: "over an hour", annotation: "2h", wantErr: `lb.ccmkit.io/drain-period: invalid value "2h": must be between 0s and 1h0m0s`},
		{name: "not a duration", annotation: "soon", wantErr: `lb.ccmkit.io/drain-period: invalid value "soon"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var opts []svcOpt
			if tc.annotation != "" {
				opts = append(opts, annotate(annotations.DrainPeriod.String(), tc.annotation))
			}
			o := testOptions()
			o.DrainPeriod = tc.configured
			spec, err := Build(testService(opts...), nil, o)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if spec.DrainPeriod != tc.want {
				t.Errorf("drain period = %s, want %s", spec.DrainPeriod, tc.want)
			}
		})
	}
}
