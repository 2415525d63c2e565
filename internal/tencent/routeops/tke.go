package routeops

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	tke "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/tke/v20180525"

	"github.com/ccmkit/ccm/internal/callerr"
)

// TKEAPI is the slice of the tke API (2018-05-25) the TKE backend uses.
// *tke.Client implements it.
type TKEAPI interface {
	DescribeClusterRouteTablesWithContext(ctx context.Context, req *tke.DescribeClusterRouteTablesRequest) (*tke.DescribeClusterRouteTablesResponse, error)
	CreateClusterRouteTableWithContext(ctx context.Context, req *tke.CreateClusterRouteTableRequest) (*tke.CreateClusterRouteTableResponse, error)
	DescribeClusterRoutesWithContext(ctx context.Context, req *tke.DescribeClusterRoutesRequest) (*tke.DescribeClusterRoutesResponse, error)
	CreateClusterRouteWithContext(ctx context.Context, req *tke.CreateClusterRouteRequest) (*tke.CreateClusterRouteResponse, error)
	DeleteClusterRouteWithContext(ctx context.Context, req *tke.DeleteClusterRouteRequest) (*tke.DeleteClusterRouteResponse, error)
}

// TKE is the backend for a TKE cluster route table: a named table with a
// CIDR; a route is identified by its destination and gateway, and a gateway
// carries at most one destination.
type TKE struct {
	api   TKEAPI
	name  string
	vpcID string
}

var _ Backend = (*TKE)(nil)

// NewTKE returns the backend for the table name in vpcID.
func NewTKE(api TKEAPI, name, vpcID string) *TKE {
	return &TKE{api: api, name: name, vpcID: vpcID}
}

func (b *TKE) String() string { return fmt.Sprintf("TKE cluster route table %q", b.name) }

// FindTable looks the table up among the region's cluster route tables
// (DescribeClusterRouteTables is not paginated and takes no filter).
func (b *TKE) FindTable(ctx context.Context) (Table, error) {
	const action = "DescribeClusterRouteTables"
	target := "(looking for " + b.String() + ")"
	resp, err := b.api.DescribeClusterRouteTablesWithContext(ctx, tke.NewDescribeClusterRouteTablesRequest())
	if err != nil {
		return Table{}, &callerr.Error{Action: action, Target: target, Kind: tkeKind(err), Err: err}
	}
	if resp == nil || resp.Response == nil {
		return Table{}, &callerr.Error{Action: action, Target: target, Err: errors.New("malformed answer: no Response")}
	}
	for _, t := range resp.Response.RouteTableSet {
		if t == nil || deref(t.RouteTableName) != b.name {
			continue
		}
		cidr, err := netip.ParsePrefix(deref(t.RouteTableCidrBlock))
		if err != nil {
			return Table{}, &callerr.Error{Action: action, Target: target,
				Err: fmt.Errorf("malformed answer: RouteTableCidrBlock %q: %v", deref(t.RouteTableCidrBlock), err)}
		}
		if vpc := deref(t.VpcId); vpc != b.vpcID {
			// Routes there would point at addresses of another network.
			return Table{}, fmt.Errorf("%s belongs to VPC %s, not to vpc_id %s: set cluster_route_table to this cluster's table", b, vpc, b.vpcID)
		}
		return Table{Name: b.name, CIDR: cidr, VpcID: b.vpcID}, nil
	}
	return Table{}, &callerr.Error{Action: action, Target: target, Kind: ErrTableNotFound,
		Err: fmt.Errorf("no table named %q among the %d in the region", b.name, len(resp.Response.RouteTableSet))}
}

// CreateTable creates the table in our VPC. Conflicts with the VPC's own
// routes are not ignored (IgnoreClusterCidrConflict 0): a pod CIDR that
// shadows a subnet would break the network.
func (b *TKE) CreateTable(ctx context.Context, cidr netip.Prefix) (Table, error) {
	req := tke.NewCreateClusterRouteTableRequest()
	req.RouteTableName = common.StringPtr(b.name)
	req.RouteTableCidrBlock = common.StringPtr(cidr.String())
	req.VpcId = common.StringPtr(b.vpcID)
	req.IgnoreClusterCidrConflict = common.Int64Ptr(0)
	if _, err := b.api.CreateClusterRouteTableWithContext(ctx, req); err != nil {
		return Table{}, &callerr.Error{Action: "CreateClusterRouteTable", Target: fmt.Sprintf("%q (%s in %s)", b.name, cidr, b.vpcID), Kind: tkeKind(err), Err: err}
	}
	return Table{Name: b.name, CIDR: cidr, VpcID: b.vpcID}, nil
}

// ListRoutes reads every route of the table in one call (not paginated).
func (b *TKE) ListRoutes(ctx context.Context) ([]Route, error) {
	const action = "DescribeClusterRoutes"
	req := tke.NewDescribeClusterRoutesRequest()
	req.RouteTableName = common.StringPtr(b.name)
	resp, err := b.api.DescribeClusterRoutesWithContext(ctx, req)
	if err != nil {
		return nil, &callerr.Error{Action: action, Target: "of " + b.String(), Kind: tkeKind(err), Err: err}
	}
	if resp == nil || resp.Response == nil {
		return nil, &callerr.Error{Action: action, Target: "of " + b.String(), Err: errors.New("malformed answer: no Response")}
	}
	out := make([]Route, 0, len(resp.Response.RouteSet))
	for _, r := range resp.Response.RouteSet {
		if r == nil {
			continue
		}
		dst, derr := netip.ParsePrefix(deref(r.DestinationCidrBlock))
		gw, gerr := netip.ParseAddr(deref(r.GatewayIp))
		if derr != nil || gerr != nil {
			// A route we cannot parse is not one we created; it must not
			// hide the others, and it is never ours to touch.
			continue
		}
		out = append(out, Route{Destination: dst, Gateway: gw})
	}
	return out, nil
}

// CreateRoute adds destination -> gateway.
func (b *TKE) CreateRoute(ctx context.Context, r Route) (Route, error) {
	req := tke.NewCreateClusterRouteRequest()
	req.RouteTableName = common.StringPtr(b.name)
	req.DestinationCidrBlock = common.StringPtr(r.Destination.String())
	req.GatewayIp = common.StringPtr(r.Gateway.String())
	if _, err := b.api.CreateClusterRouteWithContext(ctx, req); err != nil {
		return Route{}, &callerr.Error{Action: "CreateClusterRoute", Target: fmt.Sprintf("%s in %s", r, b), Kind: tkeKind(err), Err: err}
	}
	return Route{Destination: r.Destination, Gateway: r.Gateway}, nil
}

// DeleteRoute removes destination -> gateway.
func (b *TKE) DeleteRoute(ctx context.Context, r Route) error {
	req := tke.NewDeleteClusterRouteRequest()
	req.RouteTableName = common.StringPtr(b.name)
	req.DestinationCidrBlock = common.StringPtr(r.Destination.String())
	req.GatewayIp = common.StringPtr(r.Gateway.String())
	if _, err := b.api.DeleteClusterRouteWithContext(ctx, req); err != nil {
		return &callerr.Error{Action: "DeleteClusterRoute", Target: fmt.Sprintf("%s from %s", r, b), Kind: tkeKind(err), Err: err}
	}
	return nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
