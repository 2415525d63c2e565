package tencent

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// Load balancer network types.
const (
	lbTypeOpen     = "OPEN"
	lbTypeInternal = "INTERNAL"
)

// Tag limits of Tencent's tag service.
const (
	maxTagKeyLen   = 127
	maxTagValueLen = 255
)

// checkName validates a load balancer or listener name: 1-80 characters,
// none outside the Basic Multilingual Plane (the API forbids emoji and
// other supplementary characters).
func checkName(param, name string) *Error {
	n := utf8.RuneCountInString(name)
	if n < 1 || n > MaxCLBNameLen {
		return Errorf("InvalidParameterValue.Length", "The length of `%s` must be 1 to %d characters, got %d.", param, MaxCLBNameLen, n)
	}
	if !utf8.ValidString(name) {
		return Errorf("InvalidParameterValue", "`%s` is not valid UTF-8.", param)
	}
	for _, r := range name {
		if r > 0xFFFF || r < 0x20 {
			return Errorf("InvalidParameterValue", "`%s` contains the character %q, which is not allowed (no control characters, emoji or other supplementary characters).", param, r)
		}
	}
	return nil
}

// checkTags validates the tags of a new load balancer.
func checkTags(in []*clb.TagInfo) ([]clbTag, *Error) {
	if len(in) > MaxLBTags {
		return nil, Errorf("InvalidParameterValue.Length", "The number of `Tags` (%d) exceeds the limit of %d.", len(in), MaxLBTags)
	}
	out := make([]clbTag, 0, len(in))
	seen := map[string]bool{}
	for i, t := range in {
		if t == nil || t.TagKey == nil || *t.TagKey == "" {
			return nil, Errorf("MissingParameter", "`Tags.%d.TagKey` is required.", i)
		}
		k, v := *t.TagKey, ptrStr(t.TagValue)
		if utf8.RuneCountInString(k) > maxTagKeyLen || utf8.RuneCountInString(v) > maxTagValueLen {
			return nil, Errorf("InvalidParameterValue.Length", "Tag `%s`: keys are limited to %d characters and values to %d.", k, maxTagKeyLen, maxTagValueLen)
		}
		if seen[k] {
			return nil, Errorf("InvalidParameterValue.Duplicate", "The tag key `%s` appears more than once in `Tags`.", k)
		}
		seen[k] = true
		out = append(out, clbTag{k, v})
	}
	return out, nil
}

