package clbops

import (
	"context"
	"errors"
	"fmt"
	"strings"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
)

// Layer-7 listeners (TKE's specify-protocol HTTP and HTTPS). Such a
// listener has no targets and no health check of its own: both belong to
// its forwarding rules (CreateListener: "HealthCheck ... 此参数仅适用于TCP/
// UDP/TCP_SSL/QUIC监听器"; ListenerBackend.Targets "仅适用于TCP/UDP/TCP_SSL
// 监听器", Rules "仅适用于HTTP/HTTPS监听器"; BatchTarget.LocationId "7层负载均
// 衡该参数必填", clb@v1.3.105 models.go). A Service's layer-7 listener gets
// exactly one rule, the default one:
//
//   - Url "/", which every path starts with;
//   - Domain: the CLB's VIP. TKE does the same for a Service without
//     per-domain "hosts": its default domain is the CLB's public or private
//     VIP ("当您的域名配置为默认值,即公网或内网 VIP 时", TKE 457/45700), and CLB
//     says that with a single rule the service is reached through VIP+URL
//     (214/9032). A wildcard was the alternative; the VIP is what TKE users
//     see on TKE, it is stable for the CLB's life, and with DefaultServer
//     the rule also takes requests whose Host names any other domain;
//   - DefaultServer true, so that it is the listener's default domain
//     ("是否将该域名设为默认域名，注意，一个监听器下只能设置一个默认域名", RuleInput).
//
// The rule carries the Service's health check and session affinity; its
// targets are the listener's would-be targets, bound by LocationId.
// Several rules, per-domain routing and path routing are an Ingress
// controller's job and not done here.

// Layer-7 listener protocols.
const (
	ProtocolHTTP  = "HTTP"
	ProtocolHTTPS = "HTTPS"
)

// defaultRuleURL is the path of the one rule.
const defaultRuleURL = "/"

func isLayer7(protocol string) bool { return protocol == ProtocolHTTP || protocol == ProtocolHTTPS }

// rule is a forwarding rule as found.
type rule struct {
	id, domain, url string
	hc              healthCheck
	session         int64
}

func rulesFromSDK(in []*clb.RuleOutput) []rule {
	var out []rule
	for _, r := range in {
		if r == nil || r.LocationId == nil {
			continue
		}
		out = append(out, rule{
			id: *r.LocationId, domain: strings.ToLower(deref(r.Domain)), url: deref(r.Url),
			// A rule's check is HTTP-based by default; healthCheckFromSDK
			// takes the type from the answer, which carries it.
			hc:      healthCheckFromSDK(r.HealthCheck, ProtocolHTTP),
			session: deref(r.SessionExpireTime),
		})
	}
	return out
}

// ruleDomain is the domain of the Service's rule: the CLB's first VIP.
func ruleDomain(lb *loadBalancer) (string, error) {
	if len(lb.vips) == 0 || lb.vips[0] == "" {
		return "", fmt.Errorf("%s has no VIP yet, which the default rule of an HTTP or HTTPS listener is named after", lb)
	}
	return strings.ToLower(lb.vips[0]), nil
}

// reconcileRules gives each layer-7 listener in bound its one rule: kept
// if it matches, modified if only its health check or session affinity
// differ, else the stale rules deleted and the rule created. It sets each
// listener's locationID, and fresh when the rule is new (no targets yet).
func (o *Ops) reconcileRules(ctx context.Context, lb *loadBalancer, bound []boundListener) error {
	for i := range bound {
		b := &bound[i]
		if !isLayer7(b.protocol) {
			continue
		}
		domain, err := ruleDomain(lb)
		if err != nil {
			return err
		}
		keep, stale := b.splitRules(domain)
		if len(stale) > 0 {
			if err := o.deleteRules(ctx, lb, b, stale); err != nil {
				return err
			}
		}
		if keep != nil {
			b.locationID = keep.id
			if !keep.hc.equal(b.hc) || keep.session != b.session {
				if err := o.modifyRule(ctx, lb, b, fmt.Sprintf("health check is %s, want %s; session expire time is %ds, want %ds", keep.hc, b.hc, keep.session, b.session)); err != nil {
					return err
				}
			}
			continue
		}
		id, err := o.createRule(ctx, lb, b, domain)
		if err != nil {
			return err
		}
		b.locationID, b.fresh = id, true
	}
	return nil
}

// splitRules finds the listener's rule to keep (the first for domain and
// the default URL) and the ids of the others, which are stale.
func (b *boundListener) splitRules(domain string) (keep *rule, stale []string) {
	for j, r := range b.rules {
		if keep == nil && r.domain == domain && r.url == defaultRuleURL {
			keep = &b.rules[j]
			continue
		}
		stale = append(stale, r.id)
	}
	return keep, stale
}

