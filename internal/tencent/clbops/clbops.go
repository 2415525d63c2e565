// Package clbops turns a provider-neutral load balancer spec (lbspec) into
// Tencent Cloud CLB calls (clb 2018-03-17). Each operation reads as a
// pipeline:
//
//	find the CLB by our service-uid tag, else by the adoption annotation,
//	else create it (with a ClientToken derived from the Service UID);
//	then reconcile listeners; then reconcile targets; then report status.
//
// Every reconcile step reads the actual state, computes a plan as a pure
// function of desired and actual state, and writes only when the plan is
// not empty, so an unchanged resync makes no write call at all. The same
// plans, without their writes, are the drift check.
//
// Ownership: a CLB we created carries the tag ccmkit.io/service-uid and is
// deleted with its Service. On an adopted CLB (service.kubernetes.io/
// tke-existed-lbid) we own only the listeners named
// <PROTO>-<port>-<Service UID>; every other listener is never touched, and
// the CLB itself is never deleted. A CLB TKE's service controller made for
// the Service is taken over as if we had created it (takeover.go). Plan
// (plan.go) says what Ensure would write, reading only.
package clbops

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/ccmmetrics"
	"github.com/ccmkit/ccm/internal/cloudbase"
	"github.com/ccmkit/ccm/internal/ctxwait"
	"github.com/ccmkit/ccm/internal/lb/drain"
	"github.com/ccmkit/ccm/internal/lb/lbdrift"
	"github.com/ccmkit/ccm/internal/lb/lbkit"
	"github.com/ccmkit/ccm/internal/lb/lbspec"
)

// Tags put on every CLB we create. The service-uid tag is how the CLB is
// found again: names are not unique (Tencent Cloud silently renames a
// duplicate) and the user may choose them.
const (
	TagServiceUID = "ccmkit.io/service-uid"
	TagService    = "ccmkit.io/service" // namespace/name, for humans
	TagCluster    = "ccmkit.io/cluster"
)

// Config is what the operations need to know about the cluster.
type Config struct {
	// VpcID is the cluster's VPC: CLBs are created in it, and an adopted
	// CLB must be in it, since targets must be.
	VpcID string
	// Timing overrides DefaultTiming (zero fields keep the default).
	Timing Timing
	// Hooks tell the pipeline (internal/lb/lbkit) what a call learns: when
	// a Service's next target drain ends, so that its reconcile runs again
	// then and deregisters the drained targets (DrainEnds); its CLB's id,
	// as soon as Ensure or Update has found or created it, even if a later
	// step fails, shown on the Service as TKE's read-only
	// service.kubernetes.io/loadbalance-id (Show); and how its CLB differs
	// from its creation-time settings (Warn, creation.go). Unset hooks are
	// not called.
	Hooks lbkit.Hooks
	// ListenerQuota, if set, returns TOTAL_LISTENER_QUOTA (Quotas.
	// ListenersPerCLB). It is asked only when a CLB would hold more than
	// DefaultListenerQuota listeners; nil means the documented default.
	ListenerQuota func(context.Context) int
	// SecurityGroups is the VPC API for the security group of
	// loadBalancerSourceRanges (securitygroups.go); nil refuses source
	// ranges and the security-groups annotation.
	SecurityGroups SecurityGroupAPI
	// Tags is the Tag API, which adds our tags to a CLB taken over from
	// TKE (takeover.go); nil refuses such a takeover with lb_defaults ccmkit.
	Tags TagAPI
	// TKEClusterID is tke_cluster_id: a CLB TKE made is taken over only
	// when its tke-clusterId tag is this; "" refuses every one.
	TKEClusterID string
	// Region is the CLBs' region (the Tag API's ResourceRegion).
	Region string
	// TKECompat is lb_defaults tke: a CLB taken over from TKE is written
	// nothing to mark it, and new listeners on it get TKE's name.
	TKECompat bool
	// ReadLagWindow is how long DescribeLoadBalancers may not show a CLB
	// that CreateLoadBalancer answered (read_lag_window, cloudbase.AnsweredIDs); 0
	// trusts the first answer.
	ReadLagWindow time.Duration
	// LookupTTL is how long one listing of the cluster's CLBs may answer
	// the Services' lookups (lookup.go; DefaultLookupTTL); 0: every lookup
	// makes its own filtered call.
	LookupTTL time.Duration
}

