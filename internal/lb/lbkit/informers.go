package lbkit

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/lb/lbdrift"
)

// Initialize builds the pipeline's Kubernetes client (Events, the shown
// annotations, the translator's Secrets, the subsets' and drift check's
// watches) and ends the drain re-runs when stop closes. The provider's
// Initialize calls it; b nil (tests without a cluster): no client.
func (l *LoadBalancer[D]) Initialize(b cloudprovider.ControllerClientBuilder, stop <-chan struct{}) {
	l.stop = stop
	go func() {
		<-stop
		l.stopRerun()
	}()
	if b == nil {
		return
	}
	client, err := b.Client(l.cfg.Provider + "-load-balancers")
	if err != nil {
		klog.ErrorS(err, "Load balancer Events, annotations, Secrets, subset watch and drift check disabled: no Kubernetes client")
		return
	}
	l.UseKubeClient(client)
}

// UseKubeClient makes the pipeline write and read with client: the shown
// annotations and the translator's Secrets. `cloud-controller-manager
// adopt` calls it, so that its plans read the Services' Secrets; the CCM
// gets it in Initialize.
func (l *LoadBalancer[D]) UseKubeClient(client kubernetes.Interface) {
	l.client.Store(&client)
	if l.cfg.Secrets != nil {
		l.cfg.Secrets.Use(client)
	}
}

// SetInformers starts what runs beside the service controller on the
// shared informers: the node lister Updates settle with (settle.go), the
// Warning Events, the subsets' Events and EndpointSlice watch, and the
// drift check. The provider's SetInformers calls it, after Initialize and
// before the informers start.
func (l *LoadBalancer[D]) SetInformers(f informers.SharedInformerFactory) {
	l.settler.nodes = f.Core().V1().Nodes().Lister()
	kube := l.client.Load()
	if kube == nil || l.stop == nil {
		return
	}
	client := *kube
	broadcaster := record.NewBroadcaster()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-l.stop
		cancel()
		broadcaster.Shutdown()
	}()
	l.UseRecorder(broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: l.cfg.Provider + "-load-balancer"}))
	subsetEvents := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "service-lb-subset"})
	if err := l.subsets.Start(ctx, f, client, subsetEvents); err != nil {
		klog.ErrorS(err, "Watching EndpointSlices; Local Services with a subset of the nodes are not re-ensured when their endpoints move")
	}
	lbdrift.Start(ctx, f, client, broadcaster, l.cfg.DriftPeriod, l.Drift)
}
