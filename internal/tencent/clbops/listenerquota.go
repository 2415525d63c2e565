package clbops

import (
	"context"
	"errors"
	"fmt"
)

// ErrListenerQuota marks a reconcile refused because the CLB would hold
// more listeners than TOTAL_LISTENER_QUOTA allows. Nothing was written.
var ErrListenerQuota = errors.New("listener quota exceeded")

// ListenerQuotaError says how many listeners were needed and allowed.
type ListenerQuotaError struct {
	Need, Quota int
	// What counts the listeners: "its ports alone", or, on an adopted CLB,
	// its own listeners with the CLB's others.
	What string
}

func (e *ListenerQuotaError) Error() string {
	return fmt.Sprintf("the CLB would need %d listeners (%s; one per Service port), more than %s allows (%d per CLB); "+
		"nothing was changed: remove ports or split them over several Services", e.Need, e.What, QuotaListener, e.Quota)
}

func (e *ListenerQuotaError) Unwrap() error { return ErrListenerQuota }

// checkListenerQuota refuses need listeners above TOTAL_LISTENER_QUOTA. At
// or below the documented default no quota is read, so the common case
// costs no call; above it the (cached) quota decides, since a ticket may
// have raised it.
func (o *Ops) checkListenerQuota(ctx context.Context, need int, what string) error {
	if need <= DefaultListenerQuota {
		return nil
	}
	quota := DefaultListenerQuota
	if o.listenerQuota != nil {
		quota = o.listenerQuota(ctx)
	}
	if need <= quota {
		return nil
	}
	return &ListenerQuotaError{Need: need, Quota: quota, What: what}
}

// listenerRoom checks the plan against TOTAL_LISTENER_QUOTA before it
// writes anything: the listeners left when it is done (the Service's and,
// on an adopted CLB, everyone else's) must fit, or the plan is refused.
// Listeners are created before the Service's unwanted ones are deleted, so
// that a port change never leaves the others short; when that order would
// overflow the quota for a moment, the deletions go first (removeFirst).
func (o *Ops) listenerRoom(ctx context.Context, lb *loadBalancer, plan *listenerPlan, actual int) (removeFirst bool, err error) {
	others := actual - len(plan.bound) - len(plan.remove)
	ours := len(plan.bound) + len(plan.create)
	what := "its ports alone"
	if others > 0 {
		what = fmt.Sprintf("%d for its ports and %d other listeners on the CLB", ours, others)
	}
	if err := o.checkListenerQuota(ctx, others+ours, what); err != nil {
		return false, fmt.Errorf("%s: %w", lb, err)
	}
	peak := actual + len(plan.create)
	if len(plan.remove) == 0 || len(plan.create) == 0 {
		return false, nil
	}
	return o.checkListenerQuota(ctx, peak, what) != nil, nil
}
