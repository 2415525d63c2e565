package clbops

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/profile"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

func withRanges(r ...string) specOpt { return func(s *Desired) { s.SourceRanges = r } }

func withGroups(ids ...string) specOpt {
	return func(s *Desired) { s.SecurityGroups = append([]string{}, ids...) }
}

func pol(proto, port, src, action string) *vpc.SecurityGroupPolicy {
	p := &vpc.SecurityGroupPolicy{Protocol: &proto, Port: &port, Action: &action}
	if strings.Contains(src, ":") {
		p.Ipv6CidrBlock = &src
	} else {
		p.CidrBlock = &src
	}
	return p
}

func TestDesiredIngress(t *testing.T) {
	tests := []struct {
		name    string
		spec    *Desired
		want    []string
		wantErr string
	}{
		{"no ranges: no group", testSpec(), nil, ""},
		{"TCP and UDP listeners, v4 and v6 ranges", testSpec(withRanges("10.0.0.0/8", "2001:db8::/32")), []string{
			"ACCEPT TCP 80,443 from 10.0.0.0/8", "ACCEPT TCP 80,443 from 2001:db8::/32", "DROP TCP 80,443 from 0.0.0.0/0", "DROP TCP 80,443 from ::/0",
			"ACCEPT UDP 53 from 10.0.0.0/8", "ACCEPT UDP 53 from 2001:db8::/32", "DROP UDP 53 from 0.0.0.0/0", "DROP UDP 53 from ::/0",
		}, ""},
		{"address and unmasked block are canonical", testSpec(onlyTCP80, withRanges("192.0.2.7", "198.51.100.9/24")), []string{
			"ACCEPT TCP 80 from 192.0.2.7/32", "ACCEPT TCP 80 from 198.51.100.0/24", "DROP TCP 80 from 0.0.0.0/0", "DROP TCP 80 from ::/0",
		}, ""},
		{"not a CIDR", testSpec(withRanges("10.0.0.0/33")), nil, `"10.0.0.0/33" is not a CIDR block`},
		{"over 512 policies", testSpec(withRanges(manyRanges(300)...)), nil, "a security group holds at most 512"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules, err := desiredIngress(tt.spec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rules {
				got = append(got, r.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("rules:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func manyRanges(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "10." + itoa(i/256) + "." + itoa(i%256) + ".0/24"
	}
	return out
}

func itoa(i int) string { return joinInts([]int{i}) }

// The rule comparison reads the API's spelling of the same policy as the
// same, and anything else (order, an extra or missing rule, a template, a
// group reference) as different.
func TestRulesDiffer(t *testing.T) {
	want, err := desiredIngress(testSpec(onlyTCP80, withRanges("10.0.0.0/8", "192.0.2.7/32")))
	if err != nil {
		t.Fatal(err)
	}
	exact := []*vpc.SecurityGroupPolicy{pol("TCP", "80", "10.0.0.0/8", "ACCEPT"), pol("TCP", "80", "192.0.2.7/32", "ACCEPT"),
		pol("TCP", "80", "0.0.0.0/0", "DROP"), pol("TCP", "80", "::/0", "DROP")}
	tests := []struct {
		name   string
		actual func() []*vpc.SecurityGroupPolicy
		same   bool
	}{
		{"as written", func() []*vpc.SecurityGroupPolicy { return exact }, true},
		{"answered in other spellings", func() []*vpc.SecurityGroupPolicy {
			return []*vpc.SecurityGroupPolicy{pol("tcp", "80", "10.0.0.0/8", "accept"), pol("TCP", "80", "192.0.2.7", "ACCEPT"),
				pol("TCP", "80", "0.0.0.0/16", "DROP"), pol("TCP", "80", "::/0", "drop")}
		}, true},
		{"reordered", func() []*vpc.SecurityGroupPolicy {
			return []*vpc.SecurityGroupPolicy{exact[1], exact[0], exact[2], exact[3]}
		}, false},
		{"a range missing", func() []*vpc.SecurityGroupPolicy { return exact[1:] }, false},
		{"an extra rule", func() []*vpc.SecurityGroupPolicy {
			return append(slices.Clone(exact), pol("TCP", "22", "0.0.0.0/0", "ACCEPT"))
		}, false},
		{"another port", func() []*vpc.SecurityGroupPolicy {
			out := slices.Clone(exact)
			out[0] = pol("TCP", "8080", "10.0.0.0/8", "ACCEPT")
			return out
		}, false},
		{"a group reference", func() []*vpc.SecurityGroupPolicy {
			out := slices.Clone(exact)
			out[0] = &vpc.SecurityGroupPolicy{Protocol: common.StringPtr("TCP"), Port: common.StringPtr("80"), SecurityGroupId: common.StringPtr("sg-aaaaaaaa"), Action: common.StringPtr("ACCEPT")}
			return out
		}, false},
		{"empty", func() []*vpc.SecurityGroupPolicy { return nil }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := rulesDiffer(want, tt.actual(), "ingress")
			if (d == "") != tt.same {
				t.Fatalf("rulesDiffer = %q, want same=%v", d, tt.same)
			}
		})
	}
}

func TestBindSetAndPickManaged(t *testing.T) {
	tests := []struct {
		name    string
		managed string
		user    []string
		bound   []string
		owned   []string
		want    []string
	}{
		{"managed only", "sg-mine0001", nil, nil, []string{"sg-mine0001"}, []string{"sg-mine0001"}},
		{"managed first, hand-bound groups kept", "sg-mine0001", nil, []string{"sg-hand0001", "sg-mine0001"}, []string{"sg-mine0001"}, []string{"sg-mine0001", "sg-hand0001"}},
		{"annotation replaces hand-bound groups", "sg-mine0001", []string{"sg-user0001", "sg-user0002"}, []string{"sg-hand0001"}, []string{"sg-mine0001"}, []string{"sg-mine0001", "sg-user0001", "sg-user0002"}},
		{"annotation set to empty unbinds", "", []string{}, []string{"sg-hand0001"}, nil, nil},
		{"ranges removed: our group unbound, others kept", "", nil, []string{"sg-mine0001", "sg-hand0001"}, []string{"sg-mine0001"}, []string{"sg-hand0001"}},
		{"a duplicate of ours is unbound", "sg-mine0001", nil, []string{"sg-dupe0001", "sg-mine0001"}, []string{"sg-mine0001", "sg-dupe0001"}, []string{"sg-mine0001"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := bindSet(tt.managed, tt.user, tt.bound, tt.owned); !slices.Equal(got, tt.want) {
				t.Fatalf("bindSet = %v, want %v", got, tt.want)
			}
		})
	}

	owned := []secGroup{{id: "sg-bbbbbbbb", created: "2026-11-25 10:00:00"}, {id: "sg-aaaaaaaa", created: "2026-11-25 10:00:01"}, {id: "sg-cccccccc", created: "2026-11-25 10:00:00"}}
	if got := pickManaged(owned, nil); got != "sg-bbbbbbbb" {
		t.Errorf("pickManaged(unbound) = %s, want the oldest, sg-bbbbbbbb", got)
	}
	if got := pickManaged(owned, []string{"sg-hand0001", "sg-aaaaaaaa"}); got != "sg-aaaaaaaa" {
		t.Errorf("pickManaged(bound) = %s, want the bound one, sg-aaaaaaaa", got)
	}
	if got := pickManaged(nil, []string{"sg-hand0001"}); got != "" {
		t.Errorf("pickManaged(none) = %s", got)
	}
}

// ---- against cloudsim ----

// sgEnv is a clbEnv with a recorded VPC client for the security groups and
// an unrecorded one for the test's reads.
type sgEnv struct {
	*clbEnv
	vpcAPI, vpcOwn *vpc.Client
}

func newSGEnv(t *testing.T) *sgEnv {
	e := &sgEnv{clbEnv: newCLBEnvWith(t, func(o *cloudsim.Options) {
		for _, a := range []string{"SetLoadBalancerSecurityGroups", "DescribeSecurityGroups", "CreateSecurityGroup", "DeleteSecurityGroup",
			"DescribeSecurityGroupPolicies", "ModifySecurityGroupPolicies", "ModifyLoadBalancerAttributes"} {
			o.RateLimits[a] = 0
		}
	})}
	mk := func(record bool) *vpc.Client {
		cpf := profile.NewClientProfile()
		cpf.HttpProfile.Endpoint = strings.TrimPrefix(e.url, "http://")
		cpf.HttpProfile.Scheme = "HTTP"
		c, err := vpc.NewClient(common.NewCredential(simID, simKey), "ap-guangzhou", cpf)
		if err != nil {
			t.Fatal(err)
		}
		if record {
			c.WithHttpTransport(e.clbEnv)
		}
		return c
	}
	e.vpcAPI, e.vpcOwn = mk(true), mk(false)
	return e
}

func (e *sgEnv) ops() *Ops {
	o := newTestOps(e.clbEnv)
	o.sgAPI = e.vpcAPI
	return o
}

// groups returns every security group with its tags, by id.
func (e *sgEnv) groups() map[string]map[string]string {
	e.t.Helper()
	req := vpc.NewDescribeSecurityGroupsRequest()
	req.Limit = common.StringPtr("100")
	resp, err := e.vpcOwn.DescribeSecurityGroups(req)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, g := range resp.Response.SecurityGroupSet {
		tags := map[string]string{}
		for _, tg := range g.TagSet {
			tags[*tg.Key] = *tg.Value
		}
		out[*g.SecurityGroupId] = tags
	}
	return out
}

// ingress lists a group's ingress as sgRule strings.
func (e *sgEnv) ingress(id string) []string {
	e.t.Helper()
	g, err := e.sim.Tencent().SecurityGroups().Get(id)
	if err != nil {
		e.t.Fatal(err)
	}
	rules, ok := normalizePolicies(g.Ingress)
	if !ok {
		e.t.Fatalf("group %s has policies the CCM does not write: %v", id, g.Ingress)
	}
	var out []string
	for _, r := range rules {
		out = append(out, r.String())
	}
	return out
}

func (e *sgEnv) handGroup(name string) string {
	e.t.Helper()
	g, err := e.sim.Tencent().SecurityGroups().Create(tencent.SecurityGroup{Name: name,
		Ingress: []*vpc.SecurityGroupPolicy{pol("ALL", "ALL", "0.0.0.0/0", "ACCEPT")}})
	if err != nil {
		e.t.Fatal(err)
	}
	return g.ID
}

func TestSourceRangesSecurityGroupLifecycle(t *testing.T) {
	env := newSGEnv(t)
	o := env.ops()
	ctx := context.Background()
	spec := testSpec(withRanges("127.0.0.0/30"))
	mustEnsure(t, o, spec)
	lbID := env.lbIDs()[0]

	groups := env.groups()
	if len(groups) != 1 {
		t.Fatalf("groups after create: %v, want one", groups)
	}
	var sg string
	for id, tags := range groups {
		sg = id
		if tags[TagServiceUID] != "uid-1" || tags[TagService] != "default/web" || tags[TagCluster] != "kubernetes" {
			t.Errorf("tags of %s = %v", id, tags)
		}
	}
	if got := env.lb(lbID).SecurityGroups; !slices.Equal(got, []string{sg}) {
		t.Fatalf("CLB groups = %v, want [%s]", got, sg)
	}
	want := []string{"ACCEPT TCP 80,443 from 127.0.0.0/30", "DROP TCP 80,443 from 0.0.0.0/0", "DROP TCP 80,443 from ::/0",
		"ACCEPT UDP 53 from 127.0.0.0/30", "DROP UDP 53 from 0.0.0.0/0", "DROP UDP 53 from ::/0"}
	if got := env.ingress(sg); !slices.Equal(got, want) {
		t.Fatalf("ingress = %v, want %v", got, want)
	}
	// The group is filled before it is bound, and bound before listeners.
	w := env.writes()
	if i, j, k := slices.Index(w, "ModifySecurityGroupPolicies"), slices.Index(w, "SetLoadBalancerSecurityGroups"), slices.Index(w, "CreateListener"); i < 0 || i >= j || j >= k {
		t.Errorf("write order %v: want policies, then binding, then listeners", w)
	}

	// Unchanged: no write, no drift.
	env.resetCalls()
	mustEnsure(t, o, spec)
	if w := env.writes(); len(w) != 0 {
		t.Fatalf("unchanged resync wrote %v", w)
	}
	if d, err := o.Drift(ctx, spec); err != nil || len(d) != 0 {
		t.Fatalf("drift = %v, %v", d, err)
	}

	// Ranges changed: the policies are rewritten in one call.
	changed := testSpec(withRanges("127.0.0.4/30", "10.0.0.0/8"))
	if d, err := o.Drift(ctx, changed); err != nil || len(d) != 1 || !strings.Contains(d[0], "security group "+sg) {
		t.Fatalf("drift after a range change = %v, %v", d, err)
	}
	env.resetCalls()
	mustEnsure(t, o, changed)
	if w := env.writes(); !slices.Equal(w, []string{"ModifySecurityGroupPolicies"}) {
		t.Fatalf("range change wrote %v, want one ModifySecurityGroupPolicies", w)
	}
	if got := env.ingress(sg); got[0] != "ACCEPT TCP 80,443 from 127.0.0.4/30" || got[1] != "ACCEPT TCP 80,443 from 10.0.0.0/8" {
		t.Fatalf("ingress after the change = %v", got)
	}

	// Ranges removed: unbound, then deleted.
	env.resetCalls()
	mustEnsure(t, o, testSpec())
	if w := env.writes(); !slices.Equal(w, []string{"SetLoadBalancerSecurityGroups", "DeleteSecurityGroup"}) {
		t.Fatalf("ranges removed wrote %v", w)
	}
	if len(env.groups()) != 0 || len(env.lb(lbID).SecurityGroups) != 0 {
		t.Fatalf("after the ranges were removed: groups %v, CLB bound to %v", env.groups(), env.lb(lbID).SecurityGroups)
	}
	env.resetCalls()
	mustEnsure(t, o, testSpec())
	if a := env.actions(); slices.ContainsFunc(a, func(x string) bool { return strings.Contains(x, "SecurityGroup") }) {
		t.Errorf("a Service without ranges or groups made security group calls: %v", a)
	}

	// Back on, then the Service is deleted: the group goes with the CLB.
	mustEnsure(t, o, spec)
	if len(env.groups()) != 1 {
		t.Fatalf("groups = %v", env.groups())
	}
	if err := o.Delete(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if len(env.groups()) != 0 || len(env.lbIDs()) != 0 {
		t.Fatalf("after Delete: groups %v, CLBs %v", env.groups(), env.lbIDs())
	}
}

func TestSecurityGroupsForeignGroupsAndAnnotation(t *testing.T) {
	env := newSGEnv(t)
	o := env.ops()
	ctx := context.Background()
	mustEnsure(t, o, testSpec())
	lbID := env.lbIDs()[0]
	hand := env.handGroup("console")
	user := env.handGroup("user")
	if _, err := env.sim.Tencent().CLB().SetSecurityGroups(lbID, hand); err != nil {
		t.Fatal(err)
	}

	// Ranges with a hand-bound group: ours first, the hand one kept.
	spec := testSpec(withRanges("127.0.0.0/30"))
	mustEnsure(t, o, spec)
	bound := env.lb(lbID).SecurityGroups
	if len(bound) != 2 || bound[1] != hand {
		t.Fatalf("CLB groups = %v, want [ours %s]", bound, hand)
	}
	mine := bound[0]

	// The annotation replaces the hand-bound group.
	withUser := testSpec(withRanges("127.0.0.0/30"), withGroups(user))
	mustEnsure(t, o, withUser)
	if got := env.lb(lbID).SecurityGroups; !slices.Equal(got, []string{mine, user}) {
		t.Fatalf("CLB groups = %v, want [%s %s]", got, mine, user)
	}
	env.resetCalls()
	mustEnsure(t, o, withUser)
	if w := env.writes(); len(w) != 0 {
		t.Fatalf("unchanged resync with the annotation wrote %v", w)
	}

	// An unknown id is named, and nothing is bound.
	_, err := o.Ensure(ctx, testSpec(withRanges("127.0.0.0/30"), withGroups(user, "sg-nothere1")))
	if err == nil || !strings.Contains(err.Error(), "security group sg-nothere1 does not exist") {
		t.Fatalf("err = %v, want one naming sg-nothere1", err)
	}
	if got := env.lb(lbID).SecurityGroups; !slices.Equal(got, []string{mine, user}) {
		t.Fatalf("a refused annotation changed the binding to %v", got)
	}

	// Deleting the Service deletes only our group: never a foreign one.
	if err := o.Delete(ctx, withUser); err != nil {
		t.Fatal(err)
	}
	groups := env.groups()
	if _, ok := groups[mine]; ok || len(groups) != 2 {
		t.Fatalf("groups after Delete = %v, want only %s and %s", groups, hand, user)
	}
}

// A create whose answer was lost leaves a second tagged group: the next
// sync keeps one and deletes the other.
func TestSecurityGroupDuplicateCleanedUp(t *testing.T) {
	env := newSGEnv(t)
	o := env.ops()
	spec := testSpec(onlyTCP80, withRanges("127.0.0.0/30"))
	mustEnsure(t, o, spec)
	req := vpc.NewCreateSecurityGroupRequest()
	req.GroupName, req.GroupDescription = common.StringPtr("lost"), common.StringPtr("a create whose answer was lost")
	req.Tags = []*vpc.Tag{{Key: common.StringPtr(TagServiceUID), Value: common.StringPtr("uid-1")}}
	if _, err := env.vpcOwn.CreateSecurityGroup(req); err != nil {
		t.Fatal(err)
	}
	if len(env.groups()) != 2 {
		t.Fatal("setup: want two tagged groups")
	}
	env.resetCalls()
	mustEnsure(t, o, spec)
	if w := env.writes(); !slices.Equal(w, []string{"DeleteSecurityGroup"}) || len(env.groups()) != 1 {
		t.Fatalf("writes %v, groups %v: want the unbound duplicate deleted", w, env.groups())
	}
}

func TestSecurityGroupsRefusedOnAdoptedCLB(t *testing.T) {
	env := newSGEnv(t)
	o := env.ops()
	existing := env.addLB(testVPC, nil)
	for name, spec := range map[string]*Desired{
		"ranges":     testSpec(withAdopt(existing), onlyTCP80, withRanges("127.0.0.0/30")),
		"annotation": testSpec(withAdopt(existing), onlyTCP80, withGroups(env.handGroup("x"))),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := o.Ensure(context.Background(), spec)
			if err == nil || !strings.Contains(err.Error(), "is adopted") {
				t.Fatalf("err = %v, want a refusal on the adopted CLB", err)
			}
			if n := env.count("SetLoadBalancerSecurityGroups") + env.count("CreateSecurityGroup"); n != 0 {
				t.Fatalf("%d security group writes on an adopted CLB", n)
			}
		})
	}
}

// Without the VPC API, source ranges are refused, never ignored.
func TestSourceRangesWithoutVPCAPI(t *testing.T) {
	env := newCLBEnv(t)
	o := newTestOps(env)
	spec := testSpec(withRanges("127.0.0.0/30"))
	spec.Listeners = []lbspec.Listener{{Protocol: lbspec.TCP, Port: 80, NodePort: 30080}}
	if _, err := o.Ensure(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "need the VPC API") {
		t.Fatalf("err = %v", err)
	}
}
