package tencent

import (
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	tke "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/tke/v20180525"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// TKE cluster route tables (tke 2018-05-25): the route tables that carry one
// route per node, pod CIDR -> the node's private IP, inside the VPC.
const (
	TKEVersion = "2018-05-25"

	// Documented rate limits: Describe* 50/s, writes 20/s.
	DescribeClusterRoutesQPS      = 50
	DescribeClusterRouteTablesQPS = 50
	CreateClusterRouteQPS         = 20
	DeleteClusterRouteQPS         = 20
	CreateClusterRouteTableQPS    = 20
	DeleteClusterRouteTableQPS    = 20

	// GatewayIPFilter is the one filter DescribeClusterRoutes supports.
	GatewayIPFilter = "gateway-ip"

	maxRouteTableName = 255
)

// TKE error codes cloudsim answers. The SDK documents both an
// InvalidParameter.* and an InternalError.* variant of most of them; cloudsim
// uses the InvalidParameter.* one for what the caller asked wrong.
const (
	CodeParam                        = "InvalidParameter.Param"
	CodeRouteTableNotFound           = "ResourceNotFound.RouteTableNotFound"
	CodeRouteTableNotFoundOnDelete   = "InternalError.RouteTableNotFound"
	CodeRouteTableExists             = "ResourceInUse.ResourceExistAlready"
	CodeRouteTableNotEmpty           = "InvalidParameter.RouteTableNotEmpty"
	CodeCidrOutOfRouteTable          = "InvalidParameter.CidrOutOfRouteTable"
	CodeGatewayAlreadyAssociatedCidr = "InvalidParameter.GatewayAlreadyAssociatedCidr"
	CodeCidrConflictWithOtherRoute   = "InvalidParameter.CidrConflictWithOtherRoute"
	CodeCidrConflictWithOtherCluster = "InternalError.CidrConflictWithOtherCluster"
	CodeCidrConflictWithVpcCidr      = "InternalError.CidrConflictWithVpcCidr"
	CodeCvmNotFound                  = "InternalError.CvmNotFound"
)

// RouteTable is a TKE cluster route table as the admin API and the Go API
// show it. The JSON names are the admin API's.
type RouteTable struct {
	Name   string         `json:"name"`
	CIDR   string         `json:"cidr"`             // e.g. 10.244.0.0/16; every route must be inside it
	VpcID  string         `json:"vpcID"`            // the VPC the table routes in
	Region string         `json:"region,omitempty"` // default: the simulator's region
	Routes []ClusterRoute `json:"routes,omitempty"` // in creation order
}

// ClusterRoute is one route of a cluster route table.
type ClusterRoute struct {
	DestinationCIDR string `json:"destinationCidrBlock"` // a node's pod CIDR
	GatewayIP       string `json:"gatewayIp"`            // the node's private IP
}

// TKE holds the emulated cluster route tables and serves the tke actions.
// Table names are unique across regions (real names are cluster IDs); a call
// sees only the tables of its own region.
type TKE struct {
	core *core.Core
	nets *Networks // a table CIDR overlapping the VPC's conflicts (nil: no check)

	mu     sync.Mutex
	tables map[string]*routeTable
	seq    int64
}

type routeTable struct {
	name, region, vpcID string
	cidr                netip.Prefix
	seq                 int64
	routes              []clusterRoute // creation order
}

type clusterRoute struct {
	dst netip.Prefix
	gw  netip.Addr
}

func (r clusterRoute) String() string { return r.dst.String() + " -> " + r.gw.String() }

// NewTKE returns an empty TKE service bound to c, with its admin endpoints
// registered on c's admin API.
func NewTKE(c *core.Core) *TKE {
	t := &TKE{core: c, tables: map[string]*routeTable{}}
	t.registerAdmin()
	return t
}

// Service returns the tke service for Dialect.Register.
func (t *TKE) Service() *Service {
	act := func(h ActionFunc, qps float64) Action {
		return Action{Handler: h, RateLimit: qps, RegionRequired: true}
	}
	return &Service{
		Name:    "tke",
		Version: TKEVersion,
		Actions: map[string]Action{
			"DescribeClusterRouteTables": act(t.describeClusterRouteTables, DescribeClusterRouteTablesQPS),
			"CreateClusterRouteTable":    act(t.createClusterRouteTable, CreateClusterRouteTableQPS),
			"DeleteClusterRouteTable":    act(t.deleteClusterRouteTable, DeleteClusterRouteTableQPS),
			"DescribeClusterRoutes":      act(t.describeClusterRoutes, DescribeClusterRoutesQPS),
			"CreateClusterRoute":         act(t.createClusterRoute, CreateClusterRouteQPS),
			"DeleteClusterRoute":         act(t.deleteClusterRoute, DeleteClusterRouteQPS),
		},
	}
}

// ---- actions ----

func (t *TKE) describeClusterRouteTables(call *Call, body []byte) (any, error) {
	var req tke.DescribeClusterRouteTablesRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	set := []*tke.RouteTableInfo{}
	for _, rt := range t.RouteTables() {
		if rt.Region != call.Region {
			continue
		}
		set = append(set, &tke.RouteTableInfo{
			RouteTableName:      common.StringPtr(rt.Name),
			RouteTableCidrBlock: common.StringPtr(rt.CIDR),
			VpcId:               common.StringPtr(rt.VpcID),
		})
	}
	return &tke.DescribeClusterRouteTablesResponseParams{
		TotalCount:    common.Int64Ptr(int64(len(set))),
		RouteTableSet: set,
	}, nil
}

func (t *TKE) createClusterRouteTable(call *Call, body []byte) (any, error) {
	var req tke.CreateClusterRouteTableRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	if req.IgnoreClusterCidrConflict != nil && *req.IgnoreClusterCidrConflict != 0 && *req.IgnoreClusterCidrConflict != 1 {
		return nil, Errorf(CodeParam, "The parameter `IgnoreClusterCidrConflict` must be 0 or 1.")
	}
	rt := RouteTable{
		Name:   str(req.RouteTableName),
		CIDR:   str(req.RouteTableCidrBlock),
		VpcID:  str(req.VpcId),
		Region: call.Region,
	}
	if _, err := t.createTable(rt, true); err != nil {
		return nil, err
	}
	return &tke.CreateClusterRouteTableResponseParams{}, nil
}

func (t *TKE) deleteClusterRouteTable(call *Call, body []byte) (any, error) {
	var req tke.DeleteClusterRouteTableRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	name, e := tableName(req.RouteTableName)
	if e != nil {
		return nil, e
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	rt := t.table(call.Region, name)
	if rt == nil {
		return nil, Errorf(CodeRouteTableNotFound, "The route table `%s` does not exist in region `%s`.", name, call.Region)
	}
	if len(rt.routes) > 0 {
		return nil, Errorf(CodeRouteTableNotEmpty, "The route table `%s` still has %d routes; delete them first.", name, len(rt.routes))
	}
	delete(t.tables, name)
	return &tke.DeleteClusterRouteTableResponseParams{}, nil
}

func (t *TKE) describeClusterRoutes(call *Call, body []byte) (any, error) {
	var req tke.DescribeClusterRoutesRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	name, e := tableName(req.RouteTableName)
	if e != nil {
		return nil, e
	}
	var gateways []string
	for _, f := range req.Filters {
		if f == nil || str(f.Name) != GatewayIPFilter {
			return nil, Errorf(CodeParam, "Unsupported filter: DescribeClusterRoutes supports only the `%s` filter.", GatewayIPFilter)
		}
		vals := deref(f.Values)
		if len(vals) == 0 {
			return nil, Errorf(CodeParam, "The filter `%s` has no `Values`.", GatewayIPFilter)
		}
		gateways = append(gateways, vals...)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	set := []*tke.RouteInfo{}
	// An unknown table is not an error here: the documented errors of
	// DescribeClusterRoutes include no RouteTableNotFound, so cloudsim answers
	// an empty list, and callers must check the table with
	// DescribeClusterRouteTables.
	if rt := t.table(call.Region, name); rt != nil {
		for _, r := range rt.routes {
			if len(gateways) > 0 && !slices.Contains(gateways, r.gw.String()) {
				continue
			}
			if _, seen := t.core.Lag().View(routeLagKey(rt.name, r), r); !seen {
				continue // new, and not visible yet (routeLagKey)
			}
			set = append(set, &tke.RouteInfo{
				RouteTableName:       common.StringPtr(rt.name),
				DestinationCidrBlock: common.StringPtr(r.dst.String()),
				GatewayIp:            common.StringPtr(r.gw.String()),
			})
		}
	}
	return &tke.DescribeClusterRoutesResponseParams{
		TotalCount: common.Int64Ptr(int64(len(set))),
		RouteSet:   set,
	}, nil
}

func (t *TKE) createClusterRoute(call *Call, body []byte) (any, error) {
	var req tke.CreateClusterRouteRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	name, r, e := routeParams(req.RouteTableName, req.DestinationCidrBlock, req.GatewayIp)
	if e != nil {
		return nil, e
	}
	if err := t.addRoute(call.Region, name, r, true); err != nil {
		return nil, err
	}
	return &tke.CreateClusterRouteResponseParams{}, nil
}

func (t *TKE) deleteClusterRoute(call *Call, body []byte) (any, error) {
	var req tke.DeleteClusterRouteRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	name, r, e := routeParams(req.RouteTableName, req.DestinationCidrBlock, req.GatewayIp)
	if e != nil {
		return nil, e
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	rt := t.table(call.Region, name)
	if rt == nil {
		return nil, Errorf(CodeRouteTableNotFoundOnDelete, "The route table `%s` does not exist in region `%s`.", name, call.Region)
	}
	// Deleting a route that does not exist succeeds: the documented errors
	// include no "route not found" code (not confirmed against the cloud).
	rt.routes = slices.DeleteFunc(rt.routes, func(x clusterRoute) bool { return x == r })
	t.core.Lag().Forget(routeLagKey(rt.name, r))
	return &tke.DeleteClusterRouteResponseParams{}, nil
}

// routeParams reads the parameters CreateClusterRoute and
// DeleteClusterRoute share: the table's name and the route.
func routeParams(table, dst, gw *string) (string, clusterRoute, *Error) {
	name, e := tableName(table)
	if e != nil {
		return "", clusterRoute{}, e
	}
	r, e := parseClusterRoute(str(dst), str(gw))
	return name, r, e
}

// tableName reads the RouteTableName every action but the table listing
// requires.
func tableName(p *string) (string, *Error) {
	if str(p) == "" {
		return "", Errorf(CodeParam, "The parameter `RouteTableName` is required.")
	}
	return *p, nil
}

// ---- the model, shared by the actions and the admin/Go API ----

// table returns the table name in region, or nil. Callers hold t.mu.
func (t *TKE) table(region, name string) *routeTable {
	rt := t.tables[name]
	if rt == nil || rt.region != region {
		return nil
	}
	return rt
}

// createTable validates and adds a table with its routes (all or nothing).
// viaAPI applies the checks of CreateClusterRouteTable that an operator
// seeding cloudsim may skip: the CIDR must not overlap the VPC's instances
// or another cluster's table.
func (t *TKE) createTable(in RouteTable, viaAPI bool) (RouteTable, *Error) {
	if in.Region == "" {
		in.Region = t.core.Region()
	}
	switch {
	case in.Name == "":
		return RouteTable{}, Errorf(CodeParam, "The parameter `RouteTableName` is required.")
	case len(in.Name) > maxRouteTableName || strings.ContainsAny(in.Name, " \t\r\n/"):
		return RouteTable{}, Errorf(CodeParam, "The route table name `%s` is invalid: at most %d characters, no spaces or slashes.", in.Name, maxRouteTableName)
	case !core.ValidVpcID(in.VpcID):
		return RouteTable{}, Errorf(CodeParam, "The VPC ID `%s` is malformed: want `vpc-` followed by 8 lower-case letters or digits.", in.VpcID)
	}
	cidr, err := parseTableCIDR(in.CIDR)
	if err != nil {
		return RouteTable{}, err
	}
	routes := make([]clusterRoute, 0, len(in.Routes))
	for _, r := range in.Routes {
		cr, err := parseClusterRoute(r.DestinationCIDR, r.GatewayIP)
		if err != nil {
			return RouteTable{}, err
		}
		if err := checkRoute(in.Name, cidr, routes, cr); err != nil {
			return RouteTable{}, err
		}
		routes = append(routes, cr)
	}

	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.tables[in.Name]; ok {
		return RouteTable{}, Errorf(CodeRouteTableExists, "The route table `%s` already exists.", in.Name)
	}
	if viaAPI {
		for _, other := range t.tables {
			if other.vpcID == in.VpcID && other.region == in.Region && other.cidr.Overlaps(cidr) {
				return RouteTable{}, Errorf(CodeCidrConflictWithOtherCluster, "The CIDR `%s` overlaps `%s` of route table `%s` in the same VPC.", cidr, other.cidr, other.name)
			}
		}
		if t.nets != nil {
			if c, ok := t.nets.overlap(in.VpcID, cidr); ok {
				return RouteTable{}, Errorf(CodeCidrConflictWithVpcCidr, "The CIDR `%s` overlaps the CIDR `%s` of VPC `%s`.", cidr, c, in.VpcID)
			}
		}
		for _, rec := range t.core.Snapshot() {
			ip, err := netip.ParseAddr(rec.PrivateIP)
			if err == nil && rec.VpcID == in.VpcID && cidr.Contains(ip) {
				return RouteTable{}, Errorf(CodeCidrConflictWithVpcCidr, "The CIDR `%s` overlaps the VPC's own addresses (instance %s has %s).", cidr, rec.ID, ip)
			}
		}
	}
	t.seq++
	rt := &routeTable{name: in.Name, region: in.Region, vpcID: in.VpcID, cidr: cidr, seq: t.seq, routes: routes}
	t.tables[in.Name] = rt
	return rt.export(), nil
}

// addRoute validates and adds one route. checkCVM requires the gateway to
// be the private IP of an instance in the table's VPC, as CreateClusterRoute
// does; routes added out of band (admin API, seeds) skip that check.
func (t *TKE) addRoute(region, table string, r clusterRoute, checkCVM bool) *Error {
	t.mu.Lock()
	defer t.mu.Unlock()
	rt := t.table(region, table)
	if rt == nil {
		return Errorf(CodeRouteTableNotFound, "The route table `%s` does not exist in region `%s`.", table, region)
	}
	if err := checkRoute(rt.name, rt.cidr, rt.routes, r); err != nil {
		return err
	}
	if checkCVM && !t.isInstanceIP(rt.vpcID, r.gw) {
		return Errorf(CodeCvmNotFound, "No CVM instance in VPC `%s` has the private IP `%s` (GatewayIp must be a node's private IP).", rt.vpcID, r.gw)
	}
	rt.routes = append(rt.routes, r)
	if checkCVM { // a route made through the API: reads see it within the read lag
		t.core.Lag().Wrote(routeLagKey(rt.name, r), nil, r)
	}
	return nil
}

// routeLagKey is a route's key in the read lag (core/lag.go, cloudsim's
// option, off by default): DescribeClusterRoutes answers a new route only
// within the lag after CreateClusterRoute; a deletion is seen at once.
func routeLagKey(table string, r clusterRoute) string { return "tke-route/" + table + "/" + r.String() }

// checkRoute applies the real validation, in the real order: inside the
// table's CIDR, one CIDR per gateway, no overlap with another route.
func checkRoute(table string, cidr netip.Prefix, existing []clusterRoute, r clusterRoute) *Error {
	if !cidr.Contains(r.dst.Addr()) || r.dst.Bits() < cidr.Bits() {
		return Errorf(CodeCidrOutOfRouteTable, "The destination `%s` is outside the CIDR `%s` of route table `%s`.", r.dst, cidr, table)
	}
	for _, x := range existing {
		if x.gw == r.gw {
			return Errorf(CodeGatewayAlreadyAssociatedCidr, "The gateway `%s` is already associated with `%s` in route table `%s`: a gateway can have one CIDR.", r.gw, x.dst, table)
		}
	}
	for _, x := range existing {
		if x.dst.Overlaps(r.dst) {
			return Errorf(CodeCidrConflictWithOtherRoute, "The destination `%s` conflicts with the route %s in route table `%s`.", r.dst, x, table)
		}
	}
	return nil
}

// isInstanceIP reports whether a visible instance in vpc has ip. Callers
// hold t.mu; the core has its own lock.
func (t *TKE) isInstanceIP(vpc string, ip netip.Addr) bool {
	for _, rec := range t.core.Snapshot() {
		if rec.VpcID == vpc && rec.PrivateIP == ip.String() {
			return true
		}
	}
	return false
}

func parseTableCIDR(s string) (netip.Prefix, *Error) {
	if s == "" {
		return netip.Prefix{}, Errorf(CodeParam, "The parameter `RouteTableCidrBlock` is required.")
	}
	p, err := netip.ParsePrefix(s)
	switch {
	case err != nil || !p.Addr().Is4():
		return netip.Prefix{}, Errorf(CodeParam, "The CIDR `%s` is not a valid IPv4 CIDR block.", s)
	case p.Masked() != p:
		return netip.Prefix{}, Errorf(CodeParam, "The CIDR `%s` has host bits set (did you mean `%s`?).", s, p.Masked())
	}
	for _, private := range privateRanges {
		if private.Contains(p.Addr()) && p.Bits() >= private.Bits() {
			return p, nil
		}
	}
	return netip.Prefix{}, Errorf(CodeParam, "The CIDR `%s` must be inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16.", s)
}

var privateRanges = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
}

func parseClusterRoute(dst, gw string) (clusterRoute, *Error) {
	if dst == "" {
		return clusterRoute{}, Errorf(CodeParam, "The parameter `DestinationCidrBlock` is required.")
	}
	if gw == "" {
		return clusterRoute{}, Errorf(CodeParam, "The parameter `GatewayIp` is required.")
	}
	p, err := netip.ParsePrefix(dst)
	switch {
	case err != nil || !p.Addr().Is4():
		return clusterRoute{}, Errorf(CodeParam, "The destination `%s` is not a valid IPv4 CIDR block.", dst)
	case p.Masked() != p:
		return clusterRoute{}, Errorf(CodeParam, "The destination `%s` has host bits set (did you mean `%s`?).", dst, p.Masked())
	}
	ip, err := netip.ParseAddr(gw)
	if err != nil || !ip.Is4() {
		return clusterRoute{}, Errorf(CodeParam, "The gateway `%s` is not a valid IPv4 address.", gw)
	}
	return clusterRoute{dst: p, gw: ip}, nil
}

func (rt *routeTable) export() RouteTable {
	out := RouteTable{Name: rt.name, CIDR: rt.cidr.String(), VpcID: rt.vpcID, Region: rt.region,
		Routes: make([]ClusterRoute, len(rt.routes))}
	for i, r := range rt.routes {
		out.Routes[i] = ClusterRoute{DestinationCIDR: r.dst.String(), GatewayIP: r.gw.String()}
	}
	return out
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// ---- Go API (used by cloudsim.Sim, tests and the demo) ----

// ErrRouteTableNotFound is returned (wrapped) for an unknown route table.
var ErrRouteTableNotFound = fmt.Errorf("route table %w", core.ErrNotFound)

// CreateRouteTable adds a table and its routes, all or nothing, with the
// API's validation except the checks against instances and other tables,
// so that any starting state can be seeded. An error wraps core.ErrInvalid
// and names the API error code the cloud would give.
func (t *TKE) CreateRouteTable(rt RouteTable) (RouteTable, error) {
	out, err := t.createTable(rt, false)
	if err != nil {
		return RouteTable{}, fmt.Errorf("%w: %s", core.ErrInvalid, err)
	}
	return out, nil
}

// RouteTables returns every table, in creation order, with its routes.
func (t *TKE) RouteTables() []RouteTable {
	t.mu.Lock()
	defer t.mu.Unlock()
	list := make([]*routeTable, 0, len(t.tables))
	for _, rt := range t.tables {
		list = append(list, rt)
	}
	slices.SortFunc(list, func(a, b *routeTable) int { return int(a.seq - b.seq) })
	out := make([]RouteTable, len(list))
	for i, rt := range list {
		out[i] = rt.export()
	}
	return out
}

// RouteTable returns one table with its routes.
func (t *TKE) RouteTable(name string) (RouteTable, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	rt := t.tables[name]
	if rt == nil {
		return RouteTable{}, fmt.Errorf("%w: %q", ErrRouteTableNotFound, name)
	}
	return rt.export(), nil
}

// AddRoute adds a route to a table out of band (as another tool or a user
// in the console would), with the API's validation except the check that the
// gateway is an instance.
func (t *TKE) AddRoute(table string, r ClusterRoute) error {
	cr, perr := parseClusterRoute(r.DestinationCIDR, r.GatewayIP)
	if perr != nil {
		return fmt.Errorf("%w: %s", core.ErrInvalid, perr)
	}
	t.mu.Lock()
	rt := t.tables[table]
	t.mu.Unlock()
	if rt == nil {
		return fmt.Errorf("%w: %q", ErrRouteTableNotFound, table)
	}
	if err := t.addRoute(rt.region, table, cr, false); err != nil {
		return fmt.Errorf("%w: %s", core.ErrInvalid, err)
	}
	return nil
}

// DeleteRoute removes a route out of band. Removing a route that does not
// exist is not an error.
func (t *TKE) DeleteRoute(table string, r ClusterRoute) error {
	cr, perr := parseClusterRoute(r.DestinationCIDR, r.GatewayIP)
	if perr != nil {
		return fmt.Errorf("%w: %s", core.ErrInvalid, perr)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	rt := t.tables[table]
	if rt == nil {
		return fmt.Errorf("%w: %q", ErrRouteTableNotFound, table)
	}
	rt.routes = slices.DeleteFunc(rt.routes, func(x clusterRoute) bool { return x == cr })
	return nil
}

// DeleteRouteTable removes a table, with its routes.
func (t *TKE) DeleteRouteTable(name string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tables[name] == nil {
		return fmt.Errorf("%w: %q", ErrRouteTableNotFound, name)
	}
	delete(t.tables, name)
	return nil
}

// ---- admin API ----

// registerAdmin adds the route table endpoints to the core's admin API:
//
//	GET    /admin/tencent/routetables                 every table with its routes
//	POST   /admin/tencent/routetables                 create one table (RouteTable; routes optional)
//	GET    /admin/tencent/routetables/{name}          one table
//	DELETE /admin/tencent/routetables/{name}          delete a table and its routes
//	GET    /admin/tencent/routetables/{name}/routes   the table's routes
//	POST   /admin/tencent/routetables/{name}/routes   add a route out of band (ClusterRoute)
//	DELETE /admin/tencent/routetables/{name}/routes   delete a route (ClusterRoute body)
func (t *TKE) registerAdmin() {
	const base = "/admin/tencent/routetables"
	h := t.core.HandleAdminFunc
	h("GET "+base, func(*http.Request) (int, any, error) { return http.StatusOK, t.RouteTables(), nil })
	h("POST "+base, func(r *http.Request) (int, any, error) {
		var in RouteTable
		if err := core.DecodeAdmin(r, &in); err != nil {
			return 0, nil, err
		}
		out, err := t.CreateRouteTable(in)
		return http.StatusCreated, out, err
	})
	h("GET "+base+"/{name}", func(r *http.Request) (int, any, error) {
		rt, err := t.RouteTable(r.PathValue("name"))
		return http.StatusOK, rt, err
	})
	h("DELETE "+base+"/{name}", func(r *http.Request) (int, any, error) {
		return http.StatusNoContent, nil, t.DeleteRouteTable(r.PathValue("name"))
	})
	h("GET "+base+"/{name}/routes", func(r *http.Request) (int, any, error) {
		rt, err := t.RouteTable(r.PathValue("name"))
		return http.StatusOK, rt.Routes, err
	})
	h("POST "+base+"/{name}/routes", func(r *http.Request) (int, any, error) {
		var in ClusterRoute
		if err := core.DecodeAdmin(r, &in); err != nil {
			return 0, nil, err
		}
		return http.StatusCreated, in, t.AddRoute(r.PathValue("name"), in)
	})
	h("DELETE "+base+"/{name}/routes", func(r *http.Request) (int, any, error) {
		var in ClusterRoute
		if err := core.DecodeAdmin(r, &in); err != nil {
			return 0, nil, err
		}
		return http.StatusNoContent, nil, t.DeleteRoute(r.PathValue("name"), in)
	})
}

// TKE returns the dialect's TKE service: its route tables.
func (d *Dialect) TKE() *TKE { return d.tke }