func ptrStr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// createLoadBalancer implements CreateLoadBalancer. The new load balancers
// are visible at once with Status 0 and no VIP; the create task makes them
// Status 1 with their VIP. A ClientToken seen before answers the earlier
// result (ids and DealName) and starts no task; one whose create failed
// answers InvalidParameter.ClientTokenLimitExceeded.
func (l *CLB) createLoadBalancer(call *Call, body []byte) (any, error) {
	var req clb.CreateLoadBalancerRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	spec, perr := l.checkCreate(&req)
	if perr != nil {
		return nil, perr
	}
	token := ptrStr(req.ClientToken)
	if len(token) > MaxClientTokenLen {
		return nil, Errorf("InvalidParameterValue.Length", "`ClientToken` must be at most %d characters.", MaxClientTokenLen)
	}
	for _, r := range token {
		if r > 0x7E || r < 0x20 {
			return nil, Errorf("InvalidParameterValue", "`ClientToken` must be printable ASCII.")
		}
	}
	tokenKey := call.Region + "/" + token

	// Creates do not use startTask: they reserve ids that exist only from
	// this call on, and their task can be aborted.
	var ids []string
	var replay *clbToken
	l.mu.Lock()
	if token != "" {
		replay = l.tokens[tokenKey]
	}
	if replay != nil {
		l.mu.Unlock()
		if replay.failed {
			return nil, Errorf("InvalidParameter.ClientTokenLimitExceeded", "The ClientToken `%s` belongs to a create that failed; use a new ClientToken.", token)
		}
		// A replay starts no task: its RequestId is no TaskId (TaskId is
		// "请求ID，即接口返回的 RequestId 参数", the RequestId of the call that
		// started the task, DescribeTaskStatusRequestParams in clb@v1.3.105
		// models.go). The answer names the first call's load balancers and
		// order; their Status tells when they are ready.
		return &clb.CreateLoadBalancerResponseParams{
			LoadBalancerIds: common.StringPtrs(replay.ids),
			DealName:        common.StringPtr(replay.dealName),
		}, nil
	}
	if e := l.checkQuotaLocked(call.Region, spec.typ, spec.number); e != nil {
		l.mu.Unlock()
		return nil, e
	}
	now := l.core.Now()
	var created []*clbLB
	for range spec.number {
		lb := &clbLB{
			id: l.newLBIDLocked(), typ: spec.typ, region: call.Region,
			vpcID: spec.vpcID, subnetID: spec.subnetID, tags: slices.Clone(spec.tags),
			passToTarget: spec.passToTarget, internet: spec.internet, created: now, statusTime: now,
		}
		vip, verr := l.plane.AllocVIP(lb.id)
		if verr != nil {
			for _, c := range created {
				l.removeLocked(c)
			}
			l.mu.Unlock()
			return nil, Errorf("ResourceInsufficient", "No VIP is left for a new load balancer: %v.", verr)
		}
		lb.vip = vip
		name := spec.name
		if spec.number > 1 {
			name = "" // the API applies a name only when creating one LB
		}
		lb.name = l.uniqueNameLocked(call.Region, name, lb.id)
		l.seq++
		lb.seq = l.seq
		l.lbs[lb.id] = lb
		l.lagWroteLocked(lb.id, nil) // reads see it within the read lag (clb_lag.go)
		created = append(created, lb)
		ids = append(ids, lb.id)
	}
	l.dealSeq++
	dealName := fmt.Sprintf("%s%010d", now.In(beijing).Format("20060102"), l.dealSeq)
	res, rerr := l.tasks.Reserve(call.Action, ids...)
	if rerr != nil { // fresh ids cannot be busy
		for _, c := range created {
			l.removeLocked(c)
		}
		l.mu.Unlock()
		return nil, errInOperating(rerr)
	}
	if token != "" {
		l.tokens[tokenKey] = &clbToken{ids: ids, dealName: dealName}
	}
	l.mu.Unlock()

	l.tasks.Start(res, core.TaskSpec{
		ID:      call.RequestID,
		Aliases: []string{dealName},
		Action:  call.Action,
		Result:  ids,
		Latency: l.latency,
		Apply: func() error {
			l.mu.Lock()
			defer l.mu.Unlock()
			t := l.core.Now()
			for _, lb := range created {
				if l.lbs[lb.id] != lb {
					continue // deleted out of band meanwhile
				}
				before := lb.clone()
				lb.status, lb.statusTime = 1, t
				l.syncPlaneLocked(lb.id)
				l.lagWroteLocked(lb.id, before)
			}
			return nil
		},
		Abort: func(string) {
			l.mu.Lock()
			defer l.mu.Unlock()
			for _, lb := range created {
				if l.lbs[lb.id] == lb {
					l.removeLocked(lb)
				}
			}
			if token != "" {
				if tk := l.tokens[tokenKey]; tk != nil {
					tk.failed = true
				}
			}
		},
	})
	return &clb.CreateLoadBalancerResponseParams{
		LoadBalancerIds: common.StringPtrs(ids),
		DealName:        common.StringPtr(dealName),
	}, nil
}

// createSpec is a validated CreateLoadBalancer request.
type createSpec struct {
	typ, name, vpcID, subnetID string
	tags                       []clbTag
	number                     int
	passToTarget               bool
	internet                   clbInternet
}

