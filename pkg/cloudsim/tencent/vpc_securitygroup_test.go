package tencent

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// sgEnv is a CLB env with a vpc client; the security group actions' 20/s
// limit is lifted for table-driven calls.
func sgEnv(t *testing.T) (*clbEnv, *vpc.Client) {
	t.Helper()
	e := newCLBEnv(t, CLBOptions{}, dataplane.Config{Disabled: true})
	for action := range e.d.SecurityGroups().Actions() {
		e.core.SetRateLimit(action, 0)
	}
	cl, err := vpc.NewClient(common.NewCredential(testID, testKey), testRegion, clientProfile(e.env))
	if err != nil {
		t.Fatal(err)
	}
	return e, cl
}

func createSG(t *testing.T, cl *vpc.Client, name string) string {
	t.Helper()
	req := vpc.NewCreateSecurityGroupRequest()
	req.GroupName, req.GroupDescription = common.StringPtr(name), common.StringPtr("test group")
	resp, err := cl.CreateSecurityGroup(req)
	if err != nil {
		t.Fatalf("CreateSecurityGroup: %v", err)
	}
	return *resp.Response.SecurityGroup.SecurityGroupId
}

func pol(proto, port, cidr, action string) *vpc.SecurityGroupPolicy {
	p := &vpc.SecurityGroupPolicy{Protocol: common.StringPtr(proto), CidrBlock: common.StringPtr(cidr), Action: common.StringPtr(action)}
	if port != "" {
		p.Port = common.StringPtr(port)
	}
	return p
}

func addIngress(cl *vpc.Client, sg string, index *int64, version string, ps ...*vpc.SecurityGroupPolicy) error {
	for _, p := range ps {
		p.PolicyIndex = index
	}
	req := vpc.NewCreateSecurityGroupPoliciesRequest()
	req.SecurityGroupId = common.StringPtr(sg)
	req.SecurityGroupPolicySet = &vpc.SecurityGroupPolicySet{Ingress: ps}
	if version != "" {
		req.SecurityGroupPolicySet.Version = common.StringPtr(version)
	}
	_, err := cl.CreateSecurityGroupPolicies(req)
	return err
}

// ingressOf lists a group's ingress policies as "ACTION PROTO PORT CIDR".
func ingressOf(t *testing.T, cl *vpc.Client, sg string) ([]string, string) {
	t.Helper()
	req := vpc.NewDescribeSecurityGroupPoliciesRequest()
	req.SecurityGroupId = common.StringPtr(sg)
	resp, err := cl.DescribeSecurityGroupPolicies(req)
	if err != nil {
		t.Fatal(err)
	}
	set := resp.Response.SecurityGroupPolicySet
	var out []string
	for i, p := range set.Ingress {
		if *p.PolicyIndex != int64(i) {
			t.Errorf("policy %d has PolicyIndex %d", i, *p.PolicyIndex)
		}
		out = append(out, fmt.Sprintf("%s %s %s %s", *p.Action, *p.Protocol, *p.Port, *p.CidrBlock))
	}
	return out, *set.Version
}

