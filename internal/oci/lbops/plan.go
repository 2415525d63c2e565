package lbops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
	"github.com/ccmkit/ccm/internal/lb/lbkit"
)

// The plan of a sync (lbkit.Planner): what Ensure would write, computed
// reading only by the functions reconcile plans with (planChange,
// planNSGs, planSecurityRules), so that the two cannot drift apart.

var _ lbkit.Planner[*Desired] = (*Ops)(nil)

// change is every write a sync makes to a load balancer it found (or
// created), computed reading only.
type change struct {
	// tags is the takeover's write (takeover.go), nil for one of ours or
	// when nothing else changes.
	tags *step
	// steps are the certificate, rule set, backend set and listener writes.
	steps []step
	// nsgs: the load balancer's NSGs are replaced (attachNSGs).
	nsgs bool
	// lists are the security list updates.
	lists []listUpdate
}

// all are the load balancer's own writes, in order: the takeover's tags
// first, so that what follows is done by the owner.
func (c change) all() []step {
	if c.tags == nil {
		return c.steps
	}
	return append([]step{*c.tags}, c.steps...)
}

// planChange computes the writes that make a match d. nsgWrites says
// whether the NSG plan writes; start is withDrains': the real sync starts
// the drain clocks, a plan only reads them.
func (o *Ops) planChange(ctx context.Context, d *Desired, a *actual, nsgWrites, start bool) (change, time.Time, error) {
	ls, bss := desiredSets(d)
	next := o.withDrains(a, bss, d.DrainPeriod, start)
	c := change{steps: withCertificates(a, d, ls, bss, planAll(a, d, ls, bss))}
	c.nsgs = !slices.Equal(slices.Sorted(slices.Values(d.attachNSGs)), a.NSGs)
	lists, err := o.planSecurityRules(ctx, d, a.Subnets, false)
	if err != nil {
		return change{}, next, fmt.Errorf("security lists: %w", err)
	}
	c.lists = lists
	if !ownedBy(a, d) && (nsgWrites || len(c.steps) > 0 || c.nsgs || len(c.lists) > 0) {
		t := tagStep(a, d)
		c.tags = &t
	}
	return c, next, nil
}

// kindName is a Kind as a Plan names it.
func kindName(k Kind) string { return strings.ToUpper(string(k)) }

// Plan is what Ensure would do with d, reading only (lbkit.Planner).
func (o *Ops) Plan(ctx context.Context, d *Desired) (_ lbkit.Plan, err error) {
	const op ccmmetrics.Op = "lbops.Plan"
	ctx, done := op.Start(ctx)
	defer done(&err)
	p, err := o.plan(ctx, d)
	var r *lbkit.RefusalError
	if errors.As(err, &r) {
		p.Verdict, p.Reason, p.Writes = lbkit.VerdictRefuse, r.Message, nil
		return p, nil
	}
	if err != nil {
		return lbkit.Plan{}, op.Errorf("Service %s: %w", d.Ref.Service, err)
	}
	return p, nil
}

func (o *Ops) plan(ctx context.Context, d *Desired) (lbkit.Plan, error) {
	p := lbkit.Plan{Kind: kindName(d.Kind)}
	drv, other := o.lb, o.nlb
	if d.Kind == KindNLB {
		drv, other = o.nlb, o.lb
	}
	// A Service that switched kind: the other kind's load balancer goes
	// first (deleteWith).
	oa, err := o.find(ctx, other, d)
	if err != nil {
		return p, err
	}
	if oa != nil {
		lists, err := o.planSecurityRules(ctx, d, oa.Subnets, true)
		if err != nil {
			return p, err
		}
		p.Writes = append(p.Writes, listWrites(lists)...)
		p.Writes = append(p.Writes, lbkit.PlannedWrite{Action: opName(other.kind(), step{verb: verbDelete, what: objLoadBalancer}),
			Object: fmt.Sprintf("%s %s (%q)", kindName(other.kind()), oa.ID, oa.DisplayName), Change: "the Service switched to " + kindName(d.Kind)})
	}
	a, err := o.find(ctx, drv, d)
	if err != nil {
		return p, err
	}
	if a != nil && isFailed(a) {
		p.Writes = append(p.Writes, lbkit.PlannedWrite{Action: opName(d.Kind, step{verb: verbDelete, what: objLoadBalancer}),
			Object: fmt.Sprintf("%s %s (%q)", p.Kind, a.ID, a.DisplayName), Change: "it is FAILED; a new one is created"})
		a = nil
	}
	if a != nil {
		p.LoadBalancer, p.Name, p.Owner = a.ID, a.DisplayName, owner(a, d)
		if err := o.checkTakeover(ctx, d, a); err != nil {
			return p, err
		}
	}
	nsgs, err := o.planNSGs(ctx, d)
	if err != nil {
		return p, err
	}
	p.Writes = append(p.Writes, nsgs.writes()...)
	if a == nil {
		if err := o.checkNoStranger(ctx, d); err != nil {
			return p, err
		}
		p.Verdict, p.Name = lbkit.VerdictCreate, d.Name
		p.Reason = fmt.Sprintf("no %s of the Service in compartment %s (looked up as %s)", p.Kind, o.compartment,
			strings.Join(o.naming.names(d.Kind, d.Ref), ", "))
		p.Writes = append(p.Writes, lbkit.PlannedWrite{Action: opName(d.Kind, step{verb: verbCreate, what: objLoadBalancer}),
			Object: fmt.Sprintf("%s %q", p.Kind, d.Name), Change: "with its listeners and backend sets; what follows depends on the answer"})
		return p, nil
	}
	c, _, err := o.planChange(ctx, d, a, len(nsgs.writes()) > 0, false)
	if err != nil {
		return p, err
	}
	for _, s := range c.all() {
		p.Writes = append(p.Writes, lbkit.PlannedWrite{Action: opName(d.Kind, s), Object: s.what.String() + " " + s.name, Change: describeStep(a, s)})
	}
	if c.nsgs {
		p.Writes = append(p.Writes, lbkit.PlannedWrite{Action: "UpdateNetworkSecurityGroups", Object: fmt.Sprintf("%s %s", p.Kind, a.ID),
			Change: fmt.Sprintf("%v -> %v", a.NSGs, slices.Sorted(slices.Values(d.attachNSGs)))})
	}
	p.Writes = append(p.Writes, listWrites(c.lists)...)
	switch {
	case !ownedBy(a, d):
		p.Verdict = lbkit.VerdictTakeOver
		if c.tags == nil {
			p.Reason = "it matches the Service: taken over with no write (our tags are added with its first change)"
		}
	case len(p.Writes) == 0:
		p.Verdict = lbkit.VerdictInSync
	default:
		p.Verdict = lbkit.VerdictUpdate
	}
	if err := immutableDiff(d, a); err != nil {
		p.Warnings = append(p.Warnings, lbkit.Warning{Reason: "LoadBalancerNotChangeable", Message: err.Error()})
	}
	return p, nil
}

