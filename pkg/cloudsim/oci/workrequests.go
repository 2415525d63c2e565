package oci

import (
	"fmt"
	"regexp"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	"github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// Work request states, the same words for both services.
const (
	wrAccepted   = "ACCEPTED"
	wrInProgress = "IN_PROGRESS"
	wrSucceeded  = "SUCCEEDED"
	wrFailed     = "FAILED"
)

// workRequest is one asynchronous change of a load balancer. Its outcome
// lives in the core task of the same id; the task holds the load balancer
// busy until it ends, which is what makes a second change answer 409.
type workRequest struct {
	id            string
	kind          string // kindLB or kindNLB
	lbID          string
	compartmentID string
	op            string // LB: the type ("CreateLoadBalancer"); NLB: the operationType ("CREATE_BACKENDSET")
	actionType    string // NLB: what the request does to the load balancer (CREATED, UPDATED, DELETED)
	accepted      time.Time
	acceptedReal  time.Time // real time: latency is real time even with a fake clock
	latency       time.Duration
	seq           int64
	// queued: accepted behind another work request on the same load
	// balancer (Load Balancing only, queue.go); no task yet.
	queued atomic.Bool
}

type workRequests struct {
	mu   sync.Mutex
	byID map[string]*workRequest
	seq  int64
}

func newWorkRequests() *workRequests { return &workRequests{byID: map[string]*workRequest{}} }

// WorkRequest is a work request as the admin API shows it.
type WorkRequest struct {
	ID              string    `json:"id"`
	Kind            string    `json:"kind"` // "loadbalancer" or "networkloadbalancer"
	LoadBalancerID  string    `json:"loadBalancerId"`
	Operation       string    `json:"operation"`
	State           string    `json:"state"`
	PercentComplete float32   `json:"percentComplete"`
	Message         string    `json:"message,omitempty"`
	Accepted        time.Time `json:"accepted"`
	Finished        time.Time `json:"finished,omitzero"`
}

// wrView is a work request's state now.
type wrView struct {
	state             string
	percent           float32
	message           string
	started, finished time.Time
}

func (d *Dialect) viewOf(wr *workRequest) (wrView, bool) {
	t, ok := d.tasks.Get(wr.id)
	if !ok {
		if wr.queued.Load() {
			return wrView{state: wrAccepted}, true
		}
		return wrView{}, false
	}
	v := wrView{started: t.Started}
	switch t.State {
	case core.TaskSucceeded:
		v.state, v.percent, v.finished = wrSucceeded, 100, t.Finished
	case core.TaskFailed:
		v.state, v.percent, v.finished, v.message = wrFailed, 100, t.Finished, t.Message
	default:
		v.state, v.percent = runningPhase(time.Since(wr.acceptedReal), wr.latency)
	}
	return v, true
}

// runningPhase is the state of a running work request: ACCEPTED for the
// first quarter of its latency, then IN_PROGRESS, so that a poller sees
// both; the percentage grows with time but stays below 100 until it ends.
func runningPhase(elapsed, latency time.Duration) (string, float32) {
	if elapsed < latency/4 {
		return wrAccepted, 0
	}
	if latency <= 0 {
		return wrInProgress, 99
	}
	return wrInProgress, float32(min(99, 100*elapsed.Seconds()/latency.Seconds()))
}

// startWorkRequest starts the task that applies a change when it ends.
// apply runs when the work request succeeds; abort (optional) when an
// injected task fault fails it. res holds the load balancer busy.
func (d *Dialect) startWorkRequest(b *balancer, action, op, actionType string, res *core.Reservation, apply func() error, abort func(string)) string {
	wr := d.newWorkRequest(b, op, actionType)
	d.runWorkRequest(wr, action, res, apply, abort)
	return wr.id
}

// newWorkRequest registers a work request (not started yet).
func (d *Dialect) newWorkRequest(b *balancer, op, actionType string) *workRequest {
	prefix := "loadbalancerworkrequest"
	if b.kind == kindNLB {
		prefix = "nlbworkrequest"
	}
	wr := &workRequest{
		id: core.NewOCID(prefix), kind: b.kind, lbID: b.id, compartmentID: b.compartmentID,
		op: op, actionType: actionType, accepted: d.core.Now(), acceptedReal: time.Now(), latency: max(d.latency, 0),
	}
	d.wrs.mu.Lock()
	d.wrs.seq++
	wr.seq = d.wrs.seq
	d.wrs.byID[wr.id] = wr
	d.wrs.mu.Unlock()
	return wr
}

// runWorkRequest starts wr's task on res. For Load Balancing, the end of
// the task starts the next queued work request of the load balancer.
func (d *Dialect) runWorkRequest(wr *workRequest, action string, res *core.Reservation, apply func() error, abort func(string)) {
	if wr.kind == kindLB {
		lbID, inner, innerAbort := wr.lbID, apply, abort
		apply = func() error {
			defer d.kickQueue(lbID)
			if inner == nil {
				return nil
			}
			return inner()
		}
		abort = func(msg string) {
			defer d.kickQueue(lbID)
			if innerAbort != nil {
				innerAbort(msg)
			}
		}
	}
	// What the work request does becomes visible to reads within the
	// read lag (lag.go).
	lagApply, lagAbort, lbID := apply, abort, wr.lbID
	apply = func() error {
		before := d.lagSnapshot(lbID)
		defer d.lagWrote(lbID, before)
		if lagApply == nil {
			return nil
		}
		return lagApply()
	}
	abort = func(msg string) {
		before := d.lagSnapshot(lbID)
		defer d.lagWrote(lbID, before)
		if lagAbort != nil {
			lagAbort(msg)
		}
	}
	wr.acceptedReal = time.Now() // a queued one runs its full latency once started
	d.tasks.Start(res, core.TaskSpec{ID: wr.id, Action: action, Latency: wr.latency, Apply: apply, Abort: abort})
	wr.queued.Store(false) // after Start: a reader always finds the task or the queued flag
}

// forgetWorkRequest drops a work request that was registered but never
// started (its call was refused).
func (d *Dialect) forgetWorkRequest(id string) {
	d.wrs.mu.Lock()
	defer d.wrs.mu.Unlock()
	delete(d.wrs.byID, id)
}

// workRequestsOf lists the live work requests matching keep, oldest first.
// Work requests whose task was forgotten (after core.DefaultTaskRetention)
// are forgotten too.
func (d *Dialect) workRequestsOf(keep func(*workRequest) bool) []*workRequest {
	d.wrs.mu.Lock()
	defer d.wrs.mu.Unlock()
	var out []*workRequest
	for id, wr := range d.wrs.byID {
		if _, live := d.tasks.Get(id); !live && !wr.queued.Load() {
			delete(d.wrs.byID, id)
			continue
		}
		if keep(wr) {
			out = append(out, wr)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

func (d *Dialect) workRequest(id, kind string) (*workRequest, wrView, error) {
	d.wrs.mu.Lock()
	wr := d.wrs.byID[id]
	d.wrs.mu.Unlock()
	if wr != nil && wr.kind == kind {
		if v, ok := d.viewOf(wr); ok {
			return wr, v, nil
		}
	}
	return nil, wrView{}, notFound("work request", id)
}

// WorkRequests lists every work request cloudsim remembers, for the admin
// API.
func (d *Dialect) WorkRequests() []WorkRequest {
	var out []WorkRequest
	for _, wr := range d.workRequestsOf(func(*workRequest) bool { return true }) {
		v, ok := d.viewOf(wr)
		if !ok {
			continue
		}
		out = append(out, WorkRequest{
			ID: wr.id, Kind: kindName(wr.kind), LoadBalancerID: wr.lbID, Operation: wr.op,
			State: v.state, PercentComplete: v.percent, Message: v.message, Accepted: wr.accepted, Finished: v.finished,
		})
	}
	return out
}

// ---- Load Balancing: /loadBalancerWorkRequests/{id}, /loadBalancers/{id}/workRequests ----

func (d *Dialect) lbWorkRequestModel(wr *workRequest, v wrView) loadbalancer.WorkRequest {
	m := loadbalancer.WorkRequest{
		Id:             common.String(wr.id),
		LoadBalancerId: common.String(wr.lbID),
		Type:           common.String(wr.op),
		LifecycleState: loadbalancer.WorkRequestLifecycleStateEnum(v.state),
		Message:        common.String(fmt.Sprintf("%s %s: %s", wr.op, wr.lbID, v.state)),
		TimeAccepted:   sdkTime(wr.accepted),
		ErrorDetails:   []loadbalancer.WorkRequestError{},
		CompartmentId:  common.String(wr.compartmentID),
	}
	if !v.finished.IsZero() {
		m.TimeFinished = sdkTime(v.finished)
	}
	if v.state == wrFailed {
		e := wrErrorOf(wr, v.message)
		m.Message = common.String(e.message)
		m.ErrorDetails = []loadbalancer.WorkRequestError{{ErrorCode: e.lbCode, Message: common.String(e.message)}}
	}
	return m
}

// wrError is why a work request failed, as both services report it.
type wrError struct {
	code    string                                     // NLB WorkRequestError.code: an API error code
	lbCode  loadbalancer.WorkRequestErrorErrorCodeEnum // LB WorkRequestError.errorCode: BAD_INPUT or INTERNAL_ERROR
	message string
}

// injectedTask matches core's message for an injected task failure.
var injectedTask = regexp.MustCompile(`^cloudsim: injected task failure \(([^)]*)\)`)

// apiError matches an *Error's text: "400 InvalidParameter: message".
var apiError = regexp.MustCompile(`^\d{3} ([A-Za-z.]+): (.*)$`)

// wrErrorOf turns a failed task's message into the error a work request
// reports. The Load Balancing API has no ListWorkRequestErrors: its
// WorkRequest carries errorDetails, each an errorCode, "BAD_INPUT" or
// "INTERNAL_ERROR", and a message (loadbalancer/work_request_error.go);
// Network Load Balancing lists WorkRequestError{code, message, timestamp}
// (networkloadbalancer/work_request_error.go: "A machine-usable code for
// the error that occured", "A human-readable error string"). The messages
// name the operation and the load balancer; their wording is cloudsim's.
func wrErrorOf(wr *workRequest, msg string) wrError {
	what := fmt.Sprintf("%s of %s %s failed", wr.op, kindName(wr.kind), wr.lbID)
	if m := injectedTask.FindStringSubmatch(msg); m != nil {
		code := m[1]
		if code == "" || code == core.DefaultFaultCode {
			code = CodeInternalServerError
		}
		return wrError{code: code, lbCode: loadbalancer.WorkRequestErrorErrorCodeInternalError,
			message: fmt.Sprintf("%s: an internal error occurred (%s)", what, msg)}
	}
	if m := apiError.FindStringSubmatch(msg); m != nil {
		lbCode := loadbalancer.WorkRequestErrorErrorCodeBadInput
		if m[1] == CodeInternalServerError {
			lbCode = loadbalancer.WorkRequestErrorErrorCodeInternalError
		}
		return wrError{code: m[1], lbCode: lbCode, message: fmt.Sprintf("%s: %s", what, m[2])}
	}
	return wrError{code: CodeIncorrectState, lbCode: loadbalancer.WorkRequestErrorErrorCodeBadInput, message: fmt.Sprintf("%s: %s", what, msg)}
}

func (d *Dialect) getLBWorkRequest(c *call) (*reply, error) {
	id, err := pathID(c, "workRequestId", "loadbalancerworkrequest")
	if err != nil {
		return nil, err
	}
	wr, v, err := d.workRequest(id, kindLB)
	if err != nil {
		return nil, err
	}
	return ok(d.lbWorkRequestModel(wr, v)), nil
}

func (d *Dialect) listLBWorkRequests(c *call) (*reply, error) {
	id, err := pathID(c, "loadBalancerId", "loadbalancer")
	if err != nil {
		return nil, err
	}
	if _, err := d.lbs.get(id, kindLB, d.core.Now(), d.retention); err != nil {
		return nil, err
	}
	items := []loadbalancer.WorkRequest{}
	for _, wr := range d.workRequestsOf(func(wr *workRequest) bool { return wr.lbID == id }) {
		if v, ok := d.viewOf(wr); ok {
			items = append(items, d.lbWorkRequestModel(wr, v))
		}
	}
	// Newest first, as the console shows them.
	for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
		items[i], items[j] = items[j], items[i]
	}
	return page(c, items, nil)
}

// ---- Network Load Balancing: /workRequests ----

func (d *Dialect) nlbWorkRequestModel(wr *workRequest, v wrView) networkloadbalancer.WorkRequest {
	action := networkloadbalancer.ActionTypeInProgress
	if v.state == wrSucceeded {
		action = networkloadbalancer.ActionTypeEnum(wr.actionType)
	}
	m := networkloadbalancer.WorkRequest{
		OperationType: networkloadbalancer.OperationTypeEnum(wr.op),
		Status:        networkloadbalancer.OperationStatusEnum(v.state),
		Id:            common.String(wr.id),
		CompartmentId: common.String(wr.compartmentID),
		Resources: []networkloadbalancer.WorkRequestResource{{
			EntityType: common.String("NetworkLoadBalancer"),
			ActionType: action,
			Identifier: common.String(wr.lbID),
			EntityUri:  common.String("/networkLoadBalancers/" + wr.lbID),
		}},
		PercentComplete: common.Float32(v.percent),
		TimeAccepted:    sdkTime(wr.accepted),
	}
	if v.state != wrAccepted {
		m.TimeStarted = sdkTime(v.started)
	}
	if !v.finished.IsZero() {
		m.TimeFinished = sdkTime(v.finished)
	}
	return m
}

func (d *Dialect) getNLBWorkRequest(c *call) (*reply, error) {
	id, err := pathID(c, "workRequestId", "nlbworkrequest")
	if err != nil {
		return nil, err
	}
	wr, v, err := d.workRequest(id, kindNLB)
	if err != nil {
		return nil, err
	}
	rp := ok(d.nlbWorkRequestModel(wr, v))
	if v.state == wrAccepted || v.state == wrInProgress {
		rp.with("retry-after", "1")
	}
	return rp, nil
}

func (d *Dialect) listNLBWorkRequests(c *call) (*reply, error) {
	comp, err := d.compartmentParam(c)
	if err != nil {
		return nil, err
	}
	items := []networkloadbalancer.WorkRequestSummary{}
	for _, wr := range d.workRequestsOf(func(wr *workRequest) bool { return wr.kind == kindNLB && wr.compartmentID == comp }) {
		if v, ok := d.viewOf(wr); ok {
			m := d.nlbWorkRequestModel(wr, v)
			//nolint:staticcheck // S1016: the fields are listed, so that one the SDK adds to WorkRequest does not change the summary unseen
			items = append(items, networkloadbalancer.WorkRequestSummary{
				OperationType: m.OperationType, Status: m.Status, Id: m.Id, CompartmentId: m.CompartmentId,
				Resources: m.Resources, PercentComplete: m.PercentComplete, TimeAccepted: m.TimeAccepted,
				TimeStarted: m.TimeStarted, TimeFinished: m.TimeFinished,
			})
		}
	}
	return page(c, items, func(p []networkloadbalancer.WorkRequestSummary) any {
		return networkloadbalancer.WorkRequestCollection{Items: p}
	})
}

// listNLBWorkRequestErrors answers the errors of a failed work request.
func (d *Dialect) listNLBWorkRequestErrors(c *call) (*reply, error) {
	id, err := pathID(c, "workRequestId", "nlbworkrequest")
	if err != nil {
		return nil, err
	}
	wr, v, err := d.workRequest(id, kindNLB)
	if err != nil {
		return nil, err
	}
	items := []networkloadbalancer.WorkRequestError{}
	if v.state == wrFailed {
		e := wrErrorOf(wr, v.message)
		items = append(items, networkloadbalancer.WorkRequestError{
			Code: common.String(e.code), Message: common.String(e.message), Timestamp: sdkTime(v.finished),
		})
	}
	return page(c, items, func(p []networkloadbalancer.WorkRequestError) any {
		return networkloadbalancer.WorkRequestErrorCollection{Items: p}
	})
}
