package tencentcloud

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/drain"
	"github.com/ccmkit/ccm/internal/lbdrift"
	"github.com/ccmkit/ccm/internal/lbspec"
	"github.com/ccmkit/ccm/internal/lbsubset"
	"github.com/ccmkit/ccm/internal/svclock"
	"github.com/ccmkit/ccm/internal/tencent/clbops"
	"github.com/ccmkit/ccm/internal/tencent/config"
)

// loadBalancers implements cloudprovider.LoadBalancer with Tencent CLB. It
// only translates: a Service and its nodes become an lbspec.Spec (reading
// the Tencent annotations users already have), and clbops does the rest.
type loadBalancers struct {
	ops *clbops.Ops
	// quotas reads TOTAL_TARGET_BIND_QUOTA; subsets chooses the targets when
	// the eligible nodes exceed it (subset.go). Either may be nil (tests).
	quotas      *clbops.Quotas
	subsets     *lbsubset.Subsetter
	driftPeriod time.Duration
	// kube is set by Initialize; the drift check needs it.
	kube cloudprovider.ControllerClientBuilder
	stop <-chan struct{}
	// locks keeps one Service's Ensure, Update and Delete from running at
	// once (internal/svclock says why).
	locks svclock.Locks
	// drainPeriod is lb_drain_period; rerun runs a Service's last Ensure
	// or Update again when a target's drain ends (internal/drain).
	drainPeriod time.Duration
	rerun       *drain.Rerun
	stopRerun   context.CancelFunc
}

var _ cloudprovider.LoadBalancer = (*loadBalancers)(nil)

func newLoadBalancers(cfg *config.Config, api clbops.API, quotaAPI clbops.QuotaAPI) *loadBalancers {
	ctx, cancel := context.WithCancel(context.Background())
	rerun := drain.NewRerun(ctx)
	return &loadBalancers{
		ops: clbops.New(api, clbops.Config{VpcID: cfg.VpcID, Timing: clbops.Timing{DeleteRetryAfter: cfg.LBDeleteRetryAfter},
			OnDrain: rerun.At}),
		quotas:      clbops.NewQuotas(quotaAPI, 0),
		subsets:     lbsubset.New(),
		driftPeriod: cfg.LBDriftCheckPeriod,
		drainPeriod: cfg.LBDrainPeriod,
		rerun:       rerun,
		stopRerun:   cancel,
	}
}

// clbLimits are CLB's accepted ranges for the neutral settings.
var clbLimits = lbspec.Limits{
	HealthCheckInterval:    lbspec.Range[time.Duration]{Min: 2 * time.Second, Max: 300 * time.Second},
	HealthCheckTimeout:     lbspec.Range[time.Duration]{Min: 2 * time.Second, Max: 60 * time.Second},
	HealthCheckThreshold:   lbspec.Range[int]{Min: 2, Max: 10},
	SessionAffinityTimeout: lbspec.Range[time.Duration]{Min: 30 * time.Second, Max: 3600 * time.Second},
}

// spec builds the Service's spec; every problem is reported before any
// cloud call, so a bad annotation leaves the CLB as it is.
func (l *loadBalancers) spec(clusterName string, svc *v1.Service, nodes []*v1.Node) (*lbspec.Spec, error) {
	passToTarget := true
	spec, err := lbspec.Build(svc, nodes, lbspec.Options{
		// The Tencent annotations are read here, so that their problems
		// are reported together with the neutral ones.
		Placement: func(svc *v1.Service) (lbspec.Placement, error) {
			p, err := placement(clusterName, svc)
			v, perr := annotations.TKEPassToTarget.BoolFromService(svc)
			switch {
			case perr == nil:
				passToTarget = v
			case !errors.Is(perr, annotations.ErrNotSet):
				err = errors.Join(err, perr)
			}
			return p, err
		},
		InstanceID:  nodeInstanceID,
		Limits:      clbLimits,
		DrainPeriod: l.drainPeriod,
	})
	if err != nil {
		return nil, err
	}
	spec.ClusterName = clusterName
	spec.PassToTarget = passToTarget
	return spec, nil
}

// ref identifies the Service's CLB for Get and Delete, which must work
// even when other annotations are invalid: an adoption annotation that is
// not a CLB id cannot have been acted on, so it is ignored.
func ref(svc *v1.Service) lbspec.Ref {
	r := lbspec.RefOf(svc, annotations.TKEExistedLBID)
	if !clbIDPattern.MatchString(r.AdoptID) {
		r.AdoptID = ""
	}
	return r
}

