package lbkit

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/lb/lbdrift"
)

// Initialize keeps the client builder for SetInformers and ends the drain
// re-runs when stop closes. The provider's Initialize calls it.
func (l *LoadBalancer[D]) Initialize(b cloudprovider.ControllerClientBuilder, stop <-chan struct{}) {
	l.kube, l.stop = b, stop
	go func() {
		<-stop
		l.stopRerun()
	}()
}

// SetInformers starts what runs beside the service controller on the
// shared informers: the node lister Updates settle with (settle.go), the Warning Events, the subsets' Events and
// EndpointSlice watch, and the drift check. The provider's SetInformers
// calls it, after Initialize and before the informers start.
func (l *LoadBalancer[D]) SetInformers(f informers.SharedInformerFactory) {
	l.settler.nodes = f.Core().V1().Nodes().Lister()
	if l.kube == nil {
		return
	}
	client, err := l.kube.Client(l.cfg.Provider + "-load-balancers")
	if err != nil {
		klog.ErrorS(err, "Load balancer Events, subset watch and drift check disabled: no Kubernetes client")
		return
	}
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
