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
