package cloudsim

import "github.com/ccmkit/ccm/pkg/cloudsim/tencent"

// VPCRouteTable is a VPC route table (see tencent.VPCRouteTable).
type VPCRouteTable = tencent.VPCRouteTable

// VPCRoute is one route of a VPC route table.
type VPCRoute = tencent.VPCRoute

// CreateVPCRouteTable adds a VPC route table (its ID generated when empty)
// with its routes, all or nothing. Routes may have any gateway type (NAT,
// VPN, ...), as routes of other tools do.
func (s *Sim) CreateVPCRouteTable(rt tencent.VPCRouteTable) (tencent.VPCRouteTable, error) {
	return s.tencent.VPC().CreateVPCRouteTable(rt)
}

// VPCRouteTables returns every VPC route table with its routes.
func (s *Sim) VPCRouteTables() []tencent.VPCRouteTable { return s.tencent.VPC().VPCRouteTables() }

// VPCRouteTable returns one VPC route table with its routes.
func (s *Sim) VPCRouteTable(id string) (tencent.VPCRouteTable, error) {
	return s.tencent.VPC().VPCRouteTable(id)
}

// AddVPCRoute adds a route out of band and returns it with its RouteId.
func (s *Sim) AddVPCRoute(table string, r tencent.VPCRoute) (tencent.VPCRoute, error) {
	return s.tencent.VPC().AddVPCRoute(table, r)
}

// VPC is a Tencent VPC with its CIDRs (see tencent.VPCNetwork). A VPC that
// is not seeded has tencent.DefaultVPCCIDR.
type VPC = tencent.VPCNetwork

// AddVPC seeds a VPC with its CIDR (and assistant CIDRs).
func (s *Sim) AddVPC(v tencent.VPCNetwork) (tencent.VPCNetwork, error) {
	return s.tencent.Networks().AddVPC(v)
}

// VPCs returns every VPC cloudsim knows: seeded, the default VPC, and those
// instances and route tables name.
func (s *Sim) VPCs() []tencent.VPCNetwork { return s.tencent.Networks().VPCs() }
