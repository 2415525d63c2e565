package oci

import (
	"fmt"
	"net/http"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// Out-of-band events a load balancer meets on OCI, for fault injection:
// it turns FAILED (FailLoadBalancer, admin.go), or someone else's change
// holds it busy (HoldLoadBalancer).

// MaxHold bounds HoldLoadBalancer: a longer hold makes no sense for a test.
const MaxHold = 10 * time.Minute

// holdAction is the action name of a hold's work request (its task).
const holdAction = ActionPrefix + "admin:HoldLoadBalancer"

// HoldLoadBalancer starts a work request on load balancer id that runs for
// d, as another client's change does (the console, another tool): it is
// an UpdateLoadBalancer (NLB: UPDATE_NETWORK_LOAD_BALANCER) that changes
// nothing. Meanwhile Network Load Balancing refuses every change with 409
// Conflict, "Invalid State Transition of NLB lifeCycle state from Updating
// to Updating" (the real answer, ../shared/reference/oci-api.md "NLB
// busy"; busyError), the NLB showing UPDATING, and Load Balancing queues
// changes behind it (queue.go). It returns the work request's id; a load
// balancer that is not ACTIVE, or has a work request in flight, is refused.
func (d *Dialect) HoldLoadBalancer(id string, dur time.Duration) (string, error) {
	if dur <= 0 || dur > MaxHold {
		return "", fmt.Errorf("%w: hold duration %v must be between 0 and %v", core.ErrInvalid, dur, MaxHold)
	}
	d.lbs.mu.Lock()
	b := d.lbs.byID[id]
	if b == nil || b.lifecycle == stateDeleted {
		d.lbs.mu.Unlock()
		return "", fmt.Errorf("OCI load balancer %q: %w", id, core.ErrNotFound)
	}
	if b.lifecycle != stateActive {
		d.lbs.mu.Unlock()
		return "", fmt.Errorf("%w: OCI load balancer %s is %s; only an ACTIVE one can be held", core.ErrInvalid, id, b.lifecycle)
	}
	res, err := d.tasks.Reserve(holdAction, busyKey(id))
	if err != nil {
		d.lbs.mu.Unlock()
		return "", fmt.Errorf("%w: OCI load balancer %s: %v", core.ErrInvalid, id, err)
	}
	op := "UpdateLoadBalancer"
	if b.kind == kindNLB {
		op = "UPDATE_NETWORK_LOAD_BALANCER"
		b.lifecycle = stateUpdating // an NLB shows UPDATING while a change is in flight (mutate)
	}
	kind := b.kind
	wr := d.newWorkRequest(b, op, "UPDATED")
	wr.latency = dur
	d.lbs.mu.Unlock()
	restore := func() error {
		d.lbs.mu.Lock()
		defer d.lbs.mu.Unlock()
		if cur := d.lbs.byID[id]; cur != nil && kind == kindNLB && cur.lifecycle == stateUpdating {
			cur.lifecycle = stateActive
		}
		return nil
	}
	d.runWorkRequest(wr, holdAction, res, restore, func(string) { _ = restore() })
	return wr.id, nil
}

// HoldBody is the body of POST /admin/oci/loadbalancers/{id}/hold.
type HoldBody struct {
	Duration string `json:"duration"` // e.g. "10s"
}

// HoldAnswer is its answer.
type HoldAnswer struct {
	WorkRequestID string `json:"workRequestId"`
}

func (d *Dialect) registerFaultAdmin(c *core.Core) {
	c.HandleAdminFunc("POST /admin/oci/loadbalancers/{id}/fail", func(r *http.Request) (int, any, error) {
		return http.StatusNoContent, nil, d.FailLoadBalancer(r.PathValue("id"))
	})
	c.HandleAdminFunc("POST /admin/oci/loadbalancers/{id}/hold", func(r *http.Request) (int, any, error) {
		var body HoldBody
		if err := core.DecodeAdmin(r, &body); err != nil {
			return 0, nil, err
		}
		dur, err := time.ParseDuration(body.Duration)
		if err != nil {
			return 0, nil, fmt.Errorf("%w: duration %q must be a duration like \"10s\"", core.ErrInvalid, body.Duration)
		}
		wr, err := d.HoldLoadBalancer(r.PathValue("id"), dur)
		return http.StatusCreated, HoldAnswer{WorkRequestID: wr}, err
	})
}
