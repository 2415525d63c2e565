package tencent

import (
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// VPC networks (vpc 2017-03-12 DescribeVpcs): each VPC has an IPv4 CIDR
// and optional assistant (secondary) CIDRs. Routes may not point inside
// them: a VPC route's destination "取值不能在私有网络网段内" (may not lie inside
// the VPC's range, Route.DestinationCidrBlock in vpc@v1.3.83 models.go;
// InvalidParameterValue.VpcCidrConflict, "目的网段和当前VPC的CIDR冲突"), and a
// TKE cluster route table's CIDR conflicts with the VPC's
// (InternalError.CidrConflictWithVpcCidr, "CIDR和vpc冲突", tke@v1.3.136
// errors.go, documented for CreateClusterRouteTable).

// DefaultVPCCIDR is the CIDR of every VPC no seed describes: cloudsim's
// choice. It covers the first 65534 addresses cloudsim hands to instances
// without a private IP (10.0.0.1 upwards).
const DefaultVPCCIDR = "10.0.0.0/16"

// DescribeVpcsQPS is DescribeVpcs' documented rate limit ("默认接口请求频率限制：
// 100次/秒", https://cloud.tencent.com/document/api/215/15778).
const DescribeVpcsQPS = 100

// maxDescribeVpcIDs: "每次请求的实例的上限为100" (DescribeVpcsRequestParams.VpcIds).
const maxDescribeVpcIDs = 100

// vpcRanges are where a VPC's CIDR may lie: "仅能在10.0.0.0/12，172.16.0.0/12，
// 192.168.0.0/16这三个内网网段内" (CreateVpcRequestParams.CidrBlock, vpc@v1.3.83
// models.go).
var vpcRanges = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/12"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
}

// VPCNetwork is a VPC as seeds, the admin API and the Go API describe it.
type VPCNetwork struct {
	ID             string   `json:"id"`                       // vpc-xxxxxxxx
	Name           string   `json:"name,omitempty"`           // default: the ID
	CIDR           string   `json:"cidr"`                     // e.g. 10.0.0.0/16
	AssistantCIDRs []string `json:"assistantCidrs,omitempty"` // secondary CIDRs
	Region         string   `json:"region,omitempty"`         // default: the simulator's region
	// Seeded is false for a VPC cloudsim knows only because instances or
	// route tables name it (answers only).
	Seeded bool `json:"seeded"`
}

// Networks holds the VPCs: those seeded, and those that instances or route
// tables name, which get DefaultVPCCIDR. It serves DescribeVpcs and answers
// the route checks.
type Networks struct {
	core *core.Core
	// refs lists the VPCs route tables name, by region (set by the dialect).
	refs func() map[string]string

	mu      sync.Mutex
	seeded  map[string]*vpcNetwork
	created time.Time
}

type vpcNetwork struct {
	VPCNetwork
	cidrs   []netip.Prefix // the CIDR, then the assistant CIDRs
	created time.Time
}

// NewNetworks returns the VPCs of c, with their admin endpoints registered.
func NewNetworks(c *core.Core) *Networks {
	n := &Networks{core: c, seeded: map[string]*vpcNetwork{}, created: c.Now()}
	n.registerAdmin()
	return n
}

// AddVPC seeds a VPC (replacing the CIDRs a VPC of that id had).
func (n *Networks) AddVPC(in VPCNetwork) (VPCNetwork, error) {
	if !core.ValidVpcID(in.ID) {
		return VPCNetwork{}, fmt.Errorf("%w: VPC ID %q: want vpc- and 8 lowercase letters or digits", core.ErrInvalid, in.ID)
	}
	if in.Region == "" {
		in.Region = n.core.Region()
	}
	if in.Name == "" {
		in.Name = in.ID
	}
	var cidrs []netip.Prefix
	for i, s := range append([]string{in.CIDR}, in.AssistantCIDRs...) {
		p, err := netip.ParsePrefix(s)
		if err != nil || !p.Addr().Is4() || p.Masked() != p {
			return VPCNetwork{}, fmt.Errorf("%w: VPC %s: CIDR %q is not an IPv4 CIDR without host bits", core.ErrInvalid, in.ID, s)
		}
		if i == 0 && !slices.ContainsFunc(vpcRanges, func(r netip.Prefix) bool { return r.Contains(p.Addr()) && p.Bits() >= r.Bits() }) {
			return VPCNetwork{}, fmt.Errorf("%w: VPC %s: CIDR %s must be inside 10.0.0.0/12, 172.16.0.0/12 or 192.168.0.0/16", core.ErrInvalid, in.ID, p)
		}
		for _, o := range cidrs {
			if o.Overlaps(p) {
				return VPCNetwork{}, fmt.Errorf("%w: VPC %s: CIDRs %s and %s overlap", core.ErrInvalid, in.ID, o, p)
			}
		}
		cidrs = append(cidrs, p)
	}
	in.Seeded = true
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seeded[in.ID] = &vpcNetwork{VPCNetwork: in, cidrs: cidrs, created: n.core.Now()}
	return in, nil
}