// GetLoadBalancer reports the Service's CLB and its status.
func (l *loadBalancers) GetLoadBalancer(ctx context.Context, _ string, svc *v1.Service) (*v1.LoadBalancerStatus, bool, error) {
	return l.ops.Get(ctx, ref(svc))
}

// GetLoadBalancerName returns the name a new CLB gets.
func (l *loadBalancers) GetLoadBalancerName(_ context.Context, clusterName string, svc *v1.Service) string {
	if name, err := annotations.TencentLBName.StringFromService(svc); err == nil && clbNamePattern.MatchString(name) {
		return name
	}
	return defaultLBName(clusterName, svc)
}

// EnsureLoadBalancer creates or updates the Service's CLB.
func (l *loadBalancers) EnsureLoadBalancer(ctx context.Context, clusterName string, svc *v1.Service, nodes []*v1.Node) (*v1.LoadBalancerStatus, error) {
	defer l.locks.Lock(svc.UID)()
	l.rememberForDrains(clusterName, svc, nodes)
	spec, err := l.spec(clusterName, svc, nodes)
	if err != nil {
		return nil, err
	}
	l.record(svc, l.chooseTargets(ctx, svc, spec))
	return l.ops.Ensure(ctx, spec)
}

// UpdateLoadBalancer brings the CLB's targets (and everything else) in line
// with the nodes.
func (l *loadBalancers) UpdateLoadBalancer(ctx context.Context, clusterName string, svc *v1.Service, nodes []*v1.Node) error {
	defer l.locks.Lock(svc.UID)()
	l.rememberForDrains(clusterName, svc, nodes)
	spec, err := l.spec(clusterName, svc, nodes)
	if err != nil {
		return err
	}
	l.record(svc, l.chooseTargets(ctx, svc, spec))
	return l.ops.Update(ctx, spec)
}

// EnsureLoadBalancerDeleted deletes the CLB created for the Service, or
// only the Service's listeners on an adopted CLB.
func (l *loadBalancers) EnsureLoadBalancerDeleted(ctx context.Context, _ string, svc *v1.Service) error {
	defer l.locks.Lock(svc.UID)()
	l.rerun.Forget(svc.UID)
	if l.subsets != nil {
		l.subsets.Forget(svc)
	}
	return l.ops.Delete(ctx, ref(svc))
}

// rememberForDrains keeps this call's arguments: when a target's drain
// ends, UpdateLoadBalancer runs again with the latest ones, since the
// service controller has no reason to call then.
func (l *loadBalancers) rememberForDrains(clusterName string, svc *v1.Service, nodes []*v1.Node) {
	l.rerun.Remember(svc.UID, func(ctx context.Context) error {
		return l.UpdateLoadBalancer(ctx, clusterName, svc, nodes)
	})
}

// drift is the drift check's CheckFunc.
func (l *loadBalancers) drift(ctx context.Context, services []*v1.Service, nodes []*v1.Node) map[types.UID]lbdrift.Result {
	out := map[types.UID]lbdrift.Result{}
	var specs []*lbspec.Spec
	for _, svc := range services {
		// The cluster name only names CLBs at creation; drift ignores names.
		spec, err := l.spec("", svc, nodes)
		if err != nil {
			out[svc.UID] = lbdrift.Result{Err: err}
			continue
		}
		l.chooseTargets(ctx, svc, spec) // the same subset the reconcile binds
		specs = append(specs, spec)
	}
	for uid, r := range l.ops.DriftAll(ctx, specs) {
		out[uid] = lbdrift.Result{Diffs: r.Diffs, Err: r.Err}
	}
	return out
}

// initialize keeps what the drift check needs from Initialize.
func (l *loadBalancers) initialize(b cloudprovider.ControllerClientBuilder, stop <-chan struct{}) {
	l.kube, l.stop = b, stop
	go func() {
		<-stop
		l.stopRerun()
	}()
}

// setInformers starts what runs beside the service controller, on the
// shared informers: the drift check, and the target subsetting's Events and
// EndpointSlice watch (subset.go). The CCM calls it right after Initialize
// and before it starts the informers.
func (l *loadBalancers) setInformers(f informers.SharedInformerFactory) {
	if l.kube == nil {
		return
	}
	client, err := l.kube.Client("tencentcloud-load-balancers")
	if err != nil {
		klog.ErrorS(err, "Load balancer drift check and subset Events disabled: no Kubernetes client")
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
	l.startSubsets(ctx, f, client, broadcaster)
	lbdrift.Start(ctx, f, client, broadcaster, l.driftPeriod, l.drift)
}

var (
	clbIDPattern    = regexp.MustCompile(`^lb-[a-z0-9]{8}$`)
	subnetIDPattern = regexp.MustCompile(`^subnet-[a-z0-9]{8}$`)
	// clbNamePattern: 1-80 letters, digits, "-" and "_" (the documented
	// rule allows more, such as Chinese characters; we keep to ASCII).
	clbNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)
	nameUnsafe     = regexp.MustCompile(`[^A-Za-z0-9_-]+`)
)

