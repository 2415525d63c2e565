// Package lbops turns the load balancer a Service needs (Desired) into OCI
// Load Balancer or Network Load Balancer calls. Each operation reads as a
// pipeline:
//
//	find the load balancer by display name (the Service UID), else create
//	it with its listeners and backend sets inline (opc-retry-token = the
//	Service UID, so a retried create never makes a second one), wait for
//	the work request; then reconcile backend sets, listeners, and the
//	security lists; then report the status from its IP addresses.
//
// Every reconcile reads the actual state, computes a plan as a pure
// function of desired and actual state (model.go), and writes only when the
// plan is not empty: an unchanged resync makes no write call.
//
// Work requests: every write returns one, and the next write starts only
// after it succeeded. A work request we stopped waiting for (timeout,
// restart of the wait) is remembered per load balancer and awaited before
// any new change; a change that OCI refuses with 409 IncorrectState
// because someone else's work request is in flight is retried later (an
// api.RetryError), never forced.
//
// Ownership: a load balancer we create is named by the Service UID and
// tagged with it; listeners and backend sets are named <PROTO>-<port>, and
// only such names are ever deleted. One the public OCI CCM made for the
// Service is taken over (takeover.go).
package lbops

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cloud-provider/api"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
	"github.com/ccmkit/ccm/internal/cloudbase"
	"github.com/ccmkit/ccm/internal/ctxwait"
	"github.com/ccmkit/ccm/internal/lb/drain"
	"github.com/ccmkit/ccm/internal/lb/lbkit"
	"github.com/ccmkit/ccm/internal/oci/ocierr"
)

// Freeform tags put on every load balancer we create, for humans and
// audits. OCI freeform tag keys may not contain dots.
const (
	TagServiceUID = "ccmkit-service-uid"
	TagService    = "ccmkit-service"
)

const (
	pageSize = 100
	maxPages = 1000
)

// Timing bounds the waits. Zero fields take DefaultTiming's.
type Timing struct {
	// Poll is the first delay between two reads of a work request; it
	// doubles up to PollMax.
	Poll, PollMax time.Duration
	// Wait bounds the wait for one work request (or an LB to become
	// ACTIVE) within one call; past it the call returns a RetryError and
	// the next one waits again before changing anything.
	Wait time.Duration
	// Retry is the delay asked of the service controller when OCI is busy.
	Retry time.Duration
}

// DefaultTiming suits OCI, where a work request takes seconds to minutes.
var DefaultTiming = Timing{Poll: 500 * time.Millisecond, PollMax: 5 * time.Second, Wait: 5 * time.Minute, Retry: 10 * time.Second}

// withDefaults is t with each zero field taken from DefaultTiming.
func (t Timing) withDefaults() Timing {
	d := DefaultTiming
	return Timing{Poll: cmp.Or(t.Poll, d.Poll), PollMax: cmp.Or(t.PollMax, d.PollMax), Wait: cmp.Or(t.Wait, d.Wait),
		Retry: cmp.Or(t.Retry, d.Retry)}
}

// Config is what the operations need to know about the cluster.
type Config struct {
	Compartment string
	// VCN is the cluster's VCN: a load balancer of the public OCI CCM on
	// a subnet of another VCN is not taken over (takeover.go).
	VCN string
	// Naming is how display names are made (takeover.go).
	Naming Naming
	// SecurityLists maps a subnet to the security list managed for it
	// (loadBalancer.securityLists); default: the subnet's first one.
	SecurityLists map[string]string
	Timing        Timing
	// Hooks tell the pipeline (internal/lb/lbkit) what a call learns:
	// when a Service's next backend drain ends, so that its reconcile runs
	// again then and removes the drained backends (DrainEnds).
	Hooks lbkit.Hooks
	// ReadLagWindow is how long a GET may not show a load balancer a
	// create's work request made (readLagWindow; cloudbase.AnsweredIDs); 0
	// trusts the first answer.
	ReadLagWindow time.Duration
	// LookupTTL is how long an unfiltered listing of the compartment's load
	// balancers answers the Services' lookups (gather.go; DefaultLookupTTL);
	// 0: only the lookups gathered while it ran.
	LookupTTL time.Duration
}

