package tencent

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
)

func (e *clbEnv) createRule(lbID, lisID string, rules ...*clb.RuleInput) ([]string, error) {
	req := clb.NewCreateRuleRequest()
	req.LoadBalancerId, req.ListenerId, req.Rules = common.StringPtr(lbID), common.StringPtr(lisID), rules
	resp, err := e.api.CreateRule(req)
	if err != nil {
		return nil, err
	}
	return common.StringValues(resp.Response.LocationIds), nil
}

func ruleIn(domain, url string) *clb.RuleInput {
	return &clb.RuleInput{Domain: common.StringPtr(domain), Url: common.StringPtr(url)}
}

// ruleTargets lists the targets of a layer-7 listener's rules as
// "domain url: instance:port/weight", as DescribeTargets answers them,
// with the location-id filter if given.
func (e *clbEnv) ruleTargets(t *testing.T, lbID, lisID string, locations ...string) []string {
	t.Helper()
	req := clb.NewDescribeTargetsRequest()
	req.LoadBalancerId, req.ListenerIds = common.StringPtr(lbID), common.StringPtrs([]string{lisID})
	if len(locations) > 0 {
		req.Filters = []*clb.Filter{{Name: common.StringPtr("location-id"), Values: common.StringPtrs(locations)}}
	}
	resp, err := e.api.DescribeTargets(req)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range resp.Response.Listeners {
		if len(l.Targets) > 0 {
			t.Errorf("a layer-7 listener answered layer-4 Targets")
		}
		for _, r := range l.Rules {
			for _, b := range r.Targets {
				out = append(out, fmt.Sprintf("%s %s: %s:%d/%d", *r.Domain, *r.Url, *b.InstanceId, *b.Port, *b.Weight))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestCLBRules: CreateRule's validation, targets bound per rule (by
// LocationId or Domain+Url; required on a layer-7 listener, refused on a
// layer-4 one), weights per rule, and DeleteRule's default-domain rule.
func TestCLBRules(t *testing.T) {
	e := newCLBEnv(t, CLBOptions{}, dataplane.Config{Disabled: true})
	e.mustAdd(t, core.Instance{ID: "ins-node0001", VpcID: clbTestVPC, PrivateIP: "10.1.0.1"},
		core.Instance{ID: "ins-node0002", VpcID: clbTestVPC, PrivateIP: "10.1.0.2"})
	id := e.createLB(t, nil)
	lis := e.createListener(t, id, "HTTP", 80, nil)
	tcp := e.createListener(t, id, "TCP", 81, nil)

	locs, err := e.createRule(id, lis, ruleIn("a.example.test", "/"), ruleIn("a.example.test", "/api"))
	if err != nil || len(locs) != 2 {
		t.Fatalf("CreateRule: %v, %v", locs, err)
	}
	long := strings.Repeat("a", 81)
	tests := []struct {
		name     string
		listener string
		rule     *clb.RuleInput
		code     string
	}{
		{"no domain", lis, ruleIn("", "/"), "MissingParameter"},
		{"domain of 81 characters", lis, ruleIn(long, "/"), "InvalidParameterValue.Length"},
		{"domain starting with _", lis, ruleIn("_a.example.test", "/"), "InvalidParameterValue"},
		{"wildcard in the middle", lis, ruleIn("a.*.test", "/"), "InvalidParameterValue"},
		{"two wildcards", lis, ruleIn("*.example.*", "/"), "InvalidParameterValue"},
		{"url without /", lis, ruleIn("b.example.test", "x"), "InvalidParameterValue"},
		{"url of 201 characters", lis, ruleIn("b.example.test", "/"+strings.Repeat("x", 200)), "InvalidParameterValue.Length"},
		{"same domain and url", lis, ruleIn("A.example.test", "/api"), "InvalidParameter"},
		{"a second default domain", lis, &clb.RuleInput{Domain: common.StringPtr("b.example.test"), Url: common.StringPtr("/"), DefaultServer: common.BoolPtr(true)}, "InvalidParameter"},
		{"several domains", lis, &clb.RuleInput{Domains: common.StringPtrs([]string{"b.example.test"}), Url: common.StringPtr("/")}, "UnsupportedOperation"},
		{"session expire 20", lis, &clb.RuleInput{Domain: common.StringPtr("b.example.test"), Url: common.StringPtr("/"), SessionExpireTime: common.Int64Ptr(20)}, "InvalidParameterValue"},
		{"PING check", lis, &clb.RuleInput{Domain: common.StringPtr("b.example.test"), Url: common.StringPtr("/"), HealthCheck: &clb.HealthCheck{CheckType: common.StringPtr("PING")}}, "InvalidParameterValue"},
		{"rule on a TCP listener", tcp, ruleIn("b.example.test", "/"), "InvalidParameter"},
		{"wildcard", lis, ruleIn("*.example.test", "/"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.createRule(id, tt.listener, tt.rule)
			if got := sdkCode(err); got != tt.code {
				t.Fatalf("code %q (%v), want %q", got, err, tt.code)
			}
		})
	}

	// The first domain became the default one.
	lresp, err := e.api.DescribeListeners(&clb.DescribeListenersRequest{LoadBalancerId: common.StringPtr(id), ListenerIds: common.StringPtrs([]string{lis})})
	if err != nil {
		t.Fatal(err)
	}
	l := lresp.Response.Listeners[0]
	if l.HealthCheck != nil || len(l.Rules) != 3 || !*l.Rules[0].DefaultServer || *l.Rules[2].DefaultServer || *l.Rules[0].HealthCheck.CheckType != "HTTP" {
		t.Fatalf("listener as described: health check %v, rules %v", l.HealthCheck, l.Rules)
	}

	batch := func(register bool, ts ...*clb.BatchTarget) error {
		if register {
			_, err := e.api.BatchRegisterTargets(&clb.BatchRegisterTargetsRequest{LoadBalancerId: common.StringPtr(id), Targets: ts})
			return err
		}
		_, err := e.api.BatchDeregisterTargets(&clb.BatchDeregisterTargetsRequest{LoadBalancerId: common.StringPtr(id), Targets: ts})
		return err
	}
	bt := func(listener, loc, ins string, port int64) *clb.BatchTarget {
		b := &clb.BatchTarget{ListenerId: common.StringPtr(listener), InstanceId: common.StringPtr(ins), Port: common.Int64Ptr(port)}
		if loc != "" {
			b.LocationId = common.StringPtr(loc)
		}
		return b
	}
	if err := batch(true, bt(lis, locs[0], "ins-node0001", 30080), bt(lis, locs[1], "ins-node0002", 30081), bt(tcp, "", "ins-node0001", 30082)); err != nil {
		t.Fatal(err)
	}
	// The admin export shows a layer-7 listener's targets on its rules.
	exported, err := e.clb.LoadBalancer(id)
	if err != nil {
		t.Fatal(err)
	}
	for _, el := range exported.Listeners {
		if el.ID != lis {
			continue
		}
		var got []string
		for _, r := range el.Rules {
			for _, tg := range r.Targets {
				got = append(got, r.ID+" "+tg.InstanceID)
			}
		}
		if want := []string{locs[0] + " ins-node0001", locs[1] + " ins-node0002"}; len(el.Targets) != 0 || !slices.Equal(got, want) {
			t.Errorf("exported layer-7 listener: targets %v, rule targets %v; want none and %v", el.Targets, got, want)
		}
	}
	for _, c := range []struct {
		name string
		t    *clb.BatchTarget
		code string
	}{
		{"no LocationId on a layer-7 listener", bt(lis, "", "ins-node0002", 30080), "MissingParameter"},
		{"unknown LocationId", bt(lis, "loc-nothere1", "ins-node0002", 30080), "InvalidParameter.LocationNotFound"},
		{"LocationId on a layer-4 listener", bt(tcp, locs[0], "ins-node0002", 30080), "InvalidParameter"},
		// InvalidParameterValue.Duplicate is not documented for BatchRegisterTargets (clb_codes.go).
		{"already bound to the rule", bt(lis, locs[0], "ins-node0001", 30080), "InvalidParameterValue"},
	} {
		if got := sdkCode(batch(true, c.t)); got != c.code {
			t.Errorf("%s: code %q, want %q", c.name, got, c.code)
		}
	}
	// RegisterTargets by Domain+Url; the same node on another rule is another binding.
	reg := clb.NewRegisterTargetsRequest()
	reg.LoadBalancerId, reg.ListenerId = common.StringPtr(id), common.StringPtr(lis)
	reg.Domain, reg.Url, reg.Targets = common.StringPtr("a.example.test"), common.StringPtr("/api"), []*clb.Target{insTarget("ins-node0001", 30081)}
	if _, err := e.api.RegisterTargets(reg); err != nil {
		t.Fatal(err)
	}
	want := []string{"a.example.test /: ins-node0001:30080/10", "a.example.test /api: ins-node0001:30081/10", "a.example.test /api: ins-node0002:30081/10"}
	if got := e.ruleTargets(t, id, lis); !slices.Equal(got, want) {
		t.Errorf("rule targets = %v, want %v", got, want)
	}
	if got := e.ruleTargets(t, id, lis, locs[0]); !slices.Equal(got, want[:1]) {
		t.Errorf("location-id filter: %v, want %v", got, want[:1])
	}
	// Weights per rule.
	wr := &clb.BatchModifyTargetWeightRequest{LoadBalancerId: common.StringPtr(id), ModifyList: []*clb.RsWeightRule{{
		ListenerId: common.StringPtr(lis), LocationId: common.StringPtr(locs[1]), Weight: common.Int64Ptr(0),
		Targets: []*clb.Target{insTarget("ins-node0002", 30081)},
	}}}
	if _, err := e.api.BatchModifyTargetWeight(wr); err != nil {
		t.Fatal(err)
	}
	if got := e.ruleTargets(t, id, lis, locs[1]); !slices.Equal(got, []string{"a.example.test /api: ins-node0001:30081/10", "a.example.test /api: ins-node0002:30081/0"}) {
		t.Errorf("after the weight change: %v", got)
	}
	if err := batch(false, bt(lis, locs[1], "ins-node0002", 30081)); err != nil {
		t.Fatal(err)
	}

	// DeleteRule: the default domain's rules go only with a new default
	// while other domains remain.
	del := func(newDefault string, loc ...string) error {
		req := clb.NewDeleteRuleRequest()
		req.LoadBalancerId, req.ListenerId, req.LocationIds = common.StringPtr(id), common.StringPtr(lis), common.StringPtrs(loc)
		if newDefault != "" {
			req.NewDefaultServerDomain = common.StringPtr(newDefault)
		}
		_, err := e.api.DeleteRule(req)
		return err
	}
	if code := sdkCode(del("", locs...)); code != "InvalidParameter" {
		t.Errorf("deleting the default domain without a new one: code %q", code)
	}
	if code := sdkCode(del("", "loc-nothere1")); code != "InvalidParameter" { // LocationNotFound is not documented for DeleteRule
		t.Errorf("deleting an unknown rule: code %q", code)
	}
	if err := del("*.example.test", locs...); err != nil {
		t.Fatal(err)
	}
	if got := e.ruleTargets(t, id, lis); len(got) != 0 {
		t.Errorf("the deleted rules' targets remain: %v", got)
	}
}
