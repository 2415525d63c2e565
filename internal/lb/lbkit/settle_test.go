package lbkit

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	cloudapi "k8s.io/cloud-provider/api"
)

// settleFixture is a node lister and a fake clock: each sleep advances the
// clock by the poll and runs the step due then (a node initialized).
type settleFixture struct {
	store cache.Indexer
	mu    sync.Mutex
	now   time.Time
	steps map[int]func() // poll number -> what happens during it
	polls int
}

func newSettleFixture(t *testing.T, ns ...*corev1.Node) (*settleFixture, *settler) {
	f := &settleFixture{store: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}),
		now: time.Date(2026, 11, 25, 20, 0, 0, 0, time.UTC), steps: map[int]func(){}}
	for _, n := range ns {
		if err := f.store.Add(n); err != nil {
			t.Fatal(err)
		}
	}
	s := &settler{nodes: corelisters.NewNodeLister(f.store), maxWait: time.Second, maxAge: 10 * time.Second, poll: 100 * time.Millisecond,
		now: func() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now },
		sleep: func(_ context.Context, d time.Duration) error {
			f.mu.Lock()
			f.now = f.now.Add(d)
			f.polls++
			step := f.steps[f.polls]
			f.mu.Unlock()
			if step != nil {
				step()
			}
			return nil
		}}
	return f, s
}

// node is a Node registered age before the fixture's clock; joining ones
// have the uninitialized taint and no providerID.
func (f *settleFixture) node(name string, age time.Duration, joining bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(f.now.Add(-age))},
		Spec: corev1.NodeSpec{ProviderID: "cloud:///" + name}}
	if joining {
		n.Spec.ProviderID = ""
		n.Spec.Taints = []corev1.Taint{{Key: cloudapi.TaintExternalCloudProvider, Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	}
	return n
}

func (f *settleFixture) initialize(t *testing.T, n *corev1.Node) func() {
	return func() {
		done := n.DeepCopy()
		done.Spec.ProviderID, done.Spec.Taints = "cloud:///"+n.Name, nil
		if err := f.store.Update(done); err != nil {
			t.Error(err)
		}
	}
}

func names(ns []*corev1.Node) map[string]string {
	out := map[string]string{}
	for _, n := range ns {
		out[n.Name] = n.Spec.ProviderID
	}
	return out
}

// An Update waits for the nodes joining now and then uses every node as it
// is then; it does not wait for nodes that are not joining.
func TestSettleWaitsForJoiningNodes(t *testing.T) {
	tests := []struct {
		name string
		// old: initialized; young/stale: uninitialized, registered 1 s /
		// 1 min ago; excluded: young but labeled out of load balancers.
		young, stale, excluded bool
		initAt                 int // poll during which young is initialized; 0: never
		wantPolls              int
		wantFresh              bool // the informer's nodes, not the caller's
		wantYoungID            string
	}{
		{name: "nothing joining: the caller's nodes, no wait", wantPolls: 0},
		{name: "a node registered a minute ago is not waited for", stale: true, wantPolls: 0},
		{name: "an excluded node is not waited for", excluded: true, wantPolls: 0},
		{name: "joining node initialized after 3 polls", young: true, initAt: 3, wantPolls: 3, wantFresh: true, wantYoungID: "cloud:///young"},
		{name: "joining node never initialized: gives up after maxWait", young: true, wantPolls: 10, wantFresh: true, wantYoungID: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, s := newSettleFixture(t)
			add := func(n *corev1.Node) {
				if err := f.store.Add(n); err != nil {
					t.Fatal(err)
				}
			}
			old := f.node("old", time.Hour, false)
			add(old)
			caller := []*corev1.Node{old}
			if tt.young {
				y := f.node("young", time.Second, true)
				add(y)
				if tt.initAt > 0 {
					f.steps[tt.initAt] = f.initialize(t, y)
				}
			}
			if tt.stale {
				add(f.node("stale", time.Minute, true))
			}
			if tt.excluded {
				x := f.node("excluded", time.Second, true)
				x.Labels = map[string]string{corev1.LabelNodeExcludeBalancers: "true"}
				add(x)
			}
			got := s.settle(context.Background(), service("web", nil), caller)
			if f.polls != tt.wantPolls {
				t.Errorf("waited %d polls, want %d", f.polls, tt.wantPolls)
			}
			if !tt.wantFresh {
				if len(got) != 1 || got[0] != old {
					t.Fatalf("got %v, want the caller's nodes", names(got))
				}
				return
			}
			want := map[string]string{"old": "cloud:///old", "young": tt.wantYoungID}
			if g := names(got); len(g) != len(want) || g["old"] != want["old"] || g["young"] != want["young"] {
				t.Errorf("got nodes %v, want %v", g, want)
			}
		})
	}
}

// Without a node lister (no SetInformers) an Update never waits.
func TestSettleWithoutInformerUsesCallersNodes(t *testing.T) {
	s := newSettler()
	in := nodes(3)
	if got := s.settle(context.Background(), service("web", nil), in); len(got) != 3 || got[0] != in[0] {
		t.Fatalf("got %d nodes, want the caller's 3", len(got))
	}
}

// Through the pipeline: an Update during a burst reaches the ops layer
// once, with the nodes initialized while it waited as backends.
func TestPipelineUpdateSettlesBurst(t *testing.T) {
	ops := &recordingOps{}
	lb := newTestLB(0, ops)
	f, s := newSettleFixture(t)
	lb.settler = s
	old := f.node("old", time.Hour, false)
	burst := []*corev1.Node{f.node("new-1", time.Second, true), f.node("new-2", 0, true)}
	for _, n := range append([]*corev1.Node{old}, burst...) {
		if err := f.store.Add(n); err != nil {
			t.Fatal(err)
		}
	}
	f.steps[1] = f.initialize(t, burst[0])
	f.steps[2] = f.initialize(t, burst[1])
	if err := lb.UpdateLoadBalancer(context.Background(), "k", service("web", nil), []*corev1.Node{old, burst[0]}); err != nil {
		t.Fatal(err)
	}
	if len(ops.updated) != 1 || len(ops.updated[0].Backends) != 3 {
		t.Fatalf("ops got %d updates (first with %v), want one with 3 backends", len(ops.updated), ops.updated)
	}
}
