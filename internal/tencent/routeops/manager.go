// Package routeops is the operations layer behind the Tencent Cloud
// provider's Routes: it keeps one route per node, the node's pod CIDR -> the
// node's private IP, in a route table, and it is careful about three things.
//
//   - Ownership. A route is ours only if it is inside the cluster CIDR and its
//     gateway is one of our nodes, or was one (a deleted node's route is still
//     ours to delete), or is provably orphaned: no node has the gateway and
//     a fresh lookup finds no live instance with it (orphans.go). Routes that
//     other tools put in the table are never listed, so the route controller
//     never deletes them.
//   - Cost. The route list is cached between reconciles and updated in place
//     by our own writes, so that create/delete storms and conflict diagnosis
//     do not re-read the table; refreshes are single-flight.
//   - Clear errors. The cloud's conflict codes become messages that name the
//     node, the route in the way, and what to do.
//
// A Backend speaks to one kind of route table (TKE cluster route table, VPC
// route table); the Manager holds everything else. Each operation reads as a
// pipeline: ensure the table, read the routes (cache or cloud), decide, write,
// update the cache.
package routeops

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
)

// Route is one route in a route table: Destination -> Gateway.
type Route struct {
	Destination netip.Prefix // a node's pod CIDR
	Gateway     netip.Addr   // the node's private IP
	// ID is the cloud's id of the route when the backend needs one to delete
	// it (VPC RouteId); "" for TKE, where destination and gateway identify it.
	ID string
}

func (r Route) String() string { return r.Destination.String() + " -> " + r.Gateway.String() }

// Name is how the provider names the route to the route controller; ParseName
// reverses it.
func (r Route) Name() string { return r.Destination.String() + "->" + r.Gateway.String() }

// same reports whether two routes have the same destination and gateway.
func (r Route) same(o Route) bool { return r.Destination == o.Destination && r.Gateway == o.Gateway }

// ParseName parses a Route.Name.
func ParseName(name string) (Route, error) {
	dst, gw, ok := strings.Cut(name, "->")
	if !ok {
		return Route{}, fmt.Errorf("route name %q: want <destination CIDR>-><gateway IP>", name)
	}
	p, err := netip.ParsePrefix(dst)
	if err != nil {
		return Route{}, fmt.Errorf("route name %q: %w", name, err)
	}
	ip, err := netip.ParseAddr(gw)
	if err != nil {
		return Route{}, fmt.Errorf("route name %q: %w", name, err)
	}
	return Route{Destination: p, Gateway: ip}, nil
}

// Table is a route table as the cloud describes it.
type Table struct {
	Name  string       // TKE table name, or VPC route table id
	CIDR  netip.Prefix // TKE: every route must be inside it; zero for VPC tables
	VpcID string
}

// Backend is one kind of route table. Its errors are *callerr.Error
// values whose Kind is one of the Err* sentinels when the cloud's code has
// a meaning here.
type Backend interface {
	// String names the table for messages: `TKE cluster route table "cls-1"`.
	String() string
	// FindTable describes the configured table, or fails with ErrTableNotFound.
	FindTable(ctx context.Context) (Table, error)
	// CreateTable creates the configured table with this CIDR.
	CreateTable(ctx context.Context, cidr netip.Prefix) (Table, error)
	// ListRoutes returns every route in the table, ours or not.
	ListRoutes(ctx context.Context) ([]Route, error)
	// CreateRoute adds a route and returns it as stored (with its ID).
	CreateRoute(ctx context.Context, r Route) (Route, error)
	// DeleteRoute removes a route (r.ID set when the backend needs it).
	DeleteRoute(ctx context.Context, r Route) error
}

// Nodes tells which node has an IP. The provider answers from its node
// informer.
type Nodes interface {
	NodeForIP(ip netip.Addr) (name string, ok bool)
}

// NodeRoute is one of our routes and the node it serves.
type NodeRoute struct {
	Route
	Node string
	// Gone: no node has the gateway IP any more (the node was deleted, or its
	// IP changed). The route is still ours, so that it can be deleted.
	Gone bool
}

