package clbops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cloud-provider/api"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/annotations"
)

// ErrNotFound: the Service has no CLB.
var ErrNotFound = errors.New("load balancer not found")

// CLB types (LoadBalancerType) and states (Status).
const (
	typePublic   = "OPEN"
	typeInternal = "INTERNAL"

	lbCreating = 0
	lbNormal   = 1
)

// loadBalancer is what the operations need to know about a CLB.
type loadBalancer struct {
	id, name, lbType string
	vpcID, subnetID  string
	state            uint64
	vips             []string
	domain           string
	tags             map[string]string
	// passToTarget is LoadBalancerPassToTarget (nil in the answer: false).
	passToTarget bool
	// securityGroups are the bound groups (SecureGroups), in priority order.
	securityGroups []string
	// adopted: found through the adoption annotation, not created for
	// the Service. Only our listeners on it are ours.
	adopted bool
	// takeover: made by TKE's service controller for the Service, found
	// through its loadbalance-id annotation and taken over (takeover.go).
	takeover bool
	// createdWith is what the CLB was created with (creation.go).
	createdWith createdWith
}

func (lb *loadBalancer) String() string { return "CLB " + lb.id }

func fromSDK(in *clb.LoadBalancer) *loadBalancer {
	lb := &loadBalancer{
		id:       deref(in.LoadBalancerId),
		name:     deref(in.LoadBalancerName),
		lbType:   deref(in.LoadBalancerType),
		vpcID:    deref(in.VpcId),
		subnetID: deref(in.SubnetId),
		vips:     common.StringValues(in.LoadBalancerVips),
		domain:   deref(in.LoadBalancerDomain),
		tags:     map[string]string{},
	}
	lb.passToTarget = deref(in.LoadBalancerPassToTarget)
	lb.createdWith = createdWithFromSDK(in)
	lb.securityGroups = common.StringValues(in.SecureGroups)
	if lb.domain == "" {
		lb.domain = deref(in.Domain)
	}
	if in.Status != nil {
		lb.state = *in.Status
	}
	for _, t := range in.Tags {
		if t != nil && t.TagKey != nil {
			lb.tags[*t.TagKey] = deref(t.TagValue)
		}
	}
	return lb
}

// status is the Service's load balancer status: each VIP as an IP, or,
// for a CLB without VIPs (domain-only), its domain as a hostname.
func (lb *loadBalancer) status() *corev1.LoadBalancerStatus {
	st := &corev1.LoadBalancerStatus{}
	for _, vip := range lb.vips {
		if vip != "" {
			st.Ingress = append(st.Ingress, corev1.LoadBalancerIngress{IP: vip})
		}
	}
	if len(st.Ingress) == 0 && lb.domain != "" {
		st.Ingress = append(st.Ingress, corev1.LoadBalancerIngress{Hostname: lb.domain})
	}
	return st
}

// checkSupported refuses what the CCM cannot do, before anything is
// touched: source ranges it could not enforce (silently ignoring them
// would expose the Service to everyone).
func (o *Ops) checkSupported(spec *Desired) error {
	if o.sgAPI == nil && (len(spec.SourceRanges) > 0 || spec.SecurityGroups != nil) {
		return errNoVPCAPI
	}
	_, err := desiredIngress(spec)
	return err
}

// find returns the Service's CLB: by our service-uid tag, else by the
// adoption annotation, else the one TKE made for it (its loadbalance-id
// annotation, takeover.go); nil if none finds one.
func (o *Ops) find(ctx context.Context, spec *Desired) (*loadBalancer, error) {
	ref := spec.Ref
	tagged, err := o.lookupTagged(ctx, ref.UID)
	if err != nil {
		return nil, err
	}
	var adopted, incumbent *loadBalancer
	switch {
	case len(tagged) > 0:
	case ref.AdoptID != "":
		adopted, err = o.describeByID(ctx, ref.AdoptID)
	case spec.Incumbent != "":
		incumbent, err = o.describeByID(ctx, spec.Incumbent)
	}
	if err != nil {
		return nil, err
	}
	return o.resolve(spec, tagged, adopted, incumbent)
}