// Ops runs CLB operations. It holds no state between calls but the
// deletion gate, and is safe for concurrent use; the upstream service
// controller never reconciles one Service twice at once.
type Ops struct {
	api    API
	vpcID  string
	timing Timing
	now    func() time.Time
	sleep  func(context.Context, time.Duration) error
	// gate holds DeleteLoadBalancer back after a FrequencyCheckRisk, for
	// every Service at once: the limit is per region (loadbalancer.go).
	gate *deleteGate
	// drains remembers when each leaving target went to weight 0
	// (drain.go); hooks are Config.Hooks.
	drains *drain.Tracker
	hooks  lbkit.Hooks
	// listenerQuota is Config.ListenerQuota.
	listenerQuota func(context.Context) int
	// sgAPI is Config.SecurityGroups.
	sgAPI SecurityGroupAPI
	// tagAPI, tkeClusterID and tkeCompat are Config.Tags, TKEClusterID
	// and TKECompat.
	tagAPI       TagAPI
	region       string
	tkeClusterID string
	tkeCompat    bool
	// readLagWindow and answered: a CLB a create answered is taken as
	// deleted only once missing that long (cloudbase.AnsweredIDs).
	readLagWindow time.Duration
	answered      cloudbase.AnsweredIDs
	// lookup finds the Services' CLBs (lookup.go); nil without LookupTTL.
	lookup *clbLookup
}

// New returns Ops calling api.
func New(api API, cfg Config) *Ops {
	t := cfg.Timing.withDefaults()
	o := &Ops{
		api:    api,
		vpcID:  cfg.VpcID,
		timing: t,
		now:    time.Now,
		sleep:  ctxwait.Sleep,
		gate:   &deleteGate{},
		drains: drain.NewTracker(nil),
		hooks:  cfg.Hooks,

		listenerQuota: cfg.ListenerQuota,
		sgAPI:         cfg.SecurityGroups,
		tagAPI:        cfg.Tags,
		region:        cfg.Region,
		tkeClusterID:  cfg.TKEClusterID,
		tkeCompat:     cfg.TKECompat,
		readLagWindow: cfg.ReadLagWindow,
	}
	if cfg.LookupTTL > 0 {
		o.lookup = newLookup(o, cfg.LookupTTL)
	}
	return o
}

// Desired is the CLB a Service needs: the neutral spec, and the settings
// only CLB has (read by the provider from the Tencent annotations).
type Desired struct {
	lbspec.Spec
	Settings
}

// Settings are CLB's own settings.
type Settings struct {
	// PassToTarget is CLB's LoadBalancerPassToTarget: only the load
	// balancer's security groups filter its traffic, not the nodes'.
	PassToTarget bool
	// EndpointNodesOnly binds an externalTrafficPolicy Local Service's
	// nodes with a ready endpoint only. The provider's backend choice
	// (lbsubset) acts on it before clbops sees the backends; clbops itself
	// ignores it.
	EndpointNodesOnly bool
	// WeightedBalance, with EndpointNodesOnly, weights each node's targets
	// by its ready endpoints (lbsubset.Limit.WeightCap); the choice sets
	// the backends' weights, which clbops applies.
	WeightedBalance bool
	// Creation is what the CLB is created with and never changed in
	// (creation.go).
	Creation Creation
	// SecurityGroups are the groups the annotation binds to the CLB, in
	// order; nil: the annotation is absent (groups bound by hand are
	// kept), empty: set to "" (they are unbound).
	SecurityGroups []string
	// Protocols overrides the listener protocol of Service ports, keyed by
	// lbspec.Listener.Name() (TCP-443): TKE's specify-protocol
	// (certificates.go).
	Protocols map[string]PortProtocol
	// KeepPassToTarget leaves a CLB's LoadBalancerPassToTarget as found
	// (lb_defaults tke without the pass-to-target annotation), and a new
	// CLB is created without the field (the API's default).
	KeepPassToTarget bool
	// Incumbent is the CLB the Service's service.kubernetes.io/
	// loadbalance-id annotation names: the one TKE's service controller
	// made, if it did (takeover.go); "" when absent.
	Incumbent string
}

