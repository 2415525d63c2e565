package clbops

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/lb/lbspec"
)

// Security groups on the CLB: spec.loadBalancerSourceRanges and the
// service.cloud.tencent.com/security-groups annotation.
//
// A CLB bound to no security group admits every client; bound to some, the
// groups' ingress policies decide, in the order bound, the first matching
// policy winning, and what none matches is dropped. For source ranges the
// CCM manages one group per Service, tagged with its UID, bound first:
//
//	ACCEPT <proto> <listener ports> from each source range
//	DROP   <proto> <listener ports> from 0.0.0.0/0 and ::/0
//
// The closing DROPs make the ranges final on the Service's ports: a group
// bound after ours (the annotation's) cannot widen them, as
// loadBalancerSourceRanges promises. Egress is left open (the group is
// stateful; a CLB's egress is not what the ranges are about).
//
// CreateSecurityGroup takes no ClientToken (vpc@v1.3.83
// CreateSecurityGroupRequestParams has GroupName, GroupDescription,
// ProjectId and Tags only), so the create is made idempotent by the tag:
// every sync looks for the Service's groups by tag first, and when a
// create whose answer was lost left two, the one bound to the CLB (else
// the oldest) is kept and the others, ours by tag and unbound, are
// deleted.

// SecurityGroupAPI is the slice of the VPC API (vpc 2017-03-12) the
// security groups use. *vpc.Client implements it.
type SecurityGroupAPI interface {
	DescribeSecurityGroupsWithContext(context.Context, *vpc.DescribeSecurityGroupsRequest) (*vpc.DescribeSecurityGroupsResponse, error)
	CreateSecurityGroupWithContext(context.Context, *vpc.CreateSecurityGroupRequest) (*vpc.CreateSecurityGroupResponse, error)
	DeleteSecurityGroupWithContext(context.Context, *vpc.DeleteSecurityGroupRequest) (*vpc.DeleteSecurityGroupResponse, error)
	DescribeSecurityGroupPoliciesWithContext(context.Context, *vpc.DescribeSecurityGroupPoliciesRequest) (*vpc.DescribeSecurityGroupPoliciesResponse, error)
	ModifySecurityGroupPoliciesWithContext(context.Context, *vpc.ModifySecurityGroupPoliciesRequest) (*vpc.ModifySecurityGroupPoliciesResponse, error)
}

// Documented limits of the security group API.
const (
	// maxSGName: GroupName "不得超过60个字符" (CreateSecurityGroup).
	maxSGName = 60
	// maxSGDescription: GroupDescription "最多100个字符".
	maxSGDescription = 100
	// maxSGPolicies: "The maximum number of rules for a single security
	// group is 512, including all inbound rules, outbound rules"
	// (https://www.tencentcloud.com/document/product/214/14733).
	maxSGPolicies = 512
	// maxSGIDs: DescribeSecurityGroups SecurityGroupIds "每次请求的实例的上限
	// 为100"; Limit "最大值为100".
	maxSGIDs = 100
)

// Error codes of the security group actions (vpc@v1.3.83 client.go).
const (
	codeSGNotFound      = "InvalidSecurityGroupID.NotFound" // DeleteSecurityGroup
	codeResourceNotFnd  = "ResourceNotFound"                // DescribeSecurityGroups, DeleteSecurityGroup
	codeValueMalformed  = "InvalidParameterValue.Malformed" // DescribeSecurityGroups: a malformed id
	sgPolicyDescription = "ccmkit: loadBalancerSourceRanges"
)

// errNoVPCAPI: Ops was built without Config.SecurityGroups.
var errNoVPCAPI = errors.New("loadBalancerSourceRanges and the security-groups annotation need the VPC API, which this CCM was built without")

// secGroup is what the operations need to know about a security group.
type secGroup struct {
	id, created string
	tags        map[string]string
}

// sgRule is one policy, normalized for comparison: protocol and action
// upper case, the port as given ("80,443"), the source a canonical prefix
// (an address is a /32 or /128; 0.0.0.0/n is 0.0.0.0/0, as the API maps it).
type sgRule struct {
	proto, port, source, action string
	v6                          bool
}

func (r sgRule) String() string {
	return fmt.Sprintf("%s %s %s from %s", r.action, r.proto, r.port, r.source)
}

