package lbops

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"

	"github.com/ccmkit/ccm/internal/oci/ocierr"
)

// Rule sets (issue 14 item 6): the oci-load-balancer-rule-sets annotation
// names rule sets of the Load Balancer (a JSON object, rule set name ->
// {"items": [rules]}); every listener applies all of them, as the public OCI
// CCM does. They are part of the plan like listeners: a new rule set is
// created before a listener names it, a changed one is one UpdateRuleSet,
// and one no longer wanted is deleted after the listeners dropped it. An
// unchanged resync compares each rule set's rules (as JSON) and writes
// nothing.
//
// Ownership: the rule sets the annotation names are ours on the Service's
// own load balancer (one of that name is taken over). A rule set is deleted
// only when the annotation no longer names it and one of our listeners
// (<PROTO>-<port>) still does, so that it was ours; one a foreign listener
// uses is kept. A reconcile that stops between dropping the name from the
// listeners and deleting the rule set leaves that rule set behind (nothing
// names it any more, so nothing marks it ours).

// RuleSets are the Service's rule sets by name.
type RuleSets map[string][]loadbalancer.Rule

// maxRuleSetName is the longest rule set name: OKE's docs on the annotation
// give "between 1 and 32 characters".
const maxRuleSetName = 32

// ParseRuleSets reads the annotation's value. An unknown action, a rule set
// without items or a name of the wrong length is an error, so that nothing
// is written for a value OCI would refuse halfway.
func ParseRuleSets(v string) (RuleSets, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var sets map[string]*loadbalancer.RuleSetDetails
	if err := json.Unmarshal([]byte(v), &sets); err != nil {
		return nil, fmt.Errorf(`must be a JSON object such as {"hdr": {"items": [{"action": "ADD_HTTP_REQUEST_HEADER", "header": "x-a", "value": "1"}]}}: %w`, err)
	}
	// The actions as written, to name an unknown one.
	var raw map[string]struct {
		Items []struct {
			Action string `json:"action"`
		} `json:"items"`
	}
	_ = json.Unmarshal([]byte(v), &raw)
	out := RuleSets{}
	for _, name := range slices.Sorted(maps.Keys(sets)) {
		rs := sets[name]
		switch {
		case name == "" || len(name) > maxRuleSetName:
			return nil, fmt.Errorf("rule set name %q: must be 1 to %d characters", name, maxRuleSetName)
		case rs == nil || raw[name].Items == nil: // the SDK's decoder makes a missing list empty
			return nil, fmt.Errorf(`rule set %s: needs "items", a list of rules`, name)
		}
		for i, r := range rs.Items {
			if !knownRule(r) {
				return nil, fmt.Errorf("rule set %s: items[%d]: action %q is not one of %s", name, i,
					raw[name].Items[i].Action, strings.Join(loadbalancer.GetRuleActionEnumStringValues(), ", "))
			}
		}
		out[name] = rs.Items
	}
	return out, nil
}

// knownRule: the SDK decodes a rule of an action it does not know into
// none of the Rule union's types (loadbalancer/rule.go).
func knownRule(r loadbalancer.Rule) bool {
	switch r.(type) {
	case loadbalancer.AddHttpRequestHeaderRule, loadbalancer.AddHttpResponseHeaderRule,
		loadbalancer.ExtendHttpRequestHeaderValueRule, loadbalancer.ExtendHttpResponseHeaderValueRule,
		loadbalancer.RemoveHttpRequestHeaderRule, loadbalancer.RemoveHttpResponseHeaderRule,
		loadbalancer.AllowRule, loadbalancer.ControlAccessUsingHttpMethodsRule, loadbalancer.RedirectRule,
		loadbalancer.HttpHeaderRule, loadbalancer.IpBasedMaxConnectionsRule:
		return true
	}
	return false
}

// ruleSetsFor are the rule sets of d's load balancer: a Network Load
// Balancer has none (the provider tells the Service so).
func ruleSetsFor(d *Desired) RuleSets {
	if d.Kind != KindLB {
		return nil
	}
	return d.RuleSets
}

// names are the rule set names, sorted: what each listener applies.
func (rs RuleSets) names() []string {
	if len(rs) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(rs))
}

