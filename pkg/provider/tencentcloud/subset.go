package tencentcloud

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/lbspec"
	"github.com/ccmkit/ccm/internal/lbsubset"
	"github.com/ccmkit/ccm/internal/tencent/clbops"
)

// chooseTargets narrows spec.Backends to what one CLB listener can bind:
// TOTAL_TARGET_BIND_QUOTA targets (100 unless a ticket raised it). Below the
// documented default every eligible node is bound and the quota is not even
// read; above it, lbsubset chooses the Service's own subset (for
// externalTrafficPolicy Local, among the nodes with a ready endpoint).
func (l *loadBalancers) chooseTargets(ctx context.Context, svc *v1.Service, spec *lbspec.Spec) lbsubset.Decision {
	limit := lbsubset.Limit{}
	if l.quotas != nil && len(spec.Backends) > clbops.DefaultTargetQuota {
		n := l.quotas.TargetsPerListener(ctx)
		limit = lbsubset.Limit{N: n, What: fmt.Sprintf("%s, %d targets per CLB listener", clbops.QuotaTargetBind, n)}
	}
	var d lbsubset.Decision
	if l.subsets != nil {
		d = l.subsets.Choose(svc, spec.Backends, limit)
	} else {
		d = (&lbsubset.Subsetter{}).Choose(svc, spec.Backends, limit)
	}
	spec.Backends = d.Backends
	// The listeners must never hold more than the quota, even for a moment
	// while targets are replaced; below the documented default, that
	// default is the bound (quotas are only ever raised).
	spec.BackendLimit = clbops.DefaultTargetQuota
	if limit.N > 0 {
		spec.BackendLimit = limit.N
	}
	return d
}

// record tells the Service about its subset (a Normal Event when it starts,
// changes or ends) and remembers a Local Service's endpoint nodes.
func (l *loadBalancers) record(svc *v1.Service, d lbsubset.Decision) {
	if l.subsets != nil {
		l.subsets.Record(svc, d)
	}
}

// startSubsets gives the subsetting its Event recorder and the shared
// EndpointSlice informer, and runs the watch that re-ensures a Local
// Service whose endpoint nodes change (the service controller does not
// watch endpoints).
func (l *loadBalancers) startSubsets(ctx context.Context, f informers.SharedInformerFactory, client kubernetes.Interface, b record.EventBroadcaster) {
	if l.subsets == nil {
		return
	}
	recorder := b.NewRecorder(scheme.Scheme, v1.EventSource{Component: "service-lb-subset"})
	if err := l.subsets.Start(ctx, f, client, recorder); err != nil {
		klog.ErrorS(err, "Watching EndpointSlices; Local Services with a subset of the nodes are not re-ensured when their endpoints move")
	}
}
