package tencent

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// VPC route tables (vpc 2017-03-12): the routes of a VPC, here only what a
// cloud-controller-manager uses: routes to an instance's private IP
// (GatewayType NORMAL_CVM), listed, created and deleted.
const (
	VPCVersion = "2017-03-12"

	// Rate limits: 20/s, Tencent's usual figure for VPC actions (not
	// confirmed per action).
	DescribeRouteTablesQPS = 20
	CreateRoutesQPS        = 20
	DeleteRoutesQPS        = 20

	// MaxRoutesPerTable is the quota of route entries per table. Tencent
	// publishes a per-table quota on the VPC use-limits page, but neither
	// the SDK nor docs at hand here state its value: 200 is cloudsim's
	// choice (LimitExceeded is the SDK's code for a quota, errors.go).
	MaxRoutesPerTable = 200
	// GatewayTypeNormalCVM routes to an instance's private IP.
	GatewayTypeNormalCVM = "NORMAL_CVM"

	defaultRouteTableLimit = 20
	maxRouteTableLimit     = 100
	vpcTimeLayout          = "2006-01-02 15:04:05"
)

// VPC error codes cloudsim answers.
const (
	CodeVPCResourceNotFound  = "ResourceNotFound"
	CodeVPCMalformed         = "InvalidParameterValue.Malformed"
	CodeVPCDuplicate         = "InvalidParameterValue.Duplicate"
	CodeVPCNextHopInvalid    = "InvalidParameterValue.RouteNextHopInvalid"
	CodeVPCDockerRoute       = "UnsupportedOperation.ConflictWithDockerRoute"
	CodeVPCLimitExceeded     = "LimitExceeded"
	CodeVPCCoexist           = "InvalidParameter.Coexist"
	CodeVPCFilterInvalidKey  = "InvalidParameter.FilterInvalidKey"
	CodeVPCLimitOutOfRange   = "InvalidParameterValue.LimitExceeded"
	CodeVPCMissingParameter  = "MissingParameter"
	CodeVPCUnsupportedOpType = "UnsupportedOperation"
	CodeVPCCidrConflict      = "InvalidParameterValue.VpcCidrConflict"
)

var routeTableIDRe = regexp.MustCompile(`^rtb-[a-z0-9]{8}$`)

// VPCRouteTable is a VPC route table as the admin API and the Go API show it.
type VPCRouteTable struct {
	ID     string     `json:"id"`               // rtb-xxxxxxxx; generated if empty
	Name   string     `json:"name"`             // default: the ID
	VpcID  string     `json:"vpcID"`            // required
	Region string     `json:"region,omitempty"` // default: the simulator's region
	Routes []VPCRoute `json:"routes,omitempty"` // in creation order
}

// VPCRoute is one route of a VPC route table.
type VPCRoute struct {
	ID              uint64 `json:"id,omitempty"` // RouteId; assigned
	DestinationCIDR string `json:"destinationCidrBlock"`
	GatewayType     string `json:"gatewayType"` // NORMAL_CVM, or any other type for routes added out of band
	GatewayID       string `json:"gatewayId"`   // the instance's private IP for NORMAL_CVM
	Description     string `json:"description,omitempty"`
}

// VPC holds the emulated VPC route tables and serves the vpc actions.
type VPC struct {
	core *core.Core
	tke  *TKE      // a destination inside a TKE cluster route table conflicts
	nets *Networks // a destination inside the VPC's CIDR conflicts (nil: no check)

	mu      sync.Mutex
	tables  map[string]*vpcTable
	seq     int64
	routeID uint64
}

type vpcTable struct {
	VPCRouteTable
	seq     int64
	created time.Time
	routes  []vpcRoute
}

type vpcRoute struct {
	VPCRoute
	dst     netip.Prefix
	created time.Time
}

// NewVPC returns an empty VPC service bound to c, aware of tke's tables, with
// its admin endpoints registered on c's admin API.
func NewVPC(c *core.Core, tke *TKE) *VPC {
	v := &VPC{core: c, tke: tke, tables: map[string]*vpcTable{}}
	v.registerAdmin()
	return v
}

// Service returns the vpc service for Dialect.Register.
func (v *VPC) Service() *Service {
	act := func(h ActionFunc, qps float64) Action {
		return Action{Handler: h, RateLimit: qps, RegionRequired: true}
	}
	return &Service{
		Name:    "vpc",
		Version: VPCVersion,
		Actions: map[string]Action{
			"DescribeRouteTables": act(v.describeRouteTables, DescribeRouteTablesQPS),
			"CreateRoutes":        act(v.createRoutes, CreateRoutesQPS),
			"DeleteRoutes":        act(v.deleteRoutes, DeleteRoutesQPS),
			"DescribeVpcs":        act(v.describeVpcs, DescribeVpcsQPS), // vpc_networks.go
		},
	}
}

