package tencentcloud

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
	v1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
	"github.com/ccmkit/ccm/internal/cloudbase"
	"github.com/ccmkit/ccm/internal/inventory"
	"github.com/ccmkit/ccm/internal/nodeaddr"
	"github.com/ccmkit/ccm/internal/tencent/cvmlookup"
)

// CVM instance states we act on (see DescribeInstances' InstanceState).
const (
	stateTerminating = "TERMINATING"
	stateStopped     = "STOPPED"
	stateStopping    = "STOPPING"
	stateShutdown    = "SHUTDOWN"
)

// instances implements cloudprovider.InstancesV2 for CVM: it maps a Node
// to its instance, then translates the instance into what the cloud-node
// and node-lifecycle controllers want to know.
//
// Lookups go through the process-wide inventory (internal/inventory), which
// batches by-id calls and answers from recent answers; with inv nil (the
// benchmark's baseline) every lookup is its own DescribeInstances.
type instances struct {
	lookup *cvmlookup.Lookup
	inv    *inventory.Inventory[*cvm.Instance]
	region string
	// metadataMaxAge is how old an answer may be for InstanceMetadata
	// (the periodic status sync; initialization may accept older reads,
	// see cloudbase.MetadataAge): instance_cache_ttl.
	metadataMaxAge time.Duration
	// stateMaxAge is how old an answer may be for the lifecycle checks,
	// which poll NotReady nodes every few seconds and act on the state.
	stateMaxAge time.Duration
	// readLagWindow: an instance absent from a by-id answer is gone only
	// if its Node is older (read_lag_window, cloudbase.CheckAbsence).
	readLagWindow time.Duration
	seen          cloudbase.SeenIDs // instances InstanceExists found
	now           func() time.Time
}

// keyWindow is how long a by-IP (or by-name) lookup waits for others to
// share its call: five nodes joining at 20/s fill one call in 250 ms, well
// within the second a join may take beyond the bare minimum. A batch of
// five goes at once.
const keyWindow = 250 * time.Millisecond

// maxStateAge caps stateMaxAge: a stopped instance gets its node's
// shutdown taint, and a terminated one its node deleted, at most this much
// later than with a fresh call on every check.
const maxStateAge = 10 * time.Second

// newInstances builds the InstancesV2 implementation over lookup, with an
// inventory unless disabled.
func newInstances(lookup *cvmlookup.Lookup, region string, ttl time.Duration, useInventory bool) *instances {
	i := &instances{lookup: lookup, region: region, metadataMaxAge: ttl, stateMaxAge: min(ttl, maxStateAge), now: time.Now}
	if useInventory {
		i.inv = inventory.New(inventory.Source[*cvm.Instance]{
			FetchByID: func(ctx context.Context, ids []string) ([]*cvm.Instance, error) {
				return lookup.ByID(ctx, "instances", ids...)
			},
			ListAll: lookup.InVPC,
			// New nodes' machines, all at once: see inventory's delta.go.
			ListSince: lookup.CreatedSince,
			ID:        func(ins *cvm.Instance) string { return *ins.InstanceId },
			Indexes:   cvmlookup.FilterIndexes(lookup.VPC()),
			// Nodes without a providerID (the IP-named ones) that join
			// together are looked up together: one filtered call per five
			// values, the API's limit, instead of one call per node.
			FetchByKeys: func(ctx context.Context, index string, keys []string) ([]*cvm.Instance, error) {
				return lookup.ByFilter(ctx, "the nodes of "+cvmlookup.Abbreviate(keys), index, keys)
			},
		}, inventory.Options{Provider: ProviderName, TTL: ttl, MaxBatch: cvmlookup.PageSize, PageSize: cvmlookup.PageSize,
			MaxKeys: cvmlookup.MaxFilterValues, KeyWindow: keyWindow})
	}
	return i
}

var _ cloudprovider.InstancesV2 = (*instances)(nil)

// prime starts the inventory's first listing of the VPC, for a CCM that is
// starting: its node controller and status sync look up every node at
// once, and would otherwise wait for a first batch's call before the
// listing begins (1,000 nodes: about 0.4 s before the first node write).
func (i *instances) prime() {
	if i != nil && i.inv != nil {
		i.inv.Prime(i.metadataMaxAge)
	}
}

