package routeops

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/ccmkit/ccm/internal/batch"
	"github.com/ccmkit/ccm/internal/callerr"
)

// VPCAPI is the slice of the vpc API (2017-03-12) the VPC backend uses.
// *vpc.Client implements it.
type VPCAPI interface {
	DescribeRouteTablesWithContext(ctx context.Context, req *vpc.DescribeRouteTablesRequest) (*vpc.DescribeRouteTablesResponse, error)
	CreateRoutesWithContext(ctx context.Context, req *vpc.CreateRoutesRequest) (*vpc.CreateRoutesResponse, error)
	DeleteRoutesWithContext(ctx context.Context, req *vpc.DeleteRoutesRequest) (*vpc.DeleteRoutesResponse, error)
	VPCsAPI
}

// GatewayTypeNormalCVM is the next-hop type of a route to an instance's
// private IP.
const GatewayTypeNormalCVM = "NORMAL_CVM"

// routeDescription marks the routes the CCM creates, for people reading the
// table in the console. Ownership does not depend on it.
const routeDescription = "kubernetes pod CIDR (cloud-controller-manager)"

// VPC is the backend for a VPC route table (rtb-...), for clusters without a
// TKE cluster route table: routes with GatewayType NORMAL_CVM and GatewayId
// = the node's private IP. A route is deleted by its RouteId. Only NORMAL_CVM
// routes can be ours; routes to NAT gateways, VPNs, peering and so on are
// never listed.
type VPC struct {
	api   VPCAPI
	id    string
	vpcID string
	cidrs *VPCCIDRs

	creates *batch.Batcher[Route, Route] // CreateRoute calls going out together (vpc_batch.go)
}

var _ Backend = (*VPC)(nil)

// NewVPC returns the backend for route table id in vpcID. cidrs (nil: read
// with api) are the VPC's CIDRs, which no route may point inside.
func NewVPC(api VPCAPI, id, vpcID string, cidrs *VPCCIDRs) *VPC {
	if cidrs == nil {
		cidrs = NewVPCCIDRs(api, vpcID)
	}
	b := &VPC{api: api, id: id, vpcID: vpcID, cidrs: cidrs}
	b.creates = newCreateBatcher(b)
	return b
}

func (b *VPC) String() string { return "VPC route table " + b.id }

// vpcKind classifies a vpc SDK error by its code.
func vpcKind(err error, onDelete bool) error {
	switch Code(err) {
	case "ResourceNotFound":
		if onDelete {
			return ErrRouteNotFound
		}
		return ErrTableNotFound
	case "UnsupportedOperation.ConflictWithDockerRoute":
		return ErrTKECIDRConflict
	case "InvalidParameterValue.Duplicate",
		"InvalidParameterValue.VpcCidrOverlapRoute", "InvalidParameterValue.SubnetOverlapRoute":
		return ErrCIDRConflict
	case "InvalidParameterValue.RouteNextHopInvalid":
		return ErrGatewayNotInstance
	case "InvalidParameterValue.VpcCidrConflict":
		return ErrVPCCIDRConflict
	}
	return nil
}

// describe reads the table with its routes.
func (b *VPC) describe(ctx context.Context) (*vpc.RouteTable, error) {
	const action = "DescribeRouteTables"
	req := vpc.NewDescribeRouteTablesRequest()
	req.RouteTableIds = common.StringPtrs([]string{b.id})
	resp, err := b.api.DescribeRouteTablesWithContext(ctx, req)
	if err != nil {
		return nil, &callerr.Error{Action: action, Target: "of " + b.String(), Kind: vpcKind(err, false), Err: err}
	}
	if resp == nil || resp.Response == nil {
		return nil, &callerr.Error{Action: action, Target: "of " + b.String(), Err: errors.New("malformed answer: no Response")}
	}
	for _, t := range resp.Response.RouteTableSet {
		if t != nil && deref(t.RouteTableId) == b.id {
			if vpcID := deref(t.VpcId); vpcID != b.vpcID {
				return nil, fmt.Errorf("%s belongs to VPC %s, not to vpc_id %s: set route_table_id to a table of the cluster's VPC", b, vpcID, b.vpcID)
			}
			return t, nil
		}
	}
	return nil, &callerr.Error{Action: action, Target: "of " + b.String(), Kind: ErrTableNotFound,
		Err: errors.New("the table is not in the answer")}
}