func (r sgRule) toSDK(desc string) *vpc.SecurityGroupPolicy {
	p := &vpc.SecurityGroupPolicy{Protocol: common.StringPtr(r.proto), Port: common.StringPtr(r.port),
		Action: common.StringPtr(r.action), PolicyDescription: common.StringPtr(desc)}
	if r.v6 {
		p.Ipv6CidrBlock = common.StringPtr(r.source)
	} else {
		p.CidrBlock = common.StringPtr(r.source)
	}
	return p
}

// egressAll is the managed group's egress: everything.
var egressAll = []sgRule{
	{proto: "ALL", port: "ALL", source: "0.0.0.0/0", action: "ACCEPT"},
	{proto: "ALL", port: "ALL", source: "::/0", action: "ACCEPT", v6: true},
}

// desiredIngress is the managed group's ingress for spec; nil when the
// Service has no source ranges (no group wanted). The listener ports of a
// protocol share one policy per range ("端口(all, 离散port, range)",
// SecurityGroupPolicy.Port).
func desiredIngress(spec *Desired) ([]sgRule, error) {
	if len(spec.SourceRanges) == 0 {
		return nil, nil
	}
	var sources []sgRule
	for _, r := range spec.SourceRanges {
		src, v6, err := canonicalSource(r)
		if err != nil {
			return nil, fmt.Errorf("loadBalancerSourceRanges: %q is not a CIDR block", r)
		}
		sources = append(sources, sgRule{source: src, v6: v6})
	}
	ports := map[lbspec.Protocol][]int{}
	for _, l := range spec.Listeners {
		if !slices.Contains(ports[l.Protocol], int(l.Port)) {
			ports[l.Protocol] = append(ports[l.Protocol], int(l.Port))
		}
	}
	var out []sgRule
	for _, proto := range []lbspec.Protocol{lbspec.TCP, lbspec.UDP} {
		if len(ports[proto]) == 0 {
			continue
		}
		slices.Sort(ports[proto])
		port := joinInts(ports[proto])
		for _, s := range sources {
			out = append(out, sgRule{proto: string(proto), port: port, source: s.source, v6: s.v6, action: "ACCEPT"})
		}
		out = append(out,
			sgRule{proto: string(proto), port: port, source: "0.0.0.0/0", action: "DROP"},
			sgRule{proto: string(proto), port: port, source: "::/0", action: "DROP", v6: true})
	}
	if n := len(out) + len(egressAll); n > maxSGPolicies {
		return nil, fmt.Errorf("loadBalancerSourceRanges: %d ranges on %d protocols need %d security group policies; a security group holds at most %d: use fewer, wider ranges",
			len(sources), len(ports), n, maxSGPolicies)
	}
	return out, nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// canonicalSource reads a CIDR block or an address as the API may answer
// it.
func canonicalSource(s string) (string, bool, error) {
	s = strings.TrimSpace(s)
	var p netip.Prefix
	if strings.Contains(s, "/") {
		var err error
		if p, err = netip.ParsePrefix(s); err != nil {
			return "", false, err
		}
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return "", false, err
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	p = p.Masked()
	if p.Addr().Is4() && p.Addr() == netip.IPv4Unspecified() {
		p = netip.PrefixFrom(p.Addr(), 0) // "0.0.0.0/n 都会映射为0.0.0.0/0"
	}
	return p.String(), !p.Addr().Is4(), nil
}

// normalizePolicies reads the API's policies as sgRules; ok is false when
// one cannot be ours (a template, a group reference, a source that does
// not parse), which makes the set differ.
func normalizePolicies(in []*vpc.SecurityGroupPolicy) (out []sgRule, ok bool) {
	for _, p := range in {
		if p == nil || p.ServiceTemplate != nil || p.AddressTemplate != nil || deref(p.SecurityGroupId) != "" {
			return nil, false
		}
		r := sgRule{proto: strings.ToUpper(deref(p.Protocol)), port: strings.ReplaceAll(deref(p.Port), " ", ""), action: strings.ToUpper(deref(p.Action))}
		if strings.EqualFold(r.port, "all") || r.port == "" {
			r.port = "ALL"
		}
		src := deref(p.CidrBlock)
		if v6 := deref(p.Ipv6CidrBlock); v6 != "" {
			src = v6
		}
		var err error
		if r.source, r.v6, err = canonicalSource(src); err != nil {
			return nil, false
		}
		out = append(out, r)
	}
	return out, true
}

// rulesDiffer says how the actual policies differ from the wanted ones
// ("" when they are the same, in the same order: order is priority).
func rulesDiffer(want []sgRule, actual []*vpc.SecurityGroupPolicy, direction string) string {
	got, ok := normalizePolicies(actual)
	if ok && slices.Equal(want, got) {
		return ""
	}
	return fmt.Sprintf("%s policies are %d, want %d (%s)", direction, len(actual), len(want), describeRules(want))
}

func describeRules(rs []sgRule) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = r.String()
	}
	return strings.Join(s, "; ")
}