// found is the outcome of looking for a node's instance.
type found struct {
	// instance is nil when nothing matched.
	instance *cvm.Instance
	// byID is true when the lookup was by instance id. Only then does a
	// missing instance mean the cloud does not know it; an empty filter
	// result says nothing about existence.
	byID bool
	// fresh is true when the answer comes from a by-id call made for this
	// lookup, not from the inventory: only such an answer may say "gone".
	fresh bool
	// query describes the lookup for messages, e.g. "private-ip-address=10.0.0.5".
	query string
	// id is the instance id looked up, for by-id lookups.
	id string
}

// find maps a node to its instance. The order matters: a providerID is
// authoritative, and it is set on every node we initialized; the other
// rules only serve nodes that joined without one. It stops at the first rule
// that applies, even if that rule finds nothing, so that a node can never
// be matched to a different instance by a weaker rule. Answers may be up
// to maxAge old.
func (i *instances) find(ctx context.Context, node *v1.Node, maxAge time.Duration) (found, error) {
	if node.Spec.ProviderID != "" {
		p, err := parseProviderID(node.Spec.ProviderID)
		if err != nil {
			return found{}, fmt.Errorf("node %q: %w", node.Name, err)
		}
		return i.findByID(ctx, node, p.InstanceID, maxAge)
	}
	if isInstanceID(node.Name) {
		return i.findByID(ctx, node, node.Name, maxAge)
	}
	if nodeaddr.IsIPv4(node.Name) {
		return i.findByFilter(ctx, node, "private-ip-address", []string{node.Name}, maxAge)
	}
	if ips := nodeaddr.InternalIPv4s(node); len(ips) > 0 {
		return i.findByFilter(ctx, node, "private-ip-address", ips, maxAge)
	}
	names := []string{node.Name}
	if h := nodeaddr.Hostname(node); h != "" && h != node.Name {
		names = append(names, h)
	}
	return i.findByFilter(ctx, node, "instance-name", names, maxAge)
}

// freshAge asks findByID for an answer from a by-id call made for this
// lookup, never from the inventory.
const freshAge time.Duration = -1

// findByID describes one instance by id (from the inventory when it holds
// an answer at most maxAge old). An instance outside our VPC is an error,
// not "not found": the id is real, so the node is not gone, but it is not
// ours to manage either (usually a wrong vpc_id).
func (i *instances) findByID(ctx context.Context, node *v1.Node, id string, maxAge time.Duration) (found, error) {
	query := "instance-id=" + id
	var ins *cvm.Instance
	fresh := true
	switch i.inv {
	case nil: // no inventory: one DescribeInstances per lookup
		set, err := i.lookup.ByID(ctx, fmt.Sprintf("node %q", node.Name), id)
		if err != nil {
			return found{}, err
		}
		if len(set) > 0 {
			ins = set[0]
		}
	default:
		var r inventory.Result[*cvm.Instance]
		var err error
		if maxAge == freshAge {
			r, err = i.inv.GetFresh(ctx, id)
		} else {
			r, err = i.inv.Get(ctx, id, maxAge)
		}
		if err != nil {
			return found{}, fmt.Errorf("node %q (instance %s): %w", node.Name, id, err)
		}
		ins, fresh = r.Item, r.Fresh
		if !r.Found {
			ins = nil
		}
	}
	if ins == nil {
		return found{byID: true, fresh: fresh, query: query, id: id}, nil
	}
	if vpc := cvmlookup.VPCOf(ins); vpc != i.lookup.VPC() {
		return found{}, fmt.Errorf("node %q: instance %s is in VPC %q, not in the cluster's VPC %s (check vpc_id)",
			node.Name, id, vpc, i.lookup.VPC())
	}
	return found{instance: ins, byID: true, fresh: fresh, query: query, id: id}, nil
}