func (l *CLB) checkCreate(req *clb.CreateLoadBalancerRequestParams) (createSpec, *Error) {
	var s createSpec
	if req.LoadBalancerType == nil || *req.LoadBalancerType == "" {
		return s, errMissing("LoadBalancerType")
	}
	s.typ = *req.LoadBalancerType
	if s.typ != lbTypeOpen && s.typ != lbTypeInternal {
		return s, Errorf("InvalidParameterValue", "`LoadBalancerType` must be OPEN or INTERNAL, got `%s`.", s.typ)
	}
	if req.Forward != nil && *req.Forward != 1 {
		return s, Errorf("InvalidParameterValue", "`Forward` must be 1 (only the standard load balancer can be created), got %d.", *req.Forward)
	}
	if req.LoadBalancerName != nil {
		if e := checkName("LoadBalancerName", *req.LoadBalancerName); e != nil {
			return s, e
		}
		s.name = *req.LoadBalancerName
	}
	s.vpcID, s.subnetID = ptrStr(req.VpcId), ptrStr(req.SubnetId)
	if s.vpcID != "" && !core.ValidVpcID(s.vpcID) && s.vpcID != core.DefaultVpcID {
		return s, Errorf("InvalidParameter.FormatError", "The VPC ID `%s` is malformed: want `vpc-` followed by 8 lower-case letters or digits.", s.vpcID)
	}
	if s.subnetID != "" && !core.ValidSubnetID(s.subnetID) && s.subnetID != core.DefaultSubnetID {
		return s, Errorf("InvalidParameter.FormatError", "The subnet ID `%s` is malformed: want `subnet-` followed by 8 lower-case letters or digits.", s.subnetID)
	}
	switch s.typ {
	case lbTypeInternal:
		if s.vpcID == "" {
			return s, Errorf("MissingParameter", "An INTERNAL load balancer needs `VpcId`.")
		}
		if s.subnetID == "" {
			return s, Errorf("MissingParameter", "An INTERNAL load balancer needs `SubnetId`: its VIP comes from that subnet.")
		}
	case lbTypeOpen:
		if s.subnetID != "" {
			return s, Errorf("InvalidParameter", "`SubnetId` cannot be given for an OPEN (public) IPv4 load balancer.")
		}
		if s.vpcID == "" {
			s.vpcID = core.DefaultVpcID // the account's default VPC
		}
	}
	var e *Error
	if s.tags, e = checkTags(req.Tags); e != nil {
		return s, e
	}
	s.number = 1
	if req.Number != nil {
		if *req.Number < 1 || *req.Number > 20 {
			return s, Errorf("InvalidParameterValue.Range", "`Number` must be between 1 and 20, got %d.", *req.Number)
		}
		s.number = int(*req.Number)
	}
	if req.AddressIPVersion != nil && !strings.EqualFold(*req.AddressIPVersion, "IPV4") {
		return s, Errorf("UnsupportedOperation", "cloudsim emulates IPv4 load balancers only (AddressIPVersion `%s`).", *req.AddressIPVersion)
	}
	if req.Vip != nil && *req.Vip != "" {
		return s, Errorf("UnsupportedOperation", "cloudsim allocates VIPs itself; `Vip` is not emulated.")
	}
	if req.DynamicVip != nil && *req.DynamicVip {
		return s, Errorf("UnsupportedOperation", "cloudsim does not emulate domain-only load balancers (`DynamicVip`).")
	}
	if req.ProjectId != nil && *req.ProjectId != 0 {
		return s, Errorf("UnsupportedOperation", "cloudsim emulates only the default project (ProjectId 0).")
	}
	s.passToTarget = req.LoadBalancerPassToTarget != nil && *req.LoadBalancerPassToTarget
	if s.internet, e = checkInternet(req, s.typ); e != nil {
		return s, e
	}
	return s, nil
}

