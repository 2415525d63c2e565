package tencentcloud

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/tencent/config"
	"github.com/ccmkit/ccm/internal/tencent/cvmlookup"
	"github.com/ccmkit/ccm/internal/tencent/routeops"
	"github.com/ccmkit/ccm/internal/tencent/tcapi"
)

// routeOps is what the route interface needs from the operations layer;
// *routeops.Manager implements it, tests use a fake.
type routeOps interface {
	List(ctx context.Context, nodes routeops.Nodes) ([]routeops.NodeRoute, error)
	Create(ctx context.Context, node string, r routeops.Route) error
	Delete(ctx context.Context, r routeops.Route) error
}

// routes implements cloudprovider.Routes: one route per node, the node's
// pod CIDR -> its private IP (first IPv4 InternalIP), in the configured TKE
// cluster route table or VPC route table. It only translates; routeops
// decides what is ours, caches and explains errors.
//
// The clusterName argument is not used: the configured table is the
// cluster's, and ownership comes from the gateways (our nodes' IPs).
type routes struct {
	ops   routeOps
	nodes *nodeIndex
}

var _ cloudprovider.Routes = (*routes)(nil)

// newRoutes builds the route implementation for cfg, or returns nil when
// no route table is configured (then the provider offers no Routes and the
// upstream route controller does not start).
func newRoutes(cfg *config.Config, clients *tcapi.Clients) (*routes, error) {
	if !cfg.RoutesEnabled() {
		return nil, nil
	}
	// Both backends check the cluster CIDR against the VPC's CIDRs, which
	// no pod route may point inside.
	vpcClient, err := clients.VPC()
	if err != nil {
		return nil, err
	}
	vpcCIDRs := routeops.NewVPCCIDRs(vpcClient, cfg.VpcID)
	var backend routeops.Backend
	switch cfg.RouteBackend {
	case config.RouteBackendVPC:
		backend = routeops.NewVPC(vpcClient, cfg.RouteTableID, cfg.VpcID, vpcCIDRs)
	default:
		client, err := clients.TKE()
		if err != nil {
			return nil, err
		}
		backend = routeops.NewTKE(client, cfg.ClusterRouteTable, cfg.VpcID)
	}
	// The orphan check asks CVM whether a route's gateway IP is still an
	// instance's (routeops/orphans.go).
	cvmClient, err := clients.CVM()
	if err != nil {
		return nil, err
	}
	mgr := routeops.NewManager(backend, routeops.Options{
		ClusterCIDR: cfg.ClusterCIDR,
		CreateTable: cfg.CreateClusterRouteTable,
		CacheTTL:    cfg.RouteCacheTTL,
		VPC:         vpcCIDRs,
		Gateways:    cvmlookup.New(cvmClient, cfg.VpcID),
	})
	return &routes{ops: mgr, nodes: &nodeIndex{}}, nil
}

// ListRoutes returns this cluster's routes. Each carries the node's current
// addresses (EnableNodeAddresses), so that the route controller replaces a
// route whose node changed IP, and deletes old routes before creating new
// ones in the same reconcile: a TKE gateway can carry only one CIDR.
func (r *routes) ListRoutes(ctx context.Context, _ string) ([]*cloudprovider.Route, error) {
	if err := r.nodes.ready(); err != nil {
		return nil, fmt.Errorf("list routes: %w", err)
	}
	owned, err := r.ops.List(ctx, r.nodes)
	if err != nil {
		return nil, err
	}
	out := make([]*cloudprovider.Route, 0, len(owned))
	for _, o := range owned {
		out = append(out, &cloudprovider.Route{
			Name:                o.Name(),
			TargetNode:          types.NodeName(o.Node),
			DestinationCIDR:     o.Destination.String(),
			EnableNodeAddresses: true,
			TargetNodeAddresses: r.nodes.routeAddresses(o.Node, o.Gateway),
		})
	}
	return out, nil
}

// CreateRoute routes route.DestinationCIDR to the target node's private IP.
// nameHint (the node UID) is not used: routes are identified by destination
// and gateway.
func (r *routes) CreateRoute(ctx context.Context, _ string, _ string, route *cloudprovider.Route) error {
	node := string(route.TargetNode)
	dst, err := netip.ParsePrefix(route.DestinationCIDR)
	if err != nil {
		return fmt.Errorf("create route for node %q: pod CIDR %q: %w", node, route.DestinationCIDR, err)
	}
	gw, ok := gatewayIP(route.TargetNodeAddresses)
	if !ok {
		return fmt.Errorf("create route %s for node %q: the node has no IPv4 InternalIP address yet, so there is no gateway to route to", dst, node)
	}
	return r.ops.Create(ctx, node, routeops.Route{Destination: dst, Gateway: gw})
}

