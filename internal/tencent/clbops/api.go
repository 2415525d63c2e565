package clbops

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/callerr"
	"github.com/ccmkit/ccm/internal/tencent/tcapi"
)

// API is the slice of the CLB API (clb 2018-03-17) the operations use.
// *clb.Client implements it; tests run it against cloudsim (clbenv_test.go).
type API interface {
	CreateLoadBalancerWithContext(context.Context, *clb.CreateLoadBalancerRequest) (*clb.CreateLoadBalancerResponse, error)
	DescribeLoadBalancersWithContext(context.Context, *clb.DescribeLoadBalancersRequest) (*clb.DescribeLoadBalancersResponse, error)
	DeleteLoadBalancerWithContext(context.Context, *clb.DeleteLoadBalancerRequest) (*clb.DeleteLoadBalancerResponse, error)
	ModifyLoadBalancerAttributesWithContext(context.Context, *clb.ModifyLoadBalancerAttributesRequest) (*clb.ModifyLoadBalancerAttributesResponse, error)
	SetLoadBalancerSecurityGroupsWithContext(context.Context, *clb.SetLoadBalancerSecurityGroupsRequest) (*clb.SetLoadBalancerSecurityGroupsResponse, error)

	CreateListenerWithContext(context.Context, *clb.CreateListenerRequest) (*clb.CreateListenerResponse, error)
	DescribeListenersWithContext(context.Context, *clb.DescribeListenersRequest) (*clb.DescribeListenersResponse, error)
	ModifyListenerWithContext(context.Context, *clb.ModifyListenerRequest) (*clb.ModifyListenerResponse, error)
	DeleteListenerWithContext(context.Context, *clb.DeleteListenerRequest) (*clb.DeleteListenerResponse, error)

	// Forwarding rules of HTTP and HTTPS listeners (rules.go).
	CreateRuleWithContext(context.Context, *clb.CreateRuleRequest) (*clb.CreateRuleResponse, error)
	ModifyRuleWithContext(context.Context, *clb.ModifyRuleRequest) (*clb.ModifyRuleResponse, error)
	DeleteRuleWithContext(context.Context, *clb.DeleteRuleRequest) (*clb.DeleteRuleResponse, error)

	DescribeTargetsWithContext(context.Context, *clb.DescribeTargetsRequest) (*clb.DescribeTargetsResponse, error)
	BatchRegisterTargetsWithContext(context.Context, *clb.BatchRegisterTargetsRequest) (*clb.BatchRegisterTargetsResponse, error)
	BatchDeregisterTargetsWithContext(context.Context, *clb.BatchDeregisterTargetsRequest) (*clb.BatchDeregisterTargetsResponse, error)
	RegisterTargetsWithContext(context.Context, *clb.RegisterTargetsRequest) (*clb.RegisterTargetsResponse, error)
	DeregisterTargetsWithContext(context.Context, *clb.DeregisterTargetsRequest) (*clb.DeregisterTargetsResponse, error)
	BatchModifyTargetWeightWithContext(context.Context, *clb.BatchModifyTargetWeightRequest) (*clb.BatchModifyTargetWeightResponse, error)

	DescribeTaskStatusWithContext(context.Context, *clb.DescribeTaskStatusRequest) (*clb.DescribeTaskStatusResponse, error)
}

// TagAPI is the slice of the Tag API (tag 2018-08-13) the operations use:
// adding our tags to a CLB taken over from TKE. *tcapi.TagClient
// implements it.
type TagAPI interface {
	AttachResourcesTagWithContext(context.Context, *tcapi.AttachResourcesTagRequest) (*tcapi.AttachResourcesTagResponse, error)
}

// Documented limits of the CLB API.
const (
	maxLoadBalancerIDs  = 20  // DescribeLoadBalancers LoadBalancerIds, DeleteLoadBalancer
	maxPageSize         = 100 // DescribeLoadBalancers Limit
	maxFilterValues     = 100 // DescribeLoadBalancers Filter.Values
	maxTargetsListeners = 20  // DescribeTargets ListenerIds
	maxBatchTargets     = 500 // BatchRegisterTargets / BatchDeregisterTargets Targets
	maxTargetsPerCall   = 20  // RegisterTargets / DeregisterTargets Targets
	maxPortsPerCreate   = 20  // CreateListener Ports per call (kept modest; not documented)
)