// FindTable describes the table; VPC route tables have no CIDR of their own.
func (b *VPC) FindTable(ctx context.Context) (Table, error) {
	if _, err := b.describe(ctx); err != nil {
		return Table{}, err
	}
	return Table{Name: b.id, VpcID: b.vpcID}, nil
}

// CreateTable is not offered: a VPC route table must also be associated
// with the cluster's subnets, which is the network owner's decision.
func (b *VPC) CreateTable(context.Context, netip.Prefix) (Table, error) {
	return Table{}, &callerr.Error{Action: "CreateRouteTable", Target: b.String(), Kind: ErrTableNotFound,
		Err: errors.New("the CCM does not create VPC route tables; create it and associate it with the cluster's subnets")}
}

// ListRoutes returns the table's NORMAL_CVM routes.
func (b *VPC) ListRoutes(ctx context.Context) ([]Route, error) {
	t, err := b.describe(ctx)
	if err != nil {
		return nil, err
	}
	return normalCVMRoutes(t), nil
}

func normalCVMRoutes(t *vpc.RouteTable) []Route {
	out := make([]Route, 0, len(t.RouteSet))
	for _, r := range t.RouteSet {
		if r == nil || deref(r.GatewayType) != GatewayTypeNormalCVM {
			continue
		}
		dst, derr := netip.ParsePrefix(deref(r.DestinationCidrBlock))
		gw, gerr := netip.ParseAddr(deref(r.GatewayId))
		if derr != nil || gerr != nil || r.RouteId == nil {
			continue
		}
		out = append(out, Route{Destination: dst, Gateway: gw, ID: strconv.FormatUint(*r.RouteId, 10)})
	}
	return out
}

// CreateRoute adds destination -> NORMAL_CVM gateway and returns it with its
// RouteId, taken from the table in the answer. Concurrent calls share one
// CreateRoutes (vpc_batch.go). A destination inside the
// VPC's CIDR is refused without a call when the CIDR is known: the API
// would refuse it (InvalidParameterValue.VpcCidrConflict), on every
// reconcile, for every such node.
func (b *VPC) CreateRoute(ctx context.Context, r Route) (Route, error) {
	if primary, _, err := b.cidrs.CIDRs(ctx); err == nil && primary.Contains(r.Destination.Addr()) && r.Destination.Bits() >= primary.Bits() {
		return Route{}, &callerr.Error{Action: "CreateRoutes", Target: fmt.Sprintf("%s in %s", r, b), Kind: ErrVPCCIDRConflict,
			Err: fmt.Errorf("not sent: the destination lies inside VPC %s's CIDR %s, which the API refuses (InvalidParameterValue.VpcCidrConflict)", b.vpcID, primary)}
	}
	return b.createBatched(ctx, r)
}

// DeleteRoute removes the route by its RouteId (looked up when unknown).
func (b *VPC) DeleteRoute(ctx context.Context, r Route) error {
	target := fmt.Sprintf("%s from %s", r, b)
	if r.ID == "" {
		routes, err := b.ListRoutes(ctx)
		if err != nil {
			return err
		}
		for _, x := range routes {
			if x.same(r) {
				r.ID = x.ID
			}
		}
		if r.ID == "" {
			return &callerr.Error{Action: "DeleteRoutes", Target: target, Kind: ErrRouteNotFound, Err: errors.New("not in the table")}
		}
	}
	id, err := strconv.ParseUint(r.ID, 10, 64)
	if err != nil {
		return &callerr.Error{Action: "DeleteRoutes", Target: target, Err: fmt.Errorf("RouteId %q: %v", r.ID, err)}
	}
	req := vpc.NewDeleteRoutesRequest()
	req.RouteTableId = common.StringPtr(b.id)
	req.Routes = []*vpc.Route{{RouteId: common.Uint64Ptr(id)}}
	if _, err := b.api.DeleteRoutesWithContext(ctx, req); err != nil {
		return &callerr.Error{Action: "DeleteRoutes", Target: target, Kind: vpcKind(err, true), Err: err}
	}
	return nil
}