// findByFilter lists the instances of our VPC matching name=values and
// insists on at most one: guessing between two instances could attach a
// node's labels, or its deletion, to the wrong machine. The inventory
// answers from a recent listing of the VPC when it has one.
func (i *instances) findByFilter(ctx context.Context, node *v1.Node, name string, values []string, maxAge time.Duration) (found, error) {
	query := name + "=" + strings.Join(values, ",")
	direct := func(ctx context.Context) ([]*cvm.Instance, error) {
		return i.lookup.ByFilter(ctx, fmt.Sprintf("node %q", node.Name), name, values)
	}
	var set []*cvm.Instance
	var err error
	if i.inv == nil {
		set, err = direct(ctx)
	} else if set, err = i.inv.MatchIndex(ctx, maxAge, name, values, direct); err != nil {
		err = fmt.Errorf("node %q: %w", node.Name, err) // the batch's call may serve other nodes too
	}
	if err != nil {
		return found{}, err
	}
	switch len(set) {
	case 0:
		return found{query: query}, nil
	case 1:
		return found{instance: set[0], query: query}, nil
	}
	return found{}, fmt.Errorf("node %q: %d instances in VPC %s match %s: %s; cannot tell which is the node's "+
		"(set the node's spec.providerID, e.g. kubelet --provider-id=%s<zone>/<ins-id>)",
		node.Name, len(set), i.lookup.VPC(), query, describeCandidates(set), providerIDPrefix)
}

// describeCandidates lists up to ten instances as id "name", sorted by id.
func describeCandidates(set []*cvm.Instance) string {
	parts := make([]string, 0, len(set))
	for _, ins := range set {
		parts = append(parts, fmt.Sprintf("%s %q", *ins.InstanceId, deref(ins.InstanceName)))
	}
	slices.Sort(parts)
	if len(parts) > 10 {
		parts = append(parts[:10], fmt.Sprintf("and %d more", len(parts)-10))
	}
	return strings.Join(parts, ", ")
}

// errCannotTell explains why a filter lookup that found nothing is not "gone".
func (i *instances) errCannotTell(node *v1.Node, f found) error {
	return fmt.Errorf("cannot tell whether node %q's instance exists: the node has no providerID and "+
		"no instance in VPC %s matched %s; an empty filter result is not proof of deletion",
		node.Name, i.lookup.VPC(), f.query)
}

// InstanceExists reports whether the node's instance still exists. The
// node-lifecycle controller deletes the Node as soon as this returns
// (false, nil), so that answer is given only when the cloud said so
// unambiguously: a by-id lookup (providerID or an ins- node name) came back
// without the instance, or the instance is TERMINATING.
//
// Everything else is an error, returned as (true, err): throttling, auth
// failures, timeouts, malformed answers, an instance in another VPC, an
// ambiguous match, and a node without providerID that no filter matched
// (the filter, not the instance, may be what is wrong). Upstream ignores
// the bool when err is set; we still answer true so that a caller that
// forgets to check err keeps the node.
//
// A positive answer may come from the inventory; a negative one is always
// re-checked with a by-id call made for it, so that a stale or missing
// inventory entry never deletes a node. An instance absent from that
// answer is gone only if the Node is older than read_lag_window: a Node
// proves its instance existed when the kubelet on it registered, and a
// cloud's reads may lag its writes (cloudbase.CheckAbsence).
func (i *instances) InstanceExists(ctx context.Context, node *v1.Node) (bool, error) {
	return ccmmetrics.Run(ctx, "tencentcloud.InstanceExists", func(ctx context.Context) (bool, error) { return i.instanceExists(ctx, node) })
}

func (i *instances) instanceExists(ctx context.Context, node *v1.Node) (bool, error) {
	f, err := i.find(ctx, node, i.stateMaxAge)
	if err != nil {
		return true, err
	}
	if f.instance == nil && !f.byID {
		return true, i.errCannotTell(node, f)
	}
	if (f.instance == nil || deref(f.instance.InstanceState) == stateTerminating) && !f.fresh {
		id := f.id
		if f.instance != nil {
			id = *f.instance.InstanceId // found by filter
		}
		if f, err = i.findByID(ctx, node, id, freshAge); err != nil {
			return true, err
		}
	}
	if f.instance == nil {
		// Absent is not yet gone for a Node younger than the read lag
		// window, unless a read showed its instance before: the cloud's
		// answers may not show a new instance yet.
		if i.seen.Seen(f.id) {
			klog.FromContext(ctx).V(2).Info("Instance no longer exists (an earlier answer showed it)", "node", klog.KObj(node), "query", f.query)
			return false, nil
		}
		if err := cloudbase.CheckAbsence(node, f.id, "DescribeInstances by id", i.readLagWindow, i.now()); err != nil {
			return true, err
		}
		klog.FromContext(ctx).V(2).Info("Instance no longer exists", "node", klog.KObj(node), "query", f.query)
		return false, nil
	}
	i.seen.Mark(deref(f.instance.InstanceId), i.now())
	if state := deref(f.instance.InstanceState); state == stateTerminating {
		klog.FromContext(ctx).V(2).Info("Instance is terminating", "node", klog.KObj(node), "instanceID", *f.instance.InstanceId)
		return false, nil
	}
	return true, nil
}

