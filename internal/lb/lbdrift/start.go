package lbdrift

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// Start runs the drift check of check every period, on the shared
// informers, until ctx ends: the one line a provider needs. Call it before
// the informers start (cloudprovider.InformerUser's SetInformers). A period
// of 0 or less starts nothing.
func Start(ctx context.Context, f informers.SharedInformerFactory, client kubernetes.Interface, events record.EventBroadcaster, period time.Duration, check CheckFunc) {
	if period <= 0 {
		return
	}
	services, nodes := f.Core().V1().Services(), f.Core().V1().Nodes()
	c := &Checker{
		Period:   period,
		Services: services.Lister(),
		Nodes:    nodes.Lister(),
		Synced:   []cache.InformerSynced{services.Informer().HasSynced, nodes.Informer().HasSynced},
		Client:   client,
		Recorder: events.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "service-lb-drift"}),
		Check:    check,
	}
	go c.Run(ctx)
}
