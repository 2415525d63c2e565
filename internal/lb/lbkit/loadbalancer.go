package lbkit

import (
	"context"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/lb/drain"
	"github.com/ccmkit/ccm/internal/lb/lbdrift"
	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/internal/lb/lbsubset"
	"github.com/ccmkit/ccm/internal/lb/svclock"
)

// Config is what the pipeline needs besides the translator and the ops.
type Config struct {
	// Provider names the pipeline's Kubernetes client
	// ("<provider>-load-balancers") and its Event source
	// ("<provider>-load-balancer").
	Provider string
	// DriftPeriod is how often the drift check runs; 0 or less: never.
	DriftPeriod time.Duration
	// Shown are the annotations the ops layer may Show (Hooks): removed
	// from a Service that is no longer a LoadBalancer. FieldManager owns
	// them ("" : ccmkit-<Provider>-load-balancers).
	Shown        []string
	FieldManager string
	// Secrets, if set, is the translator's Secret reader: it reads with
	// the pipeline's client once Initialize (or UseKubeClient) gives one.
	Secrets *SecretReader
}

// LoadBalancer implements cloudprovider.LoadBalancer for any cloud with a
// Translator and Ops.
type LoadBalancer[D lbspec.Desired] struct {
	tr      Translator[D]
	ops     Ops[D]
	cfg     Config
	subsets *lbsubset.Subsetter
	// settler holds an Update back while a burst's nodes are initialized
	// (settle.go).
	settler *settler
	// locks keeps one Service's Ensure, Update and Delete from running at
	// once (internal/lb/svclock says why).
	locks svclock.Locks
	// rerun runs a Service's last Ensure or Update again when a backend's
	// drain ends (internal/lb/drain): the service controller has no reason to
	// call then.
	rerun     *drain.Rerun
	stopRerun context.CancelFunc
	// events records the translator's Warnings; nil until SetInformers
	// (or UseRecorder) gives it a sink.
	events atomic.Pointer[record.EventRecorder]
	// told holds what the ops layer showed and warned during a call (hooks.go).
	told *told
	// client is the pipeline's Kubernetes client (Initialize, or
	// UseKubeClient); stop comes from Initialize.
	client atomic.Pointer[kubernetes.Interface]
	stop   <-chan struct{}
}

var _ cloudprovider.LoadBalancer = (*LoadBalancer[*lbspec.Spec])(nil)

// New wires a pipeline. newOps builds the operations layer around the
// Hooks through which it tells the pipeline what it learns in a call
// (hooks.go).
func New[D lbspec.Desired](tr Translator[D], newOps func(Hooks) Ops[D], cfg Config) *LoadBalancer[D] {
	ctx, cancel := context.WithCancel(context.Background())
	l := &LoadBalancer[D]{tr: tr, cfg: cfg, subsets: lbsubset.New(), settler: newSettler(), rerun: drain.NewRerun(ctx), stopRerun: cancel,
		told: newTold()}
	l.ops = newOps(Hooks{DrainEnds: l.rerun.At, Show: l.told.show, Warn: l.told.warn})
	return l
}

// Subsets is the pipeline's subset chooser (tests give it a recorder or an
// EndpointSlice informer).
func (l *LoadBalancer[D]) Subsets() *lbsubset.Subsetter { return l.subsets }

// UseRecorder sets where the translator's Warning Events go.
func (l *LoadBalancer[D]) UseRecorder(r record.EventRecorder) { l.events.Store(&r) }

// GetLoadBalancerName returns the name a new load balancer gets.
func (l *LoadBalancer[D]) GetLoadBalancerName(_ context.Context, clusterName string, svc *corev1.Service) string {
	return l.tr.Name(clusterName, svc)
}

// GetLoadBalancer reports the Service's load balancer and its status.
func (l *LoadBalancer[D]) GetLoadBalancer(ctx context.Context, _ string, svc *corev1.Service) (*corev1.LoadBalancerStatus, bool, error) {
	return l.ops.Get(ctx, l.tr.Ref(svc))
}

// EnsureLoadBalancer creates or updates the Service's load balancer. A bad
// annotation is reported (every problem at once) before any cloud call, so
// an existing load balancer stays as it is.
func (l *LoadBalancer[D]) EnsureLoadBalancer(ctx context.Context, clusterName string, svc *corev1.Service, nodes []*corev1.Node) (*corev1.LoadBalancerStatus, error) {
	unlock, nodes := l.locks.LockNodes(svc.UID, nodes) // the latest nodes (svclock says why)
	defer unlock()
	d, err := l.prepare(ctx, clusterName, svc, nodes)
	if err != nil {
		return nil, err
	}
	st, err := l.ops.Ensure(ctx, d)
	l.afterCall(ctx, svc)
	return st, l.refusal(svc, err)
}

