package lbsubset

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/annotations"
)

// DefaultCoalesce is how long a change of endpoints waits before it is
// checked, so that a rollout moving many pods costs one re-ensure, not one
// per pod.
const DefaultCoalesce = 2 * time.Second

// Start wires the Subsetter into a running CCM: Normal Events through
// recorder, the shared informer factory's EndpointSlice informer (so that
// Choose narrows Local Services to their endpoint nodes), and Run until ctx
// ends. Call it before the factory starts its informers (a provider's
// SetInformers). It needs list and watch on discovery.k8s.io endpointslices.
func (s *Subsetter) Start(ctx context.Context, f informers.SharedInformerFactory, client kubernetes.Interface, recorder record.EventRecorder) error {
	s.Recorder = recorder
	if err := s.Use(f.Discovery().V1().EndpointSlices().Informer()); err != nil {
		return err
	}
	go s.Run(ctx, client)
	return nil
}

// Use gives the Subsetter the EndpointSlice informer: Choose then narrows
// Local Services to their endpoint nodes, and Run watches for changes.
// Call it before the informer starts.
func (s *Subsetter) Use(informer cache.SharedIndexInformer) error {
	s.mu.Lock()
	s.endpoints = discoverylisters.NewEndpointSliceLister(informer.GetIndexer())
	s.mu.Unlock()
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    s.onSlice,
		UpdateFunc: func(_, obj any) { s.onSlice(obj) },
		DeleteFunc: s.onSlice,
	})
	return err
}

// onSlice queues the slice's Service if it is a tracked Local Service.
func (s *Subsetter) onSlice(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	slice, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok || slice.Labels[discoveryv1.LabelServiceName] == "" {
		return
	}
	key := types.NamespacedName{Namespace: slice.Namespace, Name: slice.Labels[discoveryv1.LabelServiceName]}
	s.mu.Lock()
	_, watched := s.tracked[key]
	s.mu.Unlock()
	if watched && s.queue != nil {
		s.queue.AddAfter(key, s.coalesce)
	}
}

// Run asks for a re-ensure of each tracked Local Service whose endpoint
// nodes changed, until ctx ends. The upstream service controller does not
// watch endpoints, so it is told through the Service: the
// lb.ccmkit.io/endpoints-changed annotation, written through the status
// subresource like the drift check's (no permission beyond the
// controller's). That Service update makes the controller call
// EnsureLoadBalancer, which chooses again and records the new nodes.
func (s *Subsetter) Run(ctx context.Context, client kubernetes.Interface) {
	go func() {
		<-ctx.Done()
		s.queue.ShutDown()
	}()
	for {
		key, quit := s.queue.Get()
		if quit {
			return
		}
		if err := s.check(ctx, client, key); err != nil {
			klog.ErrorS(err, "Asking for a re-ensure after an endpoint change", "service", key)
			s.queue.AddRateLimited(key)
		} else {
			s.queue.Forget(key)
		}
		s.queue.Done(key)
	}
}

// check compares a tracked Service's endpoint nodes with the current ones
// and, when they differ, annotates the Service.
func (s *Subsetter) check(ctx context.Context, client kubernetes.Interface, key types.NamespacedName) error {
	s.mu.Lock()
	t, ok := s.tracked[key]
	lister := s.endpoints
	s.mu.Unlock()
	if !ok || lister == nil {
		return nil
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	counts, err := readyEndpoints(lister, svc)
	if err != nil {
		return err
	}
	nodes := endpointKey(counts, t.weighted)
	joined := strings.Join(nodes, ",")
	if joined == t.nodes {
		return nil
	}
	value := fmt.Sprintf("%s: %d nodes have a ready endpoint (were %d)", time.Now().UTC().Format(time.RFC3339Nano), len(nodes), t.count)
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":         t.uid, // a precondition: never annotate a newer Service of the same name
		"annotations": map[string]string{string(annotations.EndpointsChanged): value},
	}})
	if err != nil {
		return err
	}
	klog.InfoS("Endpoint nodes of a Local Service changed; asking for a re-ensure of its load balancer", "service", key,
		"endpointNodes", len(nodes), "before", t.count)
	_, err = client.CoreV1().Services(key.Namespace).Patch(ctx, key.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: "ccmkit-lb-subset"}, "status")
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.tracked[key]
	if !ok || cur.uid != t.uid {
		return nil
	}
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err) || apierrors.IsInvalid(err):
		// Gone, or replaced by a Service of the same name (the uid differs):
		// its next ensure tracks it again if it needs to be.
		delete(s.tracked, key)
		return nil
	case err != nil:
		return err
	}
	// Until the re-ensure records its choice, compare with what was asked for.
	s.tracked[key] = tracked{uid: t.uid, nodes: joined, count: len(nodes), weighted: t.weighted}
	return nil
}