func (o *Ops) createRule(ctx context.Context, lb *loadBalancer, b *boundListener, domain string) (string, error) {
	req := clb.NewCreateRuleRequest()
	req.LoadBalancerId, req.ListenerId = common.StringPtr(lb.id), common.StringPtr(b.id)
	in := &clb.RuleInput{
		Domain: common.StringPtr(domain), Url: common.StringPtr(defaultRuleURL),
		HealthCheck: b.hc.sdk(false), DefaultServer: common.BoolPtr(true),
	}
	if b.session > 0 {
		in.SessionExpireTime = common.Int64Ptr(b.session)
	}
	req.Rules = []*clb.RuleInput{in}
	target := fmt.Sprintf("%s listener %s (%s) rule %s%s", lb, b.name, b.id, domain, defaultRuleURL)
	logWrite(ctx, "Creating CLB forwarding rule", "clb", lb.id, "listener", b.name, "domain", domain, "url", defaultRuleURL)
	var resp *clb.CreateRuleResponse
	if err := o.call(ctx, "CreateRule", target, func() (err error) {
		resp, err = o.api.CreateRuleWithContext(ctx, req)
		return err
	}); err != nil {
		return "", err
	}
	if resp == nil || resp.Response == nil || len(resp.Response.LocationIds) != 1 || deref(resp.Response.LocationIds[0]) == "" {
		return "", callError("CreateRule", target, errors.New("malformed answer: not one LocationId"))
	}
	if _, err := o.waitTask(ctx, "CreateRule", target, requestID(resp.Response.RequestId), ""); err != nil {
		return "", err
	}
	return deref(resp.Response.LocationIds[0]), nil
}

func (o *Ops) modifyRule(ctx context.Context, lb *loadBalancer, b *boundListener, why string) error {
	req := clb.NewModifyRuleRequest()
	req.LoadBalancerId, req.ListenerId, req.LocationId = common.StringPtr(lb.id), common.StringPtr(b.id), common.StringPtr(b.locationID)
	req.HealthCheck = b.hc.sdk(true)
	req.SessionExpireTime = common.Int64Ptr(b.session)
	target := fmt.Sprintf("%s listener %s (%s) rule %s", lb, b.name, b.id, b.locationID)
	logWrite(ctx, "Updating CLB forwarding rule", "clb", lb.id, "listener", b.name, "rule", b.locationID, "why", why)
	var resp *clb.ModifyRuleResponse
	if err := o.call(ctx, "ModifyRule", target, func() (err error) {
		resp, err = o.api.ModifyRuleWithContext(ctx, req)
		return err
	}); err != nil {
		return err
	}
	if resp == nil || resp.Response == nil {
		return callError("ModifyRule", target, errors.New("malformed answer: no Response"))
	}
	_, err := o.waitTask(ctx, "ModifyRule", target, requestID(resp.Response.RequestId), "")
	return err
}

// deleteRules removes rules of our listener that are not the one it
// should have (made by hand, or named after another domain).
func (o *Ops) deleteRules(ctx context.Context, lb *loadBalancer, b *boundListener, ids []string) error {
	req := clb.NewDeleteRuleRequest()
	req.LoadBalancerId, req.ListenerId = common.StringPtr(lb.id), common.StringPtr(b.id)
	req.LocationIds = common.StringPtrs(ids)
	target := fmt.Sprintf("%s listener %s (%s) rules %s", lb, b.name, b.id, strings.Join(ids, ", "))
	logWrite(ctx, "Deleting CLB forwarding rules", "clb", lb.id, "listener", b.name, "rules", ids)
	var resp *clb.DeleteRuleResponse
	if err := o.call(ctx, "DeleteRule", target, func() (err error) {
		resp, err = o.api.DeleteRuleWithContext(ctx, req)
		return err
	}); err != nil {
		return err
	}
	if resp == nil || resp.Response == nil {
		return callError("DeleteRule", target, errors.New("malformed answer: no Response"))
	}
	_, err := o.waitTask(ctx, "DeleteRule", target, requestID(resp.Response.RequestId), "")
	return err
}

// ruleTargets is the targets of one rule in DescribeTargets' Rules.
func ruleTargets(rules []*clb.RuleTargets, locationID string) []*clb.Backend {
	for _, r := range rules {
		if r != nil && deref(r.LocationId) == locationID {
			return r.Targets
		}
	}
	return nil
}