// Error codes the operations act on. Each is used only where the SDK
// documents it for the action (clb@v1.3.105 client.go, "可能返回的错误码"):
// ResourceInOperating is not documented for DeleteLoadBalancer,
// DeleteListener, DeregisterTargets and BatchDeregisterTargets, which
// answer a busy CLB with plain FailedOperation, and no "not found" code is
// documented for DeleteListener.
const (
	codeResourceInOperating = "FailedOperation.ResourceInOperating"
	codeFailedOperation     = "FailedOperation"
	codeFrequencyCheckRisk  = "FailedOperation.FrequencyCheckRisk"
	codeRequestLimit        = "RequestLimitExceeded"
	codeInvalidAction       = "InvalidAction"
	codeUnsupportedOp       = "UnsupportedOperation"
	codeLBNotFound          = "InvalidParameter.LBIdNotFound"
	codeTokenSpent          = "InvalidParameter.ClientTokenLimitExceeded"
)

// ErrTaskFailed: an asynchronous task ended with status 1.
var ErrTaskFailed = errors.New("asynchronous task failed")

// Task status values of DescribeTaskStatus.
const (
	taskSucceeded = 0
	taskFailed    = 1
	taskRunning   = 2
)

// Timing says how long to wait for asynchronous tasks and how to back off
// when the CLB is busy with another task or the API throttles.
type Timing struct {
	// TaskPoll is the first interval between DescribeTaskStatus calls; it
	// grows by half each time up to TaskPollMax.
	TaskPoll, TaskPollMax time.Duration
	// TaskFirstWait is how long to wait after a write before the first
	// DescribeTaskStatus: a task is still running right after the call that
	// started it, so polling at once costs a read that answers "running".
	// DescribeTaskStatus takes one TaskId or DealName per call (SDK clb
	// v20180317 models.go, DescribeTaskStatusRequestParams), so polls cannot
	// be batched; waiting is what saves them. 0 means TaskPoll.
	TaskFirstWait time.Duration
	// TaskTimeout bounds the wait for one task.
	TaskTimeout time.Duration
	// RetryBackoff is the first wait after ResourceInOperating or
	// RequestLimitExceeded; it doubles up to RetryBackoffMax, with jitter.
	RetryBackoff, RetryBackoffMax time.Duration
	// RetryTimeout bounds the retries of one call.
	RetryTimeout time.Duration
	// DeleteRetryAfter is how long DeleteLoadBalancer is not called again
	// after the API refused it with FailedOperation.FrequencyCheckRisk (30
	// or more CLBs deleted in the region within 5 minutes).
	DeleteRetryAfter time.Duration
}

// DefaultTiming suits the real API: tasks usually finish in a few seconds.
var DefaultTiming = Timing{
	TaskFirstWait:   200 * time.Millisecond,
	TaskPoll:        200 * time.Millisecond,
	TaskPollMax:     2 * time.Second,
	TaskTimeout:     3 * time.Minute,
	RetryBackoff:    500 * time.Millisecond,
	RetryBackoffMax: 5 * time.Second,
	RetryTimeout:    time.Minute,
	// The window slides, so a slot may free up at any time within the 5
	// minutes: probing once a minute costs at most five refused calls per
	// window, whatever the number of Services waiting.
	DeleteRetryAfter: time.Minute,
}

// withDefaults is t with each zero field taken from DefaultTiming.
func (t Timing) withDefaults() Timing {
	d := DefaultTiming
	poll := cmp.Or(t.TaskPoll, d.TaskPoll)
	return Timing{
		TaskFirstWait: cmp.Or(t.TaskFirstWait, poll),
		TaskPoll:      poll, TaskPollMax: cmp.Or(t.TaskPollMax, d.TaskPollMax),
		TaskTimeout:  cmp.Or(t.TaskTimeout, d.TaskTimeout),
		RetryBackoff: cmp.Or(t.RetryBackoff, d.RetryBackoff), RetryBackoffMax: cmp.Or(t.RetryBackoffMax, d.RetryBackoffMax),
		RetryTimeout: cmp.Or(t.RetryTimeout, d.RetryTimeout), DeleteRetryAfter: cmp.Or(t.DeleteRetryAfter, d.DeleteRetryAfter),
	}
}