// describeTagged returns the CLBs tagged for the given Service UIDs, using
// one call (per page) for up to 100 UIDs.
func (o *Ops) describeTagged(ctx context.Context, uids []types.UID) (map[types.UID][]*loadBalancer, error) {
	out := map[types.UID][]*loadBalancer{}
	for chunk := range slices.Chunk(uids, maxFilterValues) {
		values := make([]string, len(chunk))
		for i, uid := range chunk {
			values[i] = string(uid)
		}
		req := clb.NewDescribeLoadBalancersRequest()
		req.Filters = []*clb.Filter{{Name: common.StringPtr("tag:" + TagServiceUID), Values: common.StringPtrs(values)}}
		what := fmt.Sprintf("tag %s=%s", TagServiceUID, values[0])
		if len(values) > 1 {
			what = fmt.Sprintf("tag %s (%d Services)", TagServiceUID, len(values))
		}
		lbs, err := o.describeLoadBalancers(ctx, what, req)
		if err != nil {
			return nil, err
		}
		for _, lb := range lbs {
			// Only an exact tag match counts, whatever the filter did.
			if uid := types.UID(lb.tags[TagServiceUID]); slices.Contains(chunk, uid) {
				out[uid] = append(out[uid], lb)
			}
		}
	}
	return out, nil
}

// resolve decides which CLB is the Service's, from the CLBs tagged for it,
// the one its adoption annotation names and the one its loadbalance-id
// annotation names (each nil if none or not found).
func (o *Ops) resolve(spec *Desired, tagged []*loadBalancer, adopted, incumbent *loadBalancer) (*loadBalancer, error) {
	ref := spec.Ref
	switch {
	case len(tagged) > 1:
		ids := make([]string, len(tagged))
		for i, lb := range tagged {
			ids[i] = lb.id
		}
		// Never guess: using or deleting the wrong one loses traffic.
		return nil, fmt.Errorf("%d CLBs carry tag %s=%s (%s); expected one: delete the extra ones",
			len(tagged), TagServiceUID, ref.UID, strings.Join(ids, ", "))
	case len(tagged) == 1:
		lb := tagged[0]
		if ref.AdoptID != "" && ref.AdoptID != lb.id {
			return nil, fmt.Errorf("the Service already has %s, created for it; it cannot also adopt %s (annotation %s): "+
				"delete the Service (which deletes %s) and create it again with the annotation",
				lb, ref.AdoptID, annotations.TKEExistedLBID, lb.id)
		}
		return lb, nil
	case ref.AdoptID == "" && incumbent != nil:
		return o.resolveIncumbent(spec, incumbent)
	case ref.AdoptID == "":
		return nil, nil
	case adopted == nil:
		return nil, fmt.Errorf("CLB %s named by annotation %s does not exist", ref.AdoptID, annotations.TKEExistedLBID)
	}
	if owner, ok := adopted.tags[TagServiceUID]; ok {
		return nil, fmt.Errorf("CLB %s named by annotation %s was created by this CCM for Service %s (uid %s); it cannot be adopted by another Service",
			adopted.id, annotations.TKEExistedLBID, adopted.tags[TagService], owner)
	}
	if adopted.vpcID != o.vpcID {
		return nil, fmt.Errorf("CLB %s named by annotation %s is in VPC %q, not the cluster's VPC %s", adopted.id, annotations.TKEExistedLBID, adopted.vpcID, o.vpcID)
	}
	adopted.adopted = true
	return adopted, nil
}

func (o *Ops) describeByID(ctx context.Context, id string) (*loadBalancer, error) {
	req := clb.NewDescribeLoadBalancersRequest()
	req.LoadBalancerIds = common.StringPtrs([]string{id})
	lbs, err := o.describeLoadBalancers(ctx, "CLB "+id, req)
	if err != nil {
		return nil, err
	}
	for _, lb := range lbs {
		if lb.id == id {
			return lb, nil
		}
	}
	return nil, nil
}

