package oci

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/lbdrift"
	"github.com/ccmkit/ccm/internal/lbspec"
	"github.com/ccmkit/ccm/internal/lbsubset"
	"github.com/ccmkit/ccm/internal/oci/lbops"
)

// chooseBackends returns the Service's backends within the kind's
// documented limits: every backend set holds the same nodes, so each can
// hold min(backends per set, backends in all / backend sets). When the
// eligible nodes (with an InternalIP) exceed that, lbsubset chooses the
// Service's own subset, as for Tencent CLB; for externalTrafficPolicy Local,
// among the nodes with a ready endpoint. A Service with more ports than the
// kind takes listeners is refused before any API call.
func (l *loadBalancers) chooseBackends(svc *corev1.Service, spec *lbspec.Spec, nodes []*corev1.Node, kind lbops.Kind) ([]lbops.Backend, error) {
	lim := lbops.LimitsOf(kind)
	if err := lim.CheckListeners(kind, len(spec.Listeners)); err != nil {
		return nil, &lbspec.Error{Service: spec.Service, Problems: []error{err}}
	}
	byName := map[string]*corev1.Node{}
	for _, n := range nodes {
		if n != nil {
			byName[n.Name] = n
		}
	}
	var candidates []lbspec.Backend
	for _, b := range spec.Backends {
		if internalIPv4(byName[b.NodeName]) != "" {
			candidates = append(candidates, b)
		}
	}
	limit := lbsubset.Limit{N: lim.BackendsPerListener(len(spec.Listeners)), What: lim.Describe(kind, len(spec.Listeners))}
	subsets := l.subsets
	if subsets == nil {
		subsets = &lbsubset.Subsetter{}
	}
	d := subsets.Choose(svc, candidates, limit)
	subsets.Record(svc, d)
	return backendsOf(d.Backends, nodes), nil
}

// startSubsets gives the subsetting a recorder for its Normal Events and
// the shared EndpointSlice informer, and runs the watch that re-ensures a
// Local Service whose endpoint nodes change (the service controller does
// not watch endpoints). The load balancers get a recorder for their
// Warning Events too, and the drift check starts beside them.
func (c *Cloud) startSubsets(f informers.SharedInformerFactory) {
	if c.subsets == nil || c.kube == nil {
		return
	}
	client, err := c.kube.Client("oci-load-balancers")
	if err != nil {
		klog.ErrorS(err, "Load balancer subset Events and EndpointSlice watch disabled: no Kubernetes client")
		return
	}
	broadcaster := record.NewBroadcaster()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-c.stop
		cancel()
		broadcaster.Shutdown()
	}()
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "service-lb-subset"})
	if c.lb != nil {
		c.lb.events = broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "oci-load-balancer"})
	}
	if err := c.subsets.Start(ctx, f, client, recorder); err != nil {
		klog.ErrorS(err, "Watching EndpointSlices; Local Services with a subset of the nodes are not re-ensured when their endpoints move")
	}
	if c.lb != nil {
		lbdrift.Start(ctx, f, client, broadcaster, c.cfg.LBDriftCheckPeriod, c.lb.drift)
	}
}