func TestSecurityGroupPolicies(t *testing.T) {
	e, cl := sgEnv(t)
	sg := createSG(t, cl, "web")
	// A new group has no policies: "新建的安全组的入站和出站规则默认都是全部拒绝".
	if got, v := ingressOf(t, cl, sg); len(got) != 0 || v != "0" {
		t.Fatalf("new group: %v version %s", got, v)
	}
	if err := addIngress(cl, sg, nil, "", pol("TCP", "80", "10.0.0.0/8", "ACCEPT"), pol("udp", "53,5353", "10.1.2.3", "DROP")); err != nil {
		t.Fatal(err)
	}
	// PolicyIndex 0 inserts at the front ("如想在规则最前面插入一条，则填0即可").
	if err := addIngress(cl, sg, common.Int64Ptr(0), "1", pol("ALL", "", "0.0.0.0/8", "DROP")); err != nil {
		t.Fatal(err)
	}
	got, v := ingressOf(t, cl, sg)
	want := []string{"DROP ALL ALL 0.0.0.0/0", "ACCEPT TCP 80 10.0.0.0/8", "DROP UDP 53,5353 10.1.2.3"}
	if !slices.Equal(got, want) || v != "2" {
		t.Fatalf("ingress = %v (version %s), want %v (version 2)", got, v, want)
	}

	tests := []struct {
		name string
		call func() error
		code string
	}{
		{"stale version", func() error { return addIngress(cl, sg, nil, "1", pol("TCP", "81", "10.0.0.0/8", "ACCEPT")) }, CodeSGVersionMismatch},
		{"duplicate", func() error { return addIngress(cl, sg, nil, "", pol("TCP", "80", "10.0.0.0/8", "ACCEPT")) }, CodeSGDuplicatePolicy},
		{"port with ICMP", func() error { return addIngress(cl, sg, nil, "", pol("ICMP", "80", "10.0.0.0/8", "ACCEPT")) }, CodeVPCMalformed},
		{"bad protocol", func() error { return addIngress(cl, sg, nil, "", pol("SCTP", "", "10.0.0.0/8", "ACCEPT")) }, CodeVPCMalformed},
		{"bad action", func() error { return addIngress(cl, sg, nil, "", pol("TCP", "1", "10.0.0.0/8", "ALLOW")) }, CodeVPCMalformed},
		{"bad port range", func() error { return addIngress(cl, sg, nil, "", pol("TCP", "90-80", "10.0.0.0/8", "ACCEPT")) }, CodeVPCMalformed},
		{"two sources", func() error {
			p := pol("TCP", "1", "10.0.0.0/8", "ACCEPT")
			p.SecurityGroupId = common.StringPtr(sg)
			return addIngress(cl, sg, nil, "", p)
		}, CodeVPCCoexist},
		{"unknown group", func() error { return addIngress(cl, "sg-nothere1", nil, "", pol("TCP", "1", "10.0.0.0/8", "ACCEPT")) }, CodeVPCResourceNotFound},
		{"both directions", func() error {
			req := vpc.NewCreateSecurityGroupPoliciesRequest()
			req.SecurityGroupId = common.StringPtr(sg)
			req.SecurityGroupPolicySet = &vpc.SecurityGroupPolicySet{Ingress: []*vpc.SecurityGroupPolicy{pol("TCP", "1", "1.1.1.1", "ACCEPT")},
				Egress: []*vpc.SecurityGroupPolicy{pol("TCP", "1", "1.1.1.1", "ACCEPT")}}
			_, err := cl.CreateSecurityGroupPolicies(req)
			return err
		}, CodeVPCCoexist},
		{"delete index out of range", func() error {
			req := vpc.NewDeleteSecurityGroupPoliciesRequest()
			req.SecurityGroupId = common.StringPtr(sg)
			req.SecurityGroupPolicySet = &vpc.SecurityGroupPolicySet{Ingress: []*vpc.SecurityGroupPolicy{{PolicyIndex: common.Int64Ptr(3)}}}
			_, err := cl.DeleteSecurityGroupPolicies(req)
			return err
		}, CodeSGRange},
		{"over 512 policies", func() error {
			req := vpc.NewModifySecurityGroupPoliciesRequest()
			req.SecurityGroupId = common.StringPtr(sg)
			req.SecurityGroupPolicySet = &vpc.SecurityGroupPolicySet{Version: common.StringPtr("9")}
			for i := range MaxSecurityGroupPolicies + 1 {
				req.SecurityGroupPolicySet.Ingress = append(req.SecurityGroupPolicySet.Ingress, pol("TCP", fmt.Sprint(1+i), "10.0.0.0/8", "ACCEPT"))
			}
			req.SecurityGroupPolicySet.Egress = []*vpc.SecurityGroupPolicy{pol("ALL", "ALL", "0.0.0.0/0", "ACCEPT")}
			_, err := cl.ModifySecurityGroupPolicies(req)
			return err
		}, CodeSGModifyLimit},
		// vpc@v1.3.115 models.go, ModifySecurityGroupPoliciesRequestParams.SecurityGroupPolicySet:
		// "SecurityGroupPolicySet对象必须同时指定新的出（Egress）入（Ingress）站规则" (issue 32 item 1).
		{"modify without Egress", func() error {
			req := vpc.NewModifySecurityGroupPoliciesRequest()
			req.SecurityGroupId = common.StringPtr(sg)
			req.SecurityGroupPolicySet = &vpc.SecurityGroupPolicySet{Ingress: []*vpc.SecurityGroupPolicy{pol("TCP", "1", "1.1.1.1", "ACCEPT")}}
			_, err := cl.ModifySecurityGroupPolicies(req)
			return err
		}, CodeSGEmpty},
		{"modify without Ingress", func() error {
			req := vpc.NewModifySecurityGroupPoliciesRequest()
			req.SecurityGroupId = common.StringPtr(sg)
			req.SecurityGroupPolicySet = &vpc.SecurityGroupPolicySet{Egress: []*vpc.SecurityGroupPolicy{pol("ALL", "ALL", "0.0.0.0/0", "ACCEPT")}}
			_, err := cl.ModifySecurityGroupPolicies(req)
			return err
		}, CodeSGEmpty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := sdkCode(tt.call()); code != tt.code {
				t.Fatalf("code %q, want %q", code, tt.code)
			}
		})
	}
	if got2, v2 := ingressOf(t, cl, sg); !slices.Equal(got2, want) || v2 != "2" {
		t.Fatalf("refused calls changed the group: %v version %s", got2, v2)
	}

	// Delete by content, replace by index, reset.
	dreq := vpc.NewDeleteSecurityGroupPoliciesRequest()
	dreq.SecurityGroupId = common.StringPtr(sg)
	dreq.SecurityGroupPolicySet = &vpc.SecurityGroupPolicySet{Ingress: []*vpc.SecurityGroupPolicy{pol("ALL", "ALL", "0.0.0.0/0", "DROP")}}
	if _, err := cl.DeleteSecurityGroupPolicies(dreq); err != nil {
		t.Fatal(err)
	}
	rreq := vpc.NewReplaceSecurityGroupPoliciesRequest()
	rreq.SecurityGroupId = common.StringPtr(sg)
	r := pol("TCP", "8000-8010", "192.168.0.0/16", "ACCEPT")
	r.PolicyIndex = common.Int64Ptr(1)
	rreq.SecurityGroupPolicySet = &vpc.SecurityGroupPolicySet{Ingress: []*vpc.SecurityGroupPolicy{r}}
	if _, err := cl.ReplaceSecurityGroupPolicies(rreq); err != nil {
		t.Fatal(err)
	}
	if got, v := ingressOf(t, cl, sg); !slices.Equal(got, []string{"ACCEPT TCP 80 10.0.0.0/8", "ACCEPT TCP 8000-8010 192.168.0.0/16"}) || v != "4" {
		t.Fatalf("after delete and replace: %v version %s", got, v)
	}
	mreq := vpc.NewModifySecurityGroupPoliciesRequest()
	mreq.SecurityGroupId = common.StringPtr(sg)
	mreq.SecurityGroupPolicySet = &vpc.SecurityGroupPolicySet{Version: common.StringPtr("0")}
	if _, err := cl.ModifySecurityGroupPolicies(mreq); err != nil {
		t.Fatal(err)
	}
	if got, _ := ingressOf(t, cl, sg); len(got) != 0 {
		t.Fatalf("Version 0 clears every policy: %v", got)
	}
	// An explicit empty Egress gives the direction (the Go SDK omits an
	// empty list, other clients may send it).
	_, resp := e.do(t, rawReq{action: "ModifySecurityGroupPolicies", version: VPCVersion, service: "vpc",
		body: `{"SecurityGroupId":"` + sg + `","SecurityGroupPolicySet":{"Ingress":[{"Protocol":"TCP","Port":"80","CidrBlock":"10.0.0.0/8","Action":"ACCEPT"}],"Egress":[]}}`})
	if strings.Contains(resp, `"Error"`) {
		t.Fatalf("Ingress with an explicit empty Egress: %s", resp)
	}
	if got, _ := ingressOf(t, cl, sg); !slices.Equal(got, []string{"ACCEPT TCP 80 10.0.0.0/8"}) {
		t.Fatalf("after Modify with an empty Egress: %v", got)
	}
}