// describeLoadBalancers pages through DescribeLoadBalancers.
func (o *Ops) describeLoadBalancers(ctx context.Context, target string, req *clb.DescribeLoadBalancersRequest) ([]*loadBalancer, error) {
	var out []*loadBalancer
	req.Limit = common.Int64Ptr(maxPageSize)
	for offset := 0; ; {
		req.Offset = common.Int64Ptr(int64(offset))
		var resp *clb.DescribeLoadBalancersResponse
		if err := o.call(ctx, "DescribeLoadBalancers", target, func() (err error) {
			resp, err = o.api.DescribeLoadBalancersWithContext(ctx, req)
			return err
		}); err != nil {
			return nil, err
		}
		if resp == nil || resp.Response == nil || resp.Response.TotalCount == nil {
			return nil, callError("DescribeLoadBalancers", target, errors.New("malformed answer: no TotalCount"))
		}
		for _, in := range resp.Response.LoadBalancerSet {
			if in == nil || in.LoadBalancerId == nil {
				return nil, callError("DescribeLoadBalancers", target, errors.New("malformed answer: a CLB without LoadBalancerId"))
			}
			out = append(out, fromSDK(in))
		}
		offset += len(resp.Response.LoadBalancerSet)
		if uint64(offset) >= *resp.Response.TotalCount || len(resp.Response.LoadBalancerSet) == 0 {
			return out, nil
		}
	}
}

// clientToken makes CreateLoadBalancer idempotent: a create that is retried
// or repeated after a restart, with the same token, returns the CLB of the
// first one instead of making a second. It is the Service UID and a
// generation (see create); a UID too long for the 64-character limit is
// hashed.
func clientToken(uid types.UID, generation int) string {
	token := fmt.Sprintf("ccmkit-%s-%d", uid, generation)
	if len(token) <= maxClientToken {
		return token
	}
	sum := sha256.Sum256([]byte(token))
	return "ccmkit-" + hex.EncodeToString(sum[:])[:48]
}

// maxClientToken is ClientToken's documented maximum length.
const maxClientToken = 64

// maxTokenGenerations bounds how many spent tokens create skips: the times
// one Service's CLB can be re-created while the cloud still remembers the
// earlier tokens. Skipping one costs a replayed create and a describe.
const maxTokenGenerations = 32

// create creates the Service's CLB and waits until it is usable. A token
// stays bound to its CLB after that CLB is deleted, so when a Service's CLB
// is created again (after deletion behind our back, or after the Service
// went from LoadBalancer to ClusterIP and back), the first token answers
// with the deleted CLB; create then moves on to the next generation.
func (o *Ops) create(ctx context.Context, spec *Desired) (*loadBalancer, error) {
	if spec.Internal && spec.SubnetID == "" {
		return nil, errors.New("an internal CLB needs a subnet")
	}
	for gen := 0; gen < maxTokenGenerations; gen++ {
		lb, err := o.createWithToken(ctx, spec, clientToken(spec.UID, gen))
		if err != nil || lb != nil {
			return lb, err
		}
	}
	return nil, fmt.Errorf("CreateLoadBalancer: %d client tokens of Service %s all belong to deleted CLBs", maxTokenGenerations, spec.Service)
}