// bindSet is the CLB's security groups as they should be, in priority
// order: the managed group first ("" when none), then the annotation's
// groups when it is set (user non-nil), else the groups bound now that the
// CCM does not own (a console user's choice, kept).
func bindSet(managed string, user []string, bound []string, owned []string) []string {
	var out []string
	add := func(id string) {
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	add(managed)
	if user != nil {
		for _, id := range user {
			add(id)
		}
		return out
	}
	for _, id := range bound {
		if !slices.Contains(owned, id) {
			add(id)
		}
	}
	return out
}

// sgPlan is what the security group step does on one sync.
type sgPlan struct {
	ingress   []sgRule   // the managed group's ingress; nil: no managed group
	managed   string     // the managed group's id; "" with ingress: create one
	rulesDiff string     // why the managed group's policies are rewritten ("": they are right)
	bind      []string   // the groups to bind, when they differ from the bound ones
	rebind    bool       // bind differs from the CLB's groups
	deletes   []secGroup // owned groups to delete (after the bind)
	checkIDs  []string   // annotation groups not bound yet: checked to exist first
}

func (p *sgPlan) describe(lb *loadBalancer) []string {
	var out []string
	if p.ingress != nil && p.managed == "" {
		out = append(out, "security group for loadBalancerSourceRanges missing")
	}
	if p.rulesDiff != "" && p.managed != "" {
		out = append(out, "security group "+p.managed+": "+p.rulesDiff)
	}
	if p.rebind {
		out = append(out, fmt.Sprintf("security groups of %s are [%s], want [%s]", lb, strings.Join(lb.securityGroups, ","), strings.Join(p.bind, ",")))
	}
	for _, g := range p.deletes {
		out = append(out, "security group "+g.id+" is left over")
	}
	return out
}

// planSecurityGroups reads what the step needs and decides. With no source
// ranges, no annotation and no group bound to the CLB it makes no call. A
// group is found as ours only by our service-uid tag.
func (o *Ops) planSecurityGroups(ctx context.Context, lb *loadBalancer, spec *Desired) (*sgPlan, error) {
	ingress, err := desiredIngress(spec)
	if err != nil {
		return nil, err
	}
	if lb.adopted {
		// Every security group of a CLB filters all its listeners: a group
		// for this Service's ports would drop the other listeners' clients.
		if ingress != nil || spec.SecurityGroups != nil {
			return nil, fmt.Errorf("%s is adopted (annotation %s): its security groups are its owner's, so neither loadBalancerSourceRanges nor annotation %s "+
				"is applied to it; restrict clients with a security group bound to the CLB by its owner, and remove them from the Service",
				lb, annotations.TKEExistedLBID, annotations.TKESecurityGroups)
		}
		return &sgPlan{}, nil
	}
	p := &sgPlan{ingress: ingress}
	if ingress == nil && spec.SecurityGroups == nil && len(lb.securityGroups) == 0 {
		return p, nil
	}
	if o.sgAPI == nil {
		if ingress != nil || spec.SecurityGroups != nil {
			return nil, errNoVPCAPI
		}
		return p, nil
	}
	owned := []secGroup{}
	ownedIDs := []string{}
	if ingress != nil || len(lb.securityGroups) > 0 {
		if owned, err = o.describeOwnedGroups(ctx, spec.UID); err != nil {
			return nil, err
		}
		for _, g := range owned {
			ownedIDs = append(ownedIDs, g.id)
		}
	}
	if ingress != nil {
		keep := pickManaged(owned, lb.securityGroups)
		for _, g := range owned {
			if g.id != keep {
				p.deletes = append(p.deletes, g)
			}
		}
		p.managed = keep
		if keep == "" {
			p.rulesDiff = "new"
		} else {
			set, err := o.describePolicies(ctx, keep)
			if err != nil {
				return nil, err
			}
			d := rulesDiffer(ingress, set.Ingress, "ingress")
			if d == "" {
				d = rulesDiffer(egressAll, set.Egress, "egress")
			}
			p.rulesDiff = d
		}
	} else {
		p.deletes = owned
	}
	p.bind = bindSet(p.managed, spec.SecurityGroups, lb.securityGroups, ownedIDs)
	p.rebind = (p.managed == "" && ingress != nil) || !slices.Equal(p.bind, lb.securityGroups)
	for _, id := range spec.SecurityGroups {
		if !slices.Contains(lb.securityGroups, id) {
			p.checkIDs = append(p.checkIDs, id)
		}
	}
	return p, nil
}

// pickManaged chooses the group to keep among the Service's: the one bound
// to the CLB, else the oldest (CreatedTime, then id); "" when none.
func pickManaged(owned []secGroup, bound []string) string {
	if len(owned) == 0 {
		return ""
	}
	for _, id := range bound {
		if slices.ContainsFunc(owned, func(g secGroup) bool { return g.id == id }) {
			return id
		}
	}
	best := owned[0]
	for _, g := range owned[1:] {
		if g.created < best.created || g.created == best.created && g.id < best.id {
			best = g
		}
	}
	return best.id
}

// reconcileSecurityGroups makes the CLB's security groups what spec asks:
// the managed group's policies first, then the binding, then the groups no
// longer bound are deleted. An unchanged sync writes nothing.
func (o *Ops) reconcileSecurityGroups(ctx context.Context, lb *loadBalancer, spec *Desired) error {
	p, err := o.planSecurityGroups(ctx, lb, spec)
	if err != nil {
		return err
	}
	if len(p.checkIDs) > 0 {
		if err := o.checkGroupsExist(ctx, p.checkIDs); err != nil {
			return err
		}
	}
	if p.ingress != nil && p.managed == "" {
		if p.managed, err = o.createGroup(ctx, spec); err != nil {
			return err
		}
		p.bind = bindSet(p.managed, spec.SecurityGroups, lb.securityGroups, groupIDs(p.deletes))
	}
	if p.rulesDiff != "" {
		if err := o.writePolicies(ctx, p.managed, p.ingress, spec); err != nil {
			return err
		}
	}
	if p.rebind {
		if err := o.bindGroups(ctx, lb, p.bind, spec); err != nil {
			return err
		}
	}
	for _, g := range p.deletes {
		if err := o.deleteGroup(ctx, g.id, spec.Service); err != nil {
			return err
		}
	}
	return nil
}

func groupIDs(gs []secGroup) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.id
	}
	return out
}

