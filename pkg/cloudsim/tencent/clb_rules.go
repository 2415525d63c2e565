package tencent

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// Layer-7 listeners (HTTP, HTTPS) and their forwarding rules. A layer-7
// listener has no targets of its own: targets bind to a rule (a domain and
// a URL, with its own health check and scheduler), named by its LocationId
// ("七层规则 ID。7层负载均衡该参数必填", BatchTarget.LocationId in clb@v1.3.105
// models.go). The data plane makes the listener an HTTP reverse proxy that
// routes each request by Host and path (dataplane/http.go).

const (
	protoHTTP  = "HTTP"
	protoHTTPS = "HTTPS"
)

// Limits of RuleInput (clb@v1.3.105 models.go): "Url 转发规则的路径。长度限制为：
// 1~200", "Domain 转发规则的域名。长度限制为：1~80"; rule SessionExpireTime "0表示
// 关闭会话保持，开启会话保持可取值30~86400".
const (
	MaxRuleURLLen        = 200
	MaxRuleDomainLen     = 80
	maxRuleSessionExpire = 86400
	// MaxRulesPerCall bounds CreateRule's Rules: cloudsim's choice, the
	// SDK documents no limit.
	MaxRulesPerCall = 50
)

func isLayer7(proto string) bool { return proto == protoHTTP || proto == protoHTTPS }

// clbRule is one forwarding rule of a layer-7 listener.
type clbRule struct {
	id, domain, url string
	hc              lbHealthCheck
	scheduler       string
	sessionExpire   int64
	defaultServer   bool
	created         time.Time
	targets         []*clbTarget // in registration order
}

func (li *clbListener) rule(id string) *clbRule {
	for _, r := range li.rules {
		if r.id == id {
			return r
		}
	}
	return nil
}

// ruleByPath finds a rule by Domain and Url (RegisterTargets' alternative
// to LocationId: "必须提供此参数或Domain+Url两者之一").
func (li *clbListener) ruleByPath(domain, url string) *clbRule {
	for _, r := range li.rules {
		if strings.EqualFold(r.domain, domain) && r.url == url {
			return r
		}
	}
	return nil
}

// defaultRuleHealthCheck is a rule's health check before its HealthCheck
// is applied: on, HTTP HEAD to the rule's domain, the defaults of
// defaultHealthCheck otherwise (cloudsim's reading of the console's
// defaults for layer-7 rules; the SDK does not list them).
func defaultRuleHealthCheck(domain string) lbHealthCheck {
	hc := defaultHealthCheck(protoTCP)
	hc.checkType, hc.httpVersion, hc.httpDomain = "HTTP", "HTTP/1.1", domain
	return hc
}

func errLocationNotFound(listenerID, id string) *Error {
	return Errorf("InvalidParameter.LocationNotFound", "The rule `%s` does not exist in listener `%s`.", id, listenerID)
}

// domainChars are the characters a rule domain may hold (cloudsim's
// reading of 214/9032: letters, digits, "-", "." and the wildcard; "_"
// anywhere but first).
const domainChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-*_"

// checkRuleDomain validates a rule domain: 1-80 characters (RuleInput.Domain),
// not starting with "_" (Tencent CLB "Layer-7 Domain Name Forwarding and URL
// Rules", 214/9032), and at most one "*", as the whole first or last label.
func checkRuleDomain(where, d string) *Error {
	switch {
	case d == "":
		return errMissing(where)
	case len(d) > MaxRuleDomainLen:
		return Errorf("InvalidParameterValue.Length", "`%s` must have 1 to %d characters, got %d.", where, MaxRuleDomainLen, len(d))
	case strings.HasPrefix(d, "_"):
		return Errorf("InvalidParameterValue", "`%s` `%s` must not start with `_`.", where, d)
	case strings.Count(d, "*") > 1,
		strings.Contains(d, "*") && !strings.HasPrefix(d, "*.") && !strings.HasSuffix(d, ".*"):
		return Errorf("InvalidParameterValue", "`%s` `%s`: a wildcard is one `*` as the whole first or last label.", where, d)
	}
	for _, r := range d {
		if !strings.ContainsRune(domainChars, r) {
			return Errorf("InvalidParameter.FormatError", "`%s` `%s` contains %q; a domain has letters, digits, `-`, `.` and one `*`.", where, d, r)
		}
	}
	return nil
}