// Ensure makes the Service's CLB match spec, creating it if needed, and
// returns the Service's load balancer status.
func (o *Ops) Ensure(ctx context.Context, spec *Desired) (_ *corev1.LoadBalancerStatus, err error) {
	const op ccmmetrics.Op = "clbops.Ensure"
	ctx, done := op.Start(ctx)
	defer done(&err)
	return o.reconcile(ctx, op, spec, true)
}

// Update makes an existing CLB match spec (the upstream controller calls it
// when nodes change). It does not create a missing CLB: it reports an
// error, and the service controller's retry then goes through Ensure.
func (o *Ops) Update(ctx context.Context, spec *Desired) (err error) {
	const op ccmmetrics.Op = "clbops.Update"
	ctx, done := op.Start(ctx)
	defer done(&err)
	_, err = o.reconcile(ctx, op, spec, false)
	return err
}

func (o *Ops) reconcile(ctx context.Context, op ccmmetrics.Op, spec *Desired, create bool) (*corev1.LoadBalancerStatus, error) {
	st, err := o.pipeline(ctx, spec, create)
	o.touch(spec.UID) // whatever it wrote, the next lookup must see
	if err != nil {
		return nil, op.Errorf("Service %s: %w", spec.Service, err)
	}
	return st, nil
}

// pipeline: find, else create; then the CLB's attributes; then listeners;
// then targets; then status.
func (o *Ops) pipeline(ctx context.Context, spec *Desired, create bool) (*corev1.LoadBalancerStatus, error) {
	if err := o.checkSupported(spec); err != nil {
		return nil, err
	}
	// Before any call: a Service with more ports than a CLB holds gets
	// neither a CLB nor a change to the one it has.
	if err := o.checkListenerQuota(ctx, len(spec.Listeners), "its ports alone"); err != nil {
		return nil, err
	}
	lb, err := o.findOrCreate(ctx, spec, create)
	if err != nil {
		return nil, err
	}
	if o.hooks.Show != nil {
		o.hooks.Show(spec.UID, string(annotations.TKELoadBalanceID), lb.id)
	}
	o.reportCreationDrift(spec.UID, lb, spec.Creation)
	// First, so that a sync that fails later finds it as ours next time.
	if err := o.markTakenOver(ctx, lb, spec); err != nil {
		return nil, err
	}
	if err := o.reconcileAttributes(ctx, lb, spec); err != nil {
		return nil, err
	}
	// Before the listeners: a new port is restricted from its first moment.
	if err := o.reconcileSecurityGroups(ctx, lb, spec); err != nil {
		return nil, err
	}
	listeners, err := o.reconcileListeners(ctx, lb, spec)
	if err != nil {
		return nil, err
	}
	if err := o.reconcileTargets(ctx, lb, spec, listeners); err != nil {
		return nil, err
	}
	return lb.status(), nil
}

// findOrCreate returns the Service's CLB, ready for listeners.
func (o *Ops) findOrCreate(ctx context.Context, spec *Desired, create bool) (*loadBalancer, error) {
	lb, err := o.find(ctx, spec)
	switch {
	case err != nil:
		return nil, err
	case lb == nil && !create:
		return nil, ErrNotFound
	case lb == nil:
		if lb, err = o.create(ctx, spec); err != nil {
			return nil, err
		}
	}
	if err := o.checkMatches(lb, spec); err != nil {
		return nil, err
	}
	return o.waitReady(ctx, lb)
}

// Get returns the status of the Service's CLB and whether it exists. Unlike
// Ensure it does not judge an adoption annotation: the service controller
// asks before deleting, and a Service whose annotation names a missing or
// foreign CLB must still be deletable.
func (o *Ops) Get(ctx context.Context, d *Desired) (_ *corev1.LoadBalancerStatus, _ bool, err error) {
	const op ccmmetrics.Op = "clbops.Get"
	ctx, done := op.Start(ctx)
	defer done(&err)
	st, found, err := o.get(ctx, d)
	if err != nil {
		return nil, false, op.Errorf("Service %s: %w", d.Ref.Service, err)
	}
	return st, found, nil
}

