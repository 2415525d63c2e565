package oci

import (
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
)

// Rule sets of a Load Balancer: named lists of rules (header edits, access
// control, redirects, header size, per-IP connection limits) that listeners
// name in ruleSetNames. cloudsim stores and validates them; its data plane
// applies the header rules on HTTP listeners (rulesets_plane.go) and none of
// the others (docs/loadbalancers.md).
//
// Limits, from the Load Balancing docs ("Rule Set Management",
// https://docs.oracle.com/en-us/iaas/Content/Balance/Tasks/managingrulesets.htm):
// "You can have up to 20 rules in a rule set. You can associate a maximum
// of 50 rules with a load balancer." The name: OKE's docs on the
// oci-load-balancer-rule-sets annotation give "between 1 and 32 characters";
// the characters cloudsim accepts (letters, digits, _ and -, as in the
// SDK's example `example_rule_set`) are cloudsim's choice.
const (
	MaxRulesPerRuleSet = 20
	MaxRulesPerLB      = 50
	MaxRuleSetName     = 32
)

func (d *Dialect) routeRuleSets() {
	const svc = "loadbalancer"
	p := PrefixLoadBalancer + "/loadBalancers/{loadBalancerId}/ruleSets"
	d.mux.Handle("POST "+p, d.route(svc, "CreateRuleSet", true, d.createRuleSet))
	d.mux.Handle("GET "+p, d.route(svc, "ListRuleSets", false, d.listRuleSets))
	d.mux.Handle("GET "+p+"/{ruleSetName}", d.route(svc, "GetRuleSet", false, d.getRuleSet))
	d.mux.Handle("PUT "+p+"/{ruleSetName}", d.route(svc, "UpdateRuleSet", true, d.updateRuleSet))
	d.mux.Handle("DELETE "+p+"/{ruleSetName}", d.route(svc, "DeleteRuleSet", true, d.deleteRuleSet))
}

// checkRuleSetName validates a rule set's name (see the constants).
func checkRuleSetName(name string) error {
	if name == "" {
		return missing("name")
	}
	if len(name) > MaxRuleSetName || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
		return badRequest("The rule set name %q must be 1 to %d letters, digits, _ or -.", name, MaxRuleSetName)
	}
	return nil
}

// lbRuleSet validates a rule set's rules and builds it.
func lbRuleSet(name string, items []loadbalancer.Rule) (loadbalancer.RuleSet, error) {
	if err := checkRuleSetName(name); err != nil {
		return loadbalancer.RuleSet{}, err
	}
	where := "ruleSets[" + name + "]"
	if items == nil {
		return loadbalancer.RuleSet{}, missing(where + ".items")
	}
	if len(items) > MaxRulesPerRuleSet {
		return loadbalancer.RuleSet{}, Errorf(http.StatusBadRequest, CodeLimitExceeded,
			"%s has %d rules; a rule set takes at most %d.", where, len(items), MaxRulesPerRuleSet)
	}
	for i, r := range items {
		if err := checkRule(fmt.Sprintf("%s.items[%d]", where, i), r); err != nil {
			return loadbalancer.RuleSet{}, err
		}
	}
	return loadbalancer.RuleSet{Name: common.String(name), Items: slices.Clone(items)}, nil
}