// defaultLBName is <cluster>-<namespace>-<name>, made safe and cut to 80
// characters. Names are for humans; the tag finds the CLB.
func defaultLBName(clusterName string, svc *v1.Service) string {
	parts := []string{svc.Namespace, svc.Name}
	if clusterName != "" {
		parts = append([]string{clusterName}, parts...)
	}
	name := nameUnsafe.ReplaceAllString(strings.Join(parts, "-"), "-")
	if len(name) > 80 {
		name = name[:80]
	}
	return name
}

// placement reads the seed project's and managed TKE's annotations.
func placement(clusterName string, svc *v1.Service) (lbspec.Placement, error) {
	var errs []error
	check := func(err error) bool {
		if err != nil && !errors.Is(err, annotations.ErrNotSet) {
			errs = append(errs, err)
		}
		return err == nil
	}
	p := lbspec.Placement{Name: defaultLBName(clusterName, svc)}

	if id, err := annotations.TKEExistedLBID.StringFromService(svc); check(err) {
		if clbIDPattern.MatchString(id) {
			p.AdoptID = id
		} else {
			check(annotations.TKEExistedLBID.Invalid(id, "must be a CLB id like lb-12345678"))
		}
	}
	if kind, err := annotations.TencentLBKind.EnumFromService(svc, "application", "classic"); check(err) && kind == "classic" {
		check(annotations.TencentLBKind.Invalid(kind, "classic CLBs are not supported; use application (the default)"))
	}
	if name, err := annotations.TencentLBName.StringFromService(svc); check(err) {
		if clbNamePattern.MatchString(name) {
			p.Name = name
		} else {
			check(annotations.TencentLBName.Invalid(name, "must be 1-80 letters, digits, - or _"))
		}
	}
	subnet := func(n annotations.Name) string {
		v, err := n.StringFromService(svc)
		if !check(err) {
			return ""
		}
		if !subnetIDPattern.MatchString(v) {
			check(n.Invalid(v, "must be a subnet id like subnet-12345678"))
			return ""
		}
		return v
	}
	seedSubnet, tkeSubnet := subnet(annotations.TencentLBInternalSubnetID), subnet(annotations.TKEInternalSubnetID)
	if seedSubnet != "" && tkeSubnet != "" && seedSubnet != tkeSubnet {
		check(fmt.Errorf("annotations %s (%s) and %s (%s) name different subnets", annotations.TencentLBInternalSubnetID, seedSubnet,
			annotations.TKEInternalSubnetID, tkeSubnet))
	}
	p.SubnetID = seedSubnet
	if p.SubnetID == "" {
		p.SubnetID = tkeSubnet
	}
	lbType, err := annotations.TencentLBType.EnumFromService(svc, "public", "private")
	switch {
	case check(err):
		p.Internal = lbType == "private"
		if !p.Internal && tkeSubnet != "" {
			check(fmt.Errorf("annotation %s is public but %s asks for a private CLB", annotations.TencentLBType, annotations.TKEInternalSubnetID))
		}
	case errors.Is(err, annotations.ErrNotSet):
		p.Internal = tkeSubnet != "" // managed TKE's way to ask for a private CLB
	}
	// An adopted CLB is used as it is; only a CLB we create needs a subnet.
	if p.Internal && p.SubnetID == "" && p.AdoptID == "" && len(errs) == 0 {
		check(fmt.Errorf("a private (internal) CLB needs a subnet: set annotation %s (or %s) to a subnet of VPC; no CLB was created",
			annotations.TencentLBInternalSubnetID, annotations.TKEInternalSubnetID))
	}
	return p, errors.Join(errs...)
}

// nodeInstanceID is the node's CVM instance id, from its providerID, which
// the node controller sets when it initializes the node.
func nodeInstanceID(node *v1.Node) (string, error) {
	if node.Spec.ProviderID == "" {
		return "", errors.New("no providerID yet")
	}
	p, err := parseProviderID(node.Spec.ProviderID)
	if err != nil {
		return "", err
	}
	return p.InstanceID, nil
}