// DefaultLookupTTL is how long a listing answers lookups: the instance
// cache's default TTL (our choice, one staleness bound for the whole CCM).
const DefaultLookupTTL = 60 * time.Second

// Ops runs load balancer operations. It is safe for concurrent use; the
// upstream service controller never reconciles one Service twice at once.
type Ops struct {
	lb, nlb     driver
	net         NetworkAPI
	compartment string
	vcn         string
	naming      Naming
	secLists    map[string]string
	timing      Timing
	sleep       func(context.Context, time.Duration) error

	mu      sync.Mutex
	pending map[string]pendingWR // load balancer id -> work request still running

	// drains remembers when each leaving backend was marked drain
	// (drain.go); hooks are Config.Hooks.
	drains *drain.Tracker
	hooks  lbkit.Hooks

	// readLagWindow and answered: a load balancer a create made is taken
	// as gone (its retry token spent) only once missing that long.
	readLagWindow time.Duration
	answered      cloudbase.AnsweredIDs
	now           func() time.Time
	// reconciled fences the shared listings (gather.go).
	reconciled cloudbase.Reconciled
	lookupTTL  time.Duration
}

type pendingWR struct {
	id  string
	drv driver
}

// New returns Ops calling the given APIs.
func New(lb LBAPI, nlb NLBAPI, net NetworkAPI, cfg Config) *Ops {
	t := cfg.Timing.withDefaults()
	return &Ops{
		lb:  lbDriver{api: lb, compartment: cfg.Compartment, lists: newLBLists(lb, cfg.Compartment).withTTL(cfg.LookupTTL)},
		nlb: nlbDriver{api: nlb, compartment: cfg.Compartment, lists: newNLBLists(nlb, cfg.Compartment).withTTL(cfg.LookupTTL)},
		net: net, compartment: cfg.Compartment, vcn: cfg.VCN, naming: cfg.Naming, secLists: cfg.SecurityLists, timing: t, sleep: ctxwait.Sleep,
		pending: map[string]pendingWR{},
		drains:  drain.NewTracker(nil), hooks: cfg.Hooks,
		readLagWindow: cfg.ReadLagWindow, now: time.Now, lookupTTL: cfg.LookupTTL,
	}
}

// touch records that a reconcile of the Service ended: only a listing
// that begins later may answer its next lookup.
func (o *Ops) touch(uid types.UID) {
	if o.lookupTTL > 0 {
		o.reconciled.Done(uid, o.now(), o.lookupTTL+o.readLagWindow)
	}
}

func (o *Ops) driver(k Kind) driver {
	if k == KindNLB {
		return o.nlb
	}
	return o.lb
}

// Get reports the status of the Service's load balancer, of either kind
// (see status for ref.PublishPrivate).
func (o *Ops) Get(ctx context.Context, ref *Desired) (_ *corev1.LoadBalancerStatus, _ bool, err error) {
	const op ccmmetrics.Op = "lbops.Get"
	ctx, done := op.Start(ctx)
	defer done(&err)
	for _, drv := range []driver{o.lb, o.nlb} {
		a, err := o.findFresh(ctx, drv, ref)
		if err != nil {
			return nil, false, op.Errorf("Service %s: %w", ref.Service, err)
		}
		if a != nil {
			return withIPMode(status(a, ref), ref.IngressIPMode), true, nil
		}
	}
	return nil, false, nil
}

// Ensure makes the Service's load balancer match d, creating it if needed,
// and returns its status.
func (o *Ops) Ensure(ctx context.Context, d *Desired) (_ *corev1.LoadBalancerStatus, err error) {
	const op ccmmetrics.Op = "lbops.Ensure"
	ctx, done := op.Start(ctx)
	defer done(&err)
	return o.reconcile(ctx, op, d, true)
}

// Update makes an existing load balancer match d (the upstream controller
// calls it when nodes change). A missing one is an error: the service
// controller's retry then goes through Ensure, which creates it.
func (o *Ops) Update(ctx context.Context, d *Desired) (err error) {
	const op ccmmetrics.Op = "lbops.Update"
	ctx, done := op.Start(ctx)
	defer done(&err)
	_, err = o.reconcile(ctx, op, d, false)
	return err
}