// checkRuleURL validates a rule path: 1-200 characters (RuleInput.Url),
// starting with "/" (cloudsim's choice: it emulates prefix paths only, not
// the regular expressions the console also takes).
func checkRuleURL(where, u string) *Error {
	switch {
	case u == "":
		return errMissing(where)
	case len(u) > MaxRuleURLLen:
		return Errorf("InvalidParameterValue.Length", "`%s` must have 1 to %d characters, got %d.", where, MaxRuleURLLen, len(u))
	case !strings.HasPrefix(u, "/"):
		return Errorf("InvalidParameterValue", "`%s` `%s` must start with `/`.", where, u)
	}
	return nil
}

// ruleOptions are what CreateRule and ModifyRule share.
func checkRuleOptions(where string, scheduler *string, session *int64) *Error {
	if scheduler != nil && !slices.Contains([]string{"WRR", "LEAST_CONN", "IP_HASH"}, *scheduler) {
		return Errorf("InvalidParameterValue", "`%sScheduler` must be WRR, LEAST_CONN or IP_HASH, got `%s`.", where, *scheduler)
	}
	if v := session; v != nil && *v != 0 && (*v < 30 || *v > maxRuleSessionExpire) {
		return Errorf("InvalidParameterValue", "`%sSessionExpireTime` must be 0 (off) or between 30 and %d seconds, got %d.", where, maxRuleSessionExpire, *v)
	}
	return nil
}

// mergeRuleHealthCheck applies a rule's HealthCheck: the listener checks'
// validation, and the check types a rule takes (TCP or HTTP here;
// HTTPS and GRPC checks are not emulated).
func mergeRuleHealthCheck(hc lbHealthCheck, in *clb.HealthCheck) (lbHealthCheck, *Error) {
	out, e := hc.merge(protoTCP, in)
	if e != nil {
		return hc, e
	}
	if out.checkType != "TCP" && out.checkType != "HTTP" {
		return hc, Errorf("InvalidParameterValue", "`HealthCheck.CheckType` of a forwarding rule must be TCP or HTTP in cloudsim, got `%s`.", out.checkType)
	}
	return out, nil
}

// layer7ListenerLocked finds a layer-7 listener.
func layer7ListenerLocked(lb *clbLB, id string) (*clbListener, *Error) {
	li, e := lbListener(lb, id)
	if e != nil {
		return nil, e
	}
	if !isLayer7(li.protocol) {
		return nil, Errorf("InvalidParameter", "Listener `%s` is %s; forwarding rules belong to HTTP and HTTPS listeners.", id, li.protocol)
	}
	return li, nil
}

// newLocationIDLocked returns a rule id unused in the load balancer.
func newLocationIDLocked(lb *clbLB) string {
	for {
		id := randomID("loc-")
		used := false
		for _, li := range lb.listeners {
			if li.rule(id) != nil {
				used = true
			}
		}
		if !used {
			return id
		}
	}
}

