package tencent

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// Security groups (vpc 2017-03-12): stateful firewalls bound to instances
// and load balancers. cloudsim keeps their policies and judges the data
// plane's traffic with them (see clb_firewall.go):
//
//   - a policy matches by protocol, port and source (CidrBlock, or
//     SecurityGroupId: the private IPs of the instances and the VIPs of
//     the CLBs bound to that group);
//   - "The rules in a security group are prioritized from top to bottom
//     ... If a rule is matched and executed, subsequent rules are not
//     evaluated" (https://www.tencentcloud.com/document/product/213/18197):
//     the first matching policy, in PolicyIndex order, ACCEPTs or DROPs;
//   - "If a security group has no rules, it will reject all traffic by
//     default" (same page); a new group has none (CreateSecurityGroup:
//     "新建的安全组的入站和出站规则默认都是全部拒绝");
//   - "Security groups are stateful" (same page): replies are allowed, so
//     only the direction that opens a flow is checked. Egress policies are
//     stored and answered but not enforced: every flow cloudsim carries
//     enters an instance or a CLB (cloudsim's choice).
const (
	// SecurityGroupQPS: Tencent's usual 20/s for VPC actions (not
	// confirmed per action), as for the route table actions.
	SecurityGroupQPS = 20

	// MaxSecurityGroupPolicies: "The maximum number of rules for a single
	// security group is 512, including all inbound rules, outbound rules"
	// (https://www.tencentcloud.com/document/product/214/14733). A group
	// bound only to instances may have a lower quota on some accounts;
	// cloudsim takes the higher documented figure so that it never refuses
	// what the cloud accepts.
	MaxSecurityGroupPolicies = 512
	// MaxSecurityGroupName: GroupName "不得超过60个字符" (CreateSecurityGroup).
	MaxSecurityGroupName = 60
	// MaxSecurityGroupDescription: GroupDescription "最多100个字符".
	MaxSecurityGroupDescription = 100
	// MaxSecurityGroupIDs: DescribeSecurityGroups SecurityGroupIds "每次请求
	// 的实例的上限为100".
	MaxSecurityGroupIDs = 100

	defaultSecurityGroupLimit = 20  // DescribeSecurityGroups Limit: "默认为20"
	maxSecurityGroupLimit     = 100 // "最大值为100"
)

// Security group error codes, as the SDK's client.go lists them per action.
const (
	CodeSGMalformedID      = "InvalidSecurityGroupID.Malformed"
	CodeSGNotFound         = "InvalidSecurityGroupID.NotFound"
	CodeSGInUse            = "ResourceInUse"
	CodeSGVersionMismatch  = "UnsupportedOperation.VersionMismatch"
	CodeSGDuplicatePolicy  = "UnsupportedOperation.DuplicatePolicy"
	CodeSGPolicyLimit      = "LimitExceeded.SecurityGroupPolicySet"
	CodeSGModifyLimit      = "LimitExceeded" // ModifySecurityGroupPolicies' code for the same limit
	CodeSGEmpty            = "InvalidParameterValue.Empty"
	CodeSGRange            = "InvalidParameterValue.Range"
	CodeSGTooLong          = "InvalidParameterValue.TooLong"
	CodeSGInvalidParameter = "InvalidParameter"
	CodeSGInvalidValue     = "InvalidParameterValue"
)

// Policy protocols ("TCP, UDP, ICMP, ICMPV6, GRE, ALL") and actions.
var sgProtocols = []string{"TCP", "UDP", "ICMP", "ICMPV6", "GRE", "ALL"}

const (
	sgAccept = "ACCEPT"
	sgDrop   = "DROP"
)

// SecurityGroup is a security group as the admin API and the Go API show
// and seed it; policies use the SDK's type, in priority order.
type SecurityGroup struct {
	ID          string                     `json:"id,omitempty"` // sg-xxxxxxxx; generated if empty
	Name        string                     `json:"name,omitempty"`
	Description string                     `json:"description,omitempty"`
	Region      string                     `json:"region,omitempty"` // default: the simulator's region
	Ingress     []*vpc.SecurityGroupPolicy `json:"ingress,omitempty"`
	Egress      []*vpc.SecurityGroupPolicy `json:"egress,omitempty"`
	Version     int64                      `json:"version,omitempty"` // read-only: +1 with every change of the policies
	// CLBs are the load balancers bound to the group (read-only).
	CLBs []string `json:"clbs,omitempty"`
}

// SecurityGroups is the security group service: the groups and the
// bindings of CLBs to them. Instances carry their own bindings
// (core.Instance.SecurityGroupIDs). It is safe for concurrent use; its
// lock is never held while calling into the CLB service or the data plane,
// so the data plane's firewall may use it at any time.
type SecurityGroups struct {
	core *core.Core

	mu     sync.Mutex
	groups map[string]*sgRec
	seq    int64
	// bound: security group -> CLB id -> the CLB's VIP (invalid while it
	// is being created), published by the CLB service.
	bound core.Members
}

type sgRec struct {
	id, name, desc, region string
	tags                   []*vpc.Tag
	created, updated       time.Time
	seq                    int64
	version                int64
	ingress, egress        []sgPolicy
}

// sgPolicy is a validated policy: the SDK form for answers and the
// compiled form for matching.
type sgPolicy struct {
	in       vpc.SecurityGroupPolicy // normalized; PolicyIndex and ModifyTime set on answer
	proto    string
	ports    []portRange // nil: every port
	cidr     netip.Prefix
	ipv6     bool   // an Ipv6CidrBlock: never matches IPv4 traffic
	sgRef    string // source or destination security group
	accept   bool
	modified time.Time
}

