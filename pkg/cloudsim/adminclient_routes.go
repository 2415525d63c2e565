package cloudsim

import (
	"context"
	"net/http"
	"net/url"
)

// VPCRouteTables lists every VPC route table with its routes.
func (c *AdminClient) VPCRouteTables(ctx context.Context) ([]VPCRouteTable, error) {
	var out []VPCRouteTable
	err := c.do(ctx, http.MethodGet, "tencent/vpcroutetables", nil, &out)
	return out, err
}

// CreateVPCRouteTable creates a VPC route table (ID generated when empty).
func (c *AdminClient) CreateVPCRouteTable(ctx context.Context, rt VPCRouteTable) (VPCRouteTable, error) {
	var out VPCRouteTable
	err := c.do(ctx, http.MethodPost, "tencent/vpcroutetables", rt, &out)
	return out, err
}

// AddVPCRoute adds a route to a VPC route table out of band.
func (c *AdminClient) AddVPCRoute(ctx context.Context, table string, r VPCRoute) (VPCRoute, error) {
	var out VPCRoute
	err := c.do(ctx, http.MethodPost, "tencent/vpcroutetables/"+url.PathEscape(table)+"/routes", r, &out)
	return out, err
}

// AddVPC seeds a Tencent VPC with its CIDRs.
func (c *AdminClient) AddVPC(ctx context.Context, v VPC) (VPC, error) {
	var out VPC
	err := c.do(ctx, http.MethodPost, "tencent/vpcs", v, &out)
	return out, err
}

// VPCs lists every Tencent VPC cloudsim knows, with its CIDRs.
func (c *AdminClient) VPCs(ctx context.Context) ([]VPC, error) {
	var out []VPC
	err := c.do(ctx, http.MethodGet, "tencent/vpcs", nil, &out)
	return out, err
}
