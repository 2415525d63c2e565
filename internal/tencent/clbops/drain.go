package clbops

import (
	"context"
	"slices"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
)

// Draining on CLB: a target that leaves goes to weight 0 first, which
// CLB documents as taking no new connections while open ones go on
// (Target.Weight, "后端服务的转发权重，取值范围：[0, 100]"; the CLB weight
// docs: a server of weight 0 receives no new requests), and is
// deregistered once it has drained for the Service's drain period. The
// start of each drain is kept in memory (internal/lb/drain.Tracker); after a
// restart a target found at weight 0 starts its period again.

// Limits of BatchModifyTargetWeight: "ModifyList数组最多100个元素，
// ModifyList[i].Targets最多50个，全部Targets累加不超过500" (clb@v1.3.105
// models.go, BatchModifyTargetWeightRequestParams.ModifyList).
const (
	maxWeightRules          = 100
	maxWeightTargetsPerRule = 50
	maxWeightTargets        = 500
)

// drainKey names a target of a CLB for the drain tracker.
func drainKey(lb *loadBalancer, t target) string {
	if t.locationID != "" {
		return lb.id + "/" + t.listenerID + "/" + t.locationID + "/" + t.String()
	}
	return lb.id + "/" + t.listenerID + "/" + t.String()
}

// forgetWanted ends the drains of targets that are wanted again.
func (o *Ops) forgetWanted(lb *loadBalancer, plan *targetPlan, actual targetState) {
	leaving := map[target]bool{}
	for _, list := range [][]target{plan.deregister, plan.draining, plan.drain} {
		for _, t := range list {
			leaving[t] = true
		}
	}
	for _, ts := range actual.byListener {
		for _, t := range ts {
			if !leaving[t] {
				o.drains.Forget(drainKey(lb, t))
			}
		}
	}
}

// deregisterTargets deregisters targets and forgets their drains.
func (o *Ops) deregisterTargets(ctx context.Context, lb *loadBalancer, plan *targetPlan, targets []target) error {
	if err := o.changeTargets(ctx, lb, plan, targets, false); err != nil {
		return err
	}
	for _, t := range targets {
		o.drains.Forget(drainKey(lb, t))
	}
	return nil
}

// drainEndsAt tells the provider when the Service's next drain ends, so
// that the reconcile runs again then (internal/lb/drain.Rerun).
func (o *Ops) drainEndsAt(spec *Desired, at time.Time) {
	if !at.IsZero() && o.hooks.DrainEnds != nil {
		o.hooks.DrainEnds(spec.UID, at)
	}
}

// setWeights sets each target to weight(target) with
// BatchModifyTargetWeight, one rule per listener, within the call's limits,
// and waits for each task. verb says why, for the log.
func (o *Ops) setWeights(ctx context.Context, lb *loadBalancer, plan *targetPlan, targets []target, weight func(target) int64, verb string) error {
	if len(targets) == 0 {
		return nil
	}
	logWrite(ctx, verb, "clb", lb.id, "targets", summarize(plan, targets))
	for _, call := range weightCalls(targets, weight) {
		var requestID string
		if err := o.call(ctx, "BatchModifyTargetWeight", lb.String(), func() error {
			req := clb.NewBatchModifyTargetWeightRequest()
			req.LoadBalancerId, req.ModifyList = common.StringPtr(lb.id), call
			resp, err := o.api.BatchModifyTargetWeightWithContext(ctx, req)
			if err == nil && resp != nil && resp.Response != nil {
				requestID = deref(resp.Response.RequestId)
			}
			return err
		}); err != nil {
			return err
		}
		if _, err := o.waitTask(ctx, "BatchModifyTargetWeight", lb.String(), requestID, ""); err != nil {
			return err
		}
	}
	return nil
}

// weightCalls packs targets into BatchModifyTargetWeight ModifyLists: a
// rule per listener of at most 50 targets, at most 100 rules and 500
// targets a call.
func weightCalls(targets []target, weight func(target) int64) [][]*clb.RsWeightRule {
	// A rule per listener, and per rule of a layer-7 one (LocationId).
	type key struct{ listener, location string }
	var order []key
	byListener := map[key][]target{}
	for _, t := range targets {
		k := key{t.listenerID, t.locationID}
		if _, ok := byListener[k]; !ok {
			order = append(order, k)
		}
		byListener[k] = append(byListener[k], t)
	}
	var calls [][]*clb.RsWeightRule
	var cur []*clb.RsWeightRule
	n := 0
	for _, k := range order {
		for chunk := range slices.Chunk(byListener[k], maxWeightTargetsPerRule) {
			if len(cur) == maxWeightRules || n+len(chunk) > maxWeightTargets {
				calls, cur, n = append(calls, cur), nil, 0
			}
			rule := &clb.RsWeightRule{ListenerId: common.StringPtr(k.listener)}
			if k.location != "" {
				rule.LocationId = common.StringPtr(k.location)
			}
			for _, t := range chunk {
				st := t.single()
				st.Weight = common.Int64Ptr(weight(t))
				rule.Targets = append(rule.Targets, st)
			}
			cur, n = append(cur, rule), n+len(chunk)
		}
	}
	if len(cur) > 0 {
		calls = append(calls, cur)
	}
	return calls
}
