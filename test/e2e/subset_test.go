//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// subsetZones are the zones the subset scenario spreads its nodes over.
var subsetZones = []string{"ap-guangzhou-3", "ap-guangzhou-4", "ap-guangzhou-6"}

// zonedNode is lbNodeAt with the instance in zone and the node labeled
// with it, as the CCM labels an initialized node.
func zonedNode(t *testing.T, selector, zone string) cloudsim.Instance {
	t.Helper()
	added, err := suite.sim.AddInstances(cloudsim.Instance{
		ID: fmt.Sprintf("ins-e2e%05d", idSeq.Add(1)), Name: "subset-" + selector, Zone: zone,
		PrivateIP: nextIP(), VpcID: vpcID, SubnetID: "subnet-e2e00001", State: "RUNNING",
	})
	if err != nil {
		t.Fatal(err)
	}
	in := added[0]
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: in.PrivateIP, Labels: map[string]string{
			corev1.LabelHostname: in.PrivateIP, corev1.LabelTopologyZone: zone, lbNodeLabel: selector,
		}},
		Spec: corev1.NodeSpec{ProviderID: fmt.Sprintf("tencentcloud:///%s/%s", zone, in.ID)},
		Status: corev1.NodeStatus{
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: in.PrivateIP}},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		},
	}
	if _, err := suite.cluster.Client.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = suite.cluster.Client.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{})
	})
	return in
}

// targetIDs returns the instance ids bound to the CLB's listener.
func targetIDs(t *testing.T, lbID, listener string) []string {
	t.Helper()
	lb, err := suite.sim.Tencent().CLB().LoadBalancer(lbID)
	if err != nil {
		t.Fatal(err)
	}
	l, ok := listenerNamed(lb, listener)
	if !ok {
		t.Fatalf("CLB %s has no listener %s", lbID, listener)
	}
	var out []string
	for _, tg := range l.Targets {
		out = append(out, tg.InstanceID)
	}
	slices.Sort(out)
	return out
}

