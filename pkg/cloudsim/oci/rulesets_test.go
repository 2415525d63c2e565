package oci

import (
	"slices"
	"strings"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// bogusRule is a rule with an action the Rule union does not know.
type bogusRule struct {
	Action string `json:"action"`
}

func addHeader(h, v string) loadbalancer.Rule {
	return loadbalancer.AddHttpRequestHeaderRule{Header: common.String(h), Value: common.String(v)}
}

// TestRuleSetValidation: CreateRuleSet refuses (400) a bad name, an unknown
// action, missing or out-of-range fields, and more than 20 rules; what it
// accepts reads back as sent.
func TestRuleSetValidation(t *testing.T) {
	e := newTestEnv(t, Options{}, core.Config{})
	c := e.lb()
	created, err := c.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: lbDetails("rs", "10.0.0.5")})
	if err != nil {
		t.Fatal(err)
	}
	lbID := waitLBWorkRequest(t, c, *created.OpcWorkRequestId).LoadBalancerId
	many := make([]loadbalancer.Rule, MaxRulesPerRuleSet+1)
	for i := range many {
		many[i] = addHeader("x-n", "v")
	}
	cidr := func(v string) []loadbalancer.RuleCondition {
		return []loadbalancer.RuleCondition{loadbalancer.SourceIpAddressCondition{AttributeValue: common.String(v)}}
	}
	tests := []struct {
		name  string
		rs    string
		items []loadbalancer.Rule
		code  string // "" accepted
	}{
		{"add header", "hdr", []loadbalancer.Rule{addHeader("x-env", "prod")}, ""},
		{"header size", "size", []loadbalancer.Rule{loadbalancer.HttpHeaderRule{HttpLargeHeaderSizeInKB: common.Int(16)}}, ""},
		{"allow", "allow", []loadbalancer.Rule{loadbalancer.AllowRule{Conditions: cidr("10.0.0.0/8")}}, ""},
		{"redirect", "redir", []loadbalancer.Rule{loadbalancer.RedirectRule{ResponseCode: common.Int(301),
			Conditions:  []loadbalancer.RuleCondition{loadbalancer.PathMatchCondition{AttributeValue: common.String("/old"), Operator: "PREFIX_MATCH"}},
			RedirectUri: &loadbalancer.RedirectUri{Protocol: common.String("HTTPS"), Port: common.Int(443)}}}, ""},
		{"ip max connections", "ipmax", []loadbalancer.Rule{loadbalancer.IpBasedMaxConnectionsRule{DefaultMaxConnections: common.Int(20),
			IpMaxConnections: []loadbalancer.IpMaxConnections{{IpAddresses: []string{"10.1.0.0/16"}, MaxConnections: common.Int(100)}}}}, ""},
		{"methods", "methods", []loadbalancer.Rule{loadbalancer.ControlAccessUsingHttpMethodsRule{AllowedMethods: []string{"GET", "HEAD"}}}, ""},
		{"name too long", strings.Repeat("n", MaxRuleSetName+1), []loadbalancer.Rule{addHeader("x", "y")}, CodeInvalidParameter},
		{"name with a dot", "a.b", []loadbalancer.Rule{addHeader("x", "y")}, CodeInvalidParameter},
		{"unknown action", "bogus", []loadbalancer.Rule{bogusRule{Action: "TELEPORT"}}, CodeInvalidParameter},
		{"header without value", "nov", []loadbalancer.Rule{loadbalancer.AddHttpRequestHeaderRule{Header: common.String("x")}}, CodeMissingParameter},
		{"value with $", "dollar", []loadbalancer.Rule{addHeader("x", "$HOME")}, CodeInvalidParameter},
		{"header size 12", "size12", []loadbalancer.Rule{loadbalancer.HttpHeaderRule{HttpLargeHeaderSizeInKB: common.Int(12)}}, CodeInvalidParameter},
		{"allow not a CIDR", "cidr", []loadbalancer.Rule{loadbalancer.AllowRule{Conditions: cidr("10.0.0.1/40")}}, CodeInvalidParameter},
		{"redirect 200", "r200", []loadbalancer.Rule{loadbalancer.RedirectRule{ResponseCode: common.Int(200),
			Conditions: []loadbalancer.RuleCondition{loadbalancer.PathMatchCondition{AttributeValue: common.String("/"), Operator: "EXACT_MATCH"}}}}, CodeInvalidParameter},
		{"21 rules", "many", many, CodeLimitExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.CreateRuleSet(ctx(t), loadbalancer.CreateRuleSetRequest{LoadBalancerId: lbID,
				CreateRuleSetDetails: loadbalancer.CreateRuleSetDetails{Name: common.String(tt.rs), Items: tt.items}})
			if tt.code != "" {
				wantErr(t, err, 400, tt.code)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if wr := waitLBWorkRequest(t, c, *resp.OpcWorkRequestId); wr.LifecycleState != loadbalancer.WorkRequestLifecycleStateSucceeded {
				t.Fatalf("work request %s", wr.LifecycleState)
			}
			got, err := c.GetRuleSet(ctx(t), loadbalancer.GetRuleSetRequest{LoadBalancerId: lbID, RuleSetName: common.String(tt.rs)})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Items) != len(tt.items) || got.Items[0] == nil {
				t.Errorf("read back %+v, want %+v", got.Items, tt.items)
			}
		})
	}
	// 50 rules per load balancer: six are in, 20 and 20 more make 46, and
	// 20 more would make 66.
	for i, want := range []string{"", "", CodeLimitExceeded} {
		_, err := c.CreateRuleSet(ctx(t), loadbalancer.CreateRuleSetRequest{LoadBalancerId: lbID,
			CreateRuleSetDetails: loadbalancer.CreateRuleSetDetails{Name: common.String("big" + string(rune('a'+i))), Items: many[:20]}})
		if want == "" {
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		wantErr(t, err, 400, want)
	}
}