// createWithToken returns nil, nil when the token belongs to a CLB that no
// longer exists.
func (o *Ops) createWithToken(ctx context.Context, spec *Desired, token string) (*loadBalancer, error) {
	req := clb.NewCreateLoadBalancerRequest()
	req.LoadBalancerType = common.StringPtr(typePublic)
	if spec.Internal {
		req.LoadBalancerType = common.StringPtr(typeInternal)
		req.SubnetId = common.StringPtr(spec.SubnetID)
	}
	req.Forward = common.Int64Ptr(1) // application CLB
	req.LoadBalancerName = common.StringPtr(spec.Name)
	req.VpcId = common.StringPtr(o.vpcID)
	req.ClientToken = common.StringPtr(token)
	if !spec.KeepPassToTarget {
		req.LoadBalancerPassToTarget = common.BoolPtr(spec.PassToTarget)
	}
	tagMap := tags(spec)
	for _, k := range sortedKeys(tagMap) {
		req.Tags = append(req.Tags, &clb.TagInfo{TagKey: common.StringPtr(k), TagValue: common.StringPtr(tagMap[k])})
	}
	spec.Creation.apply(req)
	target := fmt.Sprintf("Service %s (name %q, %s)", spec.Service, spec.Name, *req.LoadBalancerType)
	logWrite(ctx, "Creating CLB", "service", spec.Service, "name", spec.Name, "type", *req.LoadBalancerType, "passToTarget", spec.PassToTarget)
	var resp *clb.CreateLoadBalancerResponse
	if err := o.call(ctx, "CreateLoadBalancer", target, func() (err error) {
		resp, err = o.api.CreateLoadBalancerWithContext(ctx, req)
		return err
	}); err != nil {
		if Code(err) == codeTokenSpent {
			return nil, nil // the token's create failed earlier: use the next one
		}
		return nil, err
	}
	if resp == nil || resp.Response == nil {
		return nil, callError("CreateLoadBalancer", target, errors.New("malformed answer: no Response"))
	}
	r := resp.Response
	ids := common.StringValues(r.LoadBalancerIds)
	// The ids may be missing while the order is processed; the task
	// status of the DealName then has them.
	task, err := o.waitTask(ctx, "CreateLoadBalancer", target, requestID(r.RequestId), dealIfNoIDs(ids, r.DealName))
	switch {
	case err == nil:
		if len(ids) == 0 {
			ids = common.StringValues(task.LoadBalancerIds)
		}
	case len(ids) != 1 || errors.Is(err, ErrTaskFailed) || ctx.Err() != nil:
		return nil, err
	default:
		// A replayed ClientToken answers the first create's ids but starts
		// no task, so its RequestId is no TaskId (TaskId is the RequestId
		// of the call that started the task); the first task may also be
		// long forgotten. The CLB's Status (waitReady, after this) says
		// when it is ready, and a CLB that is gone means the token is
		// spent.
		klog.FromContext(ctx).V(2).Info("No task to wait for on a created CLB (a replayed ClientToken starts none); waiting on its Status instead",
			"service", spec.Service, "clb", ids[0], "taskError", err.Error())
	}
	if len(ids) != 1 {
		return nil, callError("CreateLoadBalancer", target, fmt.Errorf("expected one CLB id, got %v", ids))
	}
	lb, err := o.describeByID(ctx, ids[0])
	if err != nil {
		return nil, err
	}
	if lb == nil {
		// Missing may be a read that lags the create (cloudbase.AnsweredIDs): the
		// next token would then make a second CLB.
		if since := o.answered.Since(ids[0], o.now(), o.readLagWindow); since < o.readLagWindow {
			return nil, api.NewRetryError(fmt.Sprintf("CreateLoadBalancer (ClientToken %s) answered %s, which DescribeLoadBalancers "+
				"does not show yet (known for %s; reads may lag writes, read_lag_window %s): not creating another one",
				token, ids[0], since.Round(time.Second), o.readLagWindow), o.timing.TaskPollMax)
		}
		logWrite(ctx, "Client token belongs to a deleted CLB, trying the next one", "service", spec.Service, "clb", ids[0])
		return nil, nil
	}
	if lb.tags[TagServiceUID] != string(spec.UID) {
		return nil, fmt.Errorf("CreateLoadBalancer answered with CLB %s, which is not tagged for Service %s", lb.id, spec.Service)
	}
	logWrite(ctx, "Created CLB", "service", spec.Service, "clb", lb.id)
	return lb, nil
}

func dealIfNoIDs(ids []string, deal *string) string {
	if len(ids) > 0 {
		return ""
	}
	return deref(deal)
}

// waitReady waits until a CLB being created (Status 0) is normal, because
// listeners cannot be added before. It gives up with a RetryError, so the
// service controller comes back soon without an exponential backoff.
func (o *Ops) waitReady(ctx context.Context, lb *loadBalancer) (*loadBalancer, error) {
	deadline := o.now().Add(o.timing.TaskTimeout)
	poll := o.timing.TaskPoll
	for lb.state != lbNormal {
		if !o.now().Add(poll).Before(deadline) {
			return nil, api.NewRetryError(fmt.Sprintf("%s is still being created", lb), o.timing.TaskPollMax)
		}
		if err := o.sleep(ctx, poll); err != nil {
			return nil, err
		}
		poll = min(poll*3/2, o.timing.TaskPollMax)
		fresh, err := o.describeByID(ctx, lb.id)
		if err != nil {
			return nil, err
		}
		if fresh == nil {
			return nil, fmt.Errorf("%s disappeared while being created", lb)
		}
		fresh.adopted, fresh.takeover = lb.adopted, lb.takeover
		lb = fresh
	}
	return lb, nil
}