func (o *Ops) get(ctx context.Context, d *Desired) (*corev1.LoadBalancerStatus, bool, error) {
	ref := d.Ref
	tagged, err := o.describeTagged(ctx, []types.UID{ref.UID})
	if err != nil {
		return nil, false, err
	}
	if lbs := tagged[ref.UID]; len(lbs) > 0 {
		return lbs[0].status(), true, nil
	}
	adopted, err := o.adoptedForCleanup(ctx, ref)
	if err != nil {
		return nil, false, err
	}
	if adopted != nil {
		return adopted.status(), true, nil
	}
	incumbent, err := o.incumbentForCleanup(ctx, d)
	if err != nil || incumbent == nil {
		return nil, false, err
	}
	return incumbent.status(), true, nil
}

// Delete removes what the Service owns: every CLB created for it (there is
// one, but should a duplicate ever exist it goes too), and its listeners on
// the CLB its adoption annotation names, which itself stays. A CLB that is
// already gone is not an error.
func (o *Ops) Delete(ctx context.Context, d *Desired) (err error) {
	const op ccmmetrics.Op = "clbops.Delete"
	ctx, done := op.Start(ctx)
	defer done(&err)
	if err := o.delete(ctx, d); err != nil {
		return op.Errorf("Service %s: %w", d.Ref.Service, err)
	}
	return nil
}

func (o *Ops) delete(ctx context.Context, d *Desired) error {
	ref := d.Ref
	defer o.touch(ref.UID) // a Service made a LoadBalancer again must not find what this deleted
	tagged, err := o.describeTagged(ctx, []types.UID{ref.UID})
	if err != nil {
		return err
	}
	for _, lb := range tagged[ref.UID] {
		if err := o.deleteLoadBalancer(ctx, lb); err != nil {
			return err
		}
		o.drains.ForgetPrefix(lb.id + "/")
	}
	adopted, err := o.adoptedForCleanup(ctx, ref)
	if err != nil {
		return err
	}
	if adopted != nil {
		if err := o.deleteOwnedListeners(ctx, adopted, ref); err != nil {
			return err
		}
		o.drains.ForgetPrefix(adopted.id + "/")
	}
	// The CLB TKE made for the Service, never taken over (lb_defaults tke,
	// or no sync since the switch): deleted with it, as TKE would have.
	incumbent, err := o.incumbentForCleanup(ctx, d)
	if err != nil {
		return err
	}
	if incumbent != nil {
		if err := o.deleteLoadBalancer(ctx, incumbent); err != nil {
			return err
		}
		o.drains.ForgetPrefix(incumbent.id + "/")
	}
	// After the CLB, which was bound to them.
	if err := o.deleteOwnedGroups(ctx, ref); err != nil {
		return err
	}
	return nil
}

// adoptedForCleanup returns the CLB the adoption annotation names, if it
// exists and was not created by this CCM (a CLB created for another
// Service never carries our listeners; one created for this Service was
// handled as tagged).
func (o *Ops) adoptedForCleanup(ctx context.Context, ref lbspec.Ref) (*loadBalancer, error) {
	if ref.AdoptID == "" {
		return nil, nil
	}
	lb, err := o.describeByID(ctx, ref.AdoptID)
	if err != nil || lb == nil {
		return nil, err
	}
	if _, created := lb.tags[TagServiceUID]; created {
		return nil, nil
	}
	lb.adopted = true
	return lb, nil
}

// Drift compares the Service's CLB with spec, reading only, and returns
// what differs ("listener TCP-80 missing"); nil means in sync.
func (o *Ops) Drift(ctx context.Context, spec *Desired) (_ []string, err error) {
	const op ccmmetrics.Op = "clbops.Drift"
	ctx, done := op.Start(ctx)
	defer done(&err)
	lb, err := o.find(ctx, spec)
	if err != nil {
		return nil, op.Errorf("Service %s: %w", spec.Service, err)
	}
	if lb == nil {
		return []string{"load balancer missing"}, nil
	}
	diffs, err := o.drift(ctx, lb, spec)
	if err != nil {
		return nil, op.Errorf("Service %s: %w", spec.Service, err)
	}
	return diffs, nil
}