// checkRule validates one rule: its action (the SDK's Rule union,
// loadbalancer/rule.go; an unknown action decodes to none of its types)
// and the fields the SDK model marks mandatory or bounds in its comments.
func checkRule(where string, r loadbalancer.Rule) error {
	header := func(h *string) error {
		if h == nil || !isToken(*h) {
			return badRequest("%s.header must be a header name (an RFC 7230 token).", where)
		}
		return nil
	}
	// Header values: "cannot contain `$`" nor `{variable_name}` patterns
	// (add_http_request_header_rule.go and the other header rules).
	value := func(field string, v *string, required bool) error {
		if v == nil {
			if required {
				return missing(where + "." + field)
			}
			return nil
		}
		if strings.ContainsAny(*v, "${}\r\n") {
			return badRequest("%s.%s must not contain $, braces or line breaks.", where, field)
		}
		return nil
	}
	switch r := r.(type) {
	case loadbalancer.AddHttpRequestHeaderRule:
		return firstErr(header(r.Header), value("value", r.Value, true))
	case loadbalancer.AddHttpResponseHeaderRule:
		return firstErr(header(r.Header), value("value", r.Value, true))
	case loadbalancer.ExtendHttpRequestHeaderValueRule:
		return firstErr(header(r.Header), value("prefix", r.Prefix, false), value("suffix", r.Suffix, false))
	case loadbalancer.ExtendHttpResponseHeaderValueRule:
		return firstErr(header(r.Header), value("prefix", r.Prefix, false), value("suffix", r.Suffix, false))
	case loadbalancer.RemoveHttpRequestHeaderRule:
		return header(r.Header)
	case loadbalancer.RemoveHttpResponseHeaderRule:
		return header(r.Header)
	case loadbalancer.AllowRule:
		return checkConditions(where, r.Conditions, false)
	case loadbalancer.ControlAccessUsingHttpMethodsRule:
		if len(r.AllowedMethods) == 0 {
			return missing(where + ".allowedMethods")
		}
		for _, m := range r.AllowedMethods {
			if !isToken(m) {
				return badRequest("%s.allowedMethods: %q is not an HTTP method.", where, m)
			}
		}
		// The status code is an HTTP error code (default 405, per the SDK
		// comment); the range 400-599 is cloudsim's choice.
		if c := r.StatusCode; c != nil && (*c < 400 || *c > 599) {
			return badRequest("%s.statusCode %d must be an HTTP error status (400 to 599).", where, *c)
		}
		return nil
	case loadbalancer.RedirectRule:
		return checkRedirect(where, r)
	case loadbalancer.HttpHeaderRule:
		// "The allowed values for buffer size are 8, 16, 32 and 64."
		// (http_header_rule.go)
		if s := r.HttpLargeHeaderSizeInKB; s != nil && !slices.Contains([]int{8, 16, 32, 64}, *s) {
			return badRequest("%s.httpLargeHeaderSizeInKB %d must be 8, 16, 32 or 64.", where, *s)
		}
		return nil
	case loadbalancer.IpBasedMaxConnectionsRule:
		return checkIPMaxConnections(where, r)
	}
	return badRequest("%s.action must be one of %s.", where, strings.Join(loadbalancer.GetRuleActionEnumStringValues(), ", "))
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// isToken reports whether s is an RFC 7230 token (header names, methods).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c > 126 || c <= 32 || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c) {
			return false
		}
	}
	return true
}

// checkConditions validates a rule's conditions (loadbalancer/rule_condition.go):
// source addresses are CIDR blocks ("The service accepts only classless
// inter-domain routing (CIDR) format"), a path match has an operator.
func checkConditions(where string, cs []loadbalancer.RuleCondition, path bool) error {
	if len(cs) == 0 {
		return missing(where + ".conditions")
	}
	for i, c := range cs {
		w := fmt.Sprintf("%s.conditions[%d]", where, i)
		var v *string
		switch c := c.(type) {
		case loadbalancer.SourceIpAddressCondition:
			v = c.AttributeValue
		case loadbalancer.SourceVcnIpAddressCondition:
			v = c.AttributeValue
		case loadbalancer.SourceVcnIdCondition:
			if c.AttributeValue == nil || *c.AttributeValue == "" {
				return missing(w + ".attributeValue")
			}
			continue
		case loadbalancer.PathMatchCondition:
			if !path {
				return badRequest("%s: a PATH condition belongs to a REDIRECT rule.", w)
			}
			if c.AttributeValue == nil || *c.AttributeValue == "" {
				return missing(w + ".attributeValue")
			}
			if _, ok := loadbalancer.GetMappingPathMatchConditionOperatorEnum(string(c.Operator)); !ok {
				return badRequest("%s.operator must be one of %s.", w, strings.Join(loadbalancer.GetPathMatchConditionOperatorEnumStringValues(), ", "))
			}
			continue
		default:
			return badRequest("%s.attributeName must be one of %s.", w, strings.Join(loadbalancer.GetRuleConditionAttributeNameEnumStringValues(), ", "))
		}
		if path {
			return badRequest("%s: a REDIRECT rule takes PATH conditions.", w)
		}
		if v == nil {
			return missing(w + ".attributeValue")
		}
		if _, err := netip.ParsePrefix(*v); err != nil {
			return badRequest("%s.attributeValue %q is not a CIDR block.", w, *v)
		}
	}
	return nil
}

