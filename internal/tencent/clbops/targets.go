package clbops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
)

// defaultWeight is CLB's default target weight; MaxWeight its largest
// (Target.Weight, "后端服务的转发权重，取值范围：[0, 100]", clb@v1.3.105
// models.go).
const (
	defaultWeight = 10
	MaxWeight     = 100
)

// target is one backend of a listener: a CVM instance (or, for targets
// someone else added, an ENI IP) and a port.
type target struct {
	listenerID string
	locationID string // the rule of a layer-7 listener (rules.go)
	instanceID string
	eniIP      string
	port       int64
}

func (t target) String() string {
	who := t.instanceID
	if who == "" {
		who = t.eniIP
	}
	return fmt.Sprintf("%s:%d", who, t.port)
}

func (t target) batch() *clb.BatchTarget {
	bt := &clb.BatchTarget{ListenerId: common.StringPtr(t.listenerID), Port: common.Int64Ptr(t.port)}
	if t.locationID != "" {
		bt.LocationId = common.StringPtr(t.locationID)
	}
	if t.instanceID != "" {
		bt.InstanceId = common.StringPtr(t.instanceID)
	} else {
		bt.EniIp = common.StringPtr(t.eniIP)
	}
	return bt
}

func (t target) single() *clb.Target {
	st := &clb.Target{Port: common.Int64Ptr(t.port)}
	if t.instanceID != "" {
		st.InstanceId = common.StringPtr(t.instanceID)
	} else {
		st.EniIp = common.StringPtr(t.eniIP)
	}
	return st
}

// targetPlan is what reconcileTargets will do.
type targetPlan struct {
	register, deregister []target
	// drain: unwanted targets still taking traffic, to set to weight 0;
	// draining: unwanted at weight 0 whose drain period is not over, left
	// alone; restore: wanted targets at weight 0 (a node back before its
	// drain ended), set back to the default weight (drain.go).
	drain, draining, restore []target
	// reweight: wanted targets whose weight is not the one their backend
	// asks for (lbspec.Backend.Weight; only a backend that asks is
	// corrected, so a weight set by hand on an unweighted Service stays).
	reweight []target
	// weight is the weight each wanted target is registered or restored
	// with: its backend's, else defaultWeight.
	weight map[target]int64
	names  map[string]string // listener id -> name, for messages
}

func (p *targetPlan) empty() bool {
	return len(p.register) == 0 && len(p.deregister) == 0 && len(p.drain) == 0 && len(p.restore) == 0 && len(p.reweight) == 0
}

// weightOf is the weight t is registered or restored with.
func (p *targetPlan) weightOf(t target) int64 {
	if w, ok := p.weight[t]; ok {
		return w
	}
	return defaultWeight
}

func (p *targetPlan) describe() []string {
	var out []string
	for _, t := range p.register {
		out = append(out, fmt.Sprintf("listener %s: target %s missing", p.names[t.listenerID], t))
	}
	for _, t := range p.deregister {
		out = append(out, fmt.Sprintf("listener %s: target %s not wanted", p.names[t.listenerID], t))
	}
	for _, t := range p.drain {
		out = append(out, fmt.Sprintf("listener %s: target %s not wanted", p.names[t.listenerID], t))
	}
	for _, t := range p.restore {
		out = append(out, fmt.Sprintf("listener %s: target %s at weight 0", p.names[t.listenerID], t))
	}
	for _, t := range p.reweight {
		out = append(out, fmt.Sprintf("listener %s: target %s not at weight %d", p.names[t.listenerID], t, p.weightOf(t)))
	}
	return out
}