type portRange struct{ lo, hi int }

// NewSecurityGroups returns the empty service with its admin endpoints
// registered on c's admin API.
func NewSecurityGroups(c *core.Core) *SecurityGroups {
	s := newSecurityGroups(c)
	s.registerAdmin()
	c.AddInstanceCheck(func(in core.Instance) error {
		if e := s.checkGroups(c.RegionOf(in), in.SecurityGroupIDs); e != nil {
			return fmt.Errorf("securityGroupIds: %s", e.Message)
		}
		return nil
	})
	return s
}

func newSecurityGroups(c *core.Core) *SecurityGroups {
	return &SecurityGroups{core: c, groups: map[string]*sgRec{}, bound: core.Members{}}
}

// Actions are the security group actions, for the vpc service.
func (s *SecurityGroups) Actions() map[string]Action {
	act := func(h ActionFunc) Action {
		return Action{Handler: h, RateLimit: SecurityGroupQPS, RegionRequired: true}
	}
	return map[string]Action{
		"CreateSecurityGroup":           act(s.createSecurityGroup),
		"DescribeSecurityGroups":        act(s.describeSecurityGroups),
		"DeleteSecurityGroup":           act(s.deleteSecurityGroup),
		"CreateSecurityGroupPolicies":   act(s.createPolicies),
		"DescribeSecurityGroupPolicies": act(s.describePolicies),
		"DeleteSecurityGroupPolicies":   act(s.deletePolicies),
		"ReplaceSecurityGroupPolicies":  act(s.replacePolicies),
		"ReplaceSecurityGroupPolicy":    act(s.replacePolicy),
		"ModifySecurityGroupPolicies":   act(s.modifyPolicies),
	}
}

// ---- validation ----

// compilePolicy validates one policy as CreateSecurityGroupPolicies
// documents it. Callers hold s.mu (a referenced group must exist). A
// missing field is InvalidParameterValue.Empty, which Create, Delete and
// ModifySecurityGroupPolicies document (MissingParameter none of them,
// vpc@v1.3.83 client.go); templates and MY_PUBLIC_IP are refused with
// UnsupportedOperation as cloudsim's choice (not emulated).
func (s *SecurityGroups) compilePolicy(where, region string, p *vpc.SecurityGroupPolicy, now time.Time) (sgPolicy, *Error) {
	if p == nil {
		return sgPolicy{}, Errorf(CodeSGEmpty, "%s is empty.", where)
	}
	out := sgPolicy{in: *p, modified: now}
	out.in.PolicyIndex, out.in.ModifyTime, out.in.Priority = nil, nil, nil
	if p.ServiceTemplate != nil || p.AddressTemplate != nil {
		return sgPolicy{}, Errorf("UnsupportedOperation", "%s: cloudsim does not emulate parameter templates (ServiceTemplate, AddressTemplate).", where)
	}
	out.proto = strings.ToUpper(str(p.Protocol))
	switch {
	case out.proto == "":
		return sgPolicy{}, Errorf(CodeSGEmpty, "%s.Protocol is required (one of %s).", where, strings.Join(sgProtocols, ", "))
	case !slices.Contains(sgProtocols, out.proto):
		return sgPolicy{}, Errorf(CodeVPCMalformed, "%s.Protocol `%s` must be one of %s.", where, str(p.Protocol), strings.Join(sgProtocols, ", "))
	}
	out.in.Protocol = common.StringPtr(out.proto)
	// "只有当 Protocol 字段是 TCP 或 UDP 时，Port 字段才被接受"; with ALL the
	// port is "all" ("如果Protocol设置为ALL，则Port也需要设置为all").
	port := strings.TrimSpace(str(p.Port))
	switch {
	case port == "" || strings.EqualFold(port, "all"):
		out.in.Port = common.StringPtr("ALL")
	case out.proto != "TCP" && out.proto != "UDP":
		return sgPolicy{}, Errorf(CodeVPCMalformed, "%s.Port `%s` is accepted only with protocol TCP or UDP, not %s.", where, port, out.proto)
	default:
		ranges, err := parsePorts(port)
		if err != nil {
			return sgPolicy{}, Errorf(CodeVPCMalformed, "%s.Port `%s`: %v (a port, a range like 8000-8010, or ports separated by commas).", where, port, err)
		}
		out.ports = ranges
		out.in.Port = common.StringPtr(port)
	}
	var sources []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"CidrBlock", str(p.CidrBlock) != ""}, {"Ipv6CidrBlock", str(p.Ipv6CidrBlock) != ""}, {"SecurityGroupId", str(p.SecurityGroupId) != ""}} {
		if f.set {
			sources = append(sources, f.name)
		}
	}
	// "CidrBlock, Ipv6CidrBlock, SecurityGroupId, AddressTemplate 四者是排他关系".
	switch len(sources) {
	case 0:
		return sgPolicy{}, Errorf(CodeSGEmpty, "%s needs one of CidrBlock, Ipv6CidrBlock or SecurityGroupId.", where)
	case 1:
	default:
		return sgPolicy{}, Errorf(CodeVPCCoexist, "%s: %s cannot be given together.", where, strings.Join(sources, " and "))
	}
	switch {
	case str(p.CidrBlock) != "":
		c := strings.TrimSpace(*p.CidrBlock)
		if c == "MY_PUBLIC_IP" {
			return sgPolicy{}, Errorf("UnsupportedOperation", "%s: cloudsim does not resolve MY_PUBLIC_IP; give a CIDR block.", where)
		}
		pfx, err := parseSGCidr(c)
		if err != nil {
			return sgPolicy{}, Errorf(CodeVPCMalformed, "%s.CidrBlock `%s` is not an IPv4 address or CIDR block.", where, c)
		}
		out.cidr = pfx
		out.in.CidrBlock = common.StringPtr(pfx.String())
		if pfx.Bits() == 32 && !strings.Contains(c, "/") {
			out.in.CidrBlock = common.StringPtr(c) // an address stays as given
		}
	case str(p.Ipv6CidrBlock) != "":
		if _, err := netip.ParsePrefix(*p.Ipv6CidrBlock); err != nil {
			if _, err := netip.ParseAddr(*p.Ipv6CidrBlock); err != nil {
				return sgPolicy{}, Errorf(CodeVPCMalformed, "%s.Ipv6CidrBlock `%s` is not an IPv6 address or CIDR block.", where, *p.Ipv6CidrBlock)
			}
		}
		out.ipv6 = true
	default:
		ref := *p.SecurityGroupId
		if !core.ValidSecurityGroupID(ref) {
			return sgPolicy{}, Errorf(CodeVPCMalformed, "%s.SecurityGroupId `%s` is malformed.", where, ref)
		}
		if g := s.groups[ref]; g == nil || g.region != region {
			return sgPolicy{}, Errorf(CodeVPCResourceNotFound, "%s.SecurityGroupId: the security group `%s` does not exist.", where, ref)
		}
		out.sgRef = ref
	}
	switch strings.ToUpper(str(p.Action)) {
	case sgAccept:
		out.accept = true
	case sgDrop:
	case "":
		return sgPolicy{}, Errorf(CodeSGEmpty, "%s.Action is required (ACCEPT or DROP).", where)
	default:
		return sgPolicy{}, Errorf(CodeVPCMalformed, "%s.Action `%s` must be ACCEPT or DROP.", where, str(p.Action))
	}
	out.in.Action = common.StringPtr(strings.ToUpper(*p.Action))
	if utf8.RuneCountInString(str(p.PolicyDescription)) > MaxSecurityGroupDescription {
		return sgPolicy{}, Errorf(CodeSGTooLong, "%s.PolicyDescription is longer than %d characters.", where, MaxSecurityGroupDescription)
	}
	return out, nil
}