// describeOwnedGroups returns the groups tagged for the Service.
func (o *Ops) describeOwnedGroups(ctx context.Context, uid types.UID) ([]secGroup, error) {
	req := vpc.NewDescribeSecurityGroupsRequest()
	req.Filters = []*vpc.Filter{{Name: common.StringPtr("tag:" + TagServiceUID), Values: common.StringPtrs([]string{string(uid)})}}
	groups, err := o.describeGroups(ctx, fmt.Sprintf("tag %s=%s", TagServiceUID, uid), req)
	if err != nil {
		return nil, err
	}
	// Only an exact tag match counts, whatever the filter did.
	return slices.DeleteFunc(groups, func(g secGroup) bool { return g.tags[TagServiceUID] != string(uid) }), nil
}

// describeGroups pages through DescribeSecurityGroups.
func (o *Ops) describeGroups(ctx context.Context, target string, req *vpc.DescribeSecurityGroupsRequest) ([]secGroup, error) {
	var out []secGroup
	req.Limit = common.StringPtr(strconv.Itoa(maxSGIDs))
	for offset := 0; ; {
		req.Offset = common.StringPtr(strconv.Itoa(offset))
		var resp *vpc.DescribeSecurityGroupsResponse
		if err := o.call(ctx, "DescribeSecurityGroups", target, func() (err error) {
			resp, err = o.sgAPI.DescribeSecurityGroupsWithContext(ctx, req)
			return err
		}); err != nil {
			return nil, err
		}
		if resp == nil || resp.Response == nil || resp.Response.TotalCount == nil {
			return nil, callError("DescribeSecurityGroups", target, errors.New("malformed answer: no TotalCount"))
		}
		for _, g := range resp.Response.SecurityGroupSet {
			if g == nil || g.SecurityGroupId == nil {
				return nil, callError("DescribeSecurityGroups", target, errors.New("malformed answer: a group without SecurityGroupId"))
			}
			sg := secGroup{id: *g.SecurityGroupId, created: deref(g.CreatedTime), tags: map[string]string{}}
			for _, t := range g.TagSet {
				if t != nil && t.Key != nil {
					sg.tags[*t.Key] = deref(t.Value)
				}
			}
			out = append(out, sg)
		}
		offset += len(resp.Response.SecurityGroupSet)
		if uint64(offset) >= *resp.Response.TotalCount || len(resp.Response.SecurityGroupSet) == 0 {
			return out, nil
		}
	}
}