// Options configures a Manager.
type Options struct {
	// ClusterCIDR bounds the routes this cluster manages. Zero means the
	// table's own CIDR (TKE tables have one; VPC tables need ClusterCIDR).
	ClusterCIDR netip.Prefix
	// CreateTable creates a missing table, with ClusterCIDR as its CIDR.
	CreateTable bool
	// CacheTTL is how long a route list read from the cloud is reused. Keep
	// it a little under --route-reconciliation-period, so that every periodic
	// reconcile sees the cloud afresh while the writes and lookups between
	// reconciles cost no reads. 0 reads the cloud on every List.
	CacheTTL time.Duration
	// Clock defaults to time.Now.
	Clock func() time.Time
	// VPC, if set, reads the VPC's CIDRs, against which the managed CIDR
	// is checked once the table is found (a clear log line at start-up),
	// and which explain refused routes.
	VPC *VPCCIDRs
	// Gateways, if set, tells which gateway IPs no instance holds any more,
	// so that the routes of nodes deleted while the CCM was down are
	// reclaimed (orphans.go). nil: such routes are left alone.
	Gateways Gateways
}

// Stats counts what the Manager did, for tests, logs and benchmarks.
type Stats struct {
	CacheHits, CacheMisses int // route list served from the cache / read from the cloud
	CreatesSkipped         int // CreateRoute answered from the cache (route already there)
}

// Manager keeps a cluster's routes in one route table. It is safe for
// concurrent use: the route controller creates up to 200 routes at once.
type Manager struct {
	backend Backend
	opts    Options

	tableMu   sync.Mutex // one FindTable/CreateTable at a time
	refreshMu sync.Mutex // one ListRoutes at a time (single flight)

	mu       sync.Mutex // guards everything below
	table    *Table     // nil until found (again)
	managed  netip.Prefix
	snap     []Route // the table's routes; nil when unknown
	snapAt   time.Time
	snapRead int64 // which read produced snap
	reads    int64 // reads started
	// journal holds our writes made while a refresh is in flight, to be
	// replayed on the list it returns (which may predate them).
	refreshing bool
	journal    []write
	// owned maps the gateways of our routes to their node. It is how a
	// deleted node's route is still known as ours. It lives in memory only:
	// after a restart, a route whose node was deleted while the CCM was down
	// is ours again only once it is proven orphaned (orphans.go).
	owned map[netip.Addr]string
	// notOrphan remembers when a gateway was last found held by an
	// instance, so that foreign routes are not looked up on every List.
	notOrphan map[netip.Addr]time.Time
	stats     Stats
	// vpcChecked: the managed CIDR was checked against the VPC's CIDRs.
	vpcChecked bool
}

type write struct {
	add   bool
	route Route
}

// NewManager returns a Manager for backend. It makes no API call.
func NewManager(backend Backend, opts Options) *Manager {
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	registerMetrics()
	return &Manager{backend: backend, opts: opts, owned: map[netip.Addr]string{}, notOrphan: map[netip.Addr]time.Time{}}
}

// Stats returns the counters so far.
func (m *Manager) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}

// List returns this cluster's routes: inside the managed CIDR, with a
// gateway that is, or was, one of our nodes.
func (m *Manager) List(ctx context.Context, nodes Nodes) (_ []NodeRoute, err error) {
	const op ccmmetrics.Op = "routeops.List"
	ctx, done := op.Start(ctx)
	defer done(&err)
	defer tag(op, &err)
	defer func() { observe("list", err) }()
	if err := m.ensureTable(ctx); err != nil {
		return nil, fmt.Errorf("list routes: %w", err)
	}
	var fresh freshness
	if m.opts.CacheTTL > 0 {
		fresh.notBefore = m.opts.Clock().Add(-m.opts.CacheTTL)
	} else {
		fresh.afterRead = m.readCount() // always read the cloud
	}
	routes, err := m.routes(ctx, fresh)
	if err != nil {
		return nil, fmt.Errorf("list routes of %s: %w", m.backend, err)
	}
	m.reclaimOrphans(ctx, routes, nodes)
	ours := m.claim(routes, nodes)
	managedRoutes.Set(float64(len(ours)))
	return ours, nil
}

