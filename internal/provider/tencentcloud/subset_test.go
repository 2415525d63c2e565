package tencentcloud

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/ccmkit/ccm/internal/tencent/config"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// subsetEnv is the provider as the CCM builds it, against cloudsim with
// its documented TOTAL_TARGET_BIND_QUOTA of 100 targets per listener.
type subsetEnv struct {
	sim    *cloudsim.Sim
	lb     *loadBalancers
	nodes  []*v1.Node
	zoneOf map[string]string // instance id -> zone
	events *record.FakeRecorder
}

func newSubsetEnv(t *testing.T, n int) *subsetEnv {
	t.Helper()
	clearTencentEnv(t)
	const (
		id, key = "AKIDsubsetprovider", "subset-provider-key"
		vpcID   = "vpc-subs0001"
	)
	sim := cloudsim.New(cloudsim.Options{Latency: cloudsim.ZeroLatency, DisableDataPlane: true,
		// The test reconciles faster than the documented 20 calls/s.
		RateLimits: map[string]float64{"DescribeTaskStatus": 0, "DescribeLoadBalancers": 0, "DescribeTargets": 0, "DescribeListeners": 0},
		Tencent: cloudsim.TencentOptions{
			Credentials: map[string]string{id: key},
			TaskLatency: 5 * time.Millisecond,
		},
	})
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	e := &subsetEnv{sim: sim, zoneOf: map[string]string{}, events: record.NewFakeRecorder(100)}
	for i := range n {
		e.addNode(t, i, vpcID)
	}
	cfg, err := config.Load(strings.NewReader("region: ap-guangzhou\nvpc_id: "+vpcID+"\nsecret_id: "+id+"\nsecret_key: "+key+
		"\napi_endpoint: "+url+"\napi_rate_limits: clb.DescribeTaskStatus=0\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cloud, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.lb = cloud.lb
	e.lb.Subsets().Recorder = e.events
	return e
}

func (e *subsetEnv) addNode(t *testing.T, i int, vpcID string) *v1.Node {
	t.Helper()
	zone := []string{"ap-guangzhou-3", "ap-guangzhou-4", "ap-guangzhou-6"}[i%3]
	in, err := e.sim.AddInstances(cloudsim.Instance{ID: fmt.Sprintf("ins-sub%05d", i), Zone: zone,
		PrivateIP: fmt.Sprintf("10.0.%d.%d", i/200, 1+i%200), VpcID: vpcID})
	if err != nil {
		t.Fatal(err)
	}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%03d", i), Labels: map[string]string{v1.LabelTopologyZone: zone}},
		Spec: v1.NodeSpec{ProviderID: fmt.Sprintf("tencentcloud:///%s/%s", zone, in[0].ID)}}
	e.nodes = append(e.nodes, node)
	e.zoneOf[in[0].ID] = zone
	return node
}

func subsetService(name string, uid types.UID) *v1.Service {
	return &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: uid},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer, Ports: []v1.ServicePort{
			{Protocol: v1.ProtocolTCP, Port: 80, NodePort: 30080},
			{Protocol: v1.ProtocolTCP, Port: 443, NodePort: 30443},
		}},
	}
}

// targets returns, per listener name, the sorted instance ids bound.
func (e *subsetEnv) targets(t *testing.T, uid types.UID) map[string][]string {
	t.Helper()
	for _, lb := range e.sim.Tencent().CLB().LoadBalancers() {
		if lb.Tags["ccmkit.io/service-uid"] != string(uid) {
			continue
		}
		out := map[string][]string{}
		for _, l := range lb.Listeners {
			for _, tg := range l.Targets {
				out[l.Name] = append(out[l.Name], tg.InstanceID)
			}
			slices.Sort(out[l.Name])
		}
		return out
	}
	t.Fatalf("no CLB for %s", uid)
	return nil
}