// TestRuleSetsOnListeners: listeners name existing rule sets only (inline
// at creation too), a rule set a listener names cannot be deleted, and it
// can once the listener dropped it.
func TestRuleSetsOnListeners(t *testing.T) {
	e := newTestEnv(t, Options{}, core.Config{})
	c := e.lb()
	det := lbDetails("rs", "10.0.0.5")
	det.RuleSets = map[string]loadbalancer.RuleSetDetails{"hdr": {Items: []loadbalancer.Rule{addHeader("x-a", "1")}}}
	l := det.Listeners["TCP-80"]
	l.RuleSetNames = []string{"hdr"}
	det.Listeners["TCP-80"] = l
	created, err := c.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: det})
	if err != nil {
		t.Fatal(err)
	}
	lbID := waitLBWorkRequest(t, c, *created.OpcWorkRequestId).LoadBalancerId

	det.DisplayName = common.String("rs-bad")
	l.RuleSetNames = []string{"nope"}
	det.Listeners["TCP-80"] = l
	_, err = c.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: det})
	wantErr(t, err, 400, CodeInvalidParameter)

	updateListener := func(names ...string) error {
		resp, err := c.UpdateListener(ctx(t), loadbalancer.UpdateListenerRequest{LoadBalancerId: lbID, ListenerName: common.String("TCP-80"),
			UpdateListenerDetails: loadbalancer.UpdateListenerDetails{DefaultBackendSetName: common.String("TCP-80"), Port: common.Int(80),
				Protocol: common.String("TCP"), RuleSetNames: names}})
		if err == nil {
			waitLBWorkRequest(t, c, *resp.OpcWorkRequestId)
		}
		return err
	}
	wantErr(t, updateListener("hdr", "missing"), 400, CodeInvalidParameter)
	wantErr(t, updateListener("hdr", "hdr"), 400, CodeInvalidParameter)

	_, err = c.DeleteRuleSet(ctx(t), loadbalancer.DeleteRuleSetRequest{LoadBalancerId: lbID, RuleSetName: common.String("hdr")})
	wantErr(t, err, 400, CodeInvalidParameter)

	resp, err := c.UpdateRuleSet(ctx(t), loadbalancer.UpdateRuleSetRequest{LoadBalancerId: lbID, RuleSetName: common.String("hdr"),
		UpdateRuleSetDetails: loadbalancer.UpdateRuleSetDetails{Items: []loadbalancer.Rule{addHeader("x-a", "2")}}})
	if err != nil {
		t.Fatal(err)
	}
	waitLBWorkRequest(t, c, *resp.OpcWorkRequestId)
	got, err := c.GetLoadBalancer(ctx(t), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: lbID})
	if err != nil {
		t.Fatal(err)
	}
	if names := got.Listeners["TCP-80"].RuleSetNames; !slices.Equal(names, []string{"hdr"}) {
		t.Errorf("listener ruleSetNames = %v", names)
	}
	if r, ok := got.RuleSets["hdr"].Items[0].(loadbalancer.AddHttpRequestHeaderRule); !ok || *r.Value != "2" {
		t.Errorf("rule set after the update = %+v", got.RuleSets["hdr"])
	}

	if err := updateListener(); err != nil {
		t.Fatal(err)
	}
	del, err := c.DeleteRuleSet(ctx(t), loadbalancer.DeleteRuleSetRequest{LoadBalancerId: lbID, RuleSetName: common.String("hdr")})
	if err != nil {
		t.Fatal(err)
	}
	waitLBWorkRequest(t, c, *del.OpcWorkRequestId)
	list, err := c.ListRuleSets(ctx(t), loadbalancer.ListRuleSetsRequest{LoadBalancerId: lbID})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("rule sets after the delete: %+v", list.Items)
	}
	_, err = c.GetRuleSet(ctx(t), loadbalancer.GetRuleSetRequest{LoadBalancerId: lbID, RuleSetName: common.String("hdr")})
	wantErr(t, err, 404, CodeNotAuthorizedOrNotFound)
}