// parseSGCidr reads an IPv4 CIDR block or address. "0.0.0.0/n 都会映射为
// 0.0.0.0/0".
func parseSGCidr(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil || !a.Is4() {
			return netip.Prefix{}, fmt.Errorf("not IPv4")
		}
		return netip.PrefixFrom(a, 32), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil || !p.Addr().Is4() {
		return netip.Prefix{}, fmt.Errorf("not IPv4")
	}
	if p.Addr() == netip.IPv4Unspecified() {
		return netip.PrefixFrom(p.Addr(), 0), nil
	}
	return p.Masked(), nil
}

// parsePorts reads "80", "8000-8010" or "80,443,8000-8010"
// (SecurityGroupPolicy.Port: "端口(all, 离散port, range)").
func parsePorts(s string) ([]portRange, error) {
	var out []portRange
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			return nil, fmt.Errorf("%q is not a port", part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
				return nil, fmt.Errorf("%q is not a port range", part)
			}
		}
		if a < 1 || b > 65535 || a > b {
			return nil, fmt.Errorf("%q is outside 1-65535 or reversed", part)
		}
		out = append(out, portRange{a, b})
	}
	return out, nil
}

// same reports whether two policies say the same thing (for
// UnsupportedOperation.DuplicatePolicy and deletion by content).
func (p sgPolicy) same(o sgPolicy) bool {
	return p.proto == o.proto && str(p.in.Port) == str(o.in.Port) && p.cidr == o.cidr && p.sgRef == o.sgRef &&
		str(p.in.Ipv6CidrBlock) == str(o.in.Ipv6CidrBlock) && p.accept == o.accept
}

// ---- actions ----

func sgTime(t time.Time) *string { return common.StringPtr(t.In(beijing).Format(vpcTimeLayout)) }

func (g *sgRec) toSDK() *vpc.SecurityGroup {
	tags := g.tags
	if tags == nil {
		tags = []*vpc.Tag{}
	}
	return &vpc.SecurityGroup{
		SecurityGroupId:   common.StringPtr(g.id),
		SecurityGroupName: common.StringPtr(g.name),
		SecurityGroupDesc: common.StringPtr(g.desc),
		ProjectId:         common.StringPtr("0"),
		IsDefault:         common.BoolPtr(false),
		CreatedTime:       sgTime(g.created),
		UpdateTime:        sgTime(g.updated),
		TagSet:            tags,
	}
}

func (s *SecurityGroups) newIDLocked() string {
	for {
		id := "sg-" + randomSuffix()
		if s.groups[id] == nil {
			return id
		}
	}
}