// createRule implements CreateRule: rules of one layer-7 listener. The
// first domain of a listener becomes its default domain unless a rule
// says DefaultServer (cloudsim's reading of "监听器下必须配置一个默认域名",
// DeleteRule.NewDefaultServerDomain).
func (l *CLB) createRule(call *Call, body []byte) (any, error) {
	var req clb.CreateRuleRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	if len(req.Rules) == 0 {
		return nil, errMissing("Rules")
	}
	if len(req.Rules) > MaxRulesPerCall {
		return nil, Errorf("LimitExceeded", "`Rules` has %d rules; cloudsim takes at most %d per call.", len(req.Rules), MaxRulesPerCall)
	}
	for i, r := range req.Rules {
		where := fmt.Sprintf("Rules.%d.", i)
		if r == nil {
			return nil, errMissing(where)
		}
		if len(r.Domains) > 0 || r.MultiCertInfo != nil || r.Certificate != nil || ptrBool(r.Quic) || ptrBool(r.Http2) {
			return nil, Errorf("UnsupportedOperation", "cloudsim emulates single-domain rules without their own certificates, QUIC or HTTP/2 (`%sDomains`, `Certificate`, `MultiCertInfo`, `Quic`, `Http2`).", where)
		}
		if v := ptrStr(r.ForwardType); v != "" && v != protoHTTP {
			return nil, Errorf("UnsupportedOperation", "cloudsim forwards HTTP to targets only, not `%sForwardType` %s.", where, v)
		}
		if v := ptrStr(r.TargetType); v != "" && v != "NODE" {
			return nil, Errorf("UnsupportedOperation", "cloudsim emulates only `TargetType` NODE, not `%s`.", v)
		}
		if e := checkRuleDomain(where+"Domain", ptrStr(r.Domain)); e != nil {
			return nil, e
		}
		if e := checkRuleURL(where+"Url", ptrStr(r.Url)); e != nil {
			return nil, e
		}
		if e := checkRuleOptions(where, r.Scheduler, r.SessionExpireTime); e != nil {
			return nil, e
		}
		if _, e := mergeRuleHealthCheck(defaultRuleHealthCheck(ptrStr(r.Domain)), r.HealthCheck); e != nil {
			return nil, e
		}
	}
	lbID, lisID := ptrStr(req.LoadBalancerId), ptrStr(req.ListenerId)
	var ids []string
	_, err := l.startTask(call, []string{lbID}, func() (func() error, *Error) {
		lb, e := l.lbLocked(call.Region, lbID)
		if e != nil {
			return nil, e
		}
		li, e := layer7ListenerLocked(lb, lisID)
		if e != nil {
			return nil, e
		}
		var add []*clbRule
		hasDefault := slices.ContainsFunc(li.rules, func(r *clbRule) bool { return r.defaultServer })
		for i, in := range req.Rules {
			r := &clbRule{
				id: newLocationIDLocked(lb), domain: ptrStr(in.Domain), url: ptrStr(in.Url),
				scheduler: "WRR", created: l.core.Now(), defaultServer: ptrBool(in.DefaultServer),
			}
			for slices.ContainsFunc(add, func(o *clbRule) bool { return o.id == r.id }) {
				r.id = newLocationIDLocked(lb)
			}
			// The rule's domain and path must be new on the listener.
			if li.ruleByPath(r.domain, r.url) != nil || slices.ContainsFunc(add, func(o *clbRule) bool {
				return strings.EqualFold(o.domain, r.domain) && o.url == r.url
			}) {
				return nil, Errorf("InvalidParameter", "`Rules.%d`: listener `%s` already has a rule for domain `%s` and url `%s`.", i, lisID, r.domain, r.url)
			}
			if r.defaultServer && (hasDefault || slices.ContainsFunc(add, func(o *clbRule) bool { return o.defaultServer && !strings.EqualFold(o.domain, r.domain) })) {
				return nil, Errorf("InvalidParameter", "`Rules.%d.DefaultServer`: a listener has one default domain (\"一个监听器下只能设置一个默认域名\"), and listener `%s` has one.", i, lisID)
			}
			r.hc, _ = mergeRuleHealthCheck(defaultRuleHealthCheck(r.domain), in.HealthCheck)
			if in.Scheduler != nil {
				r.scheduler = *in.Scheduler
			}
			r.sessionExpire = ptrInt64(in.SessionExpireTime)
			add = append(add, r)
			ids = append(ids, r.id)
		}
		if !hasDefault && !slices.ContainsFunc(add, func(r *clbRule) bool { return r.defaultServer }) {
			add[0].defaultServer = true
		}
		return func() error {
			if lb.listener(lisID) != li {
				return errListenerNotFound(lbID, lisID)
			}
			li.rules = append(li.rules, add...)
			return nil
		}, nil
	})
	if err != nil {
		return nil, err
	}
	return &clb.CreateRuleResponseParams{LocationIds: common.StringPtrs(ids)}, nil
}