// checkQuotaLocked enforces the per-region quota of a network type.
func (l *CLB) checkQuotaLocked(region, typ string, n int) *Error {
	used := 0
	for _, lb := range l.lbs {
		if lb.region == region && lb.typ == typ {
			used++
		}
	}
	if used+n > l.quota[typ] {
		return Errorf("LimitExceeded", "The quota of %s load balancers in %s is %d; %d exist.", typ, region, l.quota[typ], used)
	}
	return nil
}

// uniqueNameLocked returns name, or, if another load balancer of the region
// already has it (or it is empty), a generated one: the API renames a
// duplicate silently.
func (l *CLB) uniqueNameLocked(region, name, id string) string {
	if name == "" {
		return id
	}
	taken := func(n string) bool {
		for _, lb := range l.lbs {
			if lb.region == region && lb.name == n {
				return true
			}
		}
		return false
	}
	if !taken(name) {
		return name
	}
	suffix := "-" + strings.TrimPrefix(id, "lb-")
	r := []rune(name)
	if len(r)+utf8.RuneCountInString(suffix) > MaxCLBNameLen {
		r = r[:MaxCLBNameLen-utf8.RuneCountInString(suffix)]
	}
	return string(r) + suffix
}

// removeLocked deletes a load balancer with its listeners, stops its
// traffic and frees its VIP.
func (l *CLB) removeLocked(lb *clbLB) {
	delete(l.lbs, lb.id)
	l.core.Lag().Forget(clbLagKey(lb.id)) // reads see a deletion at once (clb_lag.go)
	l.sgs.bindCLB(lb.id, netip.Addr{}, nil)
	l.plane.Remove(lb.id)
	l.plane.ReleaseVIP(lb.vip)
}

// describeLoadBalancers implements DescribeLoadBalancers.
func (l *CLB) describeLoadBalancers(call *Call, body []byte) (any, error) {
	var req clb.DescribeLoadBalancersRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	ids := ptrStrs(req.LoadBalancerIds)
	if len(ids) > MaxLoadBalancerIDs {
		return nil, Errorf("InvalidParameterValue.Length", "The number of `LoadBalancerIds` (%d) exceeds the limit of %d.", len(ids), MaxLoadBalancerIDs)
	}
	offset, limit := int64(0), int64(DefaultDescribeLimit)
	if req.Offset != nil {
		if *req.Offset < 0 {
			return nil, Errorf("InvalidParameterValue.Range", "`Offset` must not be negative, got %d.", *req.Offset)
		}
		offset = *req.Offset
	}
	if req.Limit != nil {
		if *req.Limit < 0 || *req.Limit > MaxCLBDescribeLimit {
			return nil, Errorf("InvalidParameterValue.Range", "`Limit` must be between 0 and %d, got %d.", MaxCLBDescribeLimit, *req.Limit)
		}
		if *req.Limit > 0 {
			limit = *req.Limit
		}
	}
	filters, ferr := compileLBFilters(req.Filters)
	if ferr != nil {
		return nil, ferr
	}
	orderBy := ptrStr(req.OrderBy)
	if orderBy == "" {
		orderBy = "CreateTime"
	}
	if !slices.Contains([]string{"LoadBalancerName", "CreateTime", "Domain", "LoadBalancerType"}, orderBy) {
		return nil, Errorf("InvalidParameterValue", "`OrderBy` must be LoadBalancerName, CreateTime, Domain or LoadBalancerType, got `%s`.", orderBy)
	}
	desc := req.OrderType == nil || *req.OrderType == 1
	withTargetCount := slices.Contains(ptrStrs(req.AdditionalFields), "TargetCount")

	l.mu.Lock()
	defer l.mu.Unlock()
	var match []*clbLB
	for _, cur := range l.lbs {
		lb, seen := l.visibleLocked(cur) // as the read lag shows it (clb_lag.go)
		if !seen || lb.region != call.Region || !lbMatches(lb, &req, ids, filters) {
			continue
		}
		match = append(match, lb)
	}
	sort.Slice(match, func(i, j int) bool {
		a, b := match[i], match[j]
		var less, eq bool
		switch orderBy {
		case "LoadBalancerName":
			less, eq = a.name < b.name, a.name == b.name
		case "LoadBalancerType":
			less, eq = a.typ < b.typ, a.typ == b.typ
		default: // CreateTime; Domain is empty for all
			less, eq = a.seq < b.seq, a.seq == b.seq
		}
		if eq {
			less = a.seq < b.seq
		}
		if desc {
			return !less
		}
		return less
	})
	out := &clb.DescribeLoadBalancersResponseParams{
		TotalCount:      common.Uint64Ptr(uint64(len(match))),
		LoadBalancerSet: []*clb.LoadBalancer{},
	}
	for i := offset; i < int64(len(match)) && i < offset+limit; i++ {
		out.LoadBalancerSet = append(out.LoadBalancerSet, toSDKLoadBalancer(match[i], withTargetCount))
	}
	return out, nil
}

