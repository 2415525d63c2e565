package nodes

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	cloudapi "k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// nodeInfo is one simulated machine: a CVM instance and the Node its
// kubelet registers, named by its private IP (the seed project's
// convention, which the CCM must resolve with a filter lookup).
type nodeInfo struct {
	id, privateIP, publicIP string
}

func makeNodes(n int) []nodeInfo { return nodeRange(0, n) }

// nodeRange is machines first..first+n-1: distinct ranges never share an
// instance id or an address.
func nodeRange(first, n int) []nodeInfo {
	out := make([]nodeInfo, n)
	for i := range n {
		k := first + i
		out[i] = nodeInfo{
			id:        fmt.Sprintf("ins-b%07d", k),
			privateIP: fmt.Sprintf("10.%d.%d.%d", 100+k/62500, (k/250)%250, 1+k%250),
			publicIP:  fmt.Sprintf("100.%d.%d.%d", 64+k/62500, (k/250)%250, 1+k%250),
		}
	}
	return out
}

func (n nodeInfo) instance() cloudsim.Instance {
	return cloudsim.Instance{ID: n.id, Name: n.privateIP, Type: "S5.MEDIUM4", Zone: zone,
		PrivateIP: n.privateIP, PublicIP: n.publicIP, VpcID: vpcID, SubnetID: "subnet-bench001", State: "RUNNING"}
}

func (n nodeInfo) providerID() string { return fmt.Sprintf("tencentcloud:///%s/%s", zone, n.id) }

// parallel runs f for each node with the given number of workers and
// returns the first error.
func parallel[T any](ctx context.Context, nodes []T, workers int, f func(context.Context, T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= len(nodes) || ctx.Err() != nil {
					return
				}
				if err := f(ctx, nodes[k]); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// register creates every Node as a kubelet with --cloud-provider=external
// does (uninitialized taint, host addresses, Ready) and waits until the
// tracker has seen them all.
func (b *bench) register(ctx context.Context) error {
	return registerAll(ctx, b, "", b.nodes, func(n nodeInfo) testcluster.NodeSpec {
		return testcluster.NodeSpec{Name: n.privateIP, InternalIP: n.privateIP}
	})
}

// registerAll registers one Node per item of nodes (spec says which) and
// waits until the tracker sees every one; prefix marks the log line.
func registerAll[N any](ctx context.Context, b *bench, prefix string, nodes []N, spec func(N) testcluster.NodeSpec) error {
	start := time.Now()
	err := parallel(ctx, nodes, 32, func(ctx context.Context, n N) error {
		_, err := b.cluster.RegisterNode(ctx, spec(n))
		return err
	})
	if err != nil {
		return err
	}
	if err := b.tracker.waitFor(ctx, b.cfg.PhaseTimeout, "registered", func(s trackerCounts) bool {
		return s.present == len(nodes)
	}); err != nil {
		return err
	}
	b.logf("%sregistered %d nodes in %s", prefix, len(nodes), time.Since(start).Round(time.Millisecond))
	return nil
}

// deleteAll removes every Node and waits until they are gone.
func (b *bench) deleteAll(ctx context.Context) error {
	start := time.Now()
	n, err := b.deleteNodes(ctx)
	if err != nil {
		return err
	}
	if err := b.tracker.waitFor(ctx, b.cfg.PhaseTimeout, "deleted", func(s trackerCounts) bool { return s.present == 0 }); err != nil {
		return err
	}
	b.logf("deleted %d nodes in %s", n, time.Since(start).Round(time.Millisecond))
	return nil
}

// cleanUp removes a phase's Nodes, except after the run's last phase: the
// control plane's stop (or, on a shared one, the next run's start) removes
// them, and deleting 5,000 Nodes takes 5-10 s.
func (b *bench) cleanUp(ctx context.Context) error {
	if b.lastPhase {
		return nil
	}
	return b.deleteAll(ctx)
}

// deleteNodes deletes every Node, 32 at a time, and returns how many:
// DeleteCollection deletes serially inside the apiserver, and took 9.9 s
// for 5,000 Nodes where this took 5.5 s (a run deletes them 7 times at its
// largest size).
func (b *bench) deleteNodes(ctx context.Context) (int, error) {
	list, err := b.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("delete nodes: list: %w", err)
	}
	names := make([]string, len(list.Items))
	for i := range list.Items {
		names[i] = list.Items[i].Name
	}
	return len(names), parallel(ctx, names, 32, func(ctx context.Context, name string) error {
		err := b.client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete node %s: %w", name, err)
		}
		return nil
	})
}

