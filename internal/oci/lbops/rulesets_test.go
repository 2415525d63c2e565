package lbops

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
)

// twoRuleSets is an annotation value with two rule sets; hdrValue is the
// value of rule set hdr's header.
func twoRuleSets(t *testing.T, hdrValue string) RuleSets {
	t.Helper()
	rs, err := ParseRuleSets(`{
	  "hdr": {"items": [{"action": "ADD_HTTP_REQUEST_HEADER", "header": "x-env", "value": "` + hdrValue + `"}]},
	  "size": {"items": [{"action": "HTTP_HEADER", "httpLargeHeaderSizeInKB": 16},
	                     {"action": "IP_BASED_MAX_CONNECTIONS", "defaultMaxConnections": 20}]}
	}`)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestParseRuleSets(t *testing.T) {
	tests := []struct {
		name, value string
		sets        []string // names parsed
		err         string   // in the error
	}{
		{"empty", "", nil, ""},
		{"two", `{"a": {"items": [{"action": "ALLOW", "conditions": [{"attributeName": "SOURCE_IP_ADDRESS", "attributeValue": "10.0.0.0/8"}]}]},
		          "b": {"items": [{"action": "REMOVE_HTTP_REQUEST_HEADER", "header": "x"}]}}`, []string{"a", "b"}, ""},
		{"not JSON", `{"a": `, nil, "must be a JSON object"},
		{"a list", `[{"items": []}]`, nil, "must be a JSON object"},
		{"unknown action", `{"a": {"items": [{"action": "TELEPORT"}]}}`, nil, `action "TELEPORT" is not one of`},
		{"no action", `{"a": {"items": [{"header": "x"}]}}`, nil, `items[0]: action ""`},
		{"no items", `{"a": {}}`, nil, `rule set a: needs "items"`},
		{"null", `{"a": null}`, nil, `rule set a: needs "items"`},
		{"long name", `{"` + strings.Repeat("n", 33) + `": {"items": []}}`, nil, "must be 1 to 32 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, err := ParseRuleSets(tt.value)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := rs.names(); !slices.Equal(got, tt.sets) {
				t.Errorf("rule sets %v, want %v", got, tt.sets)
			}
		})
	}
}

// TestRuleSetsLifecycle: a Service with two rule sets gets them on the LB
// (inline at creation) and on its listeners; a resync writes nothing;
// changing one rule is one UpdateRuleSet; removing the annotation drops the
// names from the listeners, then deletes the rule sets, and leaves a rule
// set someone else made alone.
func TestRuleSetsLifecycle(t *testing.T) {
	env := newLBEnv(t)
	o := newTestOps(env)
	ctx := context.Background()
	d := desired(KindLB, "10.0.0.1")
	d.Listeners = append(d.Listeners, d.Listeners[0])
	d.Listeners[1].Port, d.Listeners[1].NodePort = 443, 30443
	d.RuleSets = twoRuleSets(t, "prod")
	step := func(what string, want ...string) {
		t.Helper()
		env.resetWrites()
		if _, err := o.Ensure(ctx, d); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := env.writesOf(); !slices.Equal(got, want) {
			t.Errorf("%s: writes %v, want %v", what, got, want)
		}
	}
	lb := func() loadbalancer.LoadBalancer {
		t.Helper()
		resp, err := env.api.LB.GetLoadBalancer(ctx, loadbalancer.GetLoadBalancerRequest{LoadBalancerId: common.String(env.only(KindLB).ID)})
		if err != nil {
			t.Fatal(err)
		}
		return resp.LoadBalancer
	}
	listenerSets := func(lb loadbalancer.LoadBalancer) [][]string {
		return [][]string{lb.Listeners["TCP-80"].RuleSetNames, lb.Listeners["TCP-443"].RuleSetNames}
	}

	step("create", "CreateLoadBalancer")
	got := lb()
	if len(got.RuleSets) != 2 || len(got.RuleSets["size"].Items) != 2 {
		t.Errorf("rule sets on the LB: %+v", got.RuleSets)
	}
	if ls := listenerSets(got); !slices.Equal(ls[0], []string{"hdr", "size"}) || !slices.Equal(ls[1], []string{"hdr", "size"}) {
		t.Errorf("listeners' ruleSetNames %v", ls)
	}
	step("resync")

	d.RuleSets = twoRuleSets(t, "staging")
	step("one rule changed", "UpdateRuleSet hdr")
	if r, ok := lb().RuleSets["hdr"].Items[0].(loadbalancer.AddHttpRequestHeaderRule); !ok || *r.Value != "staging" {
		t.Errorf("hdr after the update: %+v", lb().RuleSets["hdr"])
	}
	step("resync after the change")

	// Someone else's rule set, named by no listener: not ours.
	resp, err := env.api.LB.CreateRuleSet(ctx, loadbalancer.CreateRuleSetRequest{LoadBalancerId: got.Id,
		CreateRuleSetDetails: loadbalancer.CreateRuleSetDetails{Name: common.String("manual"),
			Items: []loadbalancer.Rule{loadbalancer.RemoveHttpRequestHeaderRule{Header: common.String("x-debug")}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.wait(ctx, o.lb, *got.Id, *resp.OpcWorkRequestId); err != nil {
		t.Fatal(err)
	}

	d.RuleSets = nil
	step("annotation removed", "UpdateListener TCP-80", "UpdateListener TCP-443", "DeleteRuleSet hdr", "DeleteRuleSet size")
	got = lb()
	if ls := listenerSets(got); len(ls[0]) != 0 || len(ls[1]) != 0 {
		t.Errorf("listeners still name rule sets: %v", ls)
	}
	if names := sortedKeys(got.RuleSets); !slices.Equal(names, []string{"manual"}) {
		t.Errorf("rule sets left: %v, want only someone else's", names)
	}
	step("resync without rule sets")

	d.RuleSets = twoRuleSets(t, "prod")
	step("annotation added to an existing LB", "CreateRuleSet hdr", "CreateRuleSet size", "UpdateListener TCP-80", "UpdateListener TCP-443")
}