// ---- actions ----

func (v *VPC) describeRouteTables(call *Call, body []byte) (any, error) {
	var req vpc.DescribeRouteTablesRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	ids := deref(req.RouteTableIds)
	if len(ids) > 0 && len(req.Filters) > 0 {
		return nil, Errorf(CodeVPCCoexist, "The parameters `RouteTableIds` and `Filters` cannot be specified at the same time.")
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
	filters := map[string][]string{}
	for _, f := range req.Filters {
		name := str(f.Name)
		switch name {
		case "route-table-id", "route-table-name", "vpc-id":
			filters[name] = append(filters[name], deref(f.Values)...)
		default:
			return nil, Errorf(CodeVPCFilterInvalidKey, "The filter `%s` is not supported (cloudsim supports route-table-id, route-table-name, vpc-id).", name)
		}
	}
	needRoutes := req.NeedRouterInfo == nil || *req.NeedRouterInfo

	v.mu.Lock()
	defer v.mu.Unlock()
	for _, id := range ids {
		if !routeTableIDRe.MatchString(id) {
			return nil, Errorf(CodeVPCMalformed, "The route table ID `%s` is malformed.", id)
		}
		if t := v.tables[id]; t == nil || t.Region != call.Region {
			return nil, Errorf(CodeVPCResourceNotFound, "The route table `%s` does not exist.", id)
		}
	}
	var match []*vpcTable
	for _, t := range v.sorted() {
		if t.Region != call.Region || (len(ids) > 0 && !slices.Contains(ids, t.ID)) {
			continue
		}
		if vals, ok := filters["route-table-id"]; ok && !slices.Contains(vals, t.ID) {
			continue
		}
		if vals, ok := filters["route-table-name"]; ok && !slices.Contains(vals, t.Name) {
			continue
		}
		if vals, ok := filters["vpc-id"]; ok && !slices.Contains(vals, t.VpcID) {
			continue
		}
		match = append(match, t)
	}
	set := []*vpc.RouteTable{}
	for i := offset; i < len(match) && i < offset+limit; i++ {
		rt := match[i].toSDK(needRoutes)
		rt.RouteSet = slices.DeleteFunc(rt.RouteSet, func(r *vpc.Route) bool {
			_, seen := v.core.Lag().View(vpcRouteLagKey(match[i].ID, *r.RouteId), r)
			return !seen // new, and not visible yet (vpcRouteLagKey)
		})
		set = append(set, rt)
	}
	return &vpc.DescribeRouteTablesResponseParams{
		TotalCount:    common.Uint64Ptr(uint64(len(match))),
		RouteTableSet: set,
	}, nil
}

func (v *VPC) createRoutes(call *Call, body []byte) (any, error) {
	var req vpc.CreateRoutesRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	id := str(req.RouteTableId)
	if id == "" {
		return nil, Errorf(CodeVPCMissingParameter, "The request is missing a required parameter `RouteTableId`.")
	}
	if len(req.Routes) == 0 {
		return nil, Errorf(CodeVPCMissingParameter, "The request is missing a required parameter `Routes`.")
	}
	in := make([]VPCRoute, 0, len(req.Routes))
	for _, r := range req.Routes {
		if r == nil {
			continue
		}
		in = append(in, VPCRoute{DestinationCIDR: str(r.DestinationCidrBlock), GatewayType: str(r.GatewayType),
			GatewayID: str(r.GatewayId), Description: str(r.RouteDescription)})
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	t, err := v.table(call.Region, id)
	if err != nil {
		return nil, err
	}
	if err := v.addRoutes(t, in, true); err != nil {
		return nil, err
	}
	return &vpc.CreateRoutesResponseParams{
		TotalCount:    common.Uint64Ptr(uint64(len(in))),
		RouteTableSet: []*vpc.RouteTable{t.toSDK(true)},
	}, nil
}

func (v *VPC) deleteRoutes(call *Call, body []byte) (any, error) {
	var req vpc.DeleteRoutesRequestParams
	if err := Decode(body, &req); err != nil {
		return nil, err
	}
	id := str(req.RouteTableId)
	if id == "" {
		return nil, Errorf(CodeVPCMissingParameter, "The request is missing a required parameter `RouteTableId`.")
	}
	if len(req.Routes) == 0 {
		return nil, Errorf(CodeVPCMissingParameter, "The request is missing a required parameter `Routes`.")
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	t, err := v.table(call.Region, id)
	if err != nil {
		return nil, err
	}
	// All or nothing: every route must exist.
	var del []int
	for _, r := range req.Routes {
		i := -1
		switch {
		case r != nil && r.RouteId != nil:
			i = slices.IndexFunc(t.routes, func(x vpcRoute) bool { return x.ID == *r.RouteId })
		case r != nil && r.RouteItemId != nil:
			i = slices.IndexFunc(t.routes, func(x vpcRoute) bool { return itemID(x.ID) == *r.RouteItemId })
		}
		if i < 0 {
			return nil, Errorf(CodeVPCResourceNotFound, "A route to delete does not exist in route table `%s` (give its RouteId).", id)
		}
		del = append(del, i)
	}
	deleted := []*vpc.Route{}
	for _, i := range del {
		deleted = append(deleted, t.routes[i].toSDK(t.ID))
	}
	t.routes = slices.DeleteFunc(t.routes, func(x vpcRoute) bool {
		return slices.ContainsFunc(deleted, func(d *vpc.Route) bool { return *d.RouteId == x.ID })
	})
	for _, d := range deleted {
		v.core.Lag().Forget(vpcRouteLagKey(t.ID, *d.RouteId))
	}
	return &vpc.DeleteRoutesResponseParams{RouteSet: deleted}, nil
}

// ---- the model ----

// table returns the table id of region. Callers hold v.mu.
func (v *VPC) table(region, id string) (*vpcTable, *Error) {
	if !routeTableIDRe.MatchString(id) {
		return nil, Errorf(CodeVPCMalformed, "The route table ID `%s` is malformed.", id)
	}
	t := v.tables[id]
	if t == nil || t.Region != region {
		return nil, Errorf(CodeVPCResourceNotFound, "The route table `%s` does not exist.", id)
	}
	return t, nil
}

// addRoutes validates and adds routes to t, all or nothing. viaAPI applies
// the checks an out-of-band route skips: a NORMAL_CVM gateway must be an
// instance of the VPC, and only NORMAL_CVM routes can be created. Callers
// hold v.mu.
func (v *VPC) addRoutes(t *vpcTable, in []VPCRoute, viaAPI bool) *Error {
	if len(t.routes)+len(in) > MaxRoutesPerTable {
		return Errorf(CodeVPCLimitExceeded, "Route table `%s` would have %d routes, more than the quota of %d.", t.ID, len(t.routes)+len(in), MaxRoutesPerTable)
	}
	var tkeTables []RouteTable
	if v.tke != nil {
		tkeTables = v.tke.RouteTables()
	}
	var instances []core.Record
	if viaAPI {
		instances = v.core.Snapshot()
	}
	var added []vpcRoute
	for _, r := range in {
		dst, err := netip.ParsePrefix(r.DestinationCIDR)
		if err != nil || !dst.Addr().Is4() || dst.Masked() != dst {
			return Errorf(CodeVPCMalformed, "The destination `%s` is not a valid IPv4 CIDR block.", r.DestinationCIDR)
		}
		switch {
		case r.GatewayType == "":
			return Errorf(CodeVPCMissingParameter, "The route to `%s` has no `GatewayType`.", dst)
		case viaAPI && r.GatewayType != GatewayTypeNormalCVM:
			return Errorf(CodeVPCUnsupportedOpType, "cloudsim emulates only GatewayType %s; got `%s`.", GatewayTypeNormalCVM, r.GatewayType)
		}
		if r.GatewayType == GatewayTypeNormalCVM {
			ip, err := netip.ParseAddr(r.GatewayID)
			if err != nil || !ip.Is4() {
				return Errorf(CodeVPCMalformed, "The gateway `%s` of a NORMAL_CVM route must be an IPv4 address.", r.GatewayID)
			}
			if viaAPI && !slices.ContainsFunc(instances, func(rec core.Record) bool { return rec.VpcID == t.VpcID && rec.PrivateIP == ip.String() }) {
				return Errorf(CodeVPCNextHopInvalid, "The next hop `%s` is not the private IP of an instance in VPC `%s`.", ip, t.VpcID)
			}
		}
		// vpc_networks.go: a destination inside the VPC's CIDR.
		if c, in := v.vpcCIDRConflict(t.VpcID, dst); viaAPI && in {
			return Errorf(CodeVPCCidrConflict, "The destination `%s` lies inside the CIDR `%s` of VPC `%s`; a route's destination may not be inside the VPC's range.", dst, c, t.VpcID)
		}
		dup := func(x vpcRoute) bool { return x.dst == dst }
		if slices.ContainsFunc(t.routes, dup) || slices.ContainsFunc(added, dup) {
			return Errorf(CodeVPCDuplicate, "Route table `%s` already has a route to `%s`.", t.ID, dst)
		}
		// A destination inside a TKE cluster route table's CIDR of the same
		// VPC would shadow the container routes. (A wider route, like a
		// default route, does not: the container routes are more specific.)
		for _, k := range tkeTables {
			kc, _ := netip.ParsePrefix(k.CIDR)
			if viaAPI && k.VpcID == t.VpcID && k.Region == t.Region && kc.Contains(dst.Addr()) && dst.Bits() >= kc.Bits() {
				return Errorf(CodeVPCDockerRoute, "The destination `%s` conflicts with the container (TKE cluster route table `%s`) CIDR `%s`.", dst, k.Name, kc)
			}
		}
		v.routeID++
		r.ID = v.routeID
		added = append(added, vpcRoute{VPCRoute: r, dst: dst, created: v.core.Now()})
	}
	t.routes = append(t.routes, added...)
	if viaAPI { // reads see a route made through the API within the read lag
		for _, r := range added {
			v.core.Lag().Wrote(vpcRouteLagKey(t.ID, r.ID), nil, r)
		}
	}
	return nil
}

// vpcRouteLagKey is a route's key in the read lag (core/lag.go, cloudsim's
// option, off by default): DescribeRouteTables answers a new route only
// within the lag after CreateRoutes; a deletion is seen at once.
func vpcRouteLagKey(table string, id uint64) string { return fmt.Sprintf("vpc-route/%s/%d", table, id) }

func (v *VPC) sorted() []*vpcTable {
	list := make([]*vpcTable, 0, len(v.tables))
	for _, t := range v.tables {
		list = append(list, t)
	}
	slices.SortFunc(list, func(a, b *vpcTable) int { return int(a.seq - b.seq) })
	return list
}

func vpcInt(name string, s *string, def int) (int, *Error) {
	if s == nil || *s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(*s)
	if err != nil || n < 0 {
		return 0, Errorf(CodeVPCMalformed, "The value `%s` of parameter `%s` is not a non-negative integer.", *s, name)
	}
	return n, nil
}

func itemID(id uint64) string { return fmt.Sprintf("rti-%08d", id) }

func (t *vpcTable) toSDK(withRoutes bool) *vpc.RouteTable {
	out := &vpc.RouteTable{
		VpcId:          common.StringPtr(t.VpcID),
		RouteTableId:   common.StringPtr(t.ID),
		RouteTableName: common.StringPtr(t.Name),
		AssociationSet: []*vpc.RouteTableAssociation{},
		RouteSet:       []*vpc.Route{},
		Main:           common.BoolPtr(false),
		CreatedTime:    common.StringPtr(t.created.In(beijing).Format(vpcTimeLayout)),
		TagSet:         []*vpc.Tag{},
	}
	if withRoutes {
		for _, r := range t.routes {
			out.RouteSet = append(out.RouteSet, r.toSDK(t.ID))
		}
	}
	return out
}

func (r vpcRoute) toSDK(table string) *vpc.Route {
	return &vpc.Route{
		DestinationCidrBlock: common.StringPtr(r.dst.String()),
		GatewayType:          common.StringPtr(r.GatewayType),
		GatewayId:            common.StringPtr(r.GatewayID),
		RouteId:              common.Uint64Ptr(r.ID),
		RouteDescription:     common.StringPtr(r.Description),
		Enabled:              common.BoolPtr(true),
		RouteType:            common.StringPtr("USER"),
		RouteTableId:         common.StringPtr(table),
		RouteItemId:          common.StringPtr(itemID(r.ID)),
		CreatedTime:          common.StringPtr(r.created.In(beijing).Format(vpcTimeLayout)),
	}
}

func (t *vpcTable) export() VPCRouteTable {
	out := t.VPCRouteTable
	out.Routes = make([]VPCRoute, len(t.routes))
	for i, r := range t.routes {
		out.Routes[i] = r.VPCRoute
		out.Routes[i].DestinationCIDR = r.dst.String()
	}
	return out
}

// ---- Go API ----

// ErrVPCRouteTableNotFound is returned (wrapped) for an unknown VPC route table.
var ErrVPCRouteTableNotFound = fmt.Errorf("VPC route table %w", core.ErrNotFound)

// CreateVPCRouteTable adds a route table (ID generated when empty) and its
// routes, out of band: any gateway type, no instance check.
func (v *VPC) CreateVPCRouteTable(in VPCRouteTable) (VPCRouteTable, error) {
	if in.ID == "" {
		in.ID = "rtb-" + randomSuffix()
	}
	if in.Name == "" {
		in.Name = in.ID
	}
	if in.Region == "" {
		in.Region = v.core.Region()
	}
	switch {
	case !routeTableIDRe.MatchString(in.ID):
		return VPCRouteTable{}, fmt.Errorf("%w: route table ID %q: want rtb- and 8 lowercase letters or digits", core.ErrInvalid, in.ID)
	case !core.ValidVpcID(in.VpcID):
		return VPCRouteTable{}, fmt.Errorf("%w: VPC ID %q: want vpc- and 8 lowercase letters or digits", core.ErrInvalid, in.VpcID)
	}
	routes := in.Routes
	in.Routes = nil
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.tables[in.ID] != nil {
		return VPCRouteTable{}, fmt.Errorf("%w: route table %s already exists", core.ErrInvalid, in.ID)
	}
	v.seq++
	t := &vpcTable{VPCRouteTable: in, seq: v.seq, created: v.core.Now()}
	if err := v.addRoutes(t, routes, false); err != nil {
		return VPCRouteTable{}, fmt.Errorf("%w: %s", core.ErrInvalid, err)
	}
	v.tables[in.ID] = t
	return t.export(), nil
}

// VPCRouteTables returns every VPC route table with its routes.
func (v *VPC) VPCRouteTables() []VPCRouteTable {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := []VPCRouteTable{}
	for _, t := range v.sorted() {
		out = append(out, t.export())
	}
	return out
}

// VPCRouteTable returns one VPC route table with its routes.
func (v *VPC) VPCRouteTable(id string) (VPCRouteTable, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	t := v.tables[id]
	if t == nil {
		return VPCRouteTable{}, fmt.Errorf("%w: %q", ErrVPCRouteTableNotFound, id)
	}
	return t.export(), nil
}

// AddVPCRoute adds a route out of band (any gateway type, no instance
// check), as another tool or the console would.
func (v *VPC) AddVPCRoute(id string, r VPCRoute) (VPCRoute, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	t := v.tables[id]
	if t == nil {
		return VPCRoute{}, fmt.Errorf("%w: %q", ErrVPCRouteTableNotFound, id)
	}
	if err := v.addRoutes(t, []VPCRoute{r}, false); err != nil {
		return VPCRoute{}, fmt.Errorf("%w: %s", core.ErrInvalid, err)
	}
	return t.routes[len(t.routes)-1].VPCRoute, nil
}

func randomSuffix() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// ---- admin API ----

// registerAdmin adds the VPC route table endpoints:
//
//	GET  /admin/tencent/vpcroutetables               every table with its routes
//	POST /admin/tencent/vpcroutetables               create one (VPCRouteTable; id optional)
//	GET  /admin/tencent/vpcroutetables/{id}          one table
//	POST /admin/tencent/vpcroutetables/{id}/routes   add a route out of band (VPCRoute)
func (v *VPC) registerAdmin() {
	const base = "/admin/tencent/vpcroutetables"
	h := v.core.HandleAdminFunc
	h("GET "+base, func(*http.Request) (int, any, error) { return http.StatusOK, v.VPCRouteTables(), nil })
	h("POST "+base, func(r *http.Request) (int, any, error) {
		var in VPCRouteTable
		if err := core.DecodeAdmin(r, &in); err != nil {
			return 0, nil, err
		}
		out, err := v.CreateVPCRouteTable(in)
		return http.StatusCreated, out, err
	})
	h("GET "+base+"/{id}", func(r *http.Request) (int, any, error) {
		t, err := v.VPCRouteTable(r.PathValue("id"))
		return http.StatusOK, t, err
	})
	h("POST "+base+"/{id}/routes", func(r *http.Request) (int, any, error) {
		var in VPCRoute
		if err := core.DecodeAdmin(r, &in); err != nil {
			return 0, nil, err
		}
		out, err := v.AddVPCRoute(r.PathValue("id"), in)
		return http.StatusCreated, out, err
	})
}

// VPC returns the dialect's VPC service: its route tables.
func (d *Dialect) VPC() *VPC { return d.vpc }