// claim picks our routes out of the table and records their gateways.
func (m *Manager) claim(routes []Route, nodes Nodes) []NodeRoute {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []NodeRoute
	inTable := map[netip.Addr]bool{}
	for _, r := range routes {
		if !m.manages(r.Destination) {
			continue
		}
		inTable[r.Gateway] = true
		if name, ok := nodes.NodeForIP(r.Gateway); ok {
			m.owned[r.Gateway] = name
			out = append(out, NodeRoute{Route: r, Node: name})
		} else if name, ok := m.owned[r.Gateway]; ok {
			out = append(out, NodeRoute{Route: r, Node: name, Gone: true})
		}
		// Otherwise another tool's route: never returned, never deleted.
	}
	// A gateway without managed routes needs no memory: its node is no
	// concern of the table any more.
	for gw := range m.owned {
		if !inTable[gw] {
			delete(m.owned, gw)
		}
	}
	return out
}

// Create adds the route for node, unless it is already there.
func (m *Manager) Create(ctx context.Context, node string, r Route) (err error) {
	const op ccmmetrics.Op = "routeops.Create"
	ctx, done := op.Start(ctx)
	defer done(&err)
	defer tag(op, &err)
	skipped := false
	defer func() {
		if skipped {
			operations.WithLabelValues("create", "skipped").Inc()
			return
		}
		observe("create", err)
	}()
	what := fmt.Sprintf("create route %s for node %q", r, node)
	if err := m.ensureTable(ctx); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := m.checkManaged(r); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if m.cachedFresh(r) {
		m.mu.Lock()
		m.owned[r.Gateway] = node
		m.stats.CreatesSkipped++
		m.mu.Unlock()
		skipped = true
		return nil
	}
	// A conflict is explained from a read that started after this call did,
	// so that concurrent conflicts share one read.
	before := freshness{afterRead: m.readCount()}
	created, err := m.backend.CreateRoute(ctx, r)
	if err == nil {
		m.applyWrite(write{add: true, route: created}, node)
		klog.FromContext(ctx).V(2).Info("Created route", "route", created.String(), "node", node, "table", m.backend.String())
		return nil
	}
	return m.explainCreate(ctx, node, r, before, err)
}

// explainCreate turns a failed create into an actionable error, or into
// success when the route turns out to exist (created by an earlier attempt
// whose answer was lost, or by a concurrent reconcile).
func (m *Manager) explainCreate(ctx context.Context, node string, r Route, fresh freshness, callErr error) error {
	what := fmt.Sprintf("create route %s for node %q in %s", r, node, m.backend)
	err := cause{callErr} // the message already names the route and the table
	switch {
	case errors.Is(err, ErrTableNotFound):
		m.forgetTable()
		return fmt.Errorf("%s: the table does not exist (any more): %w", what, err)
	case errors.Is(err, ErrOutOfTable):
		return fmt.Errorf("%s: the pod CIDR is outside the table's CIDR %s; allocate pod CIDRs inside it (--cluster-cidr of the node IPAM): %w",
			what, m.tableCIDR(), err)
	case errors.Is(err, ErrGatewayNotInstance):
		return fmt.Errorf("%s: %s is not the private IP of an instance in the VPC; the node's InternalIP must be its instance's primary private IP: %w",
			what, r.Gateway, err)
	case errors.Is(err, ErrVPCCIDRConflict):
		return fmt.Errorf("%s: the pod CIDR lies inside the VPC's CIDR%s, and Tencent Cloud refuses routes to the VPC's own range: "+
			"choose a --cluster-cidr (and cluster_cidr) outside the VPC's CIDRs, so that nodes get pod CIDRs from it: %w",
			what, m.vpcCIDRHint(ctx), err)
	case errors.Is(err, ErrTKECIDRConflict):
		return fmt.Errorf("%s: the pod CIDR lies inside the CIDR of a TKE cluster route table of the VPC, which VPC routes may not enter: "+
			"use that table (cluster_route_table, the default route_backend) or a --cluster-cidr outside it: %w", what, err)
	case !errors.Is(err, ErrCIDRConflict) && !errors.Is(err, ErrGatewayInUse):
		return fmt.Errorf("%s: %w", what, err)
	}

	// A conflict: read the table (once for all concurrent conflicts) to see
	// what is in the way.
	routes, lerr := m.routes(ctx, fresh)
	if lerr != nil {
		return fmt.Errorf("%s: %w (and reading the table to explain it failed: %v)", what, err, lerr)
	}
	for _, x := range routes {
		if x.same(r) {
			m.applyWrite(write{add: true, route: x}, node)
			return nil
		}
	}
	if cleared, cerr := m.clearOrphansInTheWay(ctx, r, routes); cerr != nil {
		return fmt.Errorf("%s: %w (and clearing the orphaned route in the way failed: %v)", what, err, cerr)
	} else if cleared {
		created, err := m.backend.CreateRoute(ctx, r)
		if err != nil {
			return fmt.Errorf("%s, after deleting the orphaned route in the way: %w", what, cause{err})
		}
		m.applyWrite(write{add: true, route: created}, node)
		klog.FromContext(ctx).V(2).Info("Created route", "route", created.String(), "node", node, "table", m.backend.String())
		return nil
	}
	var hints []string
	for _, x := range routes {
		switch {
		case x.Gateway == r.Gateway:
			hints = append(hints, fmt.Sprintf("node %q already has route %s and a gateway can carry one CIDR: %s",
				node, x, m.ownerHint(x, "the old route is deleted on a later reconcile, then this one is created")))
		case x.Destination.Overlaps(r.Destination):
			hints = append(hints, fmt.Sprintf("it overlaps route %s: %s", x,
				m.ownerHint(x, "two nodes have overlapping pod CIDRs; check the node IPAM")))
		}
	}
	if len(hints) == 0 {
		hints = append(hints, "the conflicting route is gone now; the next reconcile retries")
	}
	return fmt.Errorf("%s: %s: %w", what, strings.Join(hints, "; "), err)
}

