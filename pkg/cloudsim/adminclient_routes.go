package cloudsim

import (
	"context"
	"net/http"
	"net/url"

	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// VPCRouteTables lists every VPC route table with its routes.
func (c *AdminClient) VPCRouteTables(ctx context.Context) ([]tencent.VPCRouteTable, error) {
	var out []tencent.VPCRouteTable
	err := c.do(ctx, http.MethodGet, "tencent/vpcroutetables", nil, &out)
	return out, err
}

// CreateVPCRouteTable creates a VPC route table (ID generated when empty).
func (c *AdminClient) CreateVPCRouteTable(ctx context.Context, rt tencent.VPCRouteTable) (tencent.VPCRouteTable, error) {
	var out tencent.VPCRouteTable
	err := c.do(ctx, http.MethodPost, "tencent/vpcroutetables", rt, &out)
	return out, err
}

// AddVPCRoute adds a route to a VPC route table out of band.
func (c *AdminClient) AddVPCRoute(ctx context.Context, table string, r tencent.VPCRoute) (tencent.VPCRoute, error) {
	var out tencent.VPCRoute
	err := c.do(ctx, http.MethodPost, "tencent/vpcroutetables/"+url.PathEscape(table)+"/routes", r, &out)
	return out, err
}

// AddVPC seeds a Tencent VPC with its CIDRs.
func (c *AdminClient) AddVPC(ctx context.Context, v tencent.VPCNetwork) (tencent.VPCNetwork, error) {
	var out tencent.VPCNetwork
	err := c.do(ctx, http.MethodPost, "tencent/vpcs", v, &out)
	return out, err
}

// VPCs lists every Tencent VPC cloudsim knows, with its CIDRs.
func (c *AdminClient) VPCs(ctx context.Context) ([]tencent.VPCNetwork, error) {
	var out []tencent.VPCNetwork
	err := c.do(ctx, http.MethodGet, "tencent/vpcs", nil, &out)
	return out, err
}
