package clbops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ccmkit/ccm/internal/callerr"
	"github.com/ccmkit/ccm/internal/ccmmetrics"
	"github.com/ccmkit/ccm/internal/lb/lbkit"
)

// Plan says what Ensure would do with spec, reading only: the CLB it would
// find (ours, adopted, or TKE's to take over) or that it would create one,
// and each write, as the pipeline would make it. Every step is planned by
// the same function its write is (planListeners, planTargets,
// planSecurityGroups, attributeDiffs, takeoverTags); a plan's writes are
// counted as the sync's calls are: CreateListener per group of alike
// listeners and 20 ports, BatchRegisterTargets per 500 targets,
// BatchModifyTargetWeight per ModifyList. Not planned: retries of a batch
// call's failed listeners, and the per-listener fallback where the batch
// calls are unavailable (both depend on the cloud's answers).
func (o *Ops) Plan(ctx context.Context, spec *Desired) (_ lbkit.Plan, err error) {
	const op ccmmetrics.Op = "clbops.Plan"
	ctx, done := op.Start(ctx)
	defer done(&err)
	p, err := o.plan(ctx, spec)
	if err != nil {
		return lbkit.Plan{}, op.Errorf("Service %s: %w", spec.Service, err)
	}
	return p, nil
}

func (o *Ops) plan(ctx context.Context, spec *Desired) (lbkit.Plan, error) {
	p := lbkit.Plan{Kind: "CLB"}
	refusal := func(err error) (lbkit.Plan, error) {
		p.Verdict, p.Reason = lbkit.VerdictRefuse, err.Error()
		return p, nil
	}
	if err := o.checkSupported(spec); err != nil {
		return refusal(err)
	}
	if err := o.checkListenerQuota(ctx, len(spec.Listeners), "its ports alone"); err != nil {
		return refusal(err)
	}
	lb, err := o.find(ctx, spec)
	var refused *RefusalError
	switch {
	case errors.As(err, &refused):
		p.LoadBalancer, p.Owner = refused.LoadBalancer, refused.Owner
		return refusal(err)
	case err != nil && !isCallError(err):
		return refusal(err) // the Service's annotations and tags contradict each other
	case err != nil:
		return lbkit.Plan{}, err
	case lb == nil:
		p.Verdict, p.Name = lbkit.VerdictCreate, spec.Name
		p.Reason = "no CLB is tagged for the Service"
		switch {
		case spec.AdoptID != "":
		case spec.Incumbent != "":
			p.Reason = fmt.Sprintf("the CLB %s the Service's loadbalance-id annotation names does not exist or was not made by TKE's service controller", spec.Incumbent)
		}
		p.Writes = []lbkit.PlannedWrite{{Action: "CreateLoadBalancer", Object: "CLB " + spec.Name,
			Change: "then its listeners and targets, which depend on the new CLB's answer"}}
		return p, nil
	}
	p.LoadBalancer, p.Name = lb.id, lb.name
	switch {
	case lb.takeover:
		p.Owner = OwnerTKE
	case lb.adopted:
		p.Owner = lbkit.OwnerUser
	default:
		p.Owner = lbkit.OwnerOurs
	}
	if err := o.checkMatches(lb, spec); err != nil {
		return refusal(err)
	}
	writes, err := o.planWrites(ctx, lb, spec)
	var problem planProblem
	switch {
	case errors.As(err, &problem):
		return refusal(problem.error)
	case err != nil:
		return lbkit.Plan{}, err
	}
	p.Writes = writes
	switch {
	case lb.takeover:
		p.Verdict = lbkit.VerdictTakeOver
	case len(writes) == 0:
		p.Verdict = lbkit.VerdictInSync
	default:
		p.Verdict = lbkit.VerdictUpdate
	}
	return p, nil
}

// planProblem is a Service the sync would fail on before any write (a
// port taken by a listener it does not own, a quota), as opposed to a
// failed read.
type planProblem struct{ error }