// reconcile is the pipeline of Ensure and Update.
// op names the method in its errors, as every ops method does.
func (o *Ops) reconcile(ctx context.Context, op ccmmetrics.Op, d *Desired, create bool) (*corev1.LoadBalancerStatus, error) {
	defer o.touch(d.Ref.UID) // whatever it wrote, the next lookup must see
	drv := o.driver(d.Kind)
	svc := d.Ref.Service.String()

	// A Service that switched kind keeps one load balancer: the other
	// kind's goes first, so that the new one can take over its traffic.
	other := o.lb
	if d.Kind == KindLB {
		other = o.nlb
	}
	if err := o.deleteWith(ctx, other, d, o.fence(d)); err != nil {
		return nil, op.Errorf("Service %s: remove its %s after the switch to %s: %w", svc, other.kind(), d.Kind, err)
	}

	a, err := o.find(ctx, drv, d)
	if err == nil && a == nil && create {
		// A creation is decided on a fresh read only: a shared listing
		// may predate a load balancer made out of band for the Service
		// (by hand, or the incumbent), and a second one would be made
		// beside it. One small read per name, per creation.
		a, err = o.confirmAbsent(ctx, drv, d)
	}
	if err != nil {
		return nil, op.Errorf("Service %s: %w", svc, err)
	}
	if a != nil && isFailed(a) {
		// Failed out of band (or at creation): users expect it recreated.
		klog.FromContext(ctx).Info("Load balancer is FAILED; deleting it to create it again", "service", d.Ref.Service, "kind", d.Kind, "id", a.ID)
		if err := o.remove(ctx, drv, a.ID); err != nil {
			return nil, op.Errorf("Service %s: delete FAILED %s %s: %w", svc, d.Kind, a.ID, err)
		}
		a = nil
	}
	if a != nil {
		if err := o.checkTakeover(ctx, d, a); err != nil {
			return nil, op.Errorf("Service %s: %w", svc, err)
		}
	}
	nsgs, err := o.planNSGs(ctx, d)
	if err != nil {
		return nil, op.Errorf("Service %s: network security groups: %w", svc, err)
	}
	if a == nil {
		if !create {
			return nil, op.Errorf("Service %s: no %s named %s in compartment %s yet", svc, d.Kind, d.Name, o.compartment)
		}
		if err := o.checkNoStranger(ctx, d); err != nil {
			return nil, op.Errorf("Service %s: %w", svc, err)
		}
	}
	if err := o.applyNSGs(ctx, d, nsgs); err != nil {
		return nil, op.Errorf("Service %s: network security groups: %w", svc, err)
	}
	if a == nil {
		ls, bss := desiredSets(d)
		if a, err = o.create(ctx, drv, d, ls, bss); err != nil {
			return nil, op.Errorf("Service %s: %w", svc, err)
		}
	}
	if a, err = o.waitActive(ctx, drv, a); err != nil {
		return nil, op.Errorf("Service %s: %w", svc, err)
	}

	c, nextDrain, err := o.planChange(ctx, d, a, len(nsgs.writes()) > 0, true)
	if err != nil {
		return nil, op.Errorf("Service %s: %s %s: %w", svc, d.Kind, a.ID, err)
	}
	if c.tags != nil {
		klog.FromContext(ctx).Info("Taking over the load balancer", "service", d.Ref.Service, "kind", d.Kind, "id", a.ID, "displayName", a.DisplayName)
	}
	for _, s := range c.all() {
		klog.FromContext(ctx).V(2).Info("Changing load balancer", "service", d.Ref.Service, "kind", d.Kind, "id", a.ID, "step", s.String())
		if err := o.apply(ctx, drv, a.ID, func(ctx context.Context) (string, error) { return drv.write(ctx, a.ID, s) }); err != nil {
			return nil, op.Errorf("Service %s: %s %s: %w", svc, d.Kind, a.ID, err)
		}
	}
	if !nextDrain.IsZero() && o.hooks.DrainEnds != nil {
		o.hooks.DrainEnds(d.Ref.UID, nextDrain)
	}
	if err := o.attachNSGs(ctx, drv, d, a); err != nil {
		return nil, op.Errorf("Service %s: %s %s: network security groups: %w", svc, d.Kind, a.ID, err)
	}
	if err := o.applySecurityRules(ctx, c.lists); err != nil {
		return nil, op.Errorf("Service %s: security lists: %w", svc, err)
	}
	if a.IPs == nil {
		if a, err = drv.get(ctx, a.ID); err != nil {
			return nil, op.Errorf("Service %s: %w", svc, err)
		}
	}
	// What OCI cannot change in place is reported after the rest is
	// reconciled, so that traffic keeps reaching the current nodes.
	if err := immutableDiff(d, a); err != nil {
		return withIPMode(status(a, d), d.IngressIPMode), op.Errorf("Service %s: %s %s: %w", svc, d.Kind, a.ID, err)
	}
	return withIPMode(status(a, d), d.IngressIPMode), nil
}