// checkRedirect validates a redirect (loadbalancer/redirect_rule.go:
// "Valid response codes for redirection are: 301, 302, 303, 307, 308";
// redirect_uri.go: protocol HTTP, HTTPS or {protocol}, port 1 to 65535).
func checkRedirect(where string, r loadbalancer.RedirectRule) error {
	if err := checkConditions(where, r.Conditions, true); err != nil {
		return err
	}
	if c := r.ResponseCode; c != nil && !slices.Contains([]int{301, 302, 303, 307, 308}, *c) {
		return badRequest("%s.responseCode %d must be 301, 302, 303, 307 or 308.", where, *c)
	}
	if u := r.RedirectUri; u != nil {
		if p := u.Protocol; p != nil && !slices.Contains([]string{"HTTP", "HTTPS", "{protocol}"}, *p) {
			return badRequest("%s.redirectUri.protocol %q must be HTTP, HTTPS or {protocol}.", where, *p)
		}
		if p := u.Port; p != nil && (*p < 1 || *p > 65535) {
			return badRequest("%s.redirectUri.port %d must be from 1 to 65535.", where, *p)
		}
	}
	return nil
}

// checkIPMaxConnections validates a per-IP connection limit
// (loadbalancer/ip_max_connections.go: "Each element in the list should be
// valid IPv4 or IPv6 CIDR Block address"; maxConnections is mandatory).
// That counts are not negative is cloudsim's choice.
func checkIPMaxConnections(where string, r loadbalancer.IpBasedMaxConnectionsRule) error {
	if n := r.DefaultMaxConnections; n != nil && *n < 0 {
		return badRequest("%s.defaultMaxConnections %d must not be negative.", where, *n)
	}
	for i, m := range r.IpMaxConnections {
		w := fmt.Sprintf("%s.ipMaxConnections[%d]", where, i)
		if m.MaxConnections == nil {
			return missing(w + ".maxConnections")
		}
		if *m.MaxConnections < 0 {
			return badRequest("%s.maxConnections %d must not be negative.", w, *m.MaxConnections)
		}
		if len(m.IpAddresses) == 0 {
			return missing(w + ".ipAddresses")
		}
		for _, a := range m.IpAddresses {
			if _, err := netip.ParsePrefix(a); err != nil {
				return badRequest("%s.ipAddresses: %q is not a CIDR block.", w, a)
			}
		}
	}
	return nil
}

// checkRuleSetLimits refuses more than MaxRulesPerLB rules on one load
// balancer.
func checkRuleSetLimits(sets map[string]loadbalancer.RuleSet) error {
	n := 0
	for _, rs := range sets {
		n += len(rs.Items)
	}
	if n > MaxRulesPerLB {
		return Errorf(http.StatusBadRequest, CodeLimitExceeded, "The load balancer would have %d rules in its rule sets; it takes at most %d.", n, MaxRulesPerLB)
	}
	return nil
}

// checkRuleSetNames validates a listener's ruleSetNames against the load
// balancer's rule sets: each must exist, once. The API reference names 400
// and 404 among UpdateListener's answers without saying which an unknown
// rule set gets; cloudsim answers 400, like an unknown default backend set.
func checkRuleSetNames(where string, names []string, sets map[string]loadbalancer.RuleSet) error {
	seen := map[string]bool{}
	for _, n := range names {
		if _, ok := sets[n]; !ok {
			return badRequest("%s: the rule set %q does not exist.", where, n)
		}
		if seen[n] {
			return badRequest("%s: the rule set %q is named twice.", where, n)
		}
		seen[n] = true
	}
	return nil
}