func TestSecurityGroupsDescribeAndDelete(t *testing.T) {
	e, cl := sgEnv(t)
	web, db := createSG(t, cl, "web"), createSG(t, cl, "db")
	if !core.ValidSecurityGroupID(web) {
		t.Fatalf("id %q", web)
	}
	describe := func(mut func(*vpc.DescribeSecurityGroupsRequest)) ([]string, error) {
		req := vpc.NewDescribeSecurityGroupsRequest()
		mut(req)
		resp, err := cl.DescribeSecurityGroups(req)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, g := range resp.Response.SecurityGroupSet {
			out = append(out, *g.SecurityGroupId)
		}
		return out, nil
	}
	if got, err := describe(func(r *vpc.DescribeSecurityGroupsRequest) {
		r.Filters = []*vpc.Filter{{Name: common.StringPtr("security-group-name"), Values: common.StringPtrs([]string{"db"})}}
	}); err != nil || !slices.Equal(got, []string{db}) {
		t.Fatalf("by name: %v %v", got, err)
	}
	if got, err := describe(func(r *vpc.DescribeSecurityGroupsRequest) {
		r.Limit = common.StringPtr("1")
		r.Offset = common.StringPtr("1")
	}); err != nil || !slices.Equal(got, []string{db}) {
		t.Fatalf("page 2: %v %v", got, err)
	}
	if _, err := describe(func(r *vpc.DescribeSecurityGroupsRequest) {
		r.SecurityGroupIds = common.StringPtrs([]string{web})
		r.Filters = []*vpc.Filter{{Name: common.StringPtr("security-group-name"), Values: common.StringPtrs([]string{"db"})}}
	}); sdkCode(err) != CodeVPCCoexist {
		t.Fatalf("ids and filters: %v", err)
	}

	// web references db; db is bound to an instance; web to a CLB.
	if err := addIngress(cl, web, nil, "", &vpc.SecurityGroupPolicy{Protocol: common.StringPtr("TCP"), Port: common.StringPtr("80"),
		SecurityGroupId: common.StringPtr(db), Action: common.StringPtr("ACCEPT")}); err != nil {
		t.Fatal(err)
	}
	in := e.mustAdd(t, core.Instance{VpcID: clbTestVPC})[0]
	if _, err := e.d.SecurityGroups().SetInstanceSecurityGroups(in.ID, db); err != nil {
		t.Fatal(err)
	}
	lbID := e.createLB(t, nil)
	sreq := clb.NewSetLoadBalancerSecurityGroupsRequest()
	sreq.LoadBalancerId, sreq.SecurityGroups = common.StringPtr(lbID), common.StringPtrs([]string{web})
	if _, err := e.api.SetLoadBalancerSecurityGroups(sreq); err != nil {
		t.Fatal(err)
	}
	del := func(id string) string {
		req := vpc.NewDeleteSecurityGroupRequest()
		req.SecurityGroupId = common.StringPtr(id)
		_, err := cl.DeleteSecurityGroup(req)
		return sdkCode(err)
	}
	for _, tt := range []struct{ id, code, why string }{
		{db, CodeSGInUse, "bound to an instance and referenced by web"},
		{web, CodeSGInUse, "bound to a CLB"},
		{"sg-nothere1", CodeSGNotFound, "unknown"},
		{"sg-BAD", CodeSGMalformedID, "malformed"},
	} {
		if code := del(tt.id); code != tt.code {
			t.Errorf("delete %s (%s): %q, want %q", tt.id, tt.why, code, tt.code)
		}
	}

	// DescribeInstances shows the instance's groups and filters by them.
	cvmCl := e.client(t, testID, testKey)
	ireq := cvm.NewDescribeInstancesRequest()
	ireq.Filters = []*cvm.Filter{{Name: common.StringPtr("security-group-id"), Values: common.StringPtrs([]string{db})}}
	iresp, err := cvmCl.DescribeInstances(ireq)
	if err != nil {
		t.Fatal(err)
	}
	if len(iresp.Response.InstanceSet) != 1 || strings.Join(common.StringValues(iresp.Response.InstanceSet[0].SecurityGroupIds), ",") != db {
		t.Fatalf("instances in %s: %+v", db, iresp.Response.InstanceSet)
	}

	// Unbinding everything frees the groups.
	sreq.SecurityGroups = nil
	if _, err := e.api.SetLoadBalancerSecurityGroups(sreq); err != nil {
		t.Fatal(err)
	}
	if _, err := e.d.SecurityGroups().SetInstanceSecurityGroups(in.ID); err != nil {
		t.Fatal(err)
	}
	if code := del(web); code != "" {
		t.Fatalf("delete web: %s", code)
	}
	if code := del(db); code != "" {
		t.Fatalf("delete db once nothing uses it: %s", code)
	}
}

