package tencentcloud

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/annotations"
)

// clbLoadBalancers is the CLB pipeline (internal/lb/lbkit) plus what TKE's
// own service controller shows on a Service: its CLB's id, in the
// read-only annotation service.kubernetes.io/loadbalance-id. The
// cloudprovider interface returns only a status, so the annotation is
// patched here, after each Ensure or Update, when the Service does not
// already carry the id (an unchanged resync writes nothing).
type clbLoadBalancers struct {
	*loadBalancers
	ids *foundIDs
	// drift is how each Service's CLB differs from its creation-time
	// settings (creation_drift.go).
	drift *creationDrift
	// kube writes the annotation; nil until Initialize (unit tests without
	// a cluster: nothing is written).
	kube atomic.Pointer[kubernetes.Interface]
	// secrets reads specify-protocol's certificate Secrets (protocol.go).
	secrets *certSecrets
}

var _ cloudprovider.LoadBalancer = (*clbLoadBalancers)(nil)

// foundIDs holds, per Service, the CLB id clbops found or created during
// the call in progress (clbops.Config.OnFound).
type foundIDs struct{ m sync.Map } // types.UID -> string

func (f *foundIDs) found(uid types.UID, id string) { f.m.Store(uid, id) }

func (f *foundIDs) take(uid types.UID) (string, bool) {
	v, ok := f.m.LoadAndDelete(uid)
	if !ok {
		return "", false
	}
	return v.(string), true
}

// loadBalanceIDFieldManager owns the annotation in managedFields.
const loadBalanceIDFieldManager = "ccmkit-clb-id"

// Initialize hands lbkit its client builder, and builds the client that
// writes the annotation.
func (l *clbLoadBalancers) Initialize(b cloudprovider.ControllerClientBuilder, stop <-chan struct{}) {
	l.loadBalancers.Initialize(b, stop)
	if b == nil {
		return // no cluster (tests): nothing is written
	}
	client, err := b.Client(ProviderName + "-clb-id")
	if err != nil {
		klog.ErrorS(err, "No Kubernetes client: Services will not show their CLB id", "annotation", annotations.TKELoadBalanceID)
		return
	}
	l.kube.Store(&client)
	l.secrets.Use(client)
}

// UseKubeClient gives the Secret reader (specify-protocol's certificates)
// a client outside the controllers: `cloud-controller-manager adopt`'s.
func (l *clbLoadBalancers) UseKubeClient(client kubernetes.Interface) { l.secrets.Use(client) }

// EnsureLoadBalancer ensures the CLB, then shows its id on the Service.
func (l *clbLoadBalancers) EnsureLoadBalancer(ctx context.Context, clusterName string, svc *v1.Service, nodes []*v1.Node) (*v1.LoadBalancerStatus, error) {
	st, err := l.loadBalancers.EnsureLoadBalancer(ctx, clusterName, svc, nodes)
	l.showID(ctx, svc)
	l.reportDrift(svc)
	return st, err
}

// UpdateLoadBalancer updates the CLB's targets, then shows its id on the
// Service (a failed earlier write is repaired here).
func (l *clbLoadBalancers) UpdateLoadBalancer(ctx context.Context, clusterName string, svc *v1.Service, nodes []*v1.Node) error {
	err := l.loadBalancers.UpdateLoadBalancer(ctx, clusterName, svc, nodes)
	l.showID(ctx, svc)
	l.reportDrift(svc)
	return err
}

// EnsureLoadBalancerDeleted deletes what the Service owns and, when the
// Service lives on (it is no longer a LoadBalancer), removes the id.
func (l *clbLoadBalancers) EnsureLoadBalancerDeleted(ctx context.Context, clusterName string, svc *v1.Service) error {
	if err := l.loadBalancers.EnsureLoadBalancerDeleted(ctx, clusterName, svc); err != nil {
		return err
	}
	l.ids.take(svc.UID)
	l.drift.forget(svc.UID)
	if _, set := svc.Annotations[string(annotations.TKELoadBalanceID)]; set && svc.DeletionTimestamp == nil {
		l.patchID(ctx, svc, nil)
	}
	return nil
}

// showID writes the id clbops found for svc, unless svc shows it already.
// A value set by hand is overwritten: only the CCM's is true.
func (l *clbLoadBalancers) showID(ctx context.Context, svc *v1.Service) {
	id, ok := l.ids.take(svc.UID)
	if !ok {
		return
	}
	if old, set := svc.Annotations[string(annotations.TKELoadBalanceID)]; set && old == id {
		return
	} else if set {
		klog.InfoS("Overwriting a read-only annotation with the Service's CLB id", "service", klog.KObj(svc),
			"annotation", annotations.TKELoadBalanceID, "was", old, "id", id)
	}
	l.patchID(ctx, svc, &id)
}

// patchID sets the annotation to *id, or removes it (nil). A merge patch
// of one annotation cannot conflict with the user's edits; the uid is a
// precondition, so that a newer Service of the same name is never touched.
// It goes through the status subresource, which accepts metadata changes
// for Services, so it needs no permission beyond the service controller's
// (services/status patch), as the drift check's annotation. A failure is
// logged; the next Ensure or Update writes it again.
func (l *clbLoadBalancers) patchID(ctx context.Context, svc *v1.Service, id *string) {
	kube := l.kube.Load()
	if kube == nil {
		return
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":         svc.UID,
		"annotations": map[string]*string{string(annotations.TKELoadBalanceID): id},
	}})
	if err == nil {
		_, err = (*kube).CoreV1().Services(svc.Namespace).Patch(ctx, svc.Name, types.MergePatchType, patch,
			metav1.PatchOptions{FieldManager: loadBalanceIDFieldManager}, "status")
	}
	if err != nil {
		klog.ErrorS(err, "Annotating the Service with its CLB id", "service", klog.KObj(svc), "annotation", annotations.TKELoadBalanceID)
	}
}