// DeleteRoute deletes a route that ListRoutes returned.
func (r *routes) DeleteRoute(ctx context.Context, _ string, route *cloudprovider.Route) error {
	rr, err := routeops.ParseName(route.Name)
	if err != nil {
		return fmt.Errorf("delete route %q of node %q: not a route this provider listed: %w", route.Name, route.TargetNode, err)
	}
	return r.ops.Delete(ctx, rr)
}

// gatewayIP is the address a node's pod traffic is routed to: its first
// IPv4 InternalIP, the instance's primary private IP.
func gatewayIP(addrs []v1.NodeAddress) (netip.Addr, bool) {
	for _, a := range addrs {
		if a.Type != v1.NodeInternalIP {
			continue
		}
		if ip, err := netip.ParseAddr(a.Address); err == nil && ip.Is4() {
			return ip, true
		}
	}
	return netip.Addr{}, false
}

// ---- nodes ----

// nodeInternalIPIndex indexes the shared node informer by InternalIP.
const nodeInternalIPIndex = "tencentcloud/internal-ip"

// nodeIndex answers "which node has this IP" from the CCM's shared node
// informer (the same cache the route controller reads), indexed by
// InternalIP.
type nodeIndex struct {
	mu       sync.RWMutex
	informer cache.SharedIndexInformer
}

var _ routeops.Nodes = (*nodeIndex)(nil)

// set registers the index on the node informer. Call it before the
// informer factory starts (cloudprovider.InformerUser.SetInformers).
func (n *nodeIndex) set(inf coreinformers.NodeInformer) {
	i := inf.Informer()
	if _, exists := i.GetIndexer().GetIndexers()[nodeInternalIPIndex]; !exists {
		if err := i.AddIndexers(cache.Indexers{nodeInternalIPIndex: nodeInternalIPs}); err != nil {
			klog.ErrorS(err, "Cannot index nodes by InternalIP; routes cannot be mapped to nodes")
			return
		}
	}
	n.mu.Lock()
	n.informer = i
	n.mu.Unlock()
}

func nodeInternalIPs(obj any) ([]string, error) {
	node, ok := obj.(*v1.Node)
	if !ok {
		return nil, nil
	}
	var out []string
	for _, a := range node.Status.Addresses {
		if a.Type != v1.NodeInternalIP {
			continue
		}
		if ip, err := netip.ParseAddr(a.Address); err == nil {
			out = append(out, ip.String()) // canonical form
		}
	}
	return out, nil
}

// ready reports whether the index can answer.
func (n *nodeIndex) ready() error {
	n.mu.RLock()
	defer n.mu.RUnlock()
	switch {
	case n.informer == nil:
		return errors.New("the node informer was not set (SetInformers), so routes cannot be mapped to nodes")
	case !n.informer.HasSynced():
		return errors.New("the node informer has not synced yet")
	}
	return nil
}

// NodeForIP returns the node whose InternalIP is ip. Two nodes claiming the
// same IP own neither's routes: a guess could delete the wrong one.
func (n *nodeIndex) NodeForIP(ip netip.Addr) (string, bool) {
	n.mu.RLock()
	inf := n.informer
	n.mu.RUnlock()
	if inf == nil {
		return "", false
	}
	objs, err := inf.GetIndexer().ByIndex(nodeInternalIPIndex, ip.String())
	if err != nil || len(objs) == 0 {
		return "", false
	}
	if len(objs) > 1 {
		klog.InfoS("Warning: several nodes have the same InternalIP; not managing its routes", "ip", ip.String(), "nodes", len(objs))
		return "", false
	}
	node, ok := objs[0].(*v1.Node)
	if !ok {
		return "", false
	}
	return node.Name, true
}

// routeAddresses returns the addresses a route reports for its node: the
// node's current addresses while the gateway is still one of its
// InternalIPs (so the route controller keeps the route), and otherwise only
// the gateway (so it replaces the route).
func (n *nodeIndex) routeAddresses(name string, gw netip.Addr) []v1.NodeAddress {
	gone := []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: gw.String()}}
	n.mu.RLock()
	inf := n.informer
	n.mu.RUnlock()
	if inf == nil {
		return gone
	}
	obj, ok, err := inf.GetIndexer().GetByKey(name)
	if err != nil || !ok {
		return gone
	}
	node, ok := obj.(*v1.Node)
	if !ok {
		return gone
	}
	for _, a := range node.Status.Addresses {
		if a.Type == v1.NodeInternalIP {
			if ip, err := netip.ParseAddr(a.Address); err == nil && ip == gw {
				return append([]v1.NodeAddress(nil), node.Status.Addresses...)
			}
		}
	}
	return gone
}