// DriftAll checks many Services, reading only. The CLBs are found with one
// DescribeLoadBalancers per 100 Services (and per 20 adopted CLBs); then
// each CLB costs a DescribeListeners and a DescribeTargets.
func (o *Ops) DriftAll(ctx context.Context, specs []*Desired) map[types.UID]lbdrift.Result {
	const op ccmmetrics.Op = "clbops.DriftAll"
	ctx, done := op.Start(ctx)
	var listErr error // counted as the run's: a Service's own error is in its Result
	defer done(&listErr)
	out := make(map[types.UID]lbdrift.Result, len(specs))
	fail := func(err error) map[types.UID]lbdrift.Result {
		listErr = err
		for _, s := range specs {
			out[s.UID] = lbdrift.Result{Err: op.Errorf("%w", err)}
		}
		return out
	}
	uids := make([]types.UID, len(specs))
	for i, s := range specs {
		uids[i] = s.UID
	}
	tagged, err := o.describeTagged(ctx, uids)
	if err != nil {
		return fail(err)
	}
	var adoptIDs []string
	for _, s := range specs {
		if len(tagged[s.UID]) == 0 && s.AdoptID != "" && !slices.Contains(adoptIDs, s.AdoptID) {
			adoptIDs = append(adoptIDs, s.AdoptID)
		}
	}
	adoptIDs = append(adoptIDs, incumbentIDs(specs, func(s *Desired) bool { return len(tagged[s.UID]) > 0 })...)
	adopted := map[string]*loadBalancer{} // and incumbents
	for chunk := range slices.Chunk(adoptIDs, maxLoadBalancerIDs) {
		req := clb.NewDescribeLoadBalancersRequest()
		req.LoadBalancerIds = common.StringPtrs(chunk)
		lbs, err := o.describeLoadBalancers(ctx, "CLBs "+strings.Join(chunk, ","), req)
		if err != nil {
			return fail(err)
		}
		for _, lb := range lbs {
			adopted[lb.id] = lb
		}
	}
	for _, s := range specs {
		lb, err := o.resolve(s, tagged[s.UID], adopted[s.AdoptID], adopted[s.Incumbent])
		switch {
		case err != nil:
			out[s.UID] = lbdrift.Result{Err: op.Errorf("Service %s: %w", s.Service, err)}
		case lb == nil:
			out[s.UID] = lbdrift.Result{Diffs: []string{"load balancer missing"}}
		default:
			diffs, err := o.drift(ctx, lb, s)
			if err != nil {
				err = op.Errorf("Service %s: %w", s.Service, err)
			}
			out[s.UID] = lbdrift.Result{Diffs: diffs, Err: err}
		}
	}
	return out
}

func (o *Ops) drift(ctx context.Context, lb *loadBalancer, spec *Desired) ([]string, error) {
	if lb.state != lbNormal {
		return nil, nil // still being created: not drift
	}
	actual, err := o.describeListeners(ctx, lb)
	if err != nil {
		return nil, err
	}
	owner := o.ownerOf(lb, spec)
	lp, err := planListeners(desiredListeners(spec, owner), actual, owner)
	if err != nil {
		return nil, err
	}
	sp, err := o.planSecurityGroups(ctx, lb, spec)
	if err != nil {
		return nil, err
	}
	var diffs []string
	for _, k := range o.takeoverTags(lb, spec) {
		diffs = append(diffs, fmt.Sprintf("tag %s missing (CLB taken over from TKE)", k))
	}
	diffs = append(diffs, attributeDiffs(lb, spec)...)
	diffs = append(diffs, sp.describe(lb)...)
	diffs = append(diffs, lp.describe()...)
	existing := lp.keep()
	if len(existing) == 0 {
		return diffs, nil
	}
	targets, err := o.describeTargets(ctx, lb, existing)
	if err != nil {
		return nil, err
	}
	// A target draining at weight 0 is on its way out, not drift; drift
	// only reads, so it starts no drain clock.
	stillDraining := func(target) bool { return false }
	return append(diffs, planTargets(spec, existing, targets, stillDraining).describe()...), nil
}

// tags are the tags of a CLB created for spec.
func tags(spec *Desired) map[string]string {
	t := map[string]string{
		TagServiceUID: string(spec.UID),
		TagService:    spec.Service.String(),
	}
	if spec.ClusterName != "" {
		t[TagCluster] = spec.ClusterName
	}
	return t
}

// logWrite logs a write at a level operators see by default, with the
// operation's op key (ccmmetrics.Op.Start).
func logWrite(ctx context.Context, msg string, kv ...any) {
	klog.FromContext(ctx).V(2).Info(msg, kv...)
}
