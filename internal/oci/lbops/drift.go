package lbops

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
	"github.com/ccmkit/ccm/internal/lb/lbdrift"
)

// Drift compares the Service's load balancer with d, reading only, and
// returns what differs ("listener TCP-80 missing"); nil means in sync. The
// findings are the steps reconcile would write (plan without the writes),
// so a re-ensure repairs exactly them. Left out: a load balancer in the
// middle of a change (the next round looks again), what OCI cannot change
// in place (a re-ensure reports it and cannot repair it), and security
// list rules.
func (o *Ops) Drift(ctx context.Context, d *Desired) (_ []string, err error) {
	const op ccmmetrics.Op = "lbops.Drift"
	ctx, done := op.Start(ctx)
	defer done(&err)
	a, err := o.find(ctx, o.driver(d.Kind), d)
	switch {
	case err != nil:
		return nil, op.Errorf("Service %s: %w", d.Ref.Service, err)
	case a == nil:
		return []string{"load balancer missing"}, nil
	case isFailed(a):
		return []string{fmt.Sprintf("%s %s is FAILED", d.Kind, a.ID)}, nil
	case a.State == "CREATING" || a.State == "UPDATING":
		return nil, nil
	}
	ls, bss := desiredSets(d)
	o.withDrains(a, bss, d.DrainPeriod, false) // a draining backend is on its way out, not drift
	var diffs []string
	for _, s := range withCertificates(a, d, ls, bss, planAll(a, d, ls, bss)) {
		diffs = append(diffs, s.finding())
	}
	return diffs, nil
}

// DriftAll checks many Services, reading only, one after the other. It
// first lists the load balancers of each kind the Services use, once: that
// listing begins after every Service's last reconcile, so each Drift finds
// its load balancer in it (gather.go) for as long as it answers (the
// TTL), and a pass costs ⌈S/100⌉ pages, not a listing per Service (issue
// 33: 1,000 ListLoadBalancers at 1,000 Services). A Load Balancer's
// listing holds its listeners and backend sets; a Network Load Balancer's
// summary does not, so each costs a Get as well (nlb.go). A listing that
// fails fails the pass: every Service would only list again, and fail.
func (o *Ops) DriftAll(ctx context.Context, ds []*Desired) map[types.UID]lbdrift.Result {
	const op ccmmetrics.Op = "lbops.DriftAll"
	ctx, done := op.Start(ctx)
	var listErr error // counted as the run's: a Service's own error is in its Result
	defer done(&listErr)
	out := make(map[types.UID]lbdrift.Result, len(ds))
	if o.lookupTTL > 0 {
		start := o.now()
		listed := map[Kind]error{}
		for _, d := range ds {
			drv := o.driver(d.Kind)
			if _, done := listed[drv.kind()]; !done {
				_, listed[drv.kind()] = drv.listAll(ctx, start)
			}
			if err := listed[drv.kind()]; err != nil {
				listErr = err
				out[d.Ref.UID] = lbdrift.Result{Err: op.Errorf("Service %s: %w", d.Ref.Service, err)}
			}
		}
	}
	for _, d := range ds {
		if _, failed := out[d.Ref.UID]; failed {
			continue
		}
		diffs, err := o.Drift(ctx, d)
		out[d.Ref.UID] = lbdrift.Result{Diffs: diffs, Err: err}
	}
	return out
}

// finding says what a step would repair.
func (s step) finding() string {
	switch s.verb {
	case verbCreate:
		return fmt.Sprintf("%s %s missing", s.what, s.name)
	case verbDelete:
		return fmt.Sprintf("%s %s not wanted", s.what, s.name)
	default:
		return fmt.Sprintf("%s %s differs", s.what, s.name)
	}
}