// TestLoadBalancerSubset: 150 eligible nodes over three zones, and CLB's
// documented TOTAL_TARGET_BIND_QUOTA of 100 targets per listener (cloudsim's
// default). Each Service's CLB holds 100 targets balanced across the zones,
// a second Service holds another subset, a Normal Event says so, and traffic
// through each VIP reaches only its Service's subset. With
// externalTrafficPolicy Local, only the nodes running a ready endpoint are
// bound, and moving the endpoint moves the target.
func TestLoadBalancerSubset(t *testing.T) {
	const sel, nodes = "subset", 150
	var insts []cloudsim.Instance
	zoneOf := map[string]string{}
	for i := range nodes {
		in := zonedNode(t, sel, subsetZones[i%len(subsetZones)])
		insts = append(insts, in)
		zoneOf[in.ID] = in.Zone
	}
	a, b := lbServiceSpec("subset-a", sel, 8090), lbServiceSpec("subset-b", sel, 8091)
	// Every node answers on both NodePorts with its instance id.
	for _, in := range insts {
		serve(t, in.PrivateIP, nodePort(a, 8090), 200, in.ID)
		serve(t, in.PrivateIP, nodePort(b, 8091), 200, in.ID)
	}
	svcA, svcB := createService(t, a), createService(t, b)
	vipA, vipB := waitIngress(t, svcA, 90*time.Second), waitIngress(t, svcB, 90*time.Second)
	svcA, svcB = getService(t, svcA), getService(t, svcB)

	subset := func(svc *corev1.Service, listener string) []string {
		lbs := clbsOf(svc.UID)
		if len(lbs) != 1 {
			t.Fatalf("Service %s has %d CLBs", svc.Name, len(lbs))
		}
		ids := targetIDs(t, lbs[0].ID, listener)
		perZone := map[string]int{}
		for _, id := range ids {
			perZone[zoneOf[id]]++
		}
		counts := []int{perZone[subsetZones[0]], perZone[subsetZones[1]], perZone[subsetZones[2]]}
		t.Logf("Service %s: %d targets, per zone %v", svc.Name, len(ids), counts)
		if len(ids) != 100 {
			t.Fatalf("Service %s: %d targets, want the quota, 100", svc.Name, len(ids))
		}
		if slices.Max(counts)-slices.Min(counts) > 1 {
			t.Fatalf("Service %s: targets per zone %v, want balanced within 1", svc.Name, counts)
		}
		return ids
	}
	idsA, idsB := subset(svcA, "TCP-8090"), subset(svcB, "TCP-8091")
	common := 0
	for _, id := range idsA {
		if slices.Contains(idsB, id) {
			common++
		}
	}
	t.Logf("the two subsets share %d of 100 nodes", common)
	if common == 100 {
		t.Fatal("the two Services got the same subset")
	}
	waitEvent(t, svcA, "LoadBalancerSubset", []string{"Binding 100 of 150 eligible nodes", "TOTAL_TARGET_BIND_QUOTA"}, 10*time.Second)

	// Traffic through each VIP reaches only that Service's subset.
	for _, c := range []struct {
		url string
		ids []string
	}{{fmt.Sprintf("http://%s:8090/", vipA), idsA}, {fmt.Sprintf("http://%s:8091/", vipB), idsB}} {
		seen := map[string]bool{}
		deadline := time.Now().Add(30 * time.Second)
		for len(seen) < 20 && time.Now().Before(deadline) {
			body, err := httpGet(c.url)
			if err != nil {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			if !slices.Contains(c.ids, body) {
				t.Fatalf("GET %s answered from %s, which is not in the Service's subset", c.url, body)
			}
			seen[body] = true
		}
		if len(seen) < 20 {
			t.Fatalf("GET %s reached %d distinct nodes within 30s, want 20", c.url, len(seen))
		}
	}

	t.Run("Local: the endpoint nodes", func(t *testing.T) {
		spec := lbServiceSpec("subset-local", sel, 8092)
		spec.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		spec.Spec.HealthCheckNodePort = nextNodePort()
		for _, in := range insts {
			serve(t, in.PrivateIP, nodePort(spec, 8092), 200, in.ID)
			serve(t, in.PrivateIP, spec.Spec.HealthCheckNodePort, 200, "ok")
		}
		// No endpoint controller runs here: the test writes the
		// EndpointSlice as kube-controller-manager would.
		endpointsOn := func(idx ...int) *discoveryv1.EndpointSlice {
			es := &discoveryv1.EndpointSlice{
				ObjectMeta: metav1.ObjectMeta{Namespace: spec.Namespace, Name: spec.Name + "-e2e", Labels: map[string]string{
					discoveryv1.LabelServiceName: spec.Name, discoveryv1.LabelManagedBy: "e2e.ccmkit.io",
				}},
				AddressType: discoveryv1.AddressTypeIPv4,
			}
			for k, i := range idx {
				name, ready := insts[i].PrivateIP, true
				es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.244.7.%d", k+1)},
					NodeName: &name, Conditions: discoveryv1.EndpointConditions{Ready: &ready}})
			}
			return es
		}
		wantIDs := func(idx ...int) []string {
			var out []string
			for _, i := range idx {
				out = append(out, insts[i].ID)
			}
			slices.Sort(out)
			return out
		}
		slicesAPI := suite.cluster.Client.DiscoveryV1().EndpointSlices(spec.Namespace)
		es, err := slicesAPI.Create(context.Background(), endpointsOn(3, 70, 140), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = slicesAPI.Delete(context.Background(), es.Name, metav1.DeleteOptions{}) })
		svc := createService(t, spec)
		vip := waitIngress(t, svc, 90*time.Second)
		svc = getService(t, svc)
		lb := clbsOf(svc.UID)[0]
		waitCLB(t, lb.ID, "the endpoint nodes as targets", 30*time.Second, func(tencent.CLBLoadBalancer) bool {
			return slices.Equal(targetIDs(t, lb.ID, "TCP-8092"), wantIDs(3, 70, 140))
		})
		waitEvent(t, svc, "LoadBalancerSubset", []string{"Binding 3 of 150 eligible nodes", "every node with a ready endpoint (3)"}, 10*time.Second)
		waitAnswers(t, fmt.Sprintf("http://%s:8092/", vip), 30*time.Second, wantIDs(3, 70, 140)...)

		// The pod on node 70 moves to node 99: the CCM notices through the
		// EndpointSlice (the service controller would not), and the target
		// follows.
		moved := endpointsOn(3, 99, 140)
		moved.ResourceVersion = es.ResourceVersion
		if _, err := slicesAPI.Update(context.Background(), moved, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitCLB(t, lb.ID, "the target follows the endpoint", 30*time.Second, func(tencent.CLBLoadBalancer) bool {
			return slices.Equal(targetIDs(t, lb.ID, "TCP-8092"), wantIDs(3, 99, 140))
		})
		if v := getService(t, svc).Annotations[string(annotations.EndpointsChanged)]; !strings.Contains(v, "3 nodes have a ready endpoint") {
			t.Errorf("annotation %s = %q", annotations.EndpointsChanged, v)
		}
		waitAnswers(t, fmt.Sprintf("http://%s:8092/", vip), 30*time.Second, wantIDs(3, 99, 140)...)
	})
}