func (s *SecurityGroups) createSecurityGroup(call *Call, body []byte) (any, error) {
	var req vpc.CreateSecurityGroupRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	name, desc := str(req.GroupName), str(req.GroupDescription)
	switch {
	case name == "":
		return nil, Errorf(CodeVPCMissingParameter, "The request is missing a required parameter `GroupName`.")
	case desc == "":
		return nil, Errorf(CodeVPCMissingParameter, "The request is missing a required parameter `GroupDescription`.")
	case utf8.RuneCountInString(name) > MaxSecurityGroupName:
		return nil, Errorf(CodeSGTooLong, "`GroupName` must be at most %d characters.", MaxSecurityGroupName)
	case utf8.RuneCountInString(desc) > MaxSecurityGroupDescription:
		return nil, Errorf(CodeSGTooLong, "`GroupDescription` must be at most %d characters.", MaxSecurityGroupDescription)
	case str(req.ProjectId) != "" && str(req.ProjectId) != "0":
		return nil, Errorf("UnsupportedOperation", "cloudsim emulates only the default project (ProjectId 0).")
	}
	seen := map[string]bool{}
	for _, t := range req.Tags {
		if t == nil || str(t.Key) == "" {
			return nil, Errorf("InvalidParameterValue.TagInvalidKey", "Every tag needs a `Key`.")
		}
		if seen[*t.Key] {
			return nil, Errorf("InvalidParameterValue.TagDuplicateKey", "The tag key `%s` appears twice.", *t.Key)
		}
		seen[*t.Key] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.core.Now()
	s.seq++
	g := &sgRec{id: s.newIDLocked(), name: name, desc: desc, region: call.Region, tags: req.Tags, created: now, updated: now, seq: s.seq, version: 0}
	s.groups[g.id] = g
	return &vpc.CreateSecurityGroupResponseParams{SecurityGroup: g.toSDK()}, nil
}

// groupLocked finds a group of the region. Callers hold s.mu.
func (s *SecurityGroups) groupLocked(region, id, notFoundCode string) (*sgRec, *Error) {
	if id == "" {
		return nil, Errorf(CodeVPCMissingParameter, "The request is missing a required parameter `SecurityGroupId`.")
	}
	if !core.ValidSecurityGroupID(id) {
		code := CodeVPCMalformed
		if notFoundCode == CodeSGNotFound {
			code = CodeSGMalformedID
		}
		return nil, Errorf(code, "The security group ID `%s` is malformed.", id)
	}
	g := s.groups[id]
	if g == nil || g.region != region {
		return nil, Errorf(notFoundCode, "The security group `%s` does not exist.", id)
	}
	return g, nil
}

func (s *SecurityGroups) describeSecurityGroups(call *Call, body []byte) (any, error) {
	var req vpc.DescribeSecurityGroupsRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	ids := deref(req.SecurityGroupIds)
	if len(ids) > 0 && len(req.Filters) > 0 {
		return nil, Errorf(CodeVPCCoexist, "The parameters `SecurityGroupIds` and `Filters` cannot be specified at the same time.")
	}
	if len(ids) > MaxSecurityGroupIDs {
		return nil, Errorf(CodeVPCLimitOutOfRange, "At most %d `SecurityGroupIds` per request, got %d.", MaxSecurityGroupIDs, len(ids))
	}
	offset, e := vpcInt("Offset", req.Offset, 0)
	if e != nil {
		return nil, e
	}
	limit, e := vpcInt("Limit", req.Limit, defaultSecurityGroupLimit)
	if e != nil {
		return nil, e
	}
	if limit == 0 {
		limit = defaultSecurityGroupLimit
	}
	if limit > maxSecurityGroupLimit {
		return nil, Errorf(CodeVPCLimitOutOfRange, "The value `%d` of parameter `Limit` exceeds the maximum of %d.", limit, maxSecurityGroupLimit)
	}
	type filter struct {
		name   string
		values []string
	}
	var filters []filter
	for _, f := range req.Filters {
		name := str(f.Name)
		switch {
		case name == "security-group-id", name == "security-group-name", name == "project-id", name == "tag-key", strings.HasPrefix(name, "tag:"):
			filters = append(filters, filter{name, deref(f.Values)})
		default:
			return nil, Errorf(CodeVPCFilterInvalidKey, "The filter `%s` is not supported (security-group-id, security-group-name, project-id, tag-key, tag:<key>).", name)
		}
	}
	switch str(req.OrderField) {
	case "", "CreatedTime", "UpdateTime":
	default:
		return nil, Errorf(CodeVPCMalformed, "`OrderField` must be CreatedTime or UpdateTime, got `%s`.", *req.OrderField)
	}
	desc := strings.EqualFold(str(req.OrderDirection), "DESC")
	if d := str(req.OrderDirection); d != "" && !strings.EqualFold(d, "ASC") && !desc {
		return nil, Errorf(CodeVPCMalformed, "`OrderDirection` must be ASC or DESC, got `%s`.", d)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if !core.ValidSecurityGroupID(id) {
			return nil, Errorf(CodeVPCMalformed, "The security group ID `%s` is malformed.", id)
		}
	}
	tagValue := func(g *sgRec, key string) (string, bool) {
		for _, t := range g.tags {
			if str(t.Key) == key {
				return str(t.Value), true
			}
		}
		return "", false
	}
	// An id that names no group is left out of the answer, not refused:
	// ResourceNotFound is among DescribeSecurityGroups' documented codes,
	// but not for which case; cloudsim's choice (the CCM handles both).
	var match []*sgRec
	for _, g := range s.sortedLocked() {
		if g.region != call.Region || (len(ids) > 0 && !slices.Contains(ids, g.id)) {
			continue
		}
		ok := true
		for _, f := range filters {
			switch f.name {
			case "security-group-id":
				ok = ok && slices.Contains(f.values, g.id)
			case "security-group-name":
				ok = ok && slices.Contains(f.values, g.name)
			case "project-id":
				ok = ok && slices.Contains(f.values, "0")
			case "tag-key":
				ok = ok && slices.ContainsFunc(f.values, func(k string) bool { _, has := tagValue(g, k); return has })
			default:
				v, has := tagValue(g, strings.TrimPrefix(f.name, "tag:"))
				ok = ok && has && slices.Contains(f.values, v)
			}
		}
		if ok {
			match = append(match, g)
		}
	}
	if str(req.OrderField) == "UpdateTime" {
		sort.SliceStable(match, func(i, j int) bool { return match[i].updated.Before(match[j].updated) })
	}
	if desc {
		slices.Reverse(match)
	}
	set := []*vpc.SecurityGroup{}
	for i := offset; i < len(match) && i < offset+limit; i++ {
		set = append(set, match[i].toSDK())
	}
	return &vpc.DescribeSecurityGroupsResponseParams{SecurityGroupSet: set, TotalCount: common.Uint64Ptr(uint64(len(match)))}, nil
}

func (s *SecurityGroups) sortedLocked() []*sgRec {
	out := make([]*sgRec, 0, len(s.groups))
	for _, g := range s.groups {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b *sgRec) int { return int(a.seq - b.seq) })
	return out
}

