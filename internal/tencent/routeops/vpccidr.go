package routeops

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/ccmkit/ccm/internal/callerr"
)

// Pod routes may not point inside the VPC's own range. A VPC route's
// destination "取值不能在私有网络网段内" (Route.DestinationCidrBlock,
// vpc@v1.3.83 models.go) and CreateRoutes refuses one with
// InvalidParameterValue.VpcCidrConflict ("目的网段和当前VPC的CIDR冲突"); a TKE
// cluster route table's CIDR may not overlap the VPC's
// (InternalError.CidrConflictWithVpcCidr, tke@v1.3.136 errors.go). So the
// cluster CIDR must lie outside the VPC's CIDRs.

// VPCsAPI is the slice of the vpc API (2017-03-12) that reads a VPC.
// *vpc.Client implements it.
type VPCsAPI interface {
	DescribeVpcsWithContext(ctx context.Context, req *vpc.DescribeVpcsRequest) (*vpc.DescribeVpcsResponse, error)
}

// VPCCIDRs reads a VPC's CIDRs once (DescribeVpcs) and keeps them: a VPC's
// primary CIDR never changes, and assistant CIDRs rarely do.
type VPCCIDRs struct {
	api   VPCsAPI
	vpcID string

	mu      sync.Mutex
	known   bool
	primary netip.Prefix
	all     []netip.Prefix // primary first, then the assistant CIDRs
}

// NewVPCCIDRs returns the CIDR lookup of vpcID. It makes no API call.
func NewVPCCIDRs(api VPCsAPI, vpcID string) *VPCCIDRs {
	return &VPCCIDRs{api: api, vpcID: vpcID}
}

// CIDRs returns the VPC's primary CIDR and all its CIDRs. A failed read is
// tried again on the next call.
func (v *VPCCIDRs) CIDRs(ctx context.Context) (primary netip.Prefix, all []netip.Prefix, err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.known {
		return v.primary, v.all, nil
	}
	target := "VPC " + v.vpcID
	req := vpc.NewDescribeVpcsRequest()
	req.VpcIds = common.StringPtrs([]string{v.vpcID})
	resp, err := v.api.DescribeVpcsWithContext(ctx, req)
	if err != nil {
		return netip.Prefix{}, nil, &callerr.Error{Action: "DescribeVpcs", Target: target, Err: err}
	}
	if resp == nil || resp.Response == nil {
		return netip.Prefix{}, nil, &callerr.Error{Action: "DescribeVpcs", Target: target, Err: errors.New("malformed answer: no Response")}
	}
	for _, in := range resp.Response.VpcSet {
		if in == nil || deref(in.VpcId) != v.vpcID {
			continue
		}
		p, err := netip.ParsePrefix(deref(in.CidrBlock))
		if err != nil {
			return netip.Prefix{}, nil, &callerr.Error{Action: "DescribeVpcs", Target: target, Err: fmt.Errorf("malformed CidrBlock %q", deref(in.CidrBlock))}
		}
		all := []netip.Prefix{p}
		for _, a := range in.AssistantCidrSet {
			if a == nil {
				continue
			}
			if ap, err := netip.ParsePrefix(deref(a.CidrBlock)); err == nil {
				all = append(all, ap)
			}
		}
		v.known, v.primary, v.all = true, p, all
		return p, all, nil
	}
	return netip.Prefix{}, nil, &callerr.Error{Action: "DescribeVpcs", Target: target, Err: errors.New("the VPC is not in the answer (check vpc_id and region)")}
}

// vpcOverlaps lists the CIDRs of all that overlap p, for messages.
func vpcOverlaps(all []netip.Prefix, p netip.Prefix) string {
	var out []string
	for _, c := range all {
		if c.Overlaps(p) {
			out = append(out, c.String())
		}
	}
	return strings.Join(out, ", ")
}