// UpdateLoadBalancer brings the load balancer's backends (and everything
// else) in line with the nodes, once the nodes joining now are initialized
// (settle.go).
func (l *LoadBalancer[D]) UpdateLoadBalancer(ctx context.Context, clusterName string, svc *corev1.Service, nodes []*corev1.Node) error {
	unlock, nodes := l.locks.LockNodes(svc.UID, l.settler.settle(ctx, svc, nodes))
	defer unlock()
	d, err := l.prepare(ctx, clusterName, svc, nodes)
	if err != nil {
		return err
	}
	err = l.ops.Update(ctx, d)
	l.afterCall(ctx, svc)
	return l.refusal(svc, err)
}

// EnsureLoadBalancerDeleted deletes what the Service owns. It needs no
// valid annotation.
func (l *LoadBalancer[D]) EnsureLoadBalancerDeleted(ctx context.Context, _ string, svc *corev1.Service) error {
	defer l.locks.Lock(svc.UID)()
	l.rerun.Forget(svc.UID)
	l.subsets.Forget(svc)
	if err := l.ops.Delete(ctx, l.tr.Ref(svc)); err != nil {
		return err
	}
	l.unshow(ctx, svc)
	return nil
}

// prepare is the pipeline in front of Ensure and Update: remember the call
// for drain re-runs, translate, tell the warnings, choose the backends.
func (l *LoadBalancer[D]) prepare(ctx context.Context, clusterName string, svc *corev1.Service, nodes []*corev1.Node) (D, error) {
	l.rerun.Remember(svc.UID, func(ctx context.Context) error {
		return l.UpdateLoadBalancer(ctx, clusterName, svc, nodes)
	})
	d, warnings, err := l.tr.Desired(clusterName, svc, nodes)
	if err != nil {
		return d, err
	}
	l.warn(svc, warnings)
	l.subsets.Record(svc, l.chooseBackends(ctx, svc, d))
	return d, nil
}

// chooseBackends narrows d's backends to what one listener may hold. Below
// the limit every eligible node is a backend; above it, lbsubset chooses
// the Service's own subset (for externalTrafficPolicy Local, among the
// nodes with a ready endpoint). The limit also bounds the ops layer while
// it replaces backends (Spec.BackendLimit).
func (l *LoadBalancer[D]) chooseBackends(ctx context.Context, svc *corev1.Service, d D) lbsubset.Decision {
	spec := d.LBSpec()
	limit := l.tr.BackendLimit(ctx, d)
	dec := l.subsets.Choose(svc, spec.Backends, limit)
	spec.Backends = dec.Backends
	if limit.N > 0 {
		spec.BackendLimit = limit.N
	}
	return dec
}

// Warn records warnings a provider learns of outside its translator (from
// the cloud's answers) the way the translator's are: logged, and as
// Warning Events on the Service.
func (l *LoadBalancer[D]) Warn(svc *corev1.Service, warnings ...Warning) { l.warn(svc, warnings) }

// warn logs each warning and records it as a Warning Event on the Service.
func (l *LoadBalancer[D]) warn(svc *corev1.Service, warnings []Warning) {
	events := l.events.Load()
	for _, w := range warnings {
		klog.InfoS("Service load balancer request changed", "service", klog.KObj(svc), "reason", w.Reason, "change", w.Message)
		if events != nil {
			(*events).Event(svc, corev1.EventTypeWarning, w.Reason, w.Message)
		}
	}
}

// Drift is the drift check's lbdrift.CheckFunc: each Service's load
// balancer compared, reading only, with what EnsureLoadBalancer would make
// of it, with the same backend subset. It records no Events or subsets.
func (l *LoadBalancer[D]) Drift(ctx context.Context, services []*corev1.Service, nodes []*corev1.Node) map[types.UID]lbdrift.Result {
	out := make(map[types.UID]lbdrift.Result, len(services))
	ds := make([]D, 0, len(services))
	for _, svc := range services {
		// The cluster name only names load balancers at creation; drift
		// ignores names.
		d, _, err := l.tr.Desired("", svc, nodes)
		if err != nil {
			out[svc.UID] = lbdrift.Result{Err: err}
			continue
		}
		l.chooseBackends(ctx, svc, d)
		ds = append(ds, d)
	}
	for uid, r := range l.ops.DriftAll(ctx, ds) {
		out[uid] = r
	}
	return out
}