// modifyRule implements ModifyRule: url, health check (fields not given
// keep their values), scheduler and session expire time.
func (l *CLB) modifyRule(call *Call, body []byte) (any, error) {
	var req clb.ModifyRuleRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	if req.Url != nil {
		if e := checkRuleURL("Url", *req.Url); e != nil {
			return nil, e
		}
	}
	if e := checkRuleOptions("", req.Scheduler, req.SessionExpireTime); e != nil {
		return nil, e
	}
	if v := ptrStr(req.ForwardType); v != "" && v != protoHTTP {
		return nil, Errorf("UnsupportedOperation", "cloudsim forwards HTTP to targets only, not `ForwardType` %s.", v)
	}
	lbID, lisID, locID := ptrStr(req.LoadBalancerId), ptrStr(req.ListenerId), ptrStr(req.LocationId)
	_, err := l.startTask(call, []string{lbID}, func() (func() error, *Error) {
		lb, e := l.lbLocked(call.Region, lbID)
		if e != nil {
			return nil, e
		}
		li, e := layer7ListenerLocked(lb, lisID)
		if e != nil {
			return nil, e
		}
		if locID == "" {
			return nil, errMissing("LocationId")
		}
		r := li.rule(locID)
		if r == nil {
			return nil, errLocationNotFound(lisID, locID)
		}
		hc, e := mergeRuleHealthCheck(r.hc, req.HealthCheck)
		if e != nil {
			return nil, e
		}
		if req.Url != nil && *req.Url != r.url && li.ruleByPath(r.domain, *req.Url) != nil {
			return nil, Errorf("InvalidParameter", "Listener `%s` already has a rule for domain `%s` and url `%s`.", lisID, r.domain, *req.Url)
		}
		return func() error {
			if li.rule(locID) != r {
				return errLocationNotFound(lisID, locID)
			}
			r.hc = hc
			if req.Url != nil {
				r.url = *req.Url
			}
			if req.Scheduler != nil {
				r.scheduler = *req.Scheduler
			}
			if req.SessionExpireTime != nil {
				r.sessionExpire = *req.SessionExpireTime
			}
			return nil
		}, nil
	})
	if err != nil {
		return nil, err
	}
	return &clb.ModifyRuleResponseParams{}, nil
}

// deleteRule implements DeleteRule: by LocationIds, or by Domain and Url.
// Deleting the default domain's last rule while other domains remain needs
// NewDefaultServerDomain ("监听器下必须配置一个默认域名"); the rule's targets go
// with it.
func (l *CLB) deleteRule(call *Call, body []byte) (any, error) {
	var req clb.DeleteRuleRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	locIDs := ptrStrs(req.LocationIds)
	domain, url := ptrStr(req.Domain), ptrStr(req.Url)
	if len(locIDs) == 0 && (domain == "" || url == "") {
		return nil, errMissing("LocationIds")
	}
	if dup := firstDuplicate(locIDs); dup != "" {
		return nil, Errorf("InvalidParameterValue.Duplicate", "The rule `%s` appears more than once.", dup)
	}
	lbID, lisID := ptrStr(req.LoadBalancerId), ptrStr(req.ListenerId)
	newDefault := ptrStr(req.NewDefaultServerDomain)
	_, err := l.startTask(call, []string{lbID}, func() (func() error, *Error) {
		lb, e := l.lbLocked(call.Region, lbID)
		if e != nil {
			return nil, e
		}
		li, e := layer7ListenerLocked(lb, lisID)
		if e != nil {
			return nil, e
		}
		var gone []*clbRule
		for _, id := range locIDs {
			r := li.rule(id)
			if r == nil {
				return nil, errLocationNotFound(lisID, id)
			}
			gone = append(gone, r)
		}
		if len(locIDs) == 0 {
			r := li.ruleByPath(domain, url)
			if r == nil {
				return nil, Errorf("InvalidParameter.LocationNotFound", "Listener `%s` has no rule for domain `%s` and url `%s`.", lisID, domain, url)
			}
			gone = append(gone, r)
		}
		left := slices.DeleteFunc(slices.Clone(li.rules), func(r *clbRule) bool { return slices.Contains(gone, r) })
		var promote string
		lostDefault := slices.ContainsFunc(gone, func(r *clbRule) bool { return r.defaultServer }) &&
			!slices.ContainsFunc(left, func(r *clbRule) bool { return r.defaultServer })
		if lostDefault && len(left) > 0 {
			if newDefault == "" {
				return nil, Errorf("InvalidParameter", "Deleting the default domain of listener `%s` needs `NewDefaultServerDomain`.", lisID)
			}
			if !slices.ContainsFunc(left, func(r *clbRule) bool { return strings.EqualFold(r.domain, newDefault) }) {
				return nil, Errorf("InvalidParameter", "`NewDefaultServerDomain` `%s` is not a domain of listener `%s`.", newDefault, lisID)
			}
			promote = newDefault
		}
		return func() error {
			if lb.listener(lisID) != li {
				return errListenerNotFound(lbID, lisID)
			}
			li.rules = slices.DeleteFunc(li.rules, func(r *clbRule) bool { return slices.Contains(gone, r) })
			for _, r := range li.rules {
				if promote != "" && strings.EqualFold(r.domain, promote) {
					r.defaultServer = true
				}
			}
			return nil
		}, nil
	})
	if err != nil {
		return nil, err
	}
	return &clb.DeleteRuleResponseParams{}, nil
}