// lbFilter matches a load balancer against one filter's values (OR).
type lbFilter func(lb *clbLB, values []string) bool

type compiledLBFilter struct {
	match  lbFilter
	values []string
}

func lbFixed(v func(*clbLB) string) lbFilter {
	return func(lb *clbLB, values []string) bool { return slices.Contains(values, v(lb)) }
}

// lbFilters are the DescribeLoadBalancers filters; those about features
// cloudsim does not emulate match what such load balancers would show.
var lbFilters = map[string]lbFilter{
	"charge-type":          lbFixed(func(*clbLB) string { return "POSTPAID_BY_HOUR" }),
	"internet-charge-type": lbFixed(func(*clbLB) string { return "TRAFFIC_POSTPAID_BY_HOUR" }),
	"vip-isp": lbFixed(func(lb *clbLB) string {
		if lb.typ == lbTypeInternal {
			return "INTERNAL"
		}
		return "BGP"
	}),
	"exclusive":      lbFixed(func(*clbLB) string { return "0" }),
	"master-zone-id": func(*clbLB, []string) bool { return false },
	"function-name":  func(*clbLB, []string) bool { return false },
	"sla-type":       func(*clbLB, []string) bool { return false },
	"tag-key": func(lb *clbLB, values []string) bool {
		return slices.ContainsFunc(lb.tags, func(t clbTag) bool { return slices.Contains(values, t.key) })
	},
}

func compileLBFilters(in []*clb.Filter) ([]compiledLBFilter, *Error) {
	if len(in) > MaxCLBFilters {
		return nil, Errorf("InvalidParameterValue.InvalidFilter", "The number of `Filters` (%d) exceeds the limit of %d.", len(in), MaxCLBFilters)
	}
	var out []compiledLBFilter
	for _, f := range in {
		if f == nil || ptrStr(f.Name) == "" {
			return nil, Errorf("InvalidParameterValue.InvalidFilter", "Every filter needs a `Name`.")
		}
		name, values := *f.Name, ptrStrs(f.Values)
		if len(values) == 0 {
			return nil, Errorf("InvalidParameterValue.InvalidFilter", "The filter `%s` needs `Values`.", name)
		}
		if len(values) > MaxCLBFilterValues {
			return nil, Errorf("InvalidParameterValue.InvalidFilter", "The filter `%s` has %d values; the limit is %d.", name, len(values), MaxCLBFilterValues)
		}
		if key, ok := strings.CutPrefix(name, "tag:"); ok {
			if key == "" {
				return nil, Errorf("InvalidParameterValue.InvalidFilter", "The filter `%s` has no tag key.", name)
			}
			out = append(out, compiledLBFilter{values: values, match: func(lb *clbLB, vals []string) bool {
				return slices.ContainsFunc(lb.tags, func(t clbTag) bool { return t.key == key && slices.Contains(vals, t.value) })
			}})
			continue
		}
		m, ok := lbFilters[name]
		if !ok {
			names := make([]string, 0, len(lbFilters)+1)
			for n := range lbFilters {
				names = append(names, n)
			}
			names = append(names, "tag:<key>")
			sort.Strings(names)
			return nil, Errorf("InvalidParameterValue.InvalidFilter", "The filter `%s` is not supported. Supported filters: %s.", name, strings.Join(names, ", "))
		}
		out = append(out, compiledLBFilter{match: m, values: values})
	}
	return out, nil
}

