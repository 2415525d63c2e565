package routeops

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"k8s.io/klog/v2"
)

// Gateways answers, from a fresh read of the cloud (never a cache), which
// of the given private IPs no instance of the VPC holds any more: none has
// it, or only instances that are being terminated. An error means "cannot
// tell", and no route is reclaimed on it.
type Gateways interface {
	Released(ctx context.Context, ips []netip.Addr) ([]netip.Addr, error)
}

// OrphanNode is the node name reported for a reclaimed route: its node is
// gone, and nothing recorded which node it was.
const OrphanNode = "(deleted node)"

// orphanRecheck is how long a gateway found held by an instance is not
// looked up again: foreign routes stay foreign, so re-reading them on every
// List would only cost DescribeInstances calls.
const orphanRecheck = 5 * time.Minute

// reclaimOrphans makes the orphaned routes among routes ours, so that claim
// returns them (as Gone) and the route controller deletes them. A route is
// orphaned when all of these hold:
//   - it is inside the managed CIDR;
//   - no current node has its gateway, and it is not already ours;
//   - a fresh lookup finds no live instance with the gateway IP.
//
// This is what a restart loses: the memory that a deleted node's route was
// ours. Without it, the route would stay forever, and its CIDR could block
// a new node's route.
func (m *Manager) reclaimOrphans(ctx context.Context, routes []Route, nodes Nodes) {
	if m.opts.Gateways == nil {
		return
	}
	var candidates []Route
	now := m.opts.Clock()
	m.mu.Lock()
	for _, r := range routes {
		if !m.manages(r.Destination) {
			continue
		}
		if _, ours := m.owned[r.Gateway]; ours {
			continue
		}
		if at, ok := m.notOrphan[r.Gateway]; ok && now.Sub(at) < orphanRecheck {
			continue
		}
		if _, isNode := nodes.NodeForIP(r.Gateway); isNode {
			continue
		}
		candidates = append(candidates, r)
	}
	m.mu.Unlock()
	if _, err := m.reclaim(ctx, candidates); err != nil {
		klog.FromContext(ctx).Info("Warning: cannot tell whether routes without a node are orphaned; leaving them alone until the next reconcile",
			"table", m.backend.String(), "routes", len(candidates), "err", err.Error())
	}
}

// reclaim looks up the gateways of candidates and makes the orphaned
// routes ours. It returns those routes.
func (m *Manager) reclaim(ctx context.Context, candidates []Route) ([]Route, error) {
	if len(candidates) == 0 || m.opts.Gateways == nil {
		return nil, nil
	}
	var ips []netip.Addr
	for _, r := range candidates {
		if !slices.Contains(ips, r.Gateway) {
			ips = append(ips, r.Gateway)
		}
	}
	released, err := m.opts.Gateways.Released(ctx, ips)
	if err != nil {
		return nil, fmt.Errorf("look up the instances holding gateways %v: %w", ips, err)
	}
	now := m.opts.Clock()
	var out []Route
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ip := range ips {
		if !slices.Contains(released, ip) {
			m.notOrphan[ip] = now
		}
	}
	for _, r := range candidates {
		if !slices.Contains(released, r.Gateway) {
			continue
		}
		delete(m.notOrphan, r.Gateway)
		if _, ours := m.owned[r.Gateway]; !ours {
			m.owned[r.Gateway] = OrphanNode
		}
		orphansReclaimed.Inc()
		klog.FromContext(ctx).Info("Reclaiming an orphaned route: no node and no live instance has its gateway", "route", r.String(), "table", m.backend.String())
		out = append(out, r)
	}
	return out, nil
}

// clearOrphansInTheWay deletes the orphaned routes that block r (the same
// gateway, or an overlapping destination), so that a new node is not kept
// from its pod CIDR by the route of a node deleted while the CCM was down.
// It reports whether it deleted any.
func (m *Manager) clearOrphansInTheWay(ctx context.Context, r Route, routes []Route) (bool, error) {
	var inWay, unknown []Route
	m.mu.Lock()
	for _, x := range routes {
		if (x.Gateway != r.Gateway && !x.Destination.Overlaps(r.Destination)) || !m.manages(x.Destination) {
			continue
		}
		switch owner, ours := m.owned[x.Gateway]; {
		case !ours:
			unknown = append(unknown, x) // orphaned, or another tool's: look it up
		case owner == OrphanNode:
			inWay = append(inWay, x)
		} // else a live node's route: the route controller replaces it
	}
	m.mu.Unlock()
	reclaimed, err := m.reclaim(ctx, unknown)
	if err != nil {
		return false, err
	}
	inWay = append(inWay, reclaimed...)
	for _, x := range inWay {
		if err := m.backend.DeleteRoute(ctx, x); err != nil && !errors.Is(err, ErrRouteNotFound) {
			return false, fmt.Errorf("delete orphaned route %s: %w", x, cause{err})
		}
		m.applyWrite(write{add: false, route: x}, OrphanNode)
		klog.FromContext(ctx).Info("Deleted an orphaned route in the way of a new route", "orphan", x.String(), "route", r.String(), "table", m.backend.String())
	}
	return len(inWay) > 0, nil
}