// Managed TKE's local-svc-only-bind-node-with-pod: an externalTrafficPolicy
// Local Service binds only the nodes with a ready endpoint, even though all
// three nodes fit in the target quota, and the targets follow the endpoint.
func TestLoadBalancerLocalOnlyBindNodeWithPod(t *testing.T) {
	const sel = "local-only"
	insts := []cloudsim.Instance{lbNode(t, sel), lbNode(t, sel), lbNode(t, sel)}
	spec := lbServiceSpec("local-only", sel, 8093)
	spec.Annotations[annotations.TKELocalOnlyBindNodeWithPod.String()] = "true"
	spec.Annotations[annotations.DrainPeriod.String()] = "0" // the old target goes at once
	spec.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	spec.Spec.HealthCheckNodePort = nextNodePort()
	for _, in := range insts {
		serve(t, in.PrivateIP, nodePort(spec, 8093), 200, in.ID)
		serve(t, in.PrivateIP, spec.Spec.HealthCheckNodePort, 200, "ok")
	}
	// No endpoint controller runs here: the test writes the EndpointSlice.
	endpointOn := func(i int, rv string) *discoveryv1.EndpointSlice {
		name, ready := insts[i].PrivateIP, true
		return &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: spec.Namespace, Name: spec.Name + "-e2e", ResourceVersion: rv, Labels: map[string]string{
				discoveryv1.LabelServiceName: spec.Name, discoveryv1.LabelManagedBy: "e2e.ccmkit.io",
			}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.9.1"}, NodeName: &name,
				Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		}
	}
	slicesAPI := suite.cluster.Client.DiscoveryV1().EndpointSlices(spec.Namespace)
	es, err := slicesAPI.Create(context.Background(), endpointOn(0, ""), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = slicesAPI.Delete(context.Background(), es.Name, metav1.DeleteOptions{}) })
	svc := createService(t, spec)
	vip := waitIngress(t, svc, 60*time.Second)
	lb := clbsOf(getService(t, svc).UID)[0]
	if got := targetIDs(t, lb.ID, "TCP-8093"); !slices.Equal(got, []string{insts[0].ID}) {
		t.Fatalf("targets %v, want only the endpoint node %s", got, insts[0].ID)
	}
	url := fmt.Sprintf("http://%s:8093/", vip)
	waitAnswers(t, url, 30*time.Second, insts[0].ID)

	// The pod moves to node 2: the EndpointSlice watch asks for a
	// re-ensure, and the target follows.
	if _, err := slicesAPI.Update(context.Background(), endpointOn(2, es.ResourceVersion), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCLB(t, lb.ID, "the target follows the endpoint", 30*time.Second, func(tencent.CLBLoadBalancer) bool {
		return slices.Equal(targetIDs(t, lb.ID, "TCP-8093"), []string{insts[2].ID})
	})
	waitAnswers(t, url, 30*time.Second, insts[2].ID)
}

