package tencent

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
)

func insTarget(id string, port int64) *clb.Target {
	return &clb.Target{InstanceId: common.StringPtr(id), Port: common.Int64Ptr(port)}
}

// boundTargets lists a listener's targets as "instance-or-ip:port/weight".
func (e *clbEnv) boundTargets(t *testing.T, lbID, lisID string) []string {
	t.Helper()
	req := clb.NewDescribeTargetsRequest()
	req.LoadBalancerId = common.StringPtr(lbID)
	req.ListenerIds = common.StringPtrs([]string{lisID})
	resp, err := e.api.DescribeTargets(req)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range resp.Response.Listeners {
		for _, b := range l.Targets {
			who := *b.InstanceId
			if who == "" {
				who = *b.PrivateIpAddresses[0]
			}
			out = append(out, fmt.Sprintf("%s:%d/%d", who, *b.Port, *b.Weight))
		}
	}
	return out
}

func TestCLBTargets(t *testing.T) {
	e := newCLBEnv(t, CLBOptions{}, dataplane.Config{Disabled: true})
	var nodes []core.Instance
	for i := range 22 {
		nodes = append(nodes, core.Instance{ID: fmt.Sprintf("ins-node%04d", i), VpcID: clbTestVPC, PrivateIP: fmt.Sprintf("10.1.0.%d", i+1)})
	}
	nodes = append(nodes, core.Instance{ID: "ins-othervpc", VpcID: "vpc-other001", PrivateIP: "10.2.0.1"})
	e.mustAdd(t, nodes...)
	id := e.createLB(t, nil)
	lis := e.createListener(t, id, "TCP", 80, nil)
	lis2 := e.createListener(t, id, "UDP", 53, nil)

	reg := func(targets ...*clb.Target) error {
		req := clb.NewRegisterTargetsRequest()
		req.LoadBalancerId, req.ListenerId, req.Targets = common.StringPtr(id), common.StringPtr(lis), targets
		_, err := e.api.RegisterTargets(req)
		return err
	}
	var twentyOne []*clb.Target
	for i := range 21 {
		twentyOne = append(twentyOne, insTarget(nodes[i].ID, 30080))
	}
	tests := []struct {
		name    string
		targets []*clb.Target
		code    string
	}{
		{"none", nil, "MissingParameter"},
		{"21 targets", twentyOne, "InvalidParameterValue.Length"},
		{"unknown instance", []*clb.Target{insTarget("ins-nothere1", 30080)}, "InvalidParameter"},
		{"instance in another VPC", []*clb.Target{insTarget("ins-othervpc", 30080)}, "InvalidParameter"},
		{"no port", []*clb.Target{{InstanceId: common.StringPtr(nodes[0].ID)}}, "MissingParameter"},
		{"weight 101", []*clb.Target{{InstanceId: common.StringPtr(nodes[0].ID), Port: common.Int64Ptr(1), Weight: common.Int64Ptr(101)}}, "InvalidParameterValue"},
		{"both ids", []*clb.Target{{InstanceId: common.StringPtr(nodes[0].ID), EniIp: common.StringPtr("10.1.0.1"), Port: common.Int64Ptr(1)}}, "InvalidParameter"},
		{"malformed EniIp", []*clb.Target{{EniIp: common.StringPtr("10.1.0"), Port: common.Int64Ptr(1)}}, "InvalidParameter.FormatError"},
		{"duplicate in call", []*clb.Target{insTarget(nodes[0].ID, 30080), insTarget(nodes[0].ID, 30080)}, "InvalidParameterValue.Duplicate"},
		{"20 targets", twentyOne[:20], ""},
		{"already bound", []*clb.Target{insTarget(nodes[0].ID, 30080)}, "InvalidParameterValue.Duplicate"},
		{"same instance, other port", []*clb.Target{insTarget(nodes[0].ID, 30081)}, ""},
		{"by IP with a weight", []*clb.Target{{EniIp: common.StringPtr("10.9.9.9"), Port: common.Int64Ptr(8080), Weight: common.Int64Ptr(0)}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sdkCode(reg(tt.targets...)); got != tt.code {
				t.Fatalf("code %q, want %q", got, tt.code)
			}
		})
	}
	got := e.boundTargets(t, id, lis)
	if len(got) != 22 || got[0] != nodes[0].ID+":30080/10" || got[21] != "10.9.9.9:8080/0" {
		t.Fatalf("bound targets %v", got)
	}

	// DescribeTargets fields and filters.
	req := clb.NewDescribeTargetsRequest()
	req.LoadBalancerId = common.StringPtr(id)
	req.Filters = []*clb.Filter{{Name: common.StringPtr("private-ip-address"), Values: common.StringPtrs([]string{"10.1.0.2"})}}
	resp, err := e.api.DescribeTargets(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Response.Listeners) != 2 || len(resp.Response.Listeners[0].Targets) != 1 || len(resp.Response.Listeners[1].Targets) != 0 {
		t.Fatalf("filtered DescribeTargets: %s", mustJSON(resp.Response))
	}
	b := resp.Response.Listeners[0].Targets[0]
	if *b.Type != "CVM" || *b.InstanceId != nodes[1].ID || *b.PrivateIpAddresses[0] != "10.1.0.2" || *b.InstanceName != nodes[1].ID {
		t.Fatalf("backend %s", mustJSON(b))
	}
	req.Filters, req.ListenerIds = nil, common.StringPtrs(make([]string, 21))
	if _, err := e.api.DescribeTargets(req); sdkCode(err) != "InvalidParameterValue.Length" {
		t.Fatalf("21 listener ids: %v", err)
	}

	// Deregister: only bound targets, at most 20.
	dereg := func(targets ...*clb.Target) error {
		req := clb.NewDeregisterTargetsRequest()
		req.LoadBalancerId, req.ListenerId, req.Targets = common.StringPtr(id), common.StringPtr(lis), targets
		_, err := e.api.DeregisterTargets(req)
		return err
	}
	if err := dereg(insTarget(nodes[21].ID, 30080)); sdkCode(err) != "InvalidParameter" {
		t.Fatalf("deregistering an unbound target: %v", err)
	}
	if err := dereg(twentyOne...); sdkCode(err) != "InvalidParameterValue.Length" {
		t.Fatalf("deregistering 21: %v", err)
	}
	if err := dereg(insTarget(nodes[0].ID, 30081)); err != nil {
		t.Fatal(err)
	}

	// ModifyTargetWeight.
	mreq := clb.NewModifyTargetWeightRequest()
	mreq.LoadBalancerId, mreq.ListenerId = common.StringPtr(id), common.StringPtr(lis)
	mreq.Targets, mreq.Weight = []*clb.Target{insTarget(nodes[0].ID, 30080)}, common.Int64Ptr(50)
	if _, err := e.api.ModifyTargetWeight(mreq); err != nil {
		t.Fatal(err)
	}
	if got := e.boundTargets(t, id, lis); got[0] != nodes[0].ID+":30080/50" {
		t.Fatalf("after ModifyTargetWeight: %v", got[0])
	}

	// BatchModifyTargetWeight: a target's own Weight wins over its rule's;
	// the documented limits (100 rules, 50 targets a rule, 500 in all).
	bmw := func(rules ...*clb.RsWeightRule) error {
		req := clb.NewBatchModifyTargetWeightRequest()
		req.LoadBalancerId, req.ModifyList = common.StringPtr(id), rules
		_, err := e.api.BatchModifyTargetWeight(req)
		return err
	}
	rule := func(weight *int64, targets ...*clb.Target) *clb.RsWeightRule {
		return &clb.RsWeightRule{ListenerId: common.StringPtr(lis), Weight: weight, Targets: targets}
	}
	own := insTarget(nodes[1].ID, 30080)
	own.Weight = common.Int64Ptr(7)
	manyRules := make([]*clb.RsWeightRule, 101)
	for i := range manyRules {
		manyRules[i] = rule(common.Int64Ptr(0), insTarget(nodes[0].ID, 30080))
	}
	var fiftyOne []*clb.Target
	for i := range 51 {
		fiftyOne = append(fiftyOne, insTarget(nodes[i%21].ID, int64(30000+i)))
	}
	for _, tt := range []struct {
		name  string
		rules []*clb.RsWeightRule
		code  string
	}{
		{"no rule", nil, "MissingParameter"},
		{"101 rules", manyRules, "InvalidParameterValue.Length"},
		{"51 targets in a rule", []*clb.RsWeightRule{rule(common.Int64Ptr(0), fiftyOne...)}, "InvalidParameterValue.Length"},
		{"no weight anywhere", []*clb.RsWeightRule{rule(nil, insTarget(nodes[0].ID, 30080))}, "MissingParameter"},
		{"weight 101", []*clb.RsWeightRule{rule(common.Int64Ptr(101), insTarget(nodes[0].ID, 30080))}, "InvalidParameterValue"},
		{"unbound target", []*clb.RsWeightRule{rule(common.Int64Ptr(0), insTarget(nodes[21].ID, 30080))}, "InvalidParameter"},
		{"rule weight 0, one target's own 7", []*clb.RsWeightRule{rule(common.Int64Ptr(0), insTarget(nodes[0].ID, 30080), own)}, ""},
	} {
		if got := sdkCode(bmw(tt.rules...)); got != tt.code {
			t.Errorf("BatchModifyTargetWeight, %s: code %q, want %q", tt.name, got, tt.code)
		}
	}
	if got := e.boundTargets(t, id, lis); got[0] != nodes[0].ID+":30080/0" || got[1] != nodes[1].ID+":30080/7" {
		t.Fatalf("after BatchModifyTargetWeight: %v", got[:2])
	}

	// Batch calls span listeners, up to 500 targets.
	breq := clb.NewBatchRegisterTargetsRequest()
	breq.LoadBalancerId = common.StringPtr(id)
	breq.Targets = []*clb.BatchTarget{
		{ListenerId: common.StringPtr(lis2), InstanceId: common.StringPtr(nodes[0].ID), Port: common.Int64Ptr(30053)},
		{ListenerId: common.StringPtr(lis2), InstanceId: common.StringPtr(nodes[1].ID), Port: common.Int64Ptr(30053), Weight: common.Int64Ptr(5)},
		{ListenerId: common.StringPtr(lis), InstanceId: common.StringPtr(nodes[21].ID), Port: common.Int64Ptr(30080)},
	}
	if _, err := e.api.BatchRegisterTargets(breq); err != nil {
		t.Fatal(err)
	}
	if got := e.boundTargets(t, id, lis2); !slices.Equal(got, []string{nodes[0].ID + ":30053/10", nodes[1].ID + ":30053/5"}) {
		t.Fatalf("after BatchRegisterTargets: %v", got)
	}
	bad := clb.NewBatchRegisterTargetsRequest()
	bad.LoadBalancerId = common.StringPtr(id)
	bad.Targets = []*clb.BatchTarget{{ListenerId: common.StringPtr("lbl-nothere"), InstanceId: common.StringPtr(nodes[2].ID), Port: common.Int64Ptr(1)}}
	if _, err := e.api.BatchRegisterTargets(bad); sdkCode(err) != "InvalidParameter.ListenerIdNotFound" {
		t.Fatalf("batch to an unknown listener: %v", err)
	}
	for range 501 {
		bad.Targets = append(bad.Targets, bad.Targets[0])
	}
	if _, err := e.api.BatchRegisterTargets(bad); sdkCode(err) != "InvalidParameterValue.Length" {
		t.Fatalf("502 batch targets: %v", err)
	}
	bdreq := clb.NewBatchDeregisterTargetsRequest()
	bdreq.LoadBalancerId, bdreq.Targets = common.StringPtr(id), breq.Targets[:2]
	if _, err := e.api.BatchDeregisterTargets(bdreq); err != nil {
		t.Fatal(err)
	}
	if got := e.boundTargets(t, id, lis2); len(got) != 0 {
		t.Fatalf("after BatchDeregisterTargets: %v", got)
	}

	// DescribeLoadBalancers: TargetCount and backend filters.
	dreq := clb.NewDescribeLoadBalancersRequest()
	dreq.AdditionalFields = common.StringPtrs([]string{"TargetCount"})
	dreq.BackendPrivateIps = common.StringPtrs([]string{"10.1.0.22"})
	dresp, err := e.api.DescribeLoadBalancers(dreq)
	if err != nil || len(dresp.Response.LoadBalancerSet) != 1 || *dresp.Response.LoadBalancerSet[0].TargetCount != 22 {
		t.Fatalf("DescribeLoadBalancers with TargetCount: %v %v", dresp.ToJsonString(), err)
	}
}