// callError names a failed call on its target (a CLB, a listener, "the
// region"). A plain FailedOperation from a write usually means the CLB was
// busy; the hint says what happens next.
func callError(action, target string, err error) *callerr.Error {
	e := &callerr.Error{Action: action, Target: "on " + target, Err: err}
	if Code(err) == codeFailedOperation && !strings.HasPrefix(action, "Describe") {
		e.Hint = "the CLB may be busy with another task; the next reconcile reads it again and retries"
	}
	return e
}

// Code returns the Tencent error code in err, or "".
func Code(err error) string { return tcapi.Code(err) }

func retryable(err error) bool {
	code := Code(err)
	return code == codeResourceInOperating || code == codeRequestLimit || strings.HasPrefix(code, codeRequestLimit+".")
}

// call runs one API call, retrying while the CLB is busy with another task
// (one task at a time per CLB: ResourceInOperating) or the API throttles.
// Both mean the call was refused, so repeating it is safe. Any other error
// is returned, including plain FailedOperation, which is how the actions
// that do not document ResourceInOperating answer a busy CLB, but which
// may also mean something lasting, and network errors after which the call
// may have been applied: the reconcile fails, and the next one (after the
// service controller's backoff) re-reads the state and decides again.
func (o *Ops) call(ctx context.Context, action, target string, fn func() error) error {
	deadline := o.now().Add(o.timing.RetryTimeout)
	backoff := o.timing.RetryBackoff
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil {
			return nil
		}
		if !retryable(err) || !o.now().Add(backoff).Before(deadline) {
			return callError(action, target, err)
		}
		klog.V(4).InfoS("CLB call refused, retrying", "action", action, "target", target, "code", Code(err), "attempt", attempt, "backoff", backoff)
		// Jitter spreads the retries of concurrent reconciles of one CLB.
		wait := backoff/2 + rand.N(backoff/2+1)
		if err := o.sleep(ctx, wait); err != nil {
			return callError(action, target, err)
		}
		backoff = min(2*backoff, o.timing.RetryBackoffMax)
	}
}

// waitTask waits for an asynchronous task (the RequestId of the call that
// started it, or a DealName) to finish. Status 1 is a failure, reported
// with the task's message; only status 0 is success.
func (o *Ops) waitTask(ctx context.Context, action, target, taskID, dealName string) (*clb.DescribeTaskStatusResponseParams, error) {
	if taskID == "" && dealName == "" {
		return nil, callError(action, target, errors.New("the answer has neither a RequestId nor a DealName to wait for"))
	}
	deadline := o.now().Add(o.timing.TaskTimeout)
	if err := o.sleep(ctx, o.timing.TaskFirstWait); err != nil {
		return nil, err
	}
	poll := o.timing.TaskPoll
	for {
		req := clb.NewDescribeTaskStatusRequest()
		if dealName != "" {
			req.DealName = &dealName
		} else {
			req.TaskId = &taskID
		}
		var resp *clb.DescribeTaskStatusResponse
		err := o.call(ctx, "DescribeTaskStatus", fmt.Sprintf("task %s%s of %s on %s", taskID, dealName, action, target), func() (err error) {
			resp, err = o.api.DescribeTaskStatusWithContext(ctx, req)
			return err
		})
		if err != nil {
			return nil, err
		}
		if resp == nil || resp.Response == nil || resp.Response.Status == nil {
			return nil, callError("DescribeTaskStatus", target, errors.New("malformed answer: no Status"))
		}
		r := resp.Response
		switch *r.Status {
		case taskSucceeded:
			return r, nil
		case taskFailed:
			msg := "no message"
			if r.Message != nil && *r.Message != "" {
				msg = *r.Message
			}
			return nil, callError(action, target, fmt.Errorf("%w: task %s%s: %s", ErrTaskFailed, taskID, dealName, msg))
		case taskRunning:
		default:
			return nil, callError("DescribeTaskStatus", target, fmt.Errorf("unknown task status %d", *r.Status))
		}
		if !o.now().Add(poll).Before(deadline) {
			return nil, callError(action, target, fmt.Errorf("asynchronous task %s%s still running after %s", taskID, dealName, o.timing.TaskTimeout))
		}
		if err := o.sleep(ctx, poll); err != nil {
			return nil, err
		}
		poll = min(poll*3/2, o.timing.TaskPollMax)
	}
}

func requestID(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