// planTargets compares, per listener, the wanted targets (every backend
// at the listener's NodePort) with the actual ones. With a drain period, an
// unwanted target goes to weight 0 first and is deregistered once drained
// (due says whether a target at weight 0 has drained for the period).
func planTargets(spec *Desired, listeners []boundListener, actual targetState, due func(target) bool) *targetPlan {
	p := &targetPlan{names: map[string]string{}, weight: map[target]int64{}}
	for _, l := range listeners {
		p.names[l.id] = l.name
		want := map[target]bool{}
		asks := map[target]bool{} // the backend asks for its weight
		for _, b := range spec.Backends {
			t := target{listenerID: l.id, locationID: l.locationID, instanceID: b.InstanceID, port: l.nodePort}
			want[t] = true
			if b.Weight > 0 {
				p.weight[t], asks[t] = int64(b.Weight), true
			}
		}
		have := map[target]bool{}
		for _, t := range actual.byListener[l.id] {
			have[t] = true
			drained := actual.weight[t] == 0
			switch {
			case want[t] && drained:
				p.restore = append(p.restore, t)
			case want[t] && asks[t] && actual.weight[t] != p.weight[t]:
				p.reweight = append(p.reweight, t)
			case want[t]:
			case spec.DrainPeriod <= 0 || (drained && due(t)):
				p.deregister = append(p.deregister, t)
			case drained:
				p.draining = append(p.draining, t)
			default:
				p.drain = append(p.drain, t)
			}
		}
		for _, b := range spec.Backends {
			t := target{listenerID: l.id, locationID: l.locationID, instanceID: b.InstanceID, port: l.nodePort}
			if !have[t] {
				p.register = append(p.register, t)
			}
		}
	}
	return p
}

// targetState is the targets of some listeners and their weights.
type targetState struct {
	byListener map[string][]target
	weight     map[target]int64
}

// describeTargets returns the targets of the given listeners.
func (o *Ops) describeTargets(ctx context.Context, lb *loadBalancer, listeners []boundListener) (targetState, error) {
	out := targetState{byListener: map[string][]target{}, weight: map[target]int64{}}
	var ids []string
	rule := map[string]string{} // listener id -> its rule, layer 7
	for _, l := range listeners {
		if !l.fresh { // a listener created just now has no targets
			ids = append(ids, l.id)
			rule[l.id] = l.locationID
		}
	}
	for chunk := range slices.Chunk(ids, maxTargetsListeners) {
		req := clb.NewDescribeTargetsRequest()
		req.LoadBalancerId = common.StringPtr(lb.id)
		req.ListenerIds = common.StringPtrs(chunk)
		var resp *clb.DescribeTargetsResponse
		if err := o.call(ctx, "DescribeTargets", lb.String(), func() (err error) {
			resp, err = o.api.DescribeTargetsWithContext(ctx, req)
			return err
		}); err != nil {
			return targetState{}, err
		}
		if resp == nil || resp.Response == nil {
			return targetState{}, callError("DescribeTargets", lb.String(), errors.New("malformed answer: no Response"))
		}
		for _, l := range resp.Response.Listeners {
			if l == nil || l.ListenerId == nil {
				continue
			}
			backends, locationID := l.Targets, ""
			if loc := rule[*l.ListenerId]; loc != "" { // layer 7: the targets of our rule
				backends, locationID = ruleTargets(l.Rules, loc), loc
			}
			for _, b := range backends {
				if b == nil || b.Port == nil {
					continue
				}
				t := target{listenerID: *l.ListenerId, locationID: locationID, instanceID: deref(b.InstanceId), port: *b.Port}
				if t.instanceID == "" && len(b.PrivateIpAddresses) > 0 {
					t.eniIP = deref(b.PrivateIpAddresses[0])
				}
				out.byListener[t.listenerID] = append(out.byListener[t.listenerID], t)
				out.weight[t] = defaultWeight
				if b.Weight != nil {
					out.weight[t] = *b.Weight
				}
			}
		}
	}
	return out, nil
}