// InstanceShutdown reports whether the node's instance is stopped or
// stopping; the lifecycle controller then taints the node (never deletes
// it). Upstream asks only after InstanceExists said true, so an instance
// gone by id in between is simply not shut down.
func (i *instances) InstanceShutdown(ctx context.Context, node *v1.Node) (bool, error) {
	return ccmmetrics.Run(ctx, "tencentcloud.InstanceShutdown", func(ctx context.Context) (bool, error) { return i.instanceShutdown(ctx, node) })
}

func (i *instances) instanceShutdown(ctx context.Context, node *v1.Node) (bool, error) {
	f, err := i.find(ctx, node, i.stateMaxAge)
	if err != nil {
		return false, err
	}
	if f.instance == nil {
		if !f.byID {
			return false, i.errCannotTell(node, f)
		}
		return false, nil
	}
	switch deref(f.instance.InstanceState) {
	case stateStopped, stateStopping, stateShutdown:
		return true, nil
	}
	return false, nil
}

// InstanceMetadata returns the node's providerID, instance type, addresses,
// zone and region. A node with no matching instance gets an error wrapping
// cloudprovider.InstanceNotFound.
func (i *instances) InstanceMetadata(ctx context.Context, node *v1.Node) (*cloudprovider.InstanceMetadata, error) {
	return ccmmetrics.Run(ctx, "tencentcloud.InstanceMetadata", func(ctx context.Context) (*cloudprovider.InstanceMetadata, error) {
		return i.instanceMetadata(ctx, node)
	})
}

func (i *instances) instanceMetadata(ctx context.Context, node *v1.Node) (*cloudprovider.InstanceMetadata, error) {
	f, err := i.find(ctx, node, cloudbase.MetadataAge(node, i.metadataMaxAge, time.Now()))
	if err != nil {
		return nil, err
	}
	if f.instance == nil {
		return nil, fmt.Errorf("node %q: no instance in VPC %s matched %s: %w",
			node.Name, i.lookup.VPC(), f.query, cloudprovider.InstanceNotFound)
	}
	ins := f.instance
	zone := ""
	if ins.Placement != nil {
		zone = deref(ins.Placement.Zone)
	}
	if zone == "" {
		return nil, fmt.Errorf("node %q: DescribeInstances answered instance %s without Placement.Zone",
			node.Name, *ins.InstanceId)
	}
	// Upstream never changes a providerID once set and expects ours to
	// match it, so a node that joined as qcloud:/// or a bare id keeps it.
	providerID := node.Spec.ProviderID
	if providerID == "" {
		providerID = formatProviderID(zone, *ins.InstanceId)
	}
	return &cloudprovider.InstanceMetadata{
		ProviderID:    providerID,
		InstanceType:  deref(ins.InstanceType),
		NodeAddresses: nodeAddresses(node, ins),
		Zone:          zone,
		Region:        i.region,
	}, nil
}

// nodeAddresses lists the instance's private IPs as InternalIP, its public
// IPs as ExternalIP, and the node's hostname. The hostname comes from the
// node (the kubelet's view), because the cloud has no notion of it that
// matches what the kubelet registered.
func nodeAddresses(node *v1.Node, ins *cvm.Instance) []v1.NodeAddress {
	var out []v1.NodeAddress
	add := func(t v1.NodeAddressType, addrs []*string) {
		for _, a := range addrs {
			if a == nil || *a == "" {
				continue
			}
			na := v1.NodeAddress{Type: t, Address: *a}
			if !slices.Contains(out, na) {
				out = append(out, na)
			}
		}
	}
	add(v1.NodeInternalIP, ins.PrivateIpAddresses)
	add(v1.NodeExternalIP, ins.PublicIpAddresses)
	hostname := nodeaddr.Hostname(node)
	if hostname == "" {
		hostname = node.Name
	}
	return append(out, v1.NodeAddress{Type: v1.NodeHostName, Address: hostname})
}

// deref reads an optional string field of an answer.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
