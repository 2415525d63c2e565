package lbsubset

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/lb/lbspec"
)

func service(policy corev1.ServiceExternalTrafficPolicy) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "uid-web"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ExternalTrafficPolicy: policy},
	}
}

// backends makes n eligible nodes named node-000.. over three zones.
func backends(n int) []lbspec.Backend {
	out := make([]lbspec.Backend, n)
	for i := range out {
		out[i] = lbspec.Backend{NodeName: fmt.Sprintf("node-%03d", i), InstanceID: fmt.Sprintf("ins-%08d", i), Zone: fmt.Sprintf("zone-%d", i%3)}
	}
	return out
}

func nodeNames(bs []lbspec.Backend) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.NodeName
	}
	return out
}

// slice is an EndpointSlice of svc with one endpoint per node (ready
// unless listed in notReady).
func slice(svc *corev1.Service, name string, nodes []string, notReady ...string) *discoveryv1.EndpointSlice {
	es := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: svc.Namespace, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for i, n := range nodes {
		ready := !slices.Contains(notReady, n)
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{
			Addresses: []string{fmt.Sprintf("10.244.0.%d", i+1)}, NodeName: &n,
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
		})
	}
	return es
}

// subsetterWith returns a Subsetter whose EndpointSlice lister holds slices.
func subsetterWith(t *testing.T, objs ...*discoveryv1.EndpointSlice) (*Subsetter, *fake.Clientset, informers.SharedInformerFactory) {
	t.Helper()
	client := fake.NewClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	inf := f.Discovery().V1().EndpointSlices().Informer()
	for _, o := range objs {
		if err := inf.GetIndexer().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	s := New()
	if err := s.Use(inf); err != nil {
		t.Fatal(err)
	}
	return s, client, f
}

func TestChoose(t *testing.T) {
	all := backends(150)
	limit := Limit{N: 100, What: "test limit"}
	local := service(corev1.ServiceExternalTrafficPolicyLocal)
	withEndpoints := func(nodes ...string) []*discoveryv1.EndpointSlice {
		return []*discoveryv1.EndpointSlice{slice(local, "web-a", nodes, "node-149")}
	}
	many := nodeNames(all[:120]) // more endpoint nodes than the limit
	tests := []struct {
		name      string
		svc       *corev1.Service
		backends  []lbspec.Backend
		slices    []*discoveryv1.EndpointSlice
		want      []string // nil: check only the count
		wantCount int
		wantLocal bool
		limit     *Limit // nil: limit
	}{
		{"under the limit: every node", service(corev1.ServiceExternalTrafficPolicyCluster), all[:100], nil, nodeNames(all[:100]), 100, false, nil},
		{"Cluster over the limit: a subset", service(corev1.ServiceExternalTrafficPolicyCluster), all, nil, nil, 100, false, nil},
		// Local Services are narrowed only when a subset is needed: health
		// checks on healthCheckNodePort already drain the other nodes.
		{"Local under the limit: every node", local, all[:100], withEndpoints("node-001"), nodeNames(all[:100]), 100, false, nil},
		{"Local over the limit: the endpoint nodes", local, all, withEndpoints("node-007", "node-042", "node-149"),
			[]string{"node-007", "node-042"}, 2, true, nil},
		{"Local, no ready endpoint: a subset of all", local, all, withEndpoints("node-149"), nil, 100, true, nil},
		{"Local, more endpoint nodes than the limit", local, all, withEndpoints(many...), nil, 100, true, nil},
		// EndpointNodesOnly: Local Services are narrowed even when every node fits.
		{"endpoint nodes only, under the limit", local, all[:100], withEndpoints("node-007", "node-042", "node-149"),
			[]string{"node-007", "node-042"}, 2, true, &Limit{EndpointNodesOnly: true, What: "endpoint nodes only"}},
		{"endpoint nodes only, no ready endpoint: every node", local, all[:100], withEndpoints("node-149"),
			nodeNames(all[:100]), 100, true, &Limit{EndpointNodesOnly: true}},
		{"endpoint nodes only, Cluster: every node", service(corev1.ServiceExternalTrafficPolicyCluster), all[:100], withEndpoints("node-007"),
			nodeNames(all[:100]), 100, false, &Limit{EndpointNodesOnly: true}},
		{"endpoint nodes only, over the limit", local, all, withEndpoints(many...), nil, 100, true,
			&Limit{N: 100, EndpointNodesOnly: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _ := subsetterWith(t, tt.slices...)
			limit := limit
			if tt.limit != nil {
				limit = *tt.limit
			}
			d := s.Choose(tt.svc, tt.backends, limit)
			got := nodeNames(d.Backends)
			if len(got) != tt.wantCount || (tt.want != nil && !slices.Equal(got, tt.want)) {
				t.Fatalf("chose %d %v, want %d %v", len(got), got, tt.wantCount, tt.want)
			}
			if d.Local != tt.wantLocal || d.Eligible != len(tt.backends) {
				t.Fatalf("decision %+v: Local %t, Eligible %d", d, tt.wantLocal, len(tt.backends))
			}
			if strings.HasSuffix(tt.name, "more endpoint nodes than the limit") || tt.name == "endpoint nodes only, over the limit" {
				for _, n := range got {
					if !slices.Contains(many, n) {
						t.Fatalf("chose %s, which runs no ready endpoint", n)
					}
				}
			}
			if again := nodeNames(s.Choose(tt.svc, tt.backends, limit).Backends); !slices.Equal(again, got) {
				t.Fatal("a second Choose chose differently")
			}
		})
	}
	// Without an EndpointSlice lister (zero Subsetter), Local is not narrowed.
	var zero Subsetter
	if d := zero.Choose(local, all, limit); d.Local || len(d.Backends) != 100 {
		t.Fatalf("zero Subsetter: %+v", d)
	}
}

func TestRecordEvents(t *testing.T) {
	rec := record.NewFakeRecorder(20)
	s := New()
	s.Recorder = rec
	svc := service(corev1.ServiceExternalTrafficPolicyCluster)
	limit := Limit{N: 100, What: "TOTAL_TARGET_BIND_QUOTA: 100 targets per listener"}
	events := func() []string {
		var out []string
		for {
			select {
			case e := <-rec.Events:
				out = append(out, e)
			default:
				return out
			}
		}
	}
	s.Record(svc, s.Choose(svc, backends(90), limit))
	if e := events(); len(e) != 0 {
		t.Fatalf("no subset, yet events %v", e)
	}
	s.Record(svc, s.Choose(svc, backends(150), limit))
	e := events()
	if len(e) != 1 || !strings.HasPrefix(e[0], "Normal "+EventReason+" Binding 100 of 150 eligible nodes (limit: TOTAL_TARGET_BIND_QUOTA") ||
		!strings.Contains(e[0], "balanced across 3 zone(s)") {
		t.Fatalf("events %v", e)
	}
	s.Record(svc, s.Choose(svc, backends(150), limit))
	if e := events(); len(e) != 0 {
		t.Fatalf("an unchanged subset recorded %v", e)
	}
	s.Record(svc, s.Choose(svc, backends(151), limit))
	if e := events(); len(e) != 1 || !strings.Contains(e[0], "Binding 100 of 151") {
		t.Fatalf("after a node joined: %v", e)
	}
	s.Record(svc, s.Choose(svc, backends(80), limit))
	if e := events(); len(e) != 1 || !strings.Contains(e[0], "Binding all 80 eligible nodes") {
		t.Fatalf("back under the limit: %v", e)
	}
	s.Record(svc, s.Choose(svc, backends(150), limit))
	s.Forget(svc)
	events()
	s.Record(svc, s.Choose(svc, backends(150), limit))
	if e := events(); len(e) != 1 {
		t.Fatalf("after Forget, the subset is announced again: %v", e)
	}
}

// A Local Service with a subset is re-ensured (annotated) when the nodes
// running its ready endpoints change, and only then.
func TestWatchAnnotatesOnEndpointChange(t *testing.T) {
	local := service(corev1.ServiceExternalTrafficPolicyLocal)
	other := service(corev1.ServiceExternalTrafficPolicyCluster)
	other.Name, other.UID = "other", "uid-other"
	s, client, f := subsetterWith(t)
	s.coalesce = 10 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, svc := range []*corev1.Service{local, other} {
		if _, err := client.CoreV1().Services(svc.Namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	slices := client.DiscoveryV1().EndpointSlices(local.Namespace)
	if _, err := slices.Create(ctx, slice(local, "web-a", []string{"node-001", "node-002"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	go s.Run(ctx, client)

	limit := Limit{N: 100, What: "test"}
	d := s.Choose(local, backends(150), limit)
	if !d.Local || len(d.Backends) != 2 {
		t.Fatalf("decision %+v", d)
	}
	s.Record(local, d)
	s.Record(other, s.Choose(other, backends(150), limit))

	patches := func() []string {
		var out []string
		for _, a := range client.Actions() {
			if p, ok := a.(k8stesting.PatchAction); ok && p.GetSubresource() == "status" {
				out = append(out, p.GetName()+" "+string(p.GetPatch()))
			}
		}
		return out
	}
	// The same nodes (an endpoint changed address only): no re-ensure.
	same := slice(local, "web-a", []string{"node-002", "node-001"})
	same.Endpoints[0].Addresses = []string{"10.244.9.9"}
	if _, err := slices.Update(ctx, same, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Endpoints of an untracked Service: no re-ensure.
	if _, err := slices.Create(ctx, slice(other, "other-a", []string{"node-003"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if p := patches(); len(p) != 0 {
		t.Fatalf("patched without an endpoint node change: %v", p)
	}
	// A pod moves to node-003; another becomes not ready on node-001.
	if _, err := slices.Update(ctx, slice(local, "web-a", []string{"node-001", "node-002", "node-003"}, "node-001"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(patches()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	p := patches()
	if len(p) != 1 || !strings.HasPrefix(p[0], "web ") || !strings.Contains(p[0], string(annotations.EndpointsChanged)) ||
		!strings.Contains(p[0], "2 nodes have a ready endpoint (were 2)") || !strings.Contains(p[0], `"uid":"uid-web"`) {
		t.Fatalf("patches %v", p)
	}
	got, err := client.CoreV1().Services(local.Namespace).Get(ctx, local.Name, metav1.GetOptions{})
	if err != nil || got.Annotations[string(annotations.EndpointsChanged)] == "" {
		t.Fatalf("the Service is not annotated: %v %v", got.Annotations, err)
	}
	// A deleted Service is forgotten: its endpoints no longer matter.
	s.Forget(local)
	if err := slices.Delete(ctx, "web-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(patches()); n != 1 {
		t.Fatalf("%d patches after Forget, want still 1", n)
	}
}

// With WeightCap, each endpoint node's backend weighs its ready endpoints
// (at most the cap); without it, or without endpoints, nothing is weighted.
func TestChooseWeights(t *testing.T) {
	local := service(corev1.ServiceExternalTrafficPolicyLocal)
	// node-001 runs three ready endpoints, node-002 one (and one not ready),
	// node-003 five.
	eps := slice(local, "web-a", []string{"node-001", "node-001", "node-001", "node-002", "node-002", "node-003", "node-003", "node-003", "node-003", "node-003"}, "node-002")
	// slice marks every endpoint on node-002 not ready; add a ready one.
	n2, yes := "node-002", true
	eps.Endpoints = append(eps.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.244.9.9"}, NodeName: &n2, Conditions: discoveryv1.EndpointConditions{Ready: &yes}})
	for _, tt := range []struct {
		name  string
		limit Limit
		want  map[string]int
	}{
		{"weighted", Limit{EndpointNodesOnly: true, WeightCap: 100}, map[string]int{"node-001": 3, "node-002": 1, "node-003": 5}},
		{"capped", Limit{EndpointNodesOnly: true, WeightCap: 4}, map[string]int{"node-001": 3, "node-002": 1, "node-003": 4}},
		{"no cap: not weighted", Limit{EndpointNodesOnly: true}, map[string]int{"node-001": 0, "node-002": 0, "node-003": 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _ := subsetterWith(t, eps)
			d := s.Choose(local, backends(10), tt.limit)
			got := map[string]int{}
			for _, b := range d.Backends {
				got[b.NodeName] = b.Weight
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("weights %v, want %v", got, tt.want)
			}
		})
	}
	// The watch's key sees a count change only when weighted.
	counts := map[string]int{"node-001": 3, "node-002": 1}
	if got := strings.Join(endpointKey(counts, true), ","); got != "node-001=3,node-002=1" {
		t.Errorf("weighted key %q", got)
	}
	if got := strings.Join(endpointKey(counts, false), ","); got != "node-001,node-002" {
		t.Errorf("unweighted key %q", got)
	}
}