// patchLikeTheCCM makes the writes the cloud node controller makes to
// initialize a node: providerID, the instance-type/zone/region labels and
// the taint removal in one request, then the cloud's addresses in a status
// patch. This is the floor: nothing can initialize a node with less.
func (b *bench) patchLikeTheCCM(ctx context.Context, n nodeInfo) error {
	labels := map[string]string{
		corev1.LabelInstanceType: "S5.MEDIUM4", corev1.LabelInstanceTypeStable: "S5.MEDIUM4",
		corev1.LabelFailureDomainBetaZone: zone, corev1.LabelTopologyZone: zone,
		corev1.LabelFailureDomainBetaRegion: region, corev1.LabelTopologyRegion: region,
	}
	meta, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"labels": labels},
		"spec":     map[string]any{"providerID": n.providerID(), "taints": []any{}},
	})
	nodes := b.client.CoreV1().Nodes()
	if _, err := nodes.Patch(ctx, n.privateIP, types.MergePatchType, meta, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("floor: patch node %s: %w", n.privateIP, err)
	}
	status, _ := json.Marshal(map[string]any{"status": map[string]any{"addresses": []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: n.privateIP},
		{Type: corev1.NodeExternalIP, Address: n.publicIP},
		{Type: corev1.NodeHostName, Address: n.privateIP},
	}}})
	if _, err := nodes.Patch(ctx, n.privateIP, types.MergePatchType, status, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("floor: patch node %s status: %w", n.privateIP, err)
	}
	return nil
}

// postSyncedEvent creates the Event upstream's node controller records for
// each node it initializes (cloud-provider node_controller.go: Normal,
// "Synced", "Node synced successfully").
func (b *bench) postSyncedEvent(ctx context.Context, node string) error {
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: node + ".", Namespace: metav1.NamespaceDefault},
		InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: node, UID: types.UID(node), APIVersion: "v1"},
		Type:           corev1.EventTypeNormal, Reason: "Synced", Message: "Node synced successfully",
		Source:         corev1.EventSource{Component: "cloud-node-controller"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if _, err := b.client.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("upstream floor: event for node %s: %w", node, err)
	}
	return nil
}

// initialized: what the CCM does to a node is done: taint gone, providerID
// and the cloud's addresses set.
func initialized(n *corev1.Node) bool {
	if n.Spec.ProviderID == "" || testcluster.HasTaint(n, cloudapi.TaintExternalCloudProvider) {
		return false
	}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeExternalIP {
			return true
		}
	}
	return false
}

// tracker watches Nodes and counts the present and initialized ones. It
// also notes when it first saw each node without the uninitialized taint:
// the end of a node's join in the burst section.
type tracker struct {
	stopCh    chan struct{}
	isDone    func(*corev1.Node) bool // initialized, or the OCI section's ociInitialized
	mu        sync.Mutex
	done      map[string]bool      // name -> initialized
	untainted map[string]time.Time // name -> first seen without the taint
}

type trackerCounts struct{ present, initialized, untainted int }

func startTracker(ctx context.Context, client kubernetes.Interface) (*tracker, error) {
	return startTrackerFor(ctx, client, initialized)
}

// startTrackerFor is startTracker with isDone deciding "initialized".
func startTrackerFor(ctx context.Context, client kubernetes.Interface, isDone func(*corev1.Node) bool) (*tracker, error) {
	t := &tracker{stopCh: make(chan struct{}), isDone: isDone, done: map[string]bool{}, untainted: map[string]time.Time{}}
	factory := informers.NewSharedInformerFactory(client, 0)
	inf := factory.Core().V1().Nodes().Informer()
	set := func(obj any) {
		if n, ok := obj.(*corev1.Node); ok {
			now := time.Now()
			t.mu.Lock()
			t.done[n.Name] = t.isDone(n)
			if _, seen := t.untainted[n.Name]; !seen && !testcluster.HasTaint(n, cloudapi.TaintExternalCloudProvider) {
				t.untainted[n.Name] = now
			}
			t.mu.Unlock()
		}
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if n, ok := obj.(*corev1.Node); ok {
				t.mu.Lock()
				delete(t.done, n.Name)
				delete(t.untainted, n.Name)
				t.mu.Unlock()
			}
		},
	})
	if err != nil {
		return nil, err
	}
	factory.Start(t.stopCh)
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		close(t.stopCh)
		return nil, fmt.Errorf("node informer did not sync")
	}
	return t, nil
}

func (t *tracker) stop() { close(t.stopCh) }

func (t *tracker) counts() trackerCounts {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := trackerCounts{present: len(t.done), untainted: len(t.untainted)}
	for _, ok := range t.done {
		if ok {
			c.initialized++
		}
	}
	return c
}

// untaintedAt returns when the named node was first seen without the
// uninitialized taint.
func (t *tracker) untaintedAt(name string) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.untainted[name]
	return at, ok
}

// waitFor polls until cond holds, or fails after timeout naming what.
func (t *tracker) waitFor(ctx context.Context, timeout time.Duration, what string, cond func(trackerCounts) bool) error {
	deadline := time.Now().Add(timeout)
	for {
		c := t.counts()
		if cond(c) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nodes not %s within %s: %d present, %d initialized", what, timeout, c.present, c.initialized)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