func (e *subsetEnv) drainEvents() []string {
	var out []string
	for {
		select {
		case ev := <-e.events.Events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

// 150 eligible nodes and the default quota of 100: each listener holds 100
// targets, balanced across the three zones; another Service gets another
// subset; a node joining moves at most one target; the quota is read once.
func TestLoadBalancerSubsetAgainstCloudsim(t *testing.T) {
	e := newSubsetEnv(t, 150)
	ctx := context.Background()
	a, b := subsetService("a", "uid-subset-a"), subsetService("b", "uid-subset-b")
	for _, svc := range []*v1.Service{a, b} {
		if _, err := e.lb.EnsureLoadBalancer(ctx, "k8s", svc, e.nodes); err != nil {
			t.Fatalf("Ensure %s: %v", svc.Name, err)
		}
	}
	ta, tb := e.targets(t, a.UID), e.targets(t, b.UID)
	for _, got := range []map[string][]string{ta, tb} {
		if len(got["TCP-80"]) != 100 || !slices.Equal(got["TCP-80"], got["TCP-443"]) {
			t.Fatalf("listeners hold %d and %d targets, want the same 100", len(got["TCP-80"]), len(got["TCP-443"]))
		}
		perZone := map[string]int{}
		for _, id := range got["TCP-80"] {
			perZone[e.zoneOf[id]]++
		}
		counts := []int{perZone["ap-guangzhou-3"], perZone["ap-guangzhou-4"], perZone["ap-guangzhou-6"]}
		if slices.Max(counts)-slices.Min(counts) > 1 {
			t.Fatalf("targets per zone %v, want balanced within 1", counts)
		}
	}
	if slices.Equal(ta["TCP-80"], tb["TCP-80"]) {
		t.Fatal("two Services got the same subset")
	}
	if ev := e.drainEvents(); len(ev) != 2 || !strings.Contains(ev[0], "Normal LoadBalancerSubset Binding 100 of 150 eligible nodes (limit: TOTAL_TARGET_BIND_QUOTA, 100 targets per CLB listener)") {
		t.Fatalf("events %v", ev)
	}

	// A node joins: at most one target of the Service moves.
	e.addNode(t, 150, "vpc-subs0001")
	if err := e.lb.UpdateLoadBalancer(ctx, "k8s", a, e.nodes); err != nil {
		t.Fatal(err)
	}
	after := e.targets(t, a.UID)["TCP-80"]
	moved := 0
	for _, id := range ta["TCP-80"] {
		if !slices.Contains(after, id) {
			moved++
		}
	}
	if len(after) != 100 || moved > 1 {
		t.Fatalf("after a node joined: %d targets, %d moved; want 100, at most 1 moved", len(after), moved)
	}
	if n := e.sim.Calls()["DescribeQuota"]["OK"]; n != 1 {
		t.Fatalf("DescribeQuota called %d times, want once (cached)", n)
	}
	// The drift check computes the same subset: nothing drifted.
	results := e.lb.Drift(ctx, []*v1.Service{a, b}, e.nodes)
	for uid, r := range results {
		if r.Err != nil || len(r.Diffs) != 0 {
			t.Fatalf("drift of %s: %v %v", uid, r.Diffs, r.Err)
		}
	}
}

// A Service with no more eligible nodes than the documented default binds
// every one, without reading the quota.
func TestLoadBalancerNoSubsetUnderDefault(t *testing.T) {
	e := newSubsetEnv(t, 100)
	svc := subsetService("small", "uid-small")
	if _, err := e.lb.EnsureLoadBalancer(context.Background(), "k8s", svc, e.nodes); err != nil {
		t.Fatal(err)
	}
	if got := e.targets(t, svc.UID)["TCP-80"]; len(got) != 100 {
		t.Fatalf("%d targets, want all 100 nodes", len(got))
	}
	if n := e.sim.Calls()["DescribeQuota"]; len(n) != 0 {
		t.Fatalf("DescribeQuota called %v", n)
	}
	if ev := e.drainEvents(); len(ev) != 0 {
		t.Fatalf("events %v", ev)
	}
	// A node is replaced at the quota: the stale target goes first, or the
	// new one would be the 101st (LimitExceeded).
	fresh := e.addNode(t, 100, "vpc-subs0001")
	if err := e.lb.UpdateLoadBalancer(context.Background(), "k8s", svc, append(e.nodes[1:100:100], fresh)); err != nil {
		t.Fatal(err)
	}
	got := e.targets(t, svc.UID)["TCP-80"]
	if len(got) != 100 || slices.Contains(got, "ins-sub00000") || !slices.Contains(got, "ins-sub00100") {
		t.Fatalf("after replacing a node: %d targets %v", len(got), got)
	}
}

// externalTrafficPolicy Local over the quota: only the nodes with a ready
// endpoint are bound.
func TestLoadBalancerSubsetLocal(t *testing.T) {
	e := newSubsetEnv(t, 150)
	svc := subsetService("local", "uid-local")
	svc.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
	svc.Spec.HealthCheckNodePort = 32000
	var eps []discoveryv1.Endpoint
	var want []string
	for _, i := range []int{3, 77, 120} {
		name, yes := e.nodes[i].Name, true
		eps = append(eps, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.244.%d.2", i)}, NodeName: &name,
			Conditions: discoveryv1.EndpointConditions{Ready: &yes}})
		want = append(want, fmt.Sprintf("ins-sub%05d", i))
	}
	e.lb.Subsets().Recorder = e.events
	e.watchEndpoints(t, eps)
	if _, err := e.lb.EnsureLoadBalancer(context.Background(), "k8s", svc, e.nodes); err != nil {
		t.Fatal(err)
	}
	if got := e.targets(t, svc.UID)["TCP-80"]; !slices.Equal(got, want) {
		t.Fatalf("targets %v, want the endpoint nodes' instances %v", got, want)
	}
	if ev := e.drainEvents(); len(ev) != 1 || !strings.Contains(ev[0], "Binding 3 of 150 eligible nodes") ||
		!strings.Contains(ev[0], "every node with a ready endpoint (3)") {
		t.Fatalf("events %v", ev)
	}
}

// watchEndpoints gives the pipeline an EndpointSlice informer holding one
// slice of the Service "local" in namespace shop, with eps.
func (e *subsetEnv) watchEndpoints(t *testing.T, eps []discoveryv1.Endpoint) {
	t.Helper()
	client := fake.NewClientset(&discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "shop", Name: "local-x", Labels: map[string]string{discoveryv1.LabelServiceName: "local"}},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: eps,
	})
	f := informers.NewSharedInformerFactory(client, 0)
	if err := e.lb.Subsets().Use(f.Discovery().V1().EndpointSlices().Informer()); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	f.Start(stop)
	f.WaitForCacheSync(stop)
}
