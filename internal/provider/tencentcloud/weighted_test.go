package tencentcloud

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ccmkit/ccm/internal/annotations"
)

// local-svc-weighted-balance: each endpoint node's targets weigh its ready
// endpoints; a new count is one BatchModifyTargetWeight, nothing else; an
// unchanged resync writes nothing.
func TestLocalWeightedBalance(t *testing.T) {
	e := newSubsetEnv(t, 4)
	ctx := context.Background()
	svc := subsetService("local", types.UID("uid-weighted"))
	svc.Spec.ExternalTrafficPolicy, svc.Spec.HealthCheckNodePort = v1.ServiceExternalTrafficPolicyLocal, 32000
	svc.Annotations = map[string]string{
		annotations.TKELocalOnlyBindNodeWithPod.String(): "true",
		annotations.TKELocalWeightedBalance.String():     "true",
	}
	endpoints := func(perNode map[int]int) *discoveryv1.EndpointSlice {
		es := &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "shop", Name: "local-x", Labels: map[string]string{discoveryv1.LabelServiceName: "local"}},
			AddressType: discoveryv1.AddressTypeIPv4,
		}
		for node, n := range perNode {
			name, yes := e.nodes[node].Name, true
			for i := range n {
				es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.244.%d.%d", node, i+2)}, NodeName: &name,
					Conditions: discoveryv1.EndpointConditions{Ready: &yes}})
			}
		}
		return es
	}
	client := fake.NewClientset(endpoints(map[int]int{1: 3, 3: 1}))
	f := informers.NewSharedInformerFactory(client, 0)
	inf := f.Discovery().V1().EndpointSlices().Informer()
	if err := e.lb.Subsets().Use(inf); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	f.Start(stop)
	f.WaitForCacheSync(stop)

	weights := func() string {
		var out []string
		for _, lb := range e.sim.Tencent().CLB().LoadBalancers() {
			for _, l := range lb.Listeners {
				for _, tg := range l.Targets {
					w := 10
					if tg.Weight != nil {
						w = *tg.Weight
					}
					out = append(out, fmt.Sprintf("%s/%s=%d", l.Name, tg.InstanceID, w))
				}
			}
		}
		return strings.Join(out, " ")
	}
	if _, err := e.lb.EnsureLoadBalancer(ctx, "k8s", svc, e.nodes); err != nil {
		t.Fatal(err)
	}
	want := "TCP-80/ins-sub00001=3 TCP-80/ins-sub00003=1 TCP-443/ins-sub00001=3 TCP-443/ins-sub00003=1"
	if got := weights(); got != want {
		t.Fatalf("targets %s, want %s", got, want)
	}

	// node-1 scales down to one pod, node-3 up to two.
	if _, err := client.DiscoveryV1().EndpointSlices("shop").Update(ctx, endpoints(map[int]int{1: 1, 3: 2}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		es, _ := f.Discovery().V1().EndpointSlices().Lister().EndpointSlices("shop").Get("local-x")
		if es != nil && len(es.Endpoints) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the informer did not see the update")
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.sim.ResetCalls()
	if _, err := e.lb.EnsureLoadBalancer(ctx, "k8s", svc, e.nodes); err != nil {
		t.Fatal(err)
	}
	want = "TCP-80/ins-sub00001=1 TCP-80/ins-sub00003=2 TCP-443/ins-sub00001=1 TCP-443/ins-sub00003=2"
	if got := weights(); got != want {
		t.Fatalf("targets %s, want %s", got, want)
	}
	for action, codes := range e.sim.Calls() {
		if !strings.HasPrefix(action, "Describe") && (action != "BatchModifyTargetWeight" || codes["OK"] != 1) {
			t.Errorf("a count change made %s %v; want one BatchModifyTargetWeight", action, codes)
		}
	}

	e.sim.ResetCalls()
	if _, err := e.lb.EnsureLoadBalancer(ctx, "k8s", svc, e.nodes); err != nil {
		t.Fatal(err)
	}
	for action := range e.sim.Calls() {
		if !strings.HasPrefix(action, "Describe") {
			t.Errorf("an unchanged resync wrote: %s", action)
		}
	}
}

// Without local-svc-only-bind-node-with-pod the annotation does nothing,
// and says so.
func TestLocalWeightedBalanceAlone(t *testing.T) {
	tr := &clbTranslator{}
	svc := lbService(map[string]string{annotations.TKELocalWeightedBalance.String(): "true"})
	d, warnings, err := tr.Desired("k8s", svc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0].Message, "needs service.kubernetes.io/local-svc-only-bind-node-with-pod: true") {
		t.Errorf("warnings = %v", warnings)
	}
	if weightCap(d) != 0 {
		t.Errorf("weights without endpoint nodes only")
	}
}