func lbMatches(lb *clbLB, req *clb.DescribeLoadBalancersRequestParams, ids []string, filters []compiledLBFilter) bool {
	if len(ids) > 0 && !slices.Contains(ids, lb.id) {
		return false
	}
	if req.LoadBalancerType != nil && *req.LoadBalancerType != lb.typ {
		return false
	}
	if req.Forward != nil && *req.Forward != 1 {
		return false
	}
	if n := ptrStr(req.LoadBalancerName); n != "" && !strings.Contains(lb.name, n) {
		return false
	}
	if req.Domain != nil && *req.Domain != "" {
		return false // no load balancer has a domain
	}
	if vips := ptrStrs(req.LoadBalancerVips); len(vips) > 0 && (lb.status != 1 || !slices.Contains(vips, lb.vip.String())) {
		return false
	}
	if ips := ptrStrs(req.BackendPrivateIps); len(ips) > 0 && !lbHasBackendIP(lb, ips) {
		return false
	}
	if len(ptrStrs(req.BackendPublicIps)) > 0 {
		return false // targets are reached by private IP only
	}
	vipMatches := func(k string) bool { return lb.status == 1 && strings.Contains(lb.vip.String(), k) } // a VIP once allocated
	if k := ptrStr(req.SearchKey); k != "" && !strings.Contains(lb.name, k) && !strings.Contains(lb.id, k) && !vipMatches(k) {
		return false
	}
	if req.ProjectId != nil && *req.ProjectId != 0 {
		return false
	}
	if req.WithRs != nil && *req.WithRs != -1 {
		has := lbTargetCount(lb) > 0
		if (*req.WithRs == 1) != has {
			return false
		}
	}
	if v := ptrStr(req.VpcId); v != "" && v != lb.vpcID {
		return false
	}
	if sg := ptrStr(req.SecurityGroup); sg != "" && !slices.Contains(lb.securityGroups, sg) {
		return false
	}
	if req.MasterZone != nil && *req.MasterZone != "" {
		return false
	}
	for _, f := range filters {
		if !f.match(lb, f.values) {
			return false
		}
	}
	return true
}

func lbHasBackendIP(lb *clbLB, ips []string) bool {
	for _, li := range lb.listeners {
		for _, t := range li.targets {
			if slices.Contains(ips, t.ip) {
				return true
			}
		}
	}
	return false
}

// lbTargetCount counts a load balancer's target bindings.
func lbTargetCount(lb *clbLB) int {
	n := 0
	for _, li := range lb.listeners {
		n += len(li.targets)
	}
	return n
}

func ptrStrs(ps []*string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if p != nil {
			out = append(out, *p)
		}
	}
	return out
}