// ruleSetUser refuses to delete a rule set a listener names (cloudsim's
// choice of answer, 400, as for a backend set a listener uses).
func ruleSetUser(b *balancer, name string) error {
	for _, ln := range slices.Sorted(maps.Keys(b.listeners)) {
		if slices.Contains(b.listeners[ln].RuleSetNames, name) {
			return badRequest("The rule set %s is used by listener %s; remove it from the listener first.", name, ln)
		}
	}
	return nil
}

func (d *Dialect) createRuleSet(c *call) (*reply, error) {
	id, err := pathID(c, "loadBalancerId", "loadbalancer")
	if err != nil {
		return nil, err
	}
	var req loadbalancer.CreateRuleSetDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	if req.Name == nil {
		return nil, missing("name")
	}
	rs, err := lbRuleSet(*req.Name, req.Items)
	if err != nil {
		return nil, err
	}
	name := *req.Name
	build := func(b *balancer) error {
		if _, dup := b.ruleSets[name]; dup {
			return Errorf(http.StatusConflict, CodeAlreadyExists, "The rule set %s already exists in load balancer %s.", name, id)
		}
		if b.ruleSets == nil {
			b.ruleSets = map[string]loadbalancer.RuleSet{}
		}
		b.ruleSets[name] = rs
		return checkRuleSetLimits(b.ruleSets)
	}
	return d.mutate(c, kindLB, id, "CreateRuleSet", "", "UPDATED", checkedChange(build))
}

func (d *Dialect) updateRuleSet(c *call) (*reply, error) {
	id, name, err := childPath(c, kindLB, "ruleSetName")
	if err != nil {
		return nil, err
	}
	var req loadbalancer.UpdateRuleSetDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	rs, err := lbRuleSet(name, req.Items)
	if err != nil {
		return nil, err
	}
	build := func(b *balancer) error {
		if _, ok := b.ruleSets[name]; !ok {
			return notFound("rule set", name)
		}
		b.ruleSets[name] = rs
		return checkRuleSetLimits(b.ruleSets)
	}
	return d.mutate(c, kindLB, id, "UpdateRuleSet", "", "UPDATED", checkedChange(build))
}

func (d *Dialect) deleteRuleSet(c *call) (*reply, error) {
	return deleteChild(d, c, kindLB, "ruleSetName", "rule set", "DeleteRuleSet", "",
		func(b *balancer) map[string]loadbalancer.RuleSet { return b.ruleSets }, ruleSetUser)
}

func (d *Dialect) getRuleSet(c *call) (*reply, error) {
	return childAt(d, c, kindLB, "ruleSetName", "rule set", func(b *balancer) map[string]loadbalancer.RuleSet { return b.ruleSets })
}

func (d *Dialect) listRuleSets(c *call) (*reply, error) {
	b, err := d.balancerAt(c, kindLB)
	if err != nil {
		return nil, err
	}
	items := []loadbalancer.RuleSet{}
	for _, name := range slices.Sorted(maps.Keys(b.ruleSets)) {
		items = append(items, b.ruleSets[name])
	}
	// The real operation is not paginated (ListRuleSetsRequest has no page).
	return ok(items).with("etag", b.etag()), nil
}

// inlineRuleSets validates the rule sets a CreateLoadBalancer carries.
func inlineRuleSets(in map[string]loadbalancer.RuleSetDetails) (map[string]loadbalancer.RuleSet, error) {
	out := map[string]loadbalancer.RuleSet{}
	for _, name := range slices.Sorted(maps.Keys(in)) {
		rs, err := lbRuleSet(name, in[name].Items)
		if err != nil {
			return nil, err
		}
		out[name] = rs
	}
	return out, checkRuleSetLimits(out)
}

func orEmptyRuleSets(m map[string]loadbalancer.RuleSet) map[string]loadbalancer.RuleSet {
	if m == nil {
		return map[string]loadbalancer.RuleSet{}
	}
	return maps.Clone(m)
}