// CIDRs returns a VPC's CIDRs: the seeded ones, else DefaultVPCCIDR (every
// VPC has a range, whether cloudsim was told it or not).
func (n *Networks) CIDRs(vpcID string) []netip.Prefix {
	n.mu.Lock()
	defer n.mu.Unlock()
	if v := n.seeded[vpcID]; v != nil {
		return slices.Clone(v.cidrs)
	}
	return []netip.Prefix{netip.MustParsePrefix(DefaultVPCCIDR)}
}

// primaryConflict returns the VPC's primary CIDR if dst lies inside it.
func (n *Networks) primaryConflict(vpcID string, dst netip.Prefix) (netip.Prefix, bool) {
	c := n.CIDRs(vpcID)[0]
	return c, c.Contains(dst.Addr()) && dst.Bits() >= c.Bits()
}

// overlap returns the first CIDR of the VPC that overlaps p.
func (n *Networks) overlap(vpcID string, p netip.Prefix) (netip.Prefix, bool) {
	for _, c := range n.CIDRs(vpcID) {
		if c.Overlaps(p) {
			return c, true
		}
	}
	return netip.Prefix{}, false
}

// VPCs returns every VPC cloudsim knows, in id order: the seeded ones, the
// default VPC, and those instances and route tables name.
func (n *Networks) VPCs() []VPCNetwork {
	known := map[string]string{core.DefaultVpcID: n.core.Region()} // id -> region
	for _, rec := range n.core.Snapshot() {
		if core.ValidVpcID(rec.VpcID) {
			known[rec.VpcID] = rec.Region(n.core.Region())
		}
	}
	if n.refs != nil {
		for id, region := range n.refs() {
			known[id] = region
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []VPCNetwork
	for id, v := range n.seeded {
		out = append(out, v.VPCNetwork)
		delete(known, id)
	}
	for id, region := range known {
		out = append(out, VPCNetwork{ID: id, Name: id, CIDR: DefaultVPCCIDR, Region: region})
	}
	slices.SortFunc(out, func(a, b VPCNetwork) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// describeVpcs implements DescribeVpcs: VpcIds (at most 100) or Filters
// (vpc-id, vpc-name (substring), cidr-block, is-default; the tag, IPv6 and
// ISP filters match nothing, as no VPC here has tags or IPv6), not both;
// Offset/Limit as strings (default 20, at most 100). An unknown id is
// simply not in the answer (cloudsim's choice; ResourceNotFound is
// documented too).
func (n *Networks) describeVpcs(call *Call, body []byte) (any, error) {
	var req vpc.DescribeVpcsRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	ids := deref(req.VpcIds)
	if len(ids) > 0 && len(req.Filters) > 0 {
		return nil, Errorf(CodeVPCCoexist, "The parameters `VpcIds` and `Filters` cannot be specified at the same time.")
	}
	if len(ids) > maxDescribeVpcIDs {
		return nil, Errorf(CodeVPCLimitOutOfRange, "At most %d `VpcIds` per call, got %d.", maxDescribeVpcIDs, len(ids))
	}
	for _, id := range ids {
		if !core.ValidVpcID(id) {
			return nil, Errorf(CodeVPCMalformed, "The VPC ID `%s` is malformed.", id)
		}
	}
	offset, err := vpcInt("Offset", req.Offset, 0)
	if err != nil {
		return nil, err
	}
	limit, err := vpcInt("Limit", req.Limit, defaultRouteTableLimit)
	if err != nil {
		return nil, err
	}
	if limit > maxRouteTableLimit {
		return nil, Errorf(CodeVPCLimitOutOfRange, "The value `%d` of parameter `Limit` exceeds the maximum of %d.", limit, maxRouteTableLimit)
	}
	type filter struct {
		name   string
		values []string
	}
	var filters []filter
	for _, f := range req.Filters {
		name := ""
		if f != nil {
			name = str(f.Name)
		}
		switch {
		case slices.Contains([]string{"vpc-id", "vpc-name", "cidr-block", "is-default", "tag-key", "ipv6-cidr-block", "isp-type", "address-type"}, name),
			strings.HasPrefix(name, "tag:"):
			filters = append(filters, filter{name, deref(f.Values)})
		default:
			return nil, Errorf(CodeVPCFilterInvalidKey, "The filter `%s` is not supported.", name)
		}
	}
	match := func(v VPCNetwork) bool {
		if len(ids) > 0 && !slices.Contains(ids, v.ID) {
			return false
		}
		for _, f := range filters {
			ok := false
			for _, val := range f.values {
				switch f.name {
				case "vpc-id":
					ok = ok || val == v.ID
				case "vpc-name":
					ok = ok || strings.Contains(v.Name, val)
				case "cidr-block":
					ok = ok || val == v.CIDR
				case "is-default":
					ok = ok || strings.EqualFold(val, fmt.Sprint(v.ID == core.DefaultVpcID))
				}
			}
			if !ok {
				return false
			}
		}
		return true
	}
	var set []*vpc.Vpc
	total := 0
	for _, v := range n.VPCs() {
		if v.Region != call.Region || !match(v) {
			continue
		}
		if total >= offset && len(set) < limit {
			set = append(set, n.toSDK(v))
		}
		total++
	}
	if set == nil {
		set = []*vpc.Vpc{}
	}
	return &vpc.DescribeVpcsResponseParams{TotalCount: common.Uint64Ptr(uint64(total)), VpcSet: set}, nil
}

func (n *Networks) toSDK(v VPCNetwork) *vpc.Vpc {
	created := n.created
	n.mu.Lock()
	if s := n.seeded[v.ID]; s != nil {
		created = s.created
	}
	n.mu.Unlock()
	out := &vpc.Vpc{
		VpcId:            common.StringPtr(v.ID),
		VpcName:          common.StringPtr(v.Name),
		CidrBlock:        common.StringPtr(v.CIDR),
		IsDefault:        common.BoolPtr(v.ID == core.DefaultVpcID),
		EnableMulticast:  common.BoolPtr(false),
		CreatedTime:      common.StringPtr(created.In(beijing).Format(vpcTimeLayout)),
		DnsServerSet:     common.StringPtrs([]string{"183.60.83.19", "183.60.82.98"}),
		EnableDhcp:       common.BoolPtr(true),
		TagSet:           []*vpc.Tag{},
		AssistantCidrSet: []*vpc.AssistantCidr{},
	}
	for _, c := range v.AssistantCIDRs {
		out.AssistantCidrSet = append(out.AssistantCidrSet, &vpc.AssistantCidr{
			VpcId: common.StringPtr(v.ID), CidrBlock: common.StringPtr(c), AssistantType: common.Int64Ptr(0)})
	}
	return out
}

// registerAdmin adds:
//
//	GET  /admin/tencent/vpcs   every VPC cloudsim knows, with its CIDRs
//	POST /admin/tencent/vpcs   seed one (VPCNetwork)
func (n *Networks) registerAdmin() {
	const base = "/admin/tencent/vpcs"
	h := n.core.HandleAdminFunc
	h("GET "+base, func(*http.Request) (int, any, error) { return http.StatusOK, n.VPCs(), nil })
	h("POST "+base, func(r *http.Request) (int, any, error) {
		var in VPCNetwork
		if err := core.DecodeAdmin(r, &in); err != nil {
			return 0, nil, err
		}
		out, err := n.AddVPC(in)
		return http.StatusCreated, out, err
	})
}

// describeVpcs serves DescribeVpcs as part of the vpc service.
func (v *VPC) describeVpcs(call *Call, body []byte) (any, error) {
	if v.nets == nil {
		return &vpc.DescribeVpcsResponseParams{TotalCount: common.Uint64Ptr(0), VpcSet: []*vpc.Vpc{}}, nil
	}
	return v.nets.describeVpcs(call, body)
}

// vpcCIDRConflict reports whether dst lies inside the VPC's (primary) CIDR.
// Assistant CIDRs are not checked: the SDK does not say that they count.
func (v *VPC) vpcCIDRConflict(vpcID string, dst netip.Prefix) (netip.Prefix, bool) {
	if v.nets == nil {
		return netip.Prefix{}, false
	}
	return v.nets.primaryConflict(vpcID, dst)
}

// Networks returns the dialect's VPCs.
func (d *Dialect) Networks() *Networks { return d.nets }