// Managed TKE's local-svc-weighted-balance: with local-svc-only-bind-node-
// with-pod, each endpoint node's target weighs its ready endpoints, so the
// CLB sends a node with three pods three times the connections of a node
// with one; when the pods move, the weights follow.
func TestLoadBalancerLocalWeightedBalance(t *testing.T) {
	const sel = "local-weighted"
	insts := []cloudsim.Instance{lbNode(t, sel), lbNode(t, sel)}
	spec := lbServiceSpec("local-weighted", sel, 8094)
	spec.Annotations[annotations.TKELocalOnlyBindNodeWithPod.String()] = "true"
	spec.Annotations[annotations.TKELocalWeightedBalance.String()] = "true"
	spec.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	spec.Spec.HealthCheckNodePort = nextNodePort()
	for _, in := range insts {
		serve(t, in.PrivateIP, nodePort(spec, 8094), 200, in.ID)
		serve(t, in.PrivateIP, spec.Spec.HealthCheckNodePort, 200, "ok")
	}
	// No endpoint controller runs here: the test writes the EndpointSlice,
	// perNode[i] ready endpoints on node i.
	slice := func(rv string, perNode ...int) *discoveryv1.EndpointSlice {
		es := &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: spec.Namespace, Name: spec.Name + "-e2e", ResourceVersion: rv, Labels: map[string]string{
				discoveryv1.LabelServiceName: spec.Name, discoveryv1.LabelManagedBy: "e2e.ccmkit.io",
			}},
			AddressType: discoveryv1.AddressTypeIPv4,
		}
		for i, n := range perNode {
			name, ready := insts[i].PrivateIP, true
			for j := range n {
				es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.244.%d.%d", 20+i, j+1)}, NodeName: &name,
					Conditions: discoveryv1.EndpointConditions{Ready: &ready}})
			}
		}
		return es
	}
	weights := func(lbID string) map[string]int {
		lb, err := suite.sim.Tencent().CLB().LoadBalancer(lbID)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		if l, ok := listenerNamed(lb, "TCP-8094"); ok {
			for _, tg := range l.Targets {
				out[tg.InstanceID] = 10 // CLB's default
				if tg.Weight != nil {
					out[tg.InstanceID] = *tg.Weight
				}
			}
		}
		return out
	}
	slicesAPI := suite.cluster.Client.DiscoveryV1().EndpointSlices(spec.Namespace)
	es, err := slicesAPI.Create(context.Background(), slice("", 3, 1), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = slicesAPI.Delete(context.Background(), es.Name, metav1.DeleteOptions{}) })
	svc := createService(t, spec)
	vip := waitIngress(t, svc, 60*time.Second)
	lbID := clbsOf(getService(t, svc).UID)[0].ID
	if got, want := weights(lbID), map[string]int{insts[0].ID: 3, insts[1].ID: 1}; !maps.Equal(got, want) {
		t.Fatalf("target weights %v, want %v", got, want)
	}
	url := fmt.Sprintf("http://%s:8094/", vip)
	waitAnswers(t, url, 30*time.Second, insts[0].ID, insts[1].ID)
	count := func() map[string]int {
		seen := map[string]int{}
		for range 40 {
			if body, err := httpGet(url); err == nil {
				seen[body]++
			}
		}
		return seen
	}
	// Weighted round robin, 3:1: about 30 of 40 to the first node.
	if seen := count(); seen[insts[0].ID] < 24 || seen[insts[0].ID] > 36 {
		t.Errorf("40 GETs answered %v, want about 30 from %s (weight 3) and 10 from %s (weight 1)", seen, insts[0].ID, insts[1].ID)
	}

	// The pods move: one on the first node, two on the second.
	if _, err := slicesAPI.Update(context.Background(), slice(es.ResourceVersion, 1, 2), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCLB(t, lbID, "the weights follow the endpoints", 30*time.Second, func(tencent.CLBLoadBalancer) bool {
		return maps.Equal(weights(lbID), map[string]int{insts[0].ID: 1, insts[1].ID: 2})
	})
	if seen := count(); seen[insts[1].ID] < 20 || seen[insts[1].ID] > 33 {
		t.Errorf("40 GETs answered %v, want about 27 from %s (weight 2)", seen, insts[1].ID)
	}
}