func TestCLBSecurityGroupBindings(t *testing.T) {
	e, cl := sgEnv(t)
	var sgs []string
	for i := range MaxCLBSecurityGroups + 1 {
		sgs = append(sgs, createSG(t, cl, fmt.Sprint("g", i)))
	}
	lb1, lb2 := e.createLB(t, nil), e.createLB(t, nil)
	set := func(lb string, ids ...string) string {
		req := clb.NewSetLoadBalancerSecurityGroupsRequest()
		req.LoadBalancerId, req.SecurityGroups = common.StringPtr(lb), common.StringPtrs(ids)
		_, err := e.api.SetLoadBalancerSecurityGroups(req)
		return sdkCode(err)
	}
	if code := set(lb1, sgs...); code != "LimitExceeded" {
		t.Errorf("6 groups: %q, want LimitExceeded (default quota 5)", code)
	}
	if code := set(lb1, "sg-nothere1"); code != "InvalidParameterValue" {
		t.Errorf("unknown group: %q", code)
	}
	if code := set(lb1, sgs[1], sgs[0]); code != "" {
		t.Fatal(code)
	}
	if got := common.StringValues(e.describeLB(t, lb1).SecureGroups); !slices.Equal(got, []string{sgs[1], sgs[0]}) {
		t.Fatalf("SecureGroups = %v, want the order given", got)
	}
	freq := clb.NewSetSecurityGroupForLoadbalancersRequest()
	freq.SecurityGroup, freq.OperationType, freq.LoadBalancerIds = common.StringPtr(sgs[2]), common.StringPtr("ADD"), common.StringPtrs([]string{lb1, lb2})
	if _, err := e.api.SetSecurityGroupForLoadbalancers(freq); err != nil {
		t.Fatal(err)
	}
	dreq := clb.NewDescribeLoadBalancersRequest()
	dreq.SecurityGroup = common.StringPtr(sgs[2])
	dresp, err := e.api.DescribeLoadBalancers(dreq)
	if err != nil || *dresp.Response.TotalCount != 2 {
		t.Fatalf("CLBs in %s: %v %v", sgs[2], dresp, err)
	}
	freq.OperationType = common.StringPtr("DEL")
	freq.LoadBalancerIds = common.StringPtrs([]string{lb1})
	if _, err := e.api.SetSecurityGroupForLoadbalancers(freq); err != nil {
		t.Fatal(err)
	}
	if got := common.StringValues(e.describeLB(t, lb1).SecureGroups); !slices.Equal(got, []string{sgs[1], sgs[0]}) {
		t.Fatalf("after DEL: %v", got)
	}
	if g, _ := e.d.SecurityGroups().Get(sgs[2]); !slices.Equal(g.CLBs, []string{lb2}) {
		t.Fatalf("admin view of %s: CLBs %v", sgs[2], g.CLBs)
	}
}