// rulesToSDK is a layer-7 listener's Rules in DescribeListeners.
func (li *clbListener) rulesToSDK(nulls bool) []*clb.RuleOutput {
	out := []*clb.RuleOutput{}
	for _, r := range li.rules {
		out = append(out, &clb.RuleOutput{
			LocationId:        common.StringPtr(r.id),
			Domain:            common.StringPtr(r.domain),
			Url:               common.StringPtr(r.url),
			SessionExpireTime: common.Int64Ptr(r.sessionExpire),
			HealthCheck:       r.hc.toSDK(nulls),
			Scheduler:         common.StringPtr(r.scheduler),
			ListenerId:        common.StringPtr(li.id),
			DefaultServer:     common.BoolPtr(r.defaultServer),
			Http2:             common.BoolPtr(false),
			ForwardType:       common.StringPtr(protoHTTP),
			CreateTime:        common.StringPtr(clbTime(r.created)),
			TargetType:        common.StringPtr("NODE"),
			QuicStatus:        common.StringPtr("QUIC_INACTIVE"),
			Domains:           common.StringPtrs([]string{r.domain}),
		})
	}
	return out
}

// layer7Plane makes a layer-7 listener's data plane: a TCP listener (TLS
// for HTTPS, set by syncPlaneLocked) that proxies HTTP by its rules. Its
// targets are every rule's; its health check is the default rule's, so a
// target is checked once (cloudsim's choice: a target on several rules
// with different checks gets the default rule's).
func (li *clbListener) layer7Plane(out *dataplane.Listener) {
	out.Protocol = dataplane.TCP
	out.HealthCheck = nil
	out.Targets = nil
	out.HTTP = &dataplane.HTTP{}
	seen := map[string]bool{}
	for i, r := range li.rules {
		if r.defaultServer || (i == 0 && out.HealthCheck == nil) {
			out.HealthCheck = r.hc.toPlane()
			out.Scheduler = r.scheduler
			out.Stickiness = time.Duration(r.sessionExpire) * time.Second
		}
		pr := dataplane.HTTPRule{ID: r.id, Domain: r.domain, URL: r.url, Default: r.defaultServer}
		for _, t := range r.targets {
			pt, ok := t.toPlane()
			if !ok {
				continue
			}
			pr.Targets = append(pr.Targets, pt)
			if k := pt.ID + "|" + pt.Addr.String(); !seen[k] {
				seen[k] = true
				out.Targets = append(out.Targets, pt)
			}
		}
		out.HTTP.Rules = append(out.HTTP.Rules, pr)
	}
}

func (t *clbTarget) toPlane() (dataplane.Target, bool) {
	ip, err := netip.ParseAddr(t.ip)
	if err != nil {
		return dataplane.Target{}, false // cannot happen: addresses are validated on registration
	}
	return dataplane.Target{ID: t.backend(), Addr: netip.AddrPortFrom(ip, uint16(t.port)), Weight: int(t.weight)}, true
}

func ptrBool(p *bool) bool { return p != nil && *p }