// create starts the load balancer with everything inline and waits for it.
//
// Retry tokens (opc-retry-token): OCI answers a create retried with the same
// token with the first answer, for 24 hours, so the token is what makes a
// create retried after a timeout or a crash return the same load balancer
// instead of a second one. The first token is the Service UID. It is spent
// when OCI refuses it (409 InvalidatedRetryToken: its load balancer was
// deleted), when it replays a creation whose load balancer is gone, or
// when its work request FAILED: creating again with it would replay the
// failure. The create is then sent with the second token, derived from the
// UID (retryToken), so that it is as restart-safe as the first; the FAILED
// load balancer goes first, so that one display name never names two. Only
// when the second is spent the same way too (a Service recreated twice
// within 24 hours) a fresh token is used. A second FAILED work request is
// returned as the error.
func (o *Ops) create(ctx context.Context, drv driver, d *Desired, ls []listenerModel, bss []backendSetModel) (*actual, error) {
	if len(d.Subnets) == 0 {
		return nil, errors.New("no subnet to create the load balancer in")
	}
	if err := o.resolveReservedIP(ctx, d); err != nil {
		return nil, err
	}
	if err := o.checkAssignedIPv6(ctx, d); err != nil {
		return nil, err
	}
	klog.FromContext(ctx).Info("Creating load balancer", "service", d.Ref.Service, "kind", d.Kind, "displayName", d.Name,
		"listeners", len(ls), "backends", len(d.Backends))
	tokens := []string{retryToken(d, 0), retryToken(d, 1), fmt.Sprintf("%s-%x", d.Ref.UID, time.Now().UnixNano())}
	var failed []string // messages of FAILED creations
	for i, token := range tokens {
		last := i == len(tokens)-1
		wr, err := drv.create(ctx, d, ls, bss, token)
		if ocierr.Code(err) == "InvalidatedRetryToken" && !last {
			klog.FromContext(ctx).Info("The retry token belongs to a deleted load balancer; creating with the next token", "service", d.Ref.Service, "kind", d.Kind, "token", i)
			continue
		}
		if err != nil {
			return nil, err
		}
		lbID, err := o.wait(ctx, drv, "", wr)
		var wf *wrFailedError
		if errors.As(err, &wf) {
			failed = append(failed, wf.Error())
			if len(failed) > 1 || last {
				return nil, fmt.Errorf("%s (an earlier creation failed too: %s)", wf.Error(), failed[0])
			}
			klog.FromContext(ctx).Info("The creation's work request FAILED; creating again with the next retry token, since the same one would replay the failure",
				"service", d.Ref.Service, "kind", d.Kind, "workRequest", wr, "error", wf.Message)
			if err := o.removeFailed(ctx, drv, lbID); err != nil {
				return nil, fmt.Errorf("%s; removing the FAILED %s %s: %w", wf.Error(), d.Kind, lbID, err)
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		var a *actual
		if lbID != "" {
			a, err = drv.get(ctx, lbID)
		} else {
			a, err = drv.find(ctx, o.now(), d.Name) // afresh: a listing from before this create would not hold it
		}
		stale := ocierr.IsNotFound(err) || (err == nil && (a == nil || a.State == "DELETED" || a.State == "DELETING"))
		if notSeen := ocierr.IsNotFound(err) || (err == nil && a == nil); notSeen {
			// Not found may be a read that lags the create: the next
			// token would then make a second load balancer.
			if since := o.answered.Since(wr, o.now(), o.readLagWindow); since < o.readLagWindow {
				return nil, api.NewRetryError(fmt.Sprintf("%s %s: work request %s succeeded, but its load balancer %q is not found yet (known for %s; "+
					"reads may lag writes, readLagWindow %s): not creating another one", d.Kind, d.Name, wr, lbID,
					since.Round(time.Second), o.readLagWindow), o.timing.Retry)
			}
		}
		if stale && !last {
			klog.FromContext(ctx).Info("The create was answered from an earlier request with the same retry token, whose load balancer is gone; creating with the next token",
				"service", d.Ref.Service, "kind", d.Kind, "workRequest", wr, "token", i)
			continue
		}
		if err == nil && a == nil {
			err = fmt.Errorf("%s %s: created (work request %s) but not found", d.Kind, d.Name, wr)
		}
		return a, err
	}
	return nil, fmt.Errorf("%s %s: every retry token was spent, and the load balancer is gone each time", d.Kind, d.Name)
}

// retryToken is the n-th opc-retry-token of the Service's create: the UID,
// then the UID with a suffix (OCI allows 64 characters; a UID has 36).
func retryToken(d *Desired, n int) string {
	if n == 0 {
		return string(d.Ref.UID)
	}
	return fmt.Sprintf("%s-retry-%d", d.Ref.UID, n)
}

// removeFailed deletes the load balancer a FAILED creation left (if any,
// and if it is FAILED) and waits for it to go.
func (o *Ops) removeFailed(ctx context.Context, drv driver, lbID string) error {
	if lbID == "" {
		return nil
	}
	a, err := drv.get(ctx, lbID)
	if ocierr.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if a.State == "DELETED" || a.State == "DELETING" {
		return nil
	}
	return o.remove(ctx, drv, lbID)
}

// wrFailedError is a work request that ended FAILED, with why.
type wrFailedError struct {
	ID, Message string
}

func (e *wrFailedError) Error() string {
	return fmt.Sprintf("work request %s failed: %s", e.ID, e.Message)
}

// waitActive waits for a CREATING load balancer to become ACTIVE.
func (o *Ops) waitActive(ctx context.Context, drv driver, a *actual) (*actual, error) {
	deadline := time.Now().Add(o.timing.Wait)
	delay := o.timing.Poll
	for a.State == "CREATING" || a.State == "UPDATING" {
		if time.Now().After(deadline) {
			return nil, api.NewRetryError(fmt.Sprintf("%s %s is still %s", drv.kind(), a.ID, a.State), o.timing.Retry)
		}
		if err := o.sleep(ctx, delay); err != nil {
			return nil, err
		}
		delay = min(2*delay, o.timing.PollMax)
		var err error
		if a, err = drv.get(ctx, a.ID); err != nil {
			return nil, err
		}
	}
	if isFailed(a) {
		return nil, fmt.Errorf("%s %s is FAILED", drv.kind(), a.ID)
	}
	return a, nil
}

func isFailed(a *actual) bool { return a.State == "FAILED" }

// apply runs one write on load balancer lbID once no work request is in
// flight on it, and waits for the write's own work request.
func (o *Ops) apply(ctx context.Context, drv driver, lbID string, write func(context.Context) (string, error)) error {
	if err := o.awaitPending(ctx, lbID); err != nil {
		return err
	}
	wr, err := write(ctx)
	if isBusy(err) {
		return api.NewRetryError(fmt.Sprintf("another change of %s %s is in progress (%v)", drv.kind(), lbID, err), o.timing.Retry)
	}
	if err != nil {
		return err
	}
	_, err = o.wait(ctx, drv, lbID, wr)
	return err
}

// isBusy: OCI refuses a change while a work request runs on the load
// balancer with 409 IncorrectState (or Conflict).
func isBusy(err error) bool {
	return ocierr.Status(err) == 409 && (ocierr.Code(err) == "IncorrectState" || ocierr.Code(err) == "Conflict")
}

// awaitPending waits for a work request on lbID that an earlier call
// stopped waiting for.
func (o *Ops) awaitPending(ctx context.Context, lbID string) error {
	o.mu.Lock()
	p, ok := o.pending[lbID]
	o.mu.Unlock()
	if !ok {
		return nil
	}
	_, err := o.wait(ctx, p.drv, lbID, p.id)
	return err
}

// wait polls work request wr until it ends. On success it returns the load
// balancer the request was about. When Timing.Wait runs out it remembers
// the request for lbID and asks for a retry.
func (o *Ops) wait(ctx context.Context, drv driver, lbID, wr string) (string, error) {
	if wr == "" {
		return "", nil // nothing to wait for: the API did it at once
	}
	deadline := time.Now().Add(o.timing.Wait)
	delay := o.timing.Poll
	for {
		// The first read waits a poll too: a work request is never done
		// at once (OCI's take seconds to minutes), so a read right after
		// the write is one more call per write through the read bucket
		// that, at 1,000 creations, bounded the burst (docs/scale.md).
		if err := o.sleep(ctx, delay); err != nil {
			return "", err
		}
		delay = min(2*delay, o.timing.PollMax)
		state, msg, id, err := drv.workRequest(ctx, wr)
		if err != nil {
			return "", err
		}
		if lbID == "" {
			lbID = id
		}
		switch state {
		case wrSucceeded, wrFailed:
			o.mu.Lock()
			if o.pending[lbID].id == wr {
				delete(o.pending, lbID)
			}
			o.mu.Unlock()
			if state == wrFailed {
				return id, &wrFailedError{ID: wr, Message: msg}
			}
			return id, nil
		}
		if time.Now().After(deadline) {
			if lbID != "" {
				o.mu.Lock()
				o.pending[lbID] = pendingWR{id: wr, drv: drv}
				o.mu.Unlock()
			}
			return "", api.NewRetryError(fmt.Sprintf("work request %s is still in progress after %s", wr, o.timing.Wait), o.timing.Retry)
		}
	}
}

// Delete removes the Service's load balancer, of either kind, our
// security list rules, and its managed NSG. A missing one is fine.
func (o *Ops) Delete(ctx context.Context, d *Desired) (err error) {
	const op ccmmetrics.Op = "lbops.Delete"
	ctx, done := op.Start(ctx)
	defer done(&err)
	defer o.touch(d.Ref.UID) // a Service made a LoadBalancer again must not find what this deleted
	for _, drv := range []driver{o.lb, o.nlb} {
		if err := o.deleteWith(ctx, drv, d, o.now()); err != nil {
			return op.Errorf("Service %s: %w", d.Ref.Service, err)
		}
	}
	if err := o.deleteNSGs(ctx, d); err != nil {
		return op.Errorf("Service %s: network security groups: %w", d.Ref.Service, err)
	}
	return nil
}

// deleteWith deletes the Service's load balancer of one kind, found by a
// listing that began after notBefore.
func (o *Ops) deleteWith(ctx context.Context, drv driver, d *Desired, notBefore time.Time) error {
	a, err := o.findSince(ctx, drv, d, notBefore)
	if err != nil || a == nil {
		return err
	}
	if err := o.ensureSecurityRules(ctx, d, a.Subnets, true); err != nil {
		return fmt.Errorf("security lists: %w", err)
	}
	klog.FromContext(ctx).Info("Deleting load balancer", "service", d.Ref.Service, "kind", drv.kind(), "id", a.ID)
	return o.remove(ctx, drv, a.ID)
}

func (o *Ops) remove(ctx context.Context, drv driver, id string) error {
	err := o.apply(ctx, drv, id, func(ctx context.Context) (string, error) { return drv.remove(ctx, id) })
	if ocierr.IsNotFound(err) {
		err = nil // gone already (our find saw it a moment ago)
	}
	if err == nil {
		o.drains.ForgetPrefix(id + "/")
	}
	return err
}

// immutableDiff reports what the Service asks for that the existing load
// balancer cannot change in place.
func immutableDiff(d *Desired, a *actual) error {
	var diffs []string
	if d.Internal != a.Internal {
		diffs = append(diffs, fmt.Sprintf("internal is %v but the Service asks for %v", a.Internal, d.Internal))
	}
	if want := slices.Sorted(slices.Values(d.Subnets)); len(want) > 0 && len(a.Subnets) > 0 && !slices.Equal(want, a.Subnets) {
		diffs = append(diffs, fmt.Sprintf("subnets are %v but the Service asks for %v", a.Subnets, want))
	}
	if diff := reservedIPDiff(d, a); diff != "" {
		diffs = append(diffs, diff)
	}
	if diff := ipVersionDiff(d, a); diff != "" {
		diffs = append(diffs, diff)
	}
	if d.Kind == KindLB && a.Shape != "" && !d.ShapeFromDefault && (d.FixedShape == "" || a.Shape != d.FixedShape) {
		if a.Shape != d.Shape {
			diffs = append(diffs, fmt.Sprintf("shape is %s but the Service asks for %s", a.Shape, d.Shape))
		} else if d.Shape == ShapeFlexible && a.FlexMaxMbps != 0 && (a.FlexMinMbps != d.FlexMinMbps || a.FlexMaxMbps != d.FlexMaxMbps) {
			diffs = append(diffs, fmt.Sprintf("flexible shape is %d-%d Mbps but the Service asks for %d-%d Mbps",
				a.FlexMinMbps, a.FlexMaxMbps, d.FlexMinMbps, d.FlexMaxMbps))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("%s; these are fixed when the load balancer is created, so it was left as it is "+
		"(listeners and backends are up to date); to change them, delete and recreate the Service", strings.Join(diffs, "; "))
}

// status is the Service's load balancer status. A public load balancer
// publishes its public addresses only: a public NLB lists its private
// address too (isPublic false), and a client taking the first address of
// the status must not get one it cannot reach. With publishPrivate the
// private ones follow. A private load balancer publishes its private
// addresses. Each group is sorted, so the order is stable; if the filter
// leaves nothing, every address is published. With d.APIOrder every
// address is published in OCI's order (a public NLB's private one too
// unless !d.PublishPrivate), as the public OCI CCM's loadBalancerToStatus
// does. Unless the Service chose (d.PublishPrivateSet), a private address
// it already shows stays published; and a status that would list the
// addresses it lists now keeps their order, so nothing a user sees moves.
func status(a *actual, d *Desired) *corev1.LoadBalancerStatus {
	var public, private, all []string
	publishPrivate := d.PublishPrivate
	for _, ip := range a.IPs {
		all = append(all, ip.IP)
		if ip.Public {
			public = append(public, ip.IP)
		} else {
			private = append(private, ip.IP)
			publishPrivate = publishPrivate || (!d.PublishPrivateSet && slices.Contains(d.Published, ip.IP))
		}
	}
	if !d.APIOrder {
		slices.SortFunc(public, compareIP)
		slices.SortFunc(private, compareIP)
	}
	var ips []string
	switch {
	case d.APIOrder && (a.Internal || publishPrivate):
		ips = all
	case a.Internal:
		ips = private
	case publishPrivate:
		ips = append(public, private...)
	default:
		ips = public
	}
	if len(ips) == 0 {
		ips = append(public, private...)
	}
	if sameSet(ips, d.Published) {
		ips = d.Published
	}
	st := &corev1.LoadBalancerStatus{}
	for _, ip := range ips {
		st.Ingress = append(st.Ingress, corev1.LoadBalancerIngress{IP: ip})
	}
	return st
}

// sameSet says whether a and b hold the same addresses, each once.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	sa, sb := slices.Clone(a), slices.Clone(b)
	slices.Sort(sa)
	slices.Sort(sb)
	return slices.Equal(sa, sb) && len(slices.Compact(sa)) == len(a)
}

func freeformTags(d *Desired) map[string]string {
	return map[string]string{TagServiceUID: string(d.Ref.UID), TagService: d.Ref.Service.Namespace + "/" + d.Ref.Service.Name}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