// checkGroupsExist reports the annotation's groups that do not exist, by
// name, before they are bound (SetLoadBalancerSecurityGroups would answer
// a bare InvalidParameterValue).
func (o *Ops) checkGroupsExist(ctx context.Context, ids []string) error {
	var found []string
	for chunk := range slices.Chunk(ids, maxSGIDs) {
		req := vpc.NewDescribeSecurityGroupsRequest()
		req.SecurityGroupIds = common.StringPtrs(chunk)
		groups, err := o.describeGroups(ctx, "security groups "+strings.Join(chunk, ","), req)
		switch Code(err) {
		case "":
		case codeResourceNotFnd, codeValueMalformed:
			return fmt.Errorf("annotation %s names security groups %s, and not all of them exist in the region: %w", annotations.TKESecurityGroups, strings.Join(chunk, ","), err)
		default:
			return err
		}
		found = append(found, groupIDs(groups)...)
	}
	var missing []string
	for _, id := range ids {
		if !slices.Contains(found, id) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("annotation %s: security group %s does not exist in the region", annotations.TKESecurityGroups, strings.Join(missing, ", "))
	}
	return nil
}

func (o *Ops) describePolicies(ctx context.Context, id string) (*vpc.SecurityGroupPolicySet, error) {
	req := vpc.NewDescribeSecurityGroupPoliciesRequest()
	req.SecurityGroupId = common.StringPtr(id)
	var resp *vpc.DescribeSecurityGroupPoliciesResponse
	target := "security group " + id
	if err := o.call(ctx, "DescribeSecurityGroupPolicies", target, func() (err error) {
		resp, err = o.sgAPI.DescribeSecurityGroupPoliciesWithContext(ctx, req)
		return err
	}); err != nil {
		return nil, err
	}
	if resp == nil || resp.Response == nil || resp.Response.SecurityGroupPolicySet == nil {
		return nil, callError("DescribeSecurityGroupPolicies", target, errors.New("malformed answer: no SecurityGroupPolicySet"))
	}
	return resp.Response.SecurityGroupPolicySet, nil
}

// createGroup creates the Service's managed group, empty (deny all) until
// writePolicies fills it; it is bound only after that.
func (o *Ops) createGroup(ctx context.Context, spec *Desired) (string, error) {
	req := vpc.NewCreateSecurityGroupRequest()
	req.GroupName = common.StringPtr(cutRunes("ccmkit-"+spec.Service.Namespace+"-"+spec.Service.Name, maxSGName))
	req.GroupDescription = common.StringPtr(cutRunes("loadBalancerSourceRanges of Service "+spec.Service.String()+" (ccmkit; deleted with it)", maxSGDescription))
	tagMap := tags(spec)
	for _, k := range sortedKeys(tagMap) {
		req.Tags = append(req.Tags, &vpc.Tag{Key: common.StringPtr(k), Value: common.StringPtr(tagMap[k])})
	}
	target := "Service " + spec.Service.String()
	logWrite(ctx, "Creating security group", "service", spec.Service, "name", *req.GroupName)
	var resp *vpc.CreateSecurityGroupResponse
	if err := o.call(ctx, "CreateSecurityGroup", target, func() (err error) {
		resp, err = o.sgAPI.CreateSecurityGroupWithContext(ctx, req)
		return err
	}); err != nil {
		return "", err
	}
	if resp == nil || resp.Response == nil || resp.Response.SecurityGroup == nil || deref(resp.Response.SecurityGroup.SecurityGroupId) == "" {
		return "", callError("CreateSecurityGroup", target, errors.New("malformed answer: no SecurityGroupId"))
	}
	id := *resp.Response.SecurityGroup.SecurityGroupId
	logWrite(ctx, "Created security group", "service", spec.Service, "securityGroup", id)
	return id, nil
}