// vpcCIDRHint names the VPC's CIDRs for a message, if known.
func (m *Manager) vpcCIDRHint(ctx context.Context) string {
	if m.opts.VPC == nil {
		return ""
	}
	if _, all, err := m.opts.VPC.CIDRs(ctx); err == nil {
		parts := make([]string, len(all))
		for i, c := range all {
			parts[i] = c.String()
		}
		return " (" + strings.Join(parts, ", ") + ")"
	}
	return ""
}

// ownerHint says whose route x is and what to do about it.
func (m *Manager) ownerHint(x Route, ours string) string {
	m.mu.Lock()
	owner, ok := m.owned[x.Gateway]
	ok = ok && m.manages(x.Destination)
	m.mu.Unlock()
	if ok {
		return fmt.Sprintf("it is node %q's route, so %s", owner, ours)
	}
	return "that route is not managed by this cluster; delete it from the table, or give the node a pod CIDR that does not overlap it"
}

// Delete removes one of our routes. It refuses routes that are not ours,
// and a route that is already gone is not an error.
func (m *Manager) Delete(ctx context.Context, r Route) (err error) {
	const op ccmmetrics.Op = "routeops.Delete"
	ctx, done := op.Start(ctx)
	defer done(&err)
	defer tag(op, &err)
	defer func() { observe("delete", err) }()
	what := fmt.Sprintf("delete route %s", r)
	if err := m.ensureTable(ctx); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	m.mu.Lock()
	node, ours := m.owned[r.Gateway]
	ours = ours && m.manages(r.Destination)
	m.mu.Unlock()
	if !ours {
		return fmt.Errorf("%s from %s: refusing, the route is not managed by this cluster (its gateway is no node of ours, or it is outside %s)",
			what, m.backend, m.managedCIDR())
	}
	what = fmt.Sprintf("delete route %s of node %q from %s", r, node, m.backend)
	if r.ID == "" {
		if x, ok := m.lookup(r); ok {
			r.ID = x.ID
		}
	}
	err = m.backend.DeleteRoute(ctx, r)
	switch {
	case err == nil || errors.Is(err, ErrRouteNotFound):
		m.applyWrite(write{add: false, route: r}, node)
		klog.FromContext(ctx).V(2).Info("Deleted route", "route", r.String(), "node", node, "table", m.backend.String())
		return nil
	case errors.Is(err, ErrTableNotFound):
		m.forgetTable()
	}
	return fmt.Errorf("%s: %w", what, cause{err})
}

// ---- the table ----