// checkMatches refuses to reconcile a CLB whose type cannot be what the
// Service asks for. A CLB cannot change type, and recreating it would
// change its address, so this is left to a human.
func (o *Ops) checkMatches(lb *loadBalancer, spec *Desired) error {
	if lb.adopted {
		return nil // the adopted CLB is what it is; placement annotations apply only to CLBs we create
	}
	want := typePublic
	if spec.Internal {
		want = typeInternal
	}
	if lb.lbType != "" && lb.lbType != want {
		return fmt.Errorf("%s is %s but the Service asks for %s (annotation %s); a CLB cannot change type: "+
			"revert the annotation, or delete the Service and create it again (its address will change)",
			lb, lb.lbType, want, annotations.TencentLBType)
	}
	return nil
}

// deleteLoadBalancer deletes a CLB we created, with its listeners.
func (o *Ops) deleteLoadBalancer(ctx context.Context, lb *loadBalancer) error {
	if wait := o.gate.wait(o.now()); wait > 0 {
		return deferredDelete(lb, wait, nil)
	}
	req := clb.NewDeleteLoadBalancerRequest()
	req.LoadBalancerIds = common.StringPtrs([]string{lb.id})
	// Without it the API refuses to delete a CLB with many targets (a
	// safety check for humans); the Service is gone, so is its CLB. It
	// does not override the frequency check.
	req.ForceDelete = common.BoolPtr(true)
	logWrite(ctx, "Deleting CLB", "clb", lb.id, "service", serviceRef(lb.tags[TagService]))
	var resp *clb.DeleteLoadBalancerResponse
	if err := o.call(ctx, "DeleteLoadBalancer", lb.String(), func() (err error) {
		resp, err = o.api.DeleteLoadBalancerWithContext(ctx, req)
		return err
	}); err != nil {
		switch Code(err) {
		case codeLBNotFound:
			return nil // already gone: what we wanted
		case codeFrequencyCheckRisk:
			o.gate.block(o.now().Add(o.timing.DeleteRetryAfter))
			return deferredDelete(lb, o.timing.DeleteRetryAfter, err)
		}
		return err
	}
	if resp == nil || resp.Response == nil {
		return callError("DeleteLoadBalancer", lb.String(), errors.New("malformed answer: no Response"))
	}
	_, err := o.waitTask(ctx, "DeleteLoadBalancer", lb.String(), requestID(resp.Response.RequestId), "")
	return err
}

// deleteGate holds DeleteLoadBalancer back, for every Service, after the
// API refused a deletion with FailedOperation.FrequencyCheckRisk: deleting
// 30 or more CLBs in one region within 5 minutes is refused, and
// ForceDelete does not override it (clb@v1.3.105 models.go,
// DeleteLoadBalancerRequestParams.ForceDelete, case 3). Calling again at
// once would only be refused again, once per waiting Service.
type deleteGate struct {
	mu    sync.Mutex
	until time.Time
}

// wait returns how long deletions are still held back.
func (g *deleteGate) wait(now time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return max(g.until.Sub(now), 0)
}

// block holds deletions back until t.
func (g *deleteGate) block(t time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.After(g.until) {
		g.until = t
	}
}

// deferredDelete is the error of a deletion put off by the frequency
// check: a RetryError, so that a caller that honors it (the service
// controller does on its ensure path) comes back after the wait, not in a
// hot loop. cause is the API's answer, nil when no call was made.
func deferredDelete(lb *loadBalancer, wait time.Duration, cause error) error {
	msg := fmt.Sprintf("deleting %s is deferred for %s: Tencent Cloud refuses to delete 30 or more CLBs in one region within 5 minutes "+
		"(FailedOperation.FrequencyCheckRisk; ForceDelete does not override it), so the CCM waits instead of retrying at once", lb, wait.Round(time.Second))
	if cause != nil {
		msg += ": " + cause.Error()
	} else {
		msg += " (no call made: an earlier deletion was refused)"
	}
	return api.NewRetryError(msg, wait)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// serviceRef is the Service a service tag ("namespace/name") names, as
// every log line names a Service.
func serviceRef(tag string) klog.ObjectRef {
	ns, name, _ := strings.Cut(tag, "/")
	return klog.KRef(ns, name)
}
