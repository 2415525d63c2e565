// Package lbdrift re-ensures load balancers that drifted from their Service.
//
// The upstream service controller reconciles a load balancer only when its
// Service (or the node set) changes: its informer resync does not enqueue
// unchanged Services, so a listener deleted in the cloud console stays
// deleted. The Checker closes that gap without replacing the controller:
// every period it asks the provider, reading only, whether each load
// balancer still matches its Service, and for each one that does not it
// records a Warning Event and writes the time and the findings to the
// lb.ccmkit.io/drift-detected annotation (through the status subresource,
// like the controller's own finalizer, so no extra permission is needed). That annotation change is a
// Service update, so the upstream controller calls EnsureLoadBalancer, which
// repairs the drift, with its usual Events, status updates and retries.
//
// A check costs reads only (for Tencent CLB: one DescribeLoadBalancers per
// 100 Services, then a DescribeListeners and a DescribeTargets per load
// balancer); Services in sync are never written to.
package lbdrift

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/lb/lbspec"
)

// Result is the provider's answer for one Service.
type Result struct {
	Diffs []string // what differs; nil when in sync
	Err   error    // the Service could not be checked
}

// CheckFunc compares the load balancers of services with what they want,
// reading only. nodes are all the cluster's nodes.
type CheckFunc func(ctx context.Context, services []*corev1.Service, nodes []*corev1.Node) map[types.UID]Result

// Checker runs the periodic drift check.
type Checker struct {
	Period   time.Duration
	Services corelisters.ServiceLister
	Nodes    corelisters.NodeLister
	Synced   []cache.InformerSynced
	Client   kubernetes.Interface
	Recorder record.EventRecorder
	Check    CheckFunc
	// Now is the clock for annotation values; default time.Now.
	Now func() time.Time
}

// EventReason is the reason of the Warning Event recorded on drift.
const EventReason = "LoadBalancerDrift"

// maxAnnotationFindings bounds the annotation value (and the Event).
const maxAnnotationFindings = 5

// Run checks every Period until ctx ends, starting one Period after the
// caches have synced (the service controller ensures every load balancer
// at startup anyway).
func (c *Checker) Run(ctx context.Context) {
	if c.Period <= 0 {
		return
	}
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.Synced...) {
		return
	}
	klog.InfoS("Starting load balancer drift check", "period", c.Period)
	select {
	case <-ctx.Done():
		return
	case <-time.After(c.Period):
	}
	wait.JitterUntilWithContext(ctx, func(ctx context.Context) { c.CheckOnce(ctx) }, c.Period, 0.1, false)
}

// CheckOnce runs one check and returns the number of Services found drifted.
func (c *Checker) CheckOnce(ctx context.Context) int {
	registerMetrics()
	services, err := c.Services.List(labels.Everything())
	if err != nil {
		klog.ErrorS(err, "Drift check: listing Services")
		checks.WithLabelValues("error").Inc()
		return 0
	}
	var candidates []*corev1.Service
	for _, svc := range services {
		if checkable(svc) {
			candidates = append(candidates, svc)
		}
	}
	if len(candidates) == 0 {
		checks.WithLabelValues("ok").Inc()
		return 0
	}
	slices.SortFunc(candidates, func(a, b *corev1.Service) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	nodes, err := c.Nodes.List(labels.Everything())
	if err != nil {
		klog.ErrorS(err, "Drift check: listing Nodes")
		checks.WithLabelValues("error").Inc()
		return 0
	}
	start := time.Now()
	results := c.Check(ctx, candidates, nodes)
	drifted, failed := 0, 0
	for _, svc := range candidates {
		r, ok := results[svc.UID]
		switch {
		case !ok:
		case r.Err != nil:
			// Invalid annotations, API errors: the service controller
			// reports those on its own syncs; do not add noise.
			klog.V(2).InfoS("Drift check skipped a Service", "service", klog.KObj(svc), "err", r.Err)
			failed++
		case len(r.Diffs) > 0:
			drifted++
			detected.Inc()
			c.report(ctx, svc, r.Diffs)
		}
	}
	result := "ok"
	if failed > 0 {
		result = "error"
	}
	checks.WithLabelValues(result).Inc()
	klog.V(2).InfoS("Drift check done", "services", len(candidates), "drifted", drifted, "duration", time.Since(start).Round(time.Millisecond))
	return drifted
}

// checkable: a Service whose load balancer the service controller has
// established (it has an ingress) and still wants. Services still being
// set up, failing, or being deleted are the controller's business.
func checkable(svc *corev1.Service) bool {
	return lbspec.WantsLoadBalancer(svc) && svc.DeletionTimestamp == nil && len(svc.Status.LoadBalancer.Ingress) > 0
}

func (c *Checker) report(ctx context.Context, svc *corev1.Service, diffs []string) {
	summary := summarize(diffs)
	klog.InfoS("Load balancer drifted from its Service; asking for a re-ensure", "service", klog.KObj(svc), "findings", summary)
	if c.Recorder != nil {
		c.Recorder.Eventf(svc, corev1.EventTypeWarning, EventReason, "Load balancer drifted (%s); re-ensuring it", summary)
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	value := now().UTC().Format(time.RFC3339Nano) + ": " + summary
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{string(annotations.DriftDetected): value}}})
	if err != nil {
		klog.ErrorS(err, "Drift check: building the patch", "service", klog.KObj(svc))
		return
	}
	// A merge patch of one annotation cannot conflict with the user's edits.
	// It goes through the status subresource, which accepts metadata changes
	// for Services: that is how the service controller itself writes its
	// finalizer, so the drift check needs no permission beyond the
	// controller's (services/status patch).
	if _, err := c.Client.CoreV1().Services(svc.Namespace).Patch(ctx, svc.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: "ccmkit-lb-drift"}, "status"); err != nil {
		klog.ErrorS(err, "Drift check: annotating the Service", "service", klog.KObj(svc))
	}
}

func summarize(diffs []string) string {
	if len(diffs) <= maxAnnotationFindings {
		return strings.Join(diffs, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(diffs[:maxAnnotationFindings], "; "), len(diffs)-maxAnnotationFindings)
}