func toSDKLoadBalancer(lb *clbLB, withTargetCount bool) *clb.LoadBalancer {
	tags := []*clb.TagInfo{}
	for _, t := range lb.tags {
		tags = append(tags, &clb.TagInfo{TagKey: common.StringPtr(t.key), TagValue: common.StringPtr(t.value)})
	}
	vips := []*string{}
	if lb.status == 1 {
		vips = append(vips, common.StringPtr(lb.vip.String()))
	}
	out := &clb.LoadBalancer{
		LoadBalancerId:           common.StringPtr(lb.id),
		LoadBalancerName:         common.StringPtr(lb.name),
		LoadBalancerType:         common.StringPtr(lb.typ),
		Forward:                  common.Uint64Ptr(1),
		LoadBalancerVips:         vips,
		Status:                   common.Uint64Ptr(lb.status),
		CreateTime:               common.StringPtr(clbTime(lb.created)),
		StatusTime:               common.StringPtr(clbTime(lb.statusTime)),
		ProjectId:                common.Uint64Ptr(0),
		VpcId:                    common.StringPtr(lb.vpcID),
		OpenBgp:                  common.Uint64Ptr(0),
		Snat:                     common.BoolPtr(false),
		Isolation:                common.Uint64Ptr(0),
		Tags:                     tags,
		SecureGroups:             common.StringPtrs(lb.securityGroups),
		AddressIPVersion:         common.StringPtr("ipv4"),
		ChargeType:               common.StringPtr("POSTPAID_BY_HOUR"),
		IsDDos:                   common.BoolPtr(false),
		LoadBalancerPassToTarget: common.BoolPtr(lb.passToTarget),
		SnatPro:                  common.BoolPtr(false),
		Exclusive:                common.Uint64Ptr(0),
		AttributeFlags:           []*string{},
	}
	if lb.typ == lbTypeInternal {
		out.SubnetId = common.StringPtr(lb.subnetID)
	}
	lb.internet.describe(out, lb.typ)
	if withTargetCount {
		out.TargetCount = common.Uint64Ptr(uint64(lbTargetCount(lb)))
	}
	return out
}

// deleteLoadBalancer implements DeleteLoadBalancer. The load balancers stay
// visible until the task ends. A load balancer with
// TargetNumCheckRiskTargets or more real servers bound is refused with
// FailedOperation.TargetNumCheckRisk unless ForceDelete is set; too many
// deletions in the region refuse it with FailedOperation.FrequencyCheckRisk
// whatever ForceDelete says (clb_frequency.go).
func (l *CLB) deleteLoadBalancer(call *Call, body []byte) (any, error) {
	var req clb.DeleteLoadBalancerRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	ids := ptrStrs(req.LoadBalancerIds)
	if len(ids) == 0 {
		return nil, errMissing("LoadBalancerIds")
	}
	if len(ids) > MaxLoadBalancerIDs {
		return nil, Errorf("InvalidParameterValue.Length", "The number of `LoadBalancerIds` (%d) exceeds the limit of %d.", len(ids), MaxLoadBalancerIDs)
	}
	if dup := firstDuplicate(ids); dup != "" {
		return nil, Errorf("InvalidParameterValue.Duplicate", "The LoadBalancer `%s` appears more than once in `LoadBalancerIds`.", dup)
	}
	force := req.ForceDelete != nil && *req.ForceDelete
	var undoCount func()
	_, err := l.startTask(call, ids, func() (func() error, *Error) {
		var lbs []*clbLB
		for _, id := range ids {
			lb, e := l.lbLocked(call.Region, id)
			if e != nil {
				return nil, e
			}
			lbs = append(lbs, lb)
		}
		for _, lb := range lbs {
			if !force {
				backends := map[string]bool{}
				for _, li := range lb.listeners {
					for _, t := range li.targets {
						backends[t.backend()] = true
					}
				}
				if len(backends) >= TargetNumCheckRiskTargets {
					return nil, Errorf("FailedOperation.TargetNumCheckRisk",
						"The LoadBalancer `%s` has %d real servers bound (%d or more); set ForceDelete to delete it anyway.", lb.id, len(backends), TargetNumCheckRiskTargets)
				}
			}
		}
		// Checked last, so that only a deletion that would otherwise be
		// accepted counts.
		var e *Error
		if undoCount, e = l.checkDeleteFrequencyLocked(call.Region, len(lbs)); e != nil {
			return nil, e
		}
		return func() error {
			for _, lb := range lbs {
				if l.lbs[lb.id] == lb {
					l.removeLocked(lb)
				}
			}
			return nil
		}, nil
	})
	if err != nil {
		if undoCount != nil { // refused after counting: the LB was busy
			l.mu.Lock()
			undoCount()
			l.mu.Unlock()
		}
		return nil, err
	}
	return &clb.DeleteLoadBalancerResponseParams{}, nil
}