// rulesJSON is a rule set's rules as JSON, to compare what is with what is
// wanted: each rule marshals with its action, in the SDK model's field order.
func rulesJSON(items []loadbalancer.Rule) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(items); err != nil {
		return "unencodable: " + err.Error() // never equal to a wanted one
	}
	return buf.String()
}

// lbRuleSetsOf reads a load balancer's rule sets as rulesJSON by name.
func lbRuleSetsOf(lb loadbalancer.LoadBalancer) map[string]string {
	out := map[string]string{}
	for name, rs := range lb.RuleSets {
		out[name] = rulesJSON(rs.Items)
	}
	return out
}

// lbRuleSetDetails are the rule sets a new load balancer is created with.
func lbRuleSetDetails(rs RuleSets) map[string]loadbalancer.RuleSetDetails {
	if len(rs) == 0 {
		return nil
	}
	out := make(map[string]loadbalancer.RuleSetDetails, len(rs))
	for name, items := range rs {
		out[name] = loadbalancer.RuleSetDetails{Items: items}
	}
	return out
}

// planAll is plan with the rule sets around it: created and updated before
// the listeners name them, deleted after the listeners dropped them.
func planAll(a *actual, d *Desired, ls []listenerModel, bss []backendSetModel) []step {
	before, after := ruleSetSteps(a, ruleSetsFor(d))
	return append(append(before, plan(a, ls, bss)...), after...)
}

// ruleSetSteps are the rule set writes, before and after the listeners'.
func ruleSetSteps(a *actual, want RuleSets) (before, after []step) {
	for _, name := range want.names() {
		got, ok := a.RuleSets[name]
		switch {
		case !ok:
			before = append(before, step{verb: verbCreate, what: objRuleSet, name: name, rules: want[name]})
		case got != rulesJSON(want[name]):
			before = append(before, step{verb: verbUpdate, what: objRuleSet, name: name, rules: want[name]})
		}
	}
	for _, name := range sortedKeys(a.RuleSets) {
		if _, wanted := want[name]; !wanted && ourRuleSet(a, name) {
			after = append(after, step{verb: verbDelete, what: objRuleSet, name: name})
		}
	}
	return before, after
}

// ourRuleSet: one of our listeners names the rule set, and no foreign one
// does (OCI would refuse to delete it, and it may be someone else's).
func ourRuleSet(a *actual, name string) bool {
	ours := false
	for ln, l := range a.Listeners {
		if slices.Contains(l.RuleSets, name) {
			if !ownedName(ln) {
				return false
			}
			ours = true
		}
	}
	return ours
}

// writeRuleSet runs a rule set step.
func (d lbDriver) writeRuleSet(ctx context.Context, id string, s step) (string, error) {
	var wr *string
	var err error
	switch s.verb {
	case verbCreate:
		var resp loadbalancer.CreateRuleSetResponse
		resp, err = d.api.CreateRuleSet(ctx, loadbalancer.CreateRuleSetRequest{LoadBalancerId: &id,
			CreateRuleSetDetails: loadbalancer.CreateRuleSetDetails{Name: common.String(s.name), Items: s.rules}})
		wr = resp.OpcWorkRequestId
	case verbUpdate:
		var resp loadbalancer.UpdateRuleSetResponse
		resp, err = d.api.UpdateRuleSet(ctx, loadbalancer.UpdateRuleSetRequest{LoadBalancerId: &id, RuleSetName: common.String(s.name),
			UpdateRuleSetDetails: loadbalancer.UpdateRuleSetDetails{Items: s.rules}})
		wr = resp.OpcWorkRequestId
	default:
		var resp loadbalancer.DeleteRuleSetResponse
		resp, err = d.api.DeleteRuleSet(ctx, loadbalancer.DeleteRuleSetRequest{LoadBalancerId: &id, RuleSetName: common.String(s.name)})
		wr = resp.OpcWorkRequestId
	}
	if err != nil {
		return "", ocierr.Wrap(opName(KindLB, s), id+" "+s.name, err)
	}
	return deref(wr), nil
}

// listenerRuleSets is what a listener write sends as ruleSetNames: never
// nil, so that an update with none clears them.
func listenerRuleSets(l listenerModel) []string {
	return append([]string{}, l.RuleSets...)
}