// ensureTable finds the table once (and again after it went missing),
// creating it when allowed.
func (m *Manager) ensureTable(ctx context.Context) error {
	m.mu.Lock()
	found := m.table != nil
	m.mu.Unlock()
	if found {
		return nil
	}
	m.tableMu.Lock()
	defer m.tableMu.Unlock()
	m.mu.Lock()
	found = m.table != nil
	m.mu.Unlock()
	if found {
		return nil
	}

	t, err := m.backend.FindTable(ctx)
	if errors.Is(err, ErrTableNotFound) && m.opts.CreateTable {
		t, err = m.createTable(ctx)
	}
	switch {
	case errors.Is(err, ErrTableNotFound):
		return fmt.Errorf("%s does not exist: create it, or set create_cluster_route_table: true and cluster_cidr in the cloud config so that the CCM creates it: %w", m.backend, err)
	case err != nil:
		return err
	}
	managed := m.opts.ClusterCIDR
	if !managed.IsValid() {
		managed = t.CIDR
	}
	if !managed.IsValid() {
		return fmt.Errorf("%s has no CIDR of its own: set cluster_cidr in the cloud config", m.backend)
	}
	if t.CIDR.IsValid() && (!t.CIDR.Contains(managed.Addr()) || managed.Bits() < t.CIDR.Bits()) {
		klog.FromContext(ctx).Info("Warning: cluster_cidr is not inside the route table's CIDR; routes for pod CIDRs outside the table will fail",
			"clusterCIDR", managed.String(), "table", m.backend.String(), "tableCIDR", t.CIDR.String())
	}
	m.mu.Lock()
	m.table, m.managed = &t, managed
	check := !m.vpcChecked && m.opts.VPC != nil
	m.vpcChecked = true
	m.mu.Unlock()
	klog.FromContext(ctx).Info("Using route table", "table", m.backend.String(), "cidr", t.CIDR.String(), "vpc", t.VpcID, "managedCIDR", managed.String())
	if check {
		m.checkVPCCIDR(ctx, managed)
	}
	return nil
}

// checkVPCCIDR checks, once, that the managed CIDR lies outside the VPC's
// CIDRs. It is not fatal: the node and load balancer controllers work
// regardless, routes for pod CIDRs outside the VPC's range still work, and
// each refused route says why in an Event on its Node. It only makes the
// cause plain at start-up.
func (m *Manager) checkVPCCIDR(ctx context.Context, managed netip.Prefix) {
	_, all, err := m.opts.VPC.CIDRs(ctx)
	if err != nil {
		klog.FromContext(ctx).Info("Warning: cannot read the VPC's CIDRs, so cluster_cidr is not checked against them", "err", err.Error())
		return
	}
	if overlaps := vpcOverlaps(all, managed); overlaps != "" {
		klog.FromContext(ctx).Error(nil, "The cluster CIDR overlaps the VPC's CIDR: Tencent Cloud refuses pod routes inside the VPC's range "+
			"(VPC route tables: InvalidParameterValue.VpcCidrConflict; TKE cluster route tables: CidrConflictWithVpcCidr), so nodes whose pod CIDR "+
			"lies there get no route. Choose a --cluster-cidr (and cluster_cidr) outside the VPC's CIDRs",
			"clusterCIDR", managed.String(), "vpcCIDRs", overlaps, "table", m.backend.String())
		vpcConflicts.Set(1)
		return
	}
	vpcConflicts.Set(0)
}

func (m *Manager) createTable(ctx context.Context) (Table, error) {
	if !m.opts.ClusterCIDR.IsValid() {
		return Table{}, fmt.Errorf("%s does not exist, and it cannot be created without cluster_cidr", m.backend)
	}
	t, err := m.backend.CreateTable(ctx, m.opts.ClusterCIDR)
	switch {
	case errors.Is(err, ErrTableExists):
		// Created concurrently (another replica, an operator): use it.
		return m.backend.FindTable(ctx)
	case errors.Is(err, ErrTableCIDRConflict):
		return Table{}, fmt.Errorf("create %s with CIDR %s: choose a cluster_cidr that overlaps neither the VPC's CIDR%s nor another cluster's route table: %w",
			m.backend, m.opts.ClusterCIDR, m.vpcCIDRHint(ctx), err)
	case err != nil:
		return Table{}, fmt.Errorf("create %s: %w", m.backend, err)
	}
	klog.FromContext(ctx).Info("Created route table", "table", m.backend.String(), "cidr", m.opts.ClusterCIDR.String())
	return t, nil
}

// forgetTable makes the next call look for the table again.
func (m *Manager) forgetTable() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.table, m.snap = nil, nil
}

func (m *Manager) tableCIDR() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.table == nil || !m.table.CIDR.IsValid() {
		return "(unknown)"
	}
	return m.table.CIDR.String()
}

func (m *Manager) managedCIDR() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.managed.String()
}