// listWrites are security list updates as planned writes.
func listWrites(ups []listUpdate) []lbkit.PlannedWrite {
	out := make([]lbkit.PlannedWrite, 0, len(ups))
	for _, up := range ups {
		out = append(out, lbkit.PlannedWrite{Action: "UpdateSecurityList", Object: "security list " + up.id, Change: up.change})
	}
	return out
}

// describeStep says what a step changes on a.
func describeStep(a *actual, s step) string {
	switch {
	case s.what == objLoadBalancer:
		return fmt.Sprintf("take over: add freeform tags %s=%s, %s=%s (its own are kept)",
			TagServiceUID, s.tags[TagServiceUID], TagService, s.tags[TagService])
	case s.verb == verbDelete:
		return ""
	case s.what == objBackendSet:
		got, ok := a.BackendSets[s.name]
		if !ok {
			return fmt.Sprintf("%d backends, policy %s, health check %s", len(s.bs.Backends), s.bs.Policy, healthString(s.bs.Health))
		}
		return backendSetDiff(got, s.bs)
	case s.what == objListener:
		got, ok := a.Listeners[s.name]
		if !ok {
			return fmt.Sprintf("%s on port %d to backend set %s", s.ls.Protocol, s.ls.Port, s.ls.BackendSet)
		}
		return listenerDiff(got, s.ls)
	case s.what == objRuleSet && s.verb == verbUpdate:
		return "its rules differ from the annotation's"
	}
	return ""
}

func healthString(h healthModel) string {
	out := fmt.Sprintf("%s :%d", h.Protocol, h.Port)
	if h.Path != "" {
		out += h.Path
	}
	return out + fmt.Sprintf(" every %dms, timeout %dms, %d retries", h.IntervalMs, h.TimeoutMs, h.Retries)
}

// backendSetDiff lists what differs between two backend sets.
func backendSetDiff(got, want backendSetModel) string {
	var d []string
	add := func(what string, g, w any) {
		if g != w {
			d = append(d, fmt.Sprintf("%s %v -> %v", what, g, w))
		}
	}
	add("policy", got.Policy, want.Policy)
	add("health check protocol", got.Health.Protocol, want.Health.Protocol)
	add("health check port", got.Health.Port, want.Health.Port)
	add("health check path", got.Health.Path, want.Health.Path)
	add("health check return code", got.Health.ReturnCode, want.Health.ReturnCode)
	add("health check interval ms", got.Health.IntervalMs, want.Health.IntervalMs)
	add("health check timeout ms", got.Health.TimeoutMs, want.Health.TimeoutMs)
	add("health check retries", got.Health.Retries, want.Health.Retries)
	add("health check in plain text", got.Health.ForcePlainText, want.Health.ForcePlainText)
	add("preserve source", got.PreserveSource, want.PreserveSource)
	add("IP version", got.IPVersion, want.IPVersion)
	if !equalSSL(got.SSL, want.SSL) {
		d = append(d, "TLS to the backends")
	}
	if !slices.Equal(got.Backends, want.Backends) {
		have := map[backendModel]bool{}
		for _, b := range got.Backends {
			have[b] = true
		}
		var plus, minus int
		for _, b := range want.Backends {
			if !have[b] {
				plus++
			}
			delete(have, b)
		}
		minus = len(have)
		d = append(d, fmt.Sprintf("backends +%d -%d", plus, minus))
	}
	return strings.Join(d, ", ")
}

// listenerDiff lists what differs between two listeners.
func listenerDiff(got, want listenerModel) string {
	var d []string
	add := func(what string, g, w any) {
		if g != w {
			d = append(d, fmt.Sprintf("%s %v -> %v", what, g, w))
		}
	}
	add("protocol", got.Protocol, want.Protocol)
	add("port", got.Port, want.Port)
	add("backend set", got.BackendSet, want.BackendSet)
	if want.IdleTimeoutSec != 0 {
		add("idle timeout s", got.IdleTimeoutSec, want.IdleTimeoutSec)
	}
	add("PROXY protocol version", got.ProxyVersion, want.ProxyVersion)
	add("IP version", got.IPVersion, want.IPVersion)
	if !equalSSL(got.SSL, want.SSL) {
		d = append(d, "TLS")
	}
	if !slices.Equal(got.RuleSets, want.RuleSets) {
		d = append(d, fmt.Sprintf("rule sets %v -> %v", got.RuleSets, want.RuleSets))
	}
	return strings.Join(d, ", ")
}