// reconcileTargets registers missing targets, then drains and
// deregisters stale ones, so that a listener never goes through a moment
// with no target when backends are replaced; only what the target quota
// needs deregistered first is (makeRoom). A stale target first goes to
// weight 0 and is deregistered once it has drained for the spec's drain
// period (drain.go).
func (o *Ops) reconcileTargets(ctx context.Context, lb *loadBalancer, spec *Desired, listeners []boundListener) error {
	actual, err := o.describeTargets(ctx, lb, listeners)
	if err != nil {
		return err
	}
	var next time.Time // when the next drain ends
	plan := planTargets(spec, listeners, actual, func(t target) bool {
		due, at := o.drains.Due(drainKey(lb, t), spec.DrainPeriod)
		if !due && (next.IsZero() || at.Before(next)) {
			next = at
		}
		return due
	})
	o.forgetWanted(lb, plan, actual)
	if plan.empty() {
		o.drainEndsAt(spec, next)
		return nil
	}
	// At the target quota, stale targets must go first (room.go).
	first := plan.makeRoom(actual.byListener, spec.BackendLimit)
	if err := o.deregisterTargets(ctx, lb, plan, first); err != nil {
		return err
	}
	if err := o.changeTargets(ctx, lb, plan, plan.register, true); err != nil {
		return err
	}
	if err := o.setWeights(ctx, lb, plan, append(slices.Clip(plan.restore), plan.reweight...), plan.weightOf, "Setting CLB target weights"); err != nil {
		return err
	}
	if err := o.setWeights(ctx, lb, plan, plan.drain, func(target) int64 { return 0 }, "Draining CLB targets (weight 0)"); err != nil {
		return err
	}
	for _, t := range plan.drain { // their drain starts now
		_, at := o.drains.Due(drainKey(lb, t), spec.DrainPeriod)
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	if err := o.deregisterTargets(ctx, lb, plan, plan.deregister); err != nil {
		return err
	}
	o.drainEndsAt(spec, next)
	return nil
}

// changeTargets uses BatchRegisterTargets/BatchDeregisterTargets (up to 500
// targets across listeners per task), and falls back to the per-listener
// calls (up to 20 targets each) where the batch calls are not available.
func (o *Ops) changeTargets(ctx context.Context, lb *loadBalancer, plan *targetPlan, targets []target, register bool) error {
	if len(targets) == 0 {
		return nil
	}
	verb := "Deregistering"
	if register {
		verb = "Registering"
	}
	logWrite(ctx, verb+" CLB targets", "clb", lb.id, "targets", summarize(plan, targets))
	for chunk := range slices.Chunk(targets, maxBatchTargets) {
		failed, err := o.batchTargets(ctx, lb, plan, chunk, register)
		if c := Code(err); c == codeInvalidAction || strings.HasPrefix(c, codeUnsupportedOp) {
			return o.singleTargets(ctx, lb, plan, targets, register)
		}
		if err != nil {
			return err
		}
		if failed != nil {
			if err := o.retryFailedListeners(ctx, lb, plan, chunk, failed, register); err != nil {
				return err
			}
		}
	}
	return nil
}

// partialFailure is what a batch call could not do: the listeners of its
// FailListenerIdSet, and its Message.
type partialFailure struct {
	listeners []string
	message   string
}

// retryFailedListeners repeats a batch call for the targets of the
// listeners it failed for, once; if it fails for some again, the error
// names them with the API's message, so that the reconcile fails (and the
// Service gets a Warning Event saying why) and the next one re-reads the
// targets and retries. It never counts a failed listener as done.
func (o *Ops) retryFailedListeners(ctx context.Context, lb *loadBalancer, plan *targetPlan, chunk []target, failed *partialFailure, register bool) error {
	action := "BatchDeregisterTargets"
	if register {
		action = "BatchRegisterTargets"
	}
	var again []target
	for _, t := range chunk {
		if slices.Contains(failed.listeners, t.listenerID) {
			again = append(again, t)
		}
	}
	logWrite(ctx, "CLB batch call failed for some listeners, retrying them", "clb", lb.id, "action", action,
		"listeners", listenerNames(plan, failed.listeners), "message", failed.message)
	if len(again) == 0 { // listeners we did not send: nothing to retry, but not done either
		return callError(action, lb.String(), fmt.Errorf("failed for listeners %s: %s",
			listenerNames(plan, failed.listeners), failed.message))
	}
	still, err := o.batchTargets(ctx, lb, plan, again, register)
	if err != nil {
		return err
	}
	if still != nil {
		return callError(action, lb.String(), fmt.Errorf("failed twice for listeners %s: %s",
			listenerNames(plan, still.listeners), still.message))
	}
	return nil
}

// listenerNames renders listener ids with their names, for messages.
func listenerNames(plan *targetPlan, ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id
		if name := plan.names[id]; name != "" {
			out[i] = fmt.Sprintf("%s (%s)", name, id)
		}
	}
	return strings.Join(out, ", ")
}