// deleteSecurityGroup refuses a group still bound to an instance or a CLB,
// or referenced by another group's policy ("安全组实例ID如果在其他安全组的规则
// 中被引用，则无法直接删除").
func (s *SecurityGroups) deleteSecurityGroup(call *Call, body []byte) (any, error) {
	var req vpc.DeleteSecurityGroupRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	id := str(req.SecurityGroupId)
	instances := s.core.Snapshot()
	s.mu.Lock()
	defer s.mu.Unlock()
	g, e := s.groupLocked(call.Region, id, CodeSGNotFound)
	if e != nil {
		return nil, e
	}
	if err := s.inUseLocked(g, instances); err != nil {
		return nil, err
	}
	delete(s.groups, g.id)
	return &vpc.DeleteSecurityGroupResponseParams{}, nil
}

// inUseLocked says why a group cannot be deleted, if it cannot.
func (s *SecurityGroups) inUseLocked(g *sgRec, instances []core.Record) *Error {
	for _, r := range instances {
		if slices.Contains(r.SecurityGroupIDs, g.id) {
			return Errorf(CodeSGInUse, "The security group `%s` is bound to instance `%s`.", g.id, r.ID)
		}
	}
	for lb := range s.bound[g.id] {
		return Errorf(CodeSGInUse, "The security group `%s` is bound to load balancer `%s`.", g.id, lb)
	}
	for _, o := range s.groups {
		for _, p := range slices.Concat(o.ingress, o.egress) {
			if o != g && p.sgRef == g.id {
				return Errorf(CodeSGInUse, "The security group `%s` is referenced by a policy of `%s`.", g.id, o.id)
			}
		}
	}
	return nil
}

// policySet reads a SecurityGroupPolicySet that holds one direction:
// "一次请求中只能创建单个方向的规则".
func policySet(set *vpc.SecurityGroupPolicySet) (dir string, in []*vpc.SecurityGroupPolicy, e *Error) {
	if set == nil {
		return "", nil, Errorf(CodeVPCMissingParameter, "The request is missing a required parameter `SecurityGroupPolicySet`.")
	}
	switch {
	case len(set.Ingress) > 0 && len(set.Egress) > 0:
		return "", nil, Errorf(CodeVPCCoexist, "One request changes the policies of one direction: give Ingress or Egress, not both.")
	case len(set.Ingress) > 0:
		return "Ingress", set.Ingress, nil
	case len(set.Egress) > 0:
		return "Egress", set.Egress, nil
	}
	return "", nil, Errorf(CodeSGEmpty, "`SecurityGroupPolicySet` has no Ingress or Egress policy.")
}

// checkVersion: "传入 Version 版本号若不等于当前安全组的最新版本，将返回失败；
// 若不传 Version 则直接..." (DeleteSecurityGroupPolicies).
func checkVersion(g *sgRec, set *vpc.SecurityGroupPolicySet) *Error {
	if set == nil || str(set.Version) == "" {
		return nil
	}
	if str(set.Version) != strconv.FormatInt(g.version, 10) {
		return Errorf(CodeSGVersionMismatch, "The policy set version `%s` is not the current version %d of security group `%s`: it changed since it was read.", *set.Version, g.version, g.id)
	}
	return nil
}