func ptrInt64(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// ruleSelector is how a target call names a rule: LocationId, or Domain
// and Url.
type ruleSelector struct{ locationID, domain, url *string }

// targetSet is where targets bind: a layer-4 listener, or a rule of a
// layer-7 one.
type targetSet struct {
	li   *clbListener
	rule *clbRule
}

func (s targetSet) list() *[]*clbTarget {
	if s.rule != nil {
		return &s.rule.targets
	}
	return &s.li.targets
}

func (s targetSet) String() string {
	if s.rule != nil {
		return fmt.Sprintf("rule `%s` of listener `%s`", s.rule.id, s.li.id)
	}
	return fmt.Sprintf("listener `%s`", s.li.id)
}

// stillIn reports an error if the set left the load balancer while a task
// ran.
func (s targetSet) stillIn(lb *clbLB) *Error {
	if lb.listener(s.li.id) != s.li {
		return errListenerNotFound(lb.id, s.li.id)
	}
	if s.rule != nil && s.li.rule(s.rule.id) != s.rule {
		return errLocationNotFound(s.li.id, s.rule.id)
	}
	return nil
}

// targetSetOf resolves where a target input binds. A layer-7 listener
// needs its rule ("7层负载均衡该参数必填", BatchTarget.LocationId; "必须提供此参数
// 或Domain+Url两者之一", RegisterTargets.LocationId); a layer-4 one takes
// none.
func targetSetOf(lb *clbLB, t targetInput) (targetSet, *Error) {
	li, e := lbListener(lb, t.listenerID)
	if e != nil {
		return targetSet{}, e
	}
	named := t.locationID != "" || t.domain != "" || t.url != ""
	if !isLayer7(li.protocol) {
		if named {
			return targetSet{}, Errorf("InvalidParameter", "`%s`: `LocationId`, `Domain` and `Url` select rules of HTTP and HTTPS listeners; listener `%s` is %s.", t.where, li.id, li.protocol)
		}
		return targetSet{li: li}, nil
	}
	var r *clbRule
	switch {
	case t.locationID != "":
		if r = li.rule(t.locationID); r == nil {
			return targetSet{}, errLocationNotFound(li.id, t.locationID)
		}
	case t.domain != "" && t.url != "":
		if r = li.ruleByPath(t.domain, t.url); r == nil {
			return targetSet{}, Errorf("InvalidParameter.LocationNotFound", "Listener `%s` has no rule for domain `%s` and url `%s`.", li.id, t.domain, t.url)
		}
	default:
		return targetSet{}, Errorf("MissingParameter", "`%s`: listener `%s` is %s: name its rule with `LocationId` (or `Domain` and `Url`).", t.where, li.id, li.protocol)
	}
	return targetSet{li: li, rule: r}, nil
}

// ruleTargetsToSDK is a layer-7 listener's Rules in DescribeTargets: the
// rules locFilter names (all if empty), each with the targets keep
// accepts.
func (li *clbListener) ruleTargetsToSDK(locFilter []string, keep func(*clbTarget) bool, instances map[string]core.Instance) []*clb.RuleTargets {
	out := []*clb.RuleTargets{}
	for _, r := range li.rules {
		if len(locFilter) > 0 && !slices.Contains(locFilter, r.id) {
			continue
		}
		rt := &clb.RuleTargets{LocationId: common.StringPtr(r.id), Domain: common.StringPtr(r.domain), Url: common.StringPtr(r.url), Targets: []*clb.Backend{}}
		for _, t := range r.targets {
			if keep(t) {
				rt.Targets = append(rt.Targets, t.toSDK(instances))
			}
		}
		out = append(out, rt)
	}
	return out
}

// checkLayer7ListenerParams refuses CreateListener parameters that do not
// apply to HTTP and HTTPS listeners: HealthCheck and Scheduler ("此参数仅适用
// 于TCP/UDP/TCP_SSL/QUIC监听器"), SessionExpireTime ("此参数仅适用于TCP/UDP监听
// 器"), and SniSwitch, which cloudsim does not emulate. Refusing rather than
// ignoring them is cloudsim's choice: a client that sends them expects an
// effect it would not get.
func checkLayer7ListenerParams(req *clb.CreateListenerRequestParams) *Error {
	switch {
	case req.HealthCheck != nil, req.Scheduler != nil, req.SessionExpireTime != nil:
		return Errorf("InvalidParameter", "`HealthCheck`, `Scheduler` and `SessionExpireTime` do not apply to %s listeners; set them on the forwarding rules (CreateRule).", ptrStr(req.Protocol))
	case ptrInt64(req.SniSwitch) != 0:
		return Errorf("UnsupportedOperation", "cloudsim does not emulate SNI (`SniSwitch`).")
	}
	return nil
}