// batchTargets makes one batch call and waits for its task. The listeners
// the call failed for (FailListenerIdSet: "如为空表示全部绑定成功", empty means
// all bound, BatchRegisterTargetsResponseParams in clb@v1.3.105 models.go)
// come back with the answer's Message; the task binds the others.
func (o *Ops) batchTargets(ctx context.Context, lb *loadBalancer, plan *targetPlan, chunk []target, register bool) (*partialFailure, error) {
	action := "BatchDeregisterTargets"
	if register {
		action = "BatchRegisterTargets"
	}
	batch := make([]*clb.BatchTarget, len(chunk))
	for i, t := range chunk {
		batch[i] = t.batch()
		if register {
			batch[i].Weight = common.Int64Ptr(plan.weightOf(t))
		}
	}
	var requestID, message string
	var failed []string
	err := o.call(ctx, action, lb.String(), func() error {
		if register {
			req := clb.NewBatchRegisterTargetsRequest()
			req.LoadBalancerId, req.Targets = common.StringPtr(lb.id), batch
			resp, err := o.api.BatchRegisterTargetsWithContext(ctx, req)
			if err == nil && resp != nil && resp.Response != nil {
				r := resp.Response
				requestID, failed, message = deref(r.RequestId), common.StringValues(r.FailListenerIdSet), deref(r.Message)
			}
			return err
		}
		req := clb.NewBatchDeregisterTargetsRequest()
		req.LoadBalancerId, req.Targets = common.StringPtr(lb.id), batch
		resp, err := o.api.BatchDeregisterTargetsWithContext(ctx, req)
		if err == nil && resp != nil && resp.Response != nil {
			r := resp.Response
			requestID, failed, message = deref(r.RequestId), common.StringValues(r.FailListenerIdSet), deref(r.Message)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	// When every listener failed there may be no task to wait for: then
	// only the failure counts.
	allFailed := !slices.ContainsFunc(chunk, func(t target) bool { return !slices.Contains(failed, t.listenerID) })
	if _, err := o.waitTask(ctx, action, lb.String(), requestID, ""); err != nil && !allFailed {
		return nil, err
	}
	if len(failed) == 0 {
		return nil, nil
	}
	if message == "" {
		message = "the API gave no reason"
	}
	return &partialFailure{listeners: failed, message: message}, nil
}

// singleTargets registers or deregisters per listener, 20 targets a call.
func (o *Ops) singleTargets(ctx context.Context, lb *loadBalancer, plan *targetPlan, targets []target, register bool) error {
	action := "DeregisterTargets"
	if register {
		action = "RegisterTargets"
	}
	// Per listener, and per rule of a layer-7 one (the call's LocationId).
	type key struct{ listener, location string }
	byListener := map[key][]target{}
	var order []key
	for _, t := range targets {
		k := key{t.listenerID, t.locationID}
		if _, ok := byListener[k]; !ok {
			order = append(order, k)
		}
		byListener[k] = append(byListener[k], t)
	}
	for _, k := range order {
		id := k.listener
		for chunk := range slices.Chunk(byListener[k], maxTargetsPerCall) {
			list := make([]*clb.Target, len(chunk))
			for i, t := range chunk {
				list[i] = t.single()
				if register {
					list[i].Weight = common.Int64Ptr(plan.weightOf(t))
				}
			}
			target := fmt.Sprintf("%s listener %s", lb, id)
			var requestID string
			if err := o.call(ctx, action, target, func() error {
				if register {
					req := clb.NewRegisterTargetsRequest()
					req.LoadBalancerId, req.ListenerId, req.Targets = common.StringPtr(lb.id), common.StringPtr(id), list
					if k.location != "" {
						req.LocationId = common.StringPtr(k.location)
					}
					resp, err := o.api.RegisterTargetsWithContext(ctx, req)
					if err == nil && resp != nil && resp.Response != nil {
						requestID = deref(resp.Response.RequestId)
					}
					return err
				}
				req := clb.NewDeregisterTargetsRequest()
				req.LoadBalancerId, req.ListenerId, req.Targets = common.StringPtr(lb.id), common.StringPtr(id), list
				if k.location != "" {
					req.LocationId = common.StringPtr(k.location)
				}
				resp, err := o.api.DeregisterTargetsWithContext(ctx, req)
				if err == nil && resp != nil && resp.Response != nil {
					requestID = deref(resp.Response.RequestId)
				}
				return err
			}); err != nil {
				return err
			}
			if _, err := o.waitTask(ctx, action, target, requestID, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// summarize lists targets for a log line, at most 10.
func summarize(plan *targetPlan, targets []target) string {
	var parts []string
	for i, t := range targets {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("... %d more", len(targets)-10))
			break
		}
		parts = append(parts, plan.names[t.listenerID]+"->"+t.String())
	}
	return strings.Join(parts, ", ")
}