// changePolicies does what CreateSecurityGroupPolicies and
// DeleteSecurityGroupPolicies share: it reads the policies of one
// direction, finds their group at the Version the set names, and lets
// change apply them under s.mu.
func (s *SecurityGroups) changePolicies(region, id string, set *vpc.SecurityGroupPolicySet, change func(g *sgRec, dir string, in []*vpc.SecurityGroupPolicy) *Error) *Error {
	dir, in, e := policySet(set)
	if e != nil {
		return e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g, e := s.groupAtVersionLocked(region, id, set)
	if e != nil {
		return e
	}
	return change(g, dir, in)
}

// groupAtVersionLocked returns the group whose policies a request changes,
// refusing a Version that is not its current one. Callers hold s.mu.
func (s *SecurityGroups) groupAtVersionLocked(region, id string, set *vpc.SecurityGroupPolicySet) (*sgRec, *Error) {
	g, e := s.groupLocked(region, id, CodeVPCResourceNotFound)
	if e != nil {
		return nil, e
	}
	if e := checkVersion(g, set); e != nil {
		return nil, e
	}
	return g, nil
}

func (g *sgRec) rules(dir string) *[]sgPolicy {
	if dir == "Egress" {
		return &g.egress
	}
	return &g.ingress
}

func (g *sgRec) changed(now time.Time) {
	g.version++
	g.updated = now
}

func (s *SecurityGroups) createPolicies(call *Call, body []byte) (any, error) {
	var req vpc.CreateSecurityGroupPoliciesRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	if e := s.changePolicies(call.Region, str(req.SecurityGroupId), req.SecurityGroupPolicySet, s.insertLocked); e != nil {
		return nil, e
	}
	return &vpc.CreateSecurityGroupPoliciesResponseParams{}, nil
}

// insertLocked validates and inserts policies of one direction: at their
// common PolicyIndex ("多条规则的索引必须一致。如想在规则最前面插入一条，则填0即可，
// 如果想在最后追加，该字段可不填"), else at the end.
func (s *SecurityGroups) insertLocked(g *sgRec, dir string, in []*vpc.SecurityGroupPolicy) *Error {
	now := s.core.Now()
	rules := g.rules(dir)
	at := len(*rules)
	var index *int64
	var add []sgPolicy
	for i, p := range in {
		where := fmt.Sprintf("%s.%d", dir, i)
		c, e := s.compilePolicy(where, g.region, p, now)
		if e != nil {
			return e
		}
		if p.PolicyIndex != nil {
			if index != nil && *index != *p.PolicyIndex {
				return Errorf(CodeSGInvalidValue, "%s.PolicyIndex %d differs from %d: the policies of one request share one PolicyIndex.", where, *p.PolicyIndex, *index)
			}
			index = p.PolicyIndex
		}
		if slices.ContainsFunc(*rules, c.same) || slices.ContainsFunc(add, c.same) {
			return Errorf(CodeSGDuplicatePolicy, "%s duplicates a policy of security group `%s`.", where, g.id)
		}
		add = append(add, c)
	}
	if index != nil {
		if *index < 0 || *index > int64(len(*rules)) {
			return Errorf(CodeSGRange, "PolicyIndex %d is outside 0-%d.", *index, len(*rules))
		}
		at = int(*index)
	}
	if n := len(g.ingress) + len(g.egress) + len(add); n > MaxSecurityGroupPolicies {
		return Errorf(CodeSGPolicyLimit, "Security group `%s` would have %d policies; the limit is %d (inbound and outbound together).", g.id, n, MaxSecurityGroupPolicies)
	}
	*rules = slices.Insert(*rules, at, add...)
	g.changed(now)
	return nil
}

func (s *SecurityGroups) describePolicies(call *Call, body []byte) (any, error) {
	var req vpc.DescribeSecurityGroupPoliciesRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	match, e := policyFilters(req.Filters)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g, e := s.groupLocked(call.Region, str(req.SecurityGroupId), CodeVPCResourceNotFound)
	if e != nil {
		return nil, e
	}
	return &vpc.DescribeSecurityGroupPoliciesResponseParams{SecurityGroupPolicySet: g.policySetSDK(match)}, nil
}

// policySetSDK answers the group's policies (those match keeps), each with
// its PolicyIndex; the statistics count every policy.
func (g *sgRec) policySetSDK(match func(dir string, p *vpc.SecurityGroupPolicy) bool) *vpc.SecurityGroupPolicySet {
	out := &vpc.SecurityGroupPolicySet{
		Version: common.StringPtr(strconv.FormatInt(g.version, 10)),
		Ingress: []*vpc.SecurityGroupPolicy{}, Egress: []*vpc.SecurityGroupPolicy{},
	}
	var stats [2][2]uint64 // [ingress, egress][IPv4, IPv6]
	for k, dir := range []string{"Ingress", "Egress"} {
		for i, p := range *g.rules(dir) {
			v6 := 0
			if p.ipv6 {
				v6 = 1
			}
			stats[k][v6]++
			sdk := p.in
			sdk.PolicyIndex = common.Int64Ptr(int64(i))
			sdk.ModifyTime = sgTime(p.modified)
			if match != nil && !match(dir, &sdk) {
				continue
			}
			if dir == "Egress" {
				out.Egress = append(out.Egress, &sdk)
			} else {
				out.Ingress = append(out.Ingress, &sdk)
			}
		}
	}
	out.PolicyStatistics = &vpc.PolicyStatistics{
		IngressIPv4TotalCount: common.Uint64Ptr(stats[0][0]), IngressIPv6TotalCount: common.Uint64Ptr(stats[0][1]),
		EgressIPv4TotalCount: common.Uint64Ptr(stats[1][0]), EgressIPv6TotalCount: common.Uint64Ptr(stats[1][1]),
	}
	return out
}

// policyFilters compiles DescribeSecurityGroupPolicies' filters.
func policyFilters(in []*vpc.Filter) (func(dir string, p *vpc.SecurityGroupPolicy) bool, *Error) {
	if len(in) == 0 {
		return nil, nil
	}
	type f struct {
		name   string
		values []string
	}
	var fs []f
	for _, x := range in {
		name := str(x.Name)
		switch name {
		case "security-group-id", "ip", "protocol-type", "port", "poly", "direction", "description":
			fs = append(fs, f{name, deref(x.Values)})
		case "address-module", "service-module":
			fs = append(fs, f{name, deref(x.Values)}) // no policy uses templates: nothing matches
		default:
			return nil, Errorf(CodeVPCFilterInvalidKey, "The filter `%s` is not supported.", name)
		}
	}
	anyFold := func(values []string, v string) bool {
		return slices.ContainsFunc(values, func(x string) bool { return strings.EqualFold(x, v) })
	}
	return func(dir string, p *vpc.SecurityGroupPolicy) bool {
		for _, x := range fs {
			var ok bool
			switch x.name {
			case "security-group-id":
				ok = slices.Contains(x.values, str(p.SecurityGroupId))
			case "ip":
				ok = slices.ContainsFunc(x.values, func(v string) bool {
					return v != "" && (strings.Contains(str(p.CidrBlock), v) || strings.Contains(str(p.Ipv6CidrBlock), v))
				})
			case "protocol-type":
				ok = anyFold(x.values, str(p.Protocol))
			case "port":
				ok = slices.ContainsFunc(x.values, func(v string) bool {
					return strings.EqualFold(v, "ALL") || strings.Contains(str(p.Port), v)
				})
			case "poly":
				ok = anyFold(x.values, "ALL") || anyFold(x.values, str(p.Action))
			case "direction":
				ok = anyFold(x.values, "ALL") || (dir == "Ingress" && anyFold(x.values, "INBOUND")) || (dir == "Egress" && anyFold(x.values, "OUTBOUND"))
			case "description":
				ok = slices.ContainsFunc(x.values, func(v string) bool { return strings.Contains(str(p.PolicyDescription), v) })
			}
			if !ok {
				return false
			}
		}
		return true
	}, nil
}

// deletePolicies deletes by PolicyIndex or by content ("支持指定索引
// （PolicyIndex） 匹配删除和安全组规则匹配删除两种方式，一个请求中只能使用一种匹配
// 方式"), all or nothing.
func (s *SecurityGroups) deletePolicies(call *Call, body []byte) (any, error) {
	var req vpc.DeleteSecurityGroupPoliciesRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	if e := s.changePolicies(call.Region, str(req.SecurityGroupId), req.SecurityGroupPolicySet, s.deleteLocked); e != nil {
		return nil, e
	}
	return &vpc.DeleteSecurityGroupPoliciesResponseParams{}, nil
}

// deleteLocked deletes policies of one direction, all or nothing. Callers
// hold s.mu.
func (s *SecurityGroups) deleteLocked(g *sgRec, dir string, in []*vpc.SecurityGroupPolicy) *Error {
	rules := g.rules(dir)
	byIndex := in[0] != nil && in[0].PolicyIndex != nil
	drop := map[int]bool{}
	for i, p := range in {
		where := fmt.Sprintf("%s.%d", dir, i)
		if p == nil || (p.PolicyIndex != nil) != byIndex {
			return Errorf(CodeVPCCoexist, "%s: one request deletes either by PolicyIndex or by content, not both.", where)
		}
		if byIndex {
			if *p.PolicyIndex < 0 || *p.PolicyIndex >= int64(len(*rules)) {
				return Errorf(CodeSGRange, "%s.PolicyIndex %d: security group `%s` has %d %s policies.", where, *p.PolicyIndex, g.id, len(*rules), strings.ToLower(dir))
			}
			drop[int(*p.PolicyIndex)] = true
			continue
		}
		// "使用安全组规则匹配删除时，需要填写`Action`， `Protocol`， `CidrBlock`， `Port`参数".
		c, e := s.compilePolicy(where, g.region, p, time.Time{})
		if e != nil {
			return e
		}
		j := slices.IndexFunc(*rules, c.same)
		if j < 0 {
			return Errorf(CodeVPCResourceNotFound, "%s matches no %s policy of security group `%s`.", where, strings.ToLower(dir), g.id)
		}
		drop[j] = true
	}
	var keep []sgPolicy
	for i, p := range *rules {
		if !drop[i] {
			keep = append(keep, p)
		}
	}
	*rules = keep
	g.changed(s.core.Now())
	return nil
}

// replacePolicies replaces the policies at the given PolicyIndexes ("单个请求
// 中只能替换单个方向的一条或多条规则, 必须要指定索引（PolicyIndex）"). Only
// UpdateType Policy (the default: "只更新内容") is emulated.
func (s *SecurityGroups) replacePolicies(call *Call, body []byte) (any, error) {
	var req vpc.ReplaceSecurityGroupPoliciesRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	if t := str(req.UpdateType); t != "" && t != "Policy" {
		return nil, Errorf("UnsupportedOperation", "cloudsim emulates only UpdateType Policy of ReplaceSecurityGroupPolicies, not `%s`.", t)
	}
	if err := s.replace(call.Region, str(req.SecurityGroupId), req.SecurityGroupPolicySet, -1); err != nil {
		return nil, err
	}
	return &vpc.ReplaceSecurityGroupPoliciesResponseParams{}, nil
}

// replacePolicy is ReplaceSecurityGroupPolicy: one policy ("单个请求中只能替换
// 单个方向的一条规则").
func (s *SecurityGroups) replacePolicy(call *Call, body []byte) (any, error) {
	var req vpc.ReplaceSecurityGroupPolicyRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	if err := s.replace(call.Region, str(req.SecurityGroupId), req.SecurityGroupPolicySet, 1); err != nil {
		return nil, err
	}
	return &vpc.ReplaceSecurityGroupPolicyResponseParams{}, nil
}

func (s *SecurityGroups) replace(region, id string, set *vpc.SecurityGroupPolicySet, only int) *Error {
	dir, in, e := policySet(set)
	if e != nil {
		return e
	}
	if only > 0 && len(in) != only {
		return Errorf(CodeSGInvalidValue, "Give exactly %d policy to replace, got %d.", only, len(in))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g, e := s.groupAtVersionLocked(region, id, set)
	if e != nil {
		return e
	}
	now := s.core.Now()
	next := slices.Clone(*g.rules(dir))
	done := map[int64]bool{}
	for i, p := range in {
		where := fmt.Sprintf("%s.%d", dir, i)
		if p == nil || p.PolicyIndex == nil {
			return Errorf(CodeVPCMissingParameter, "%s.PolicyIndex is required.", where)
		}
		if *p.PolicyIndex < 0 || *p.PolicyIndex >= int64(len(next)) || done[*p.PolicyIndex] {
			return Errorf(CodeSGRange, "%s.PolicyIndex %d is not a %s policy of security group `%s` (or is given twice).", where, *p.PolicyIndex, strings.ToLower(dir), g.id)
		}
		done[*p.PolicyIndex] = true
		c, e := s.compilePolicy(where, g.region, p, now)
		if e != nil {
			return e
		}
		next[*p.PolicyIndex] = c
	}
	for i := range next {
		for j := i + 1; j < len(next); j++ {
			if next[i].same(next[j]) {
				return Errorf(CodeSGDuplicatePolicy, "The replacement would make %s policies %d and %d of `%s` identical.", strings.ToLower(dir), i, j, g.id)
			}
		}
	}
	*g.rules(dir) = next
	g.changed(now)
	return nil
}

// modifyPolicies resets both directions ("用于重置安全组出站和入站规则"); Version
// "0" clears every policy ("表示清空所有规则，并忽略 Egress 和 Ingress"). The
// policies keep the order given, as SortPolicys true promises ("严格按照
// SecurityGroupPolicySet参数传入的安全组规则及顺序进行重置"); what false does
// to the order is not documented, and cloudsim keeps it too (its choice).
func (s *SecurityGroups) modifyPolicies(call *Call, body []byte) (any, error) {
	var req vpc.ModifySecurityGroupPoliciesRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	set := req.SecurityGroupPolicySet
	if set == nil {
		return nil, Errorf(CodeVPCMissingParameter, "The request is missing a required parameter `SecurityGroupPolicySet`.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g, e := s.groupLocked(call.Region, str(req.SecurityGroupId), CodeVPCResourceNotFound)
	if e != nil {
		return nil, e
	}
	now := s.core.Now()
	if str(set.Version) == "0" {
		g.ingress, g.egress = nil, nil
		g.changed(now)
		return &vpc.ModifySecurityGroupPoliciesResponseParams{}, nil
	}
	// "SecurityGroupPolicySet对象必须同时指定新的出（Egress）入（Ingress）站规则"
	// (vpc@v1.3.115 models.go, ModifySecurityGroupPoliciesRequestParams):
	// a direction left out (or null) is refused; an explicit [] gives it
	// (cloudsim's reading of "指定"). InvalidParameterValue.Empty ("缺少参数",
	// errors.go) is in the action's documented codes (client.go).
	for dir, list := range map[string][]*vpc.SecurityGroupPolicy{"Ingress": set.Ingress, "Egress": set.Egress} {
		if list == nil {
			return nil, Errorf(CodeSGEmpty, "SecurityGroupPolicySet.%s is missing: ModifySecurityGroupPolicies resets both directions, so both Ingress and Egress must be given (\"必须同时指定新的出（Egress）入（Ingress）站规则\").", dir)
		}
	}
	var next [2][]sgPolicy
	for k, dir := range []string{"Ingress", "Egress"} {
		list := set.Ingress
		if dir == "Egress" {
			list = set.Egress
		}
		for i, p := range list {
			where := fmt.Sprintf("%s.%d", dir, i)
			if p != nil && p.PolicyIndex != nil {
				return nil, Errorf(CodeSGInvalidValue, "%s: ModifySecurityGroupPolicies takes no PolicyIndex (\"不支持自定义索引\").", where)
			}
			c, e := s.compilePolicy(where, g.region, p, now)
			if e != nil {
				return nil, e
			}
			if slices.ContainsFunc(next[k], c.same) {
				return nil, Errorf(CodeSGDuplicatePolicy, "%s duplicates another policy.", where)
			}
			next[k] = append(next[k], c)
		}
	}
	// ModifySecurityGroupPolicies documents plain LimitExceeded, not
	// LimitExceeded.SecurityGroupPolicySet (vpc@v1.3.83 client.go).
	if n := len(next[0]) + len(next[1]); n > MaxSecurityGroupPolicies {
		return nil, Errorf(CodeSGModifyLimit, "%d policies; a security group holds at most %d.", n, MaxSecurityGroupPolicies)
	}
	g.ingress, g.egress = next[0], next[1]
	g.changed(now)
	return &vpc.ModifySecurityGroupPoliciesResponseParams{}, nil
}