// writePolicies replaces the managed group's policies in one call
// (ModifySecurityGroupPolicies "用于重置安全组出站和入站规则"; both directions
// must be given), in the given order (SortPolicys).
func (o *Ops) writePolicies(ctx context.Context, id string, ingress []sgRule, spec *Desired) error {
	req := vpc.NewModifySecurityGroupPoliciesRequest()
	req.SecurityGroupId = common.StringPtr(id)
	req.SortPolicys = common.BoolPtr(true)
	set := &vpc.SecurityGroupPolicySet{}
	for _, r := range ingress {
		set.Ingress = append(set.Ingress, r.toSDK(sgPolicyDescription))
	}
	for _, r := range egressAll {
		set.Egress = append(set.Egress, r.toSDK(sgPolicyDescription))
	}
	req.SecurityGroupPolicySet = set
	logWrite(ctx, "Setting security group policies", "service", spec.Service, "securityGroup", id, "ranges", strings.Join(spec.SourceRanges, ","))
	return o.call(ctx, "ModifySecurityGroupPolicies", "security group "+id, func() error {
		_, err := o.sgAPI.ModifySecurityGroupPoliciesWithContext(ctx, req)
		return err
	})
}

// bindGroups sets the CLB's security groups (set semantics: "入参需要传入负载
// 均衡实例要绑定的所有安全组"; none unbinds all). It answers at once.
func (o *Ops) bindGroups(ctx context.Context, lb *loadBalancer, ids []string, spec *Desired) error {
	req := clb.NewSetLoadBalancerSecurityGroupsRequest()
	req.LoadBalancerId = common.StringPtr(lb.id)
	req.SecurityGroups = common.StringPtrs(ids)
	logWrite(ctx, "Setting CLB security groups", "clb", lb.id, "service", spec.Service, "from", lb.securityGroups, "to", ids)
	if err := o.call(ctx, "SetLoadBalancerSecurityGroups", lb.String(), func() error {
		_, err := o.api.SetLoadBalancerSecurityGroupsWithContext(ctx, req)
		return err
	}); err != nil {
		return err
	}
	lb.securityGroups = slices.Clone(ids)
	return nil
}

// deleteGroup deletes a group of ours; one already gone is not an error.
func (o *Ops) deleteGroup(ctx context.Context, id string, svc types.NamespacedName) error {
	req := vpc.NewDeleteSecurityGroupRequest()
	req.SecurityGroupId = common.StringPtr(id)
	logWrite(ctx, "Deleting security group", "securityGroup", id, "service", svc)
	err := o.call(ctx, "DeleteSecurityGroup", "security group "+id, func() error {
		_, err := o.sgAPI.DeleteSecurityGroupWithContext(ctx, req)
		return err
	})
	if c := Code(err); c == codeSGNotFound || c == codeResourceNotFnd {
		return nil
	}
	return err
}

// deleteOwnedGroups deletes every group tagged for the Service (its CLB is
// gone, or was never ours to bind).
func (o *Ops) deleteOwnedGroups(ctx context.Context, ref lbspec.Ref) error {
	if o.sgAPI == nil {
		return nil
	}
	owned, err := o.describeOwnedGroups(ctx, ref.UID)
	if err != nil {
		return err
	}
	for _, g := range owned {
		if err := o.deleteGroup(ctx, g.id, ref.Service); err != nil {
			return err
		}
	}
	return nil
}

func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
