package main

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/klog/v2"
)

// trimNodeCache makes the shared Node informer keep only what this process
// reads. Every controller here (node, node lifecycle, route, service, and the
// providers) reads a Node's name, labels, annotations, taints, spec, addresses
// and conditions; none reads its managedFields or its status.images, which
// are most of a Node's size on a real cluster (the kubelet reports up to 50
// images, with every tag and digest). The informer holds one copy per node,
// so at 10,000 nodes these fields are the largest part of the CCM's heap that
// is ours to cut (docs/scale.md).
//
// What is dropped never goes back to the API server by accident: upstream's
// node controller Updates the Node from this cache, but an Update does not
// write status (a subresource), and the API server keeps the stored
// managedFields when a request carries none.
func trimNodeCache(f informers.SharedInformerFactory) {
	if err := f.Core().V1().Nodes().Informer().SetTransform(trimNode); err != nil {
		// Only possible once the informer runs, which is after this is
		// called; the cache then keeps whole Nodes, which is correct.
		klog.ErrorS(err, "Cannot trim the Node cache; it keeps whole Nodes")
	}
}

// trimNode drops a Node's managedFields and status.images. It is idempotent,
// as a transform must be, and passes anything else (a tombstone) through.
func trimNode(obj any) (any, error) {
	if n, ok := obj.(*corev1.Node); ok {
		n.ManagedFields = nil
		n.Status.Images = nil
	}
	return obj, nil
}