// isCallError: err is a failed API call (every call's error is a
// *callerr.Error) or the context ended, not a judgment of the Service.
func isCallError(err error) bool {
	var ce *callerr.Error
	return errors.As(err, &ce) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// planWrites lists the writes of the pipeline's steps after find, in its
// order.
func (o *Ops) planWrites(ctx context.Context, lb *loadBalancer, spec *Desired) ([]lbkit.PlannedWrite, error) {
	var out []lbkit.PlannedWrite
	add := func(action, object, change string) {
		out = append(out, lbkit.PlannedWrite{Action: action, Object: object, Change: change})
	}
	want := tags(spec)
	for _, k := range o.takeoverTags(lb, spec) {
		add("AttachResourcesTag", lb.String(), fmt.Sprintf("tag %s=%s", k, want[k]))
	}
	for _, d := range attributeDiffs(lb, spec) {
		add("ModifyLoadBalancerAttributes", lb.String(), d)
	}
	sp, err := o.planSecurityGroups(ctx, lb, spec)
	if err != nil {
		return nil, asProblem(err)
	}
	if sp.ingress != nil && sp.managed == "" {
		add("CreateSecurityGroup", "security group for Service "+spec.Service.String(), "loadBalancerSourceRanges")
	}
	if sp.rulesDiff != "" {
		add("ModifySecurityGroupPolicies", "security group "+cmpOr(sp.managed, "(new)"), sp.rulesDiff)
	}
	if sp.rebind {
		add("SetLoadBalancerSecurityGroups", lb.String(), fmt.Sprintf("[%s] -> [%s]", strings.Join(lb.securityGroups, ","), strings.Join(sp.bind, ",")))
	}
	for _, g := range sp.deletes {
		add("DeleteSecurityGroup", "security group "+g.id, "left over")
	}

	owner := o.ownerOf(lb, spec)
	actual, err := o.describeListeners(ctx, lb)
	if err != nil {
		return nil, err
	}
	lp, err := planListeners(desiredListeners(spec, owner), actual, owner)
	if err != nil {
		return nil, planProblem{fmt.Errorf("%s: %w", lb, err)}
	}
	if !lp.empty() {
		if _, err := o.listenerRoom(ctx, lb, lp, len(actual)); err != nil {
			return nil, asProblem(err)
		}
	}
	for _, l := range lp.remove {
		add("DeleteListener", fmt.Sprintf("listener %s (%s/%d, %s)", l.name, l.protocol, l.port, l.id), "not wanted")
	}
	bound := slices.Clone(lp.bound)
	for _, g := range createGroups(lp.create) {
		names := make([]string, len(g))
		for i, w := range g {
			names[i] = w.name
			bound = append(bound, boundListener{id: "(new) " + w.name + fmt.Sprintf(" %s/%d", w.protocol, w.port), wantListener: w, fresh: true})
		}
		add("CreateListener", "listeners "+strings.Join(names, ", "), fmt.Sprintf("%s ports, health check %s", g[0].protocol, g[0].hc))
	}
	for _, c := range lp.modify {
		add("ModifyListener", fmt.Sprintf("listener %s (%s)", c.want.name, c.id), c.why)
	}

	// Layer 7: each listener's one rule (reconcileRules).
	for i := range bound {
		b := &bound[i]
		if !isLayer7(b.protocol) {
			continue
		}
		domain, err := ruleDomain(lb)
		if err != nil {
			return nil, planProblem{err}
		}
		keep, stale := b.splitRules(domain)
		if len(stale) > 0 {
			add("DeleteRule", fmt.Sprintf("listener %s rules %s", b.name, strings.Join(stale, ", ")), "not the Service's rule")
		}
		switch {
		case keep == nil:
			add("CreateRule", fmt.Sprintf("listener %s rule %s%s", b.name, domain, defaultRuleURL), "")
			b.locationID, b.fresh = "(new rule) "+b.id, true
		case !keep.hc.equal(b.hc) || keep.session != b.session:
			b.locationID = keep.id
			add("ModifyRule", fmt.Sprintf("listener %s rule %s", b.name, keep.id),
				fmt.Sprintf("health check is %s, want %s; session expire time is %ds, want %ds", keep.hc, b.hc, keep.session, b.session))
		default:
			b.locationID = keep.id
		}
	}

	// Targets (reconcileTargets), on the first sync of a process: a
	// target found at weight 0 starts its drain period then.
	ts, err := o.describeTargets(ctx, lb, bound)
	if err != nil {
		return nil, err
	}
	tp := planTargets(spec, bound, ts, func(target) bool { return false })
	first := tp.makeRoom(ts.byListener, spec.BackendLimit)
	batches := func(action string, targets []target, why string) {
		for chunk := range slices.Chunk(targets, maxBatchTargets) {
			add(action, fmt.Sprintf("%s targets", lb), fmt.Sprintf("%d targets (%s): %s", len(chunk), why, summarize(tp, chunk)))
		}
	}
	weights := func(targets []target, why string) {
		for _, call := range weightCalls(targets, tp.weightOf) {
			n := 0
			for _, r := range call {
				n += len(r.Targets)
			}
			add("BatchModifyTargetWeight", fmt.Sprintf("%s targets", lb), fmt.Sprintf("%d targets (%s)", n, why))
		}
	}
	batches("BatchDeregisterTargets", first, "to make room under the target quota")
	batches("BatchRegisterTargets", tp.register, "missing")
	weights(append(slices.Clip(tp.restore), tp.reweight...), "to their weight")
	weights(tp.drain, "drained to weight 0")
	batches("BatchDeregisterTargets", tp.deregister, "not wanted")
	return out, nil
}

// createGroups is how createListeners splits new listeners into
// CreateListener calls: alike listeners (protocol, health check, affinity,
// certificate) share a call, at most maxPortsPerCreate ports each.
func createGroups(want []wantListener) [][]wantListener {
	type group struct {
		protocol string
		hc       healthCheck
		session  int64
		cert     listenerCert
	}
	var order []group
	byGroup := map[group][]wantListener{}
	for _, w := range want {
		g := group{w.protocol, w.hc, w.session, w.cert}
		if _, ok := byGroup[g]; !ok {
			order = append(order, g)
		}
		byGroup[g] = append(byGroup[g], w)
	}
	var out [][]wantListener
	for _, g := range order {
		for chunk := range slices.Chunk(byGroup[g], maxPortsPerCreate) {
			out = append(out, chunk)
		}
	}
	return out
}

// asProblem: an error that is not a failed call is the Service's problem.
func asProblem(err error) error {
	if isCallError(err) {
		return err
	}
	return planProblem{err}
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