// manages reports whether dst is inside the managed CIDR. Callers hold m.mu.
func (m *Manager) manages(dst netip.Prefix) bool {
	return m.managed.IsValid() && m.managed.Contains(dst.Addr()) && dst.Bits() >= m.managed.Bits()
}

func (m *Manager) checkManaged(r Route) error {
	if !r.Destination.Addr().Is4() || !r.Gateway.Is4() {
		return fmt.Errorf("%s routes IPv4 only; the route %s cannot be programmed", m.backend, r)
	}
	m.mu.Lock()
	inside := m.manages(r.Destination)
	m.mu.Unlock()
	if !inside {
		return fmt.Errorf("the pod CIDR is outside the cluster CIDR %s that this CCM manages in %s (cluster_cidr, or the table's CIDR)",
			m.managedCIDR(), m.backend)
	}
	return nil
}

// ---- the route cache ----

// freshness says how recent a route list must be: read at or after
// notBefore, by a read that started after the afterRead-th read.
type freshness struct {
	notBefore time.Time
	afterRead int64
}

// readCount is the number of reads started so far.
func (m *Manager) readCount() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reads
}

// routes returns the table's routes, from the cache if it is fresh enough,
// else from the cloud. Concurrent callers share one read.
func (m *Manager) routes(ctx context.Context, fresh freshness) ([]Route, error) {
	if r, ok := m.cached(fresh, true); ok {
		cacheReads.WithLabelValues("cache").Inc()
		return r, nil
	}
	m.refreshMu.Lock()
	defer m.refreshMu.Unlock()
	if r, ok := m.cached(fresh, false); ok {
		return r, nil // another caller refreshed while we waited
	}
	m.mu.Lock()
	m.stats.CacheMisses++
	cacheReads.WithLabelValues("cloud").Inc()
	m.refreshing, m.journal = true, nil
	m.reads++
	read := m.reads
	m.mu.Unlock()
	started := m.opts.Clock()

	routes, err := m.backend.ListRoutes(ctx)
	if err == nil && len(routes) == 0 {
		// An empty answer proves nothing: DescribeClusterRoutes answers an
		// empty list for a table that does not exist. Check the table.
		_, err = m.backend.FindTable(ctx)
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	m.refreshing = false
	journal := m.journal
	m.journal = nil
	if err != nil {
		if errors.Is(err, ErrTableNotFound) {
			m.table, m.snap = nil, nil
		}
		return nil, err
	}
	if routes == nil {
		routes = []Route{} // known to be empty, unlike a nil snapshot
	}
	for _, w := range journal {
		routes = apply(routes, w)
	}
	m.snap, m.snapAt, m.snapRead = routes, started, read
	return slices.Clone(routes), nil
}

// cached returns the cached routes if they are fresh enough.
func (m *Manager) cached(fresh freshness, count bool) ([]Route, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.snap == nil || m.snapAt.Before(fresh.notBefore) || m.snapRead <= fresh.afterRead {
		return nil, false
	}
	if count {
		m.stats.CacheHits++
	}
	return slices.Clone(m.snap), true
}

// cachedFresh reports whether a fresh cache holds exactly r.
func (m *Manager) cachedFresh(r Route) bool {
	if m.opts.CacheTTL <= 0 {
		return false
	}
	routes, ok := m.cached(freshness{notBefore: m.opts.Clock().Add(-m.opts.CacheTTL)}, false)
	return ok && slices.ContainsFunc(routes, r.same)
}

// lookup finds r in the cache (for its ID).
func (m *Manager) lookup(r Route) (Route, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := slices.IndexFunc(m.snap, r.same)
	if i < 0 {
		return Route{}, false
	}
	return m.snap[i], true
}

// applyWrite records a successful write of ours: in the cache, in the
// journal of a refresh in flight, and in the ownership ledger.
func (m *Manager) applyWrite(w write, node string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.snap != nil {
		m.snap = apply(m.snap, w)
	}
	if m.refreshing {
		m.journal = append(m.journal, w)
	}
	if w.add {
		m.owned[w.route.Gateway] = node
	} else if !slices.ContainsFunc(m.snap, func(x Route) bool { return x.Gateway == w.route.Gateway }) {
		delete(m.owned, w.route.Gateway)
	}
}

func apply(routes []Route, w write) []Route {
	routes = slices.DeleteFunc(routes, w.route.same)
	if w.add {
		routes = append(routes, w.route)
	}
	return routes
}