func firstDuplicate(xs []string) string {
	seen := map[string]bool{}
	for _, x := range xs {
		if seen[x] {
			return x
		}
		seen[x] = true
	}
	return ""
}

// modifyLoadBalancerAttributes implements ModifyLoadBalancerAttributes for
// the name and LoadBalancerPassToTarget. Unlike CreateLoadBalancer, a name
// another load balancer has is refused.
func (l *CLB) modifyLoadBalancerAttributes(call *Call, body []byte) (any, error) {
	var req clb.ModifyLoadBalancerAttributesRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	switch {
	case req.TargetRegionInfo != nil, req.InternetChargeInfo != nil, req.SwitchFlag != nil && *req.SwitchFlag != 0,
		req.SnatPro != nil, req.DeleteProtect != nil, req.ModifyClassicDomain != nil, req.AssociateEndpoint != nil:
		return nil, Errorf("UnsupportedOperation", "cloudsim emulates only `LoadBalancerName` and `LoadBalancerPassToTarget` of ModifyLoadBalancerAttributes.")
	}
	if req.LoadBalancerName != nil {
		if e := checkName("LoadBalancerName", *req.LoadBalancerName); e != nil {
			return nil, e
		}
	}
	id := ptrStr(req.LoadBalancerId)
	_, err := l.startTask(call, []string{id}, func() (func() error, *Error) {
		lb, e := l.lbLocked(call.Region, id)
		if e != nil {
			return nil, e
		}
		if n := req.LoadBalancerName; n != nil && *n != lb.name {
			for _, o := range l.lbs {
				if o.region == lb.region && o.name == *n {
					return nil, Errorf("InvalidParameterValue.Duplicate", "The name `%s` is already used by LoadBalancer `%s`.", *n, o.id)
				}
			}
		}
		return func() error {
			if req.LoadBalancerName != nil {
				lb.name = *req.LoadBalancerName
			}
			if req.LoadBalancerPassToTarget != nil {
				lb.passToTarget = *req.LoadBalancerPassToTarget
			}
			return nil
		}, nil
	})
	if err != nil {
		return nil, err
	}
	return &clb.ModifyLoadBalancerAttributesResponseParams{}, nil
}

// describeQuota implements DescribeQuota: the quotas cloudsim enforces,
// named as the Quota model comment (clb@v1.3.105 models.go) names them. The
// per-CLB ones have a null QuotaCurrent ("为 null 时表示无意义"). Layer-7
// rules, SNAT IPs, ISP CLBs and full-port-range listeners are not emulated,
// so their quotas are not listed.
func (l *CLB) describeQuota(call *Call, body []byte) (any, error) {
	var req clb.DescribeQuotaRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	l.mu.Lock()
	used := map[string]int64{}
	for _, lb := range l.lbs {
		if lb.region == call.Region {
			used[lb.typ]++
		}
	}
	l.mu.Unlock()
	q := func(id string, cur *int64, limit int) *clb.Quota {
		return &clb.Quota{QuotaId: common.StringPtr(id), QuotaCurrent: cur, QuotaLimit: common.Int64Ptr(int64(limit))}
	}
	return &clb.DescribeQuotaResponseParams{QuotaSet: []*clb.Quota{
		q("TOTAL_OPEN_CLB_QUOTA", common.Int64Ptr(used[lbTypeOpen]), l.quota[lbTypeOpen]),
		q("TOTAL_INTERNAL_CLB_QUOTA", common.Int64Ptr(used[lbTypeInternal]), l.quota[lbTypeInternal]),
		q("TOTAL_LISTENER_QUOTA", nil, ListenerQuota),
		q("TOTAL_TARGET_BIND_QUOTA", nil, l.targetQuota),
	}}, nil
}
