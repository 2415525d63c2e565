package oci

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/core"
	v1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
	"github.com/ccmkit/ccm/internal/cloudbase"
	"github.com/ccmkit/ccm/internal/inventory"
	"github.com/ccmkit/ccm/internal/nodeaddr"
	"github.com/ccmkit/ccm/internal/oci/computelookup"
	"github.com/ccmkit/ccm/internal/oci/ocierr"
)

// LabelFaultDomain is the node label holding the instance's fault domain
// (e.g. FAULT-DOMAIN-2), the anti-affinity unit inside an availability
// domain. It is the key OKE uses, so that workloads spreading over fault
// domains keep working.
const LabelFaultDomain = "oci.oraclecloud.com/fault-domain"

// instances implements cloudprovider.InstancesV2 for OCI Compute: it maps
// a Node to its instance, then translates the instance (and its primary
// VNIC) into what the cloud-node and node-lifecycle controllers ask.
//
// Instance reads go through the process-wide inventory
// (internal/inventory). OCI has no batch get, so a by-id lookup is one
// GetInstance; the inventory answers repeated lookups from recent answers
// and, when lookups would cost more than a listing of the compartment, lists
// it once (ListInstances, computelookup.PageSize per page) and answers from that.
type instances struct {
	reader *computelookup.Reader
	inv    *inventory.Inventory[core.Instance]
	// vnics holds the instances' primary VNICs (primaryvnics.go).
	vnics  *inventory.Inventory[computelookup.InstanceVnic]
	region string
	// metadataMaxAge is how old an instance read may be for
	// InstanceMetadata (the periodic status sync; initialization may
	// accept older reads, see cloudbase.MetadataAge).
	metadataMaxAge time.Duration
	// stateMaxAge is how old a read may be for the lifecycle checks.
	stateMaxAge time.Duration
	// readLagWindow: an instance not found by id is gone only if its Node
	// is older (readLagWindow, cloudbase.CheckAbsence).
	readLagWindow time.Duration
	seen          cloudbase.SeenIDs // instances InstanceExists found
	now           func() time.Time
}

// Cache ages. config.DefaultInstanceCacheTTL: long enough for a burst of node
// initializations to share a listing, much shorter than the 5-minute status
// sync. maxStateAge: a stopped instance gets its shutdown taint, and a
// terminated one's node is deleted, at most this much later than with a
// fresh read on every check.
const maxStateAge = 10 * time.Second

// indexDisplayName is the instance inventory's index of live instances of
// the compartment by display name.
const indexDisplayName = "display-name"

func newInstances(reader *computelookup.Reader, region string, ttl time.Duration) *instances {
	i := &instances{reader: reader, region: region, metadataMaxAge: ttl, stateMaxAge: min(ttl, maxStateAge), now: time.Now}
	i.inv = inventory.New(inventory.Source[core.Instance]{
		FetchByID: oneByOne(reader.GetInstance),
		ListAll:   func(ctx context.Context) ([]core.Instance, error) { return reader.ListInstances(ctx, "") },
		// New nodes' machines, all at once: see inventory's delta.go.
		ListSince: reader.ListInstancesSince,
		ID:        func(ins core.Instance) string { return deref(ins.Id) },
		// findByDisplayName's lookup, O(1) per node instead of a scan of
		// the listing: the live instances of the compartment by name.
		Indexes: map[string]func(core.Instance) []string{indexDisplayName: func(ins core.Instance) []string {
			if isGone(&ins) || deref(ins.CompartmentId) != reader.Compartment() {
				return nil
			}
			return []string{deref(ins.DisplayName)}
		}},
	}, inventory.Options{Provider: ProviderName, TTL: ttl, MaxBatch: 1, PageSize: computelookup.PageSize})
	i.vnics = newVnicInventory(reader, ttl)
	return i
}

var _ cloudprovider.InstancesV2 = (*instances)(nil)

// prime starts the first listings, of the compartment's instances and of
// their primary VNICs, side by side, for a CCM that is starting: its node
// controller and status sync look up every node at once, and would
// otherwise pay a first direct call (and the VNICs a per-instance read)
// before each listing begins, and the VNIC listing would start only after
// the first instance lookup.
func (i *instances) prime() {
	if i == nil {
		return
	}
	i.inv.Prime(i.metadataMaxAge)
	i.vnics.Prime(i.metadataMaxAge)
}

// found is the outcome of looking for a node's instance.
type found struct {
	instance *core.Instance // nil when nothing matched
	// byID: the lookup was by OCID (providerID or a node named by OCID).
	byID bool
	// fresh: the answer comes from a read made for this lookup.
	fresh bool
	// notFound: a by-id read answered 404, which OCI also says for an
	// instance the caller may not see; see confirmGone.
	notFound bool
	id       string // the OCID looked up, for by-id lookups
	query    string // the lookup, for messages
}

// isGone reports a terminal lifecycle state.
func isGone(ins *core.Instance) bool {
	return ins.LifecycleState == core.InstanceLifecycleStateTerminated ||
		ins.LifecycleState == core.InstanceLifecycleStateTerminating
}

// find maps a node to its instance, in the public OCI CCM's order: the
// providerID (or a node named by its OCID), else the display name, else the
// private IP or hostname label of a VNIC in the cluster's VCN. A providerID
// is authoritative: when it is set nothing else is tried, so that a node
// can never be matched to another instance by a weaker rule.
func (i *instances) find(ctx context.Context, node *v1.Node, maxAge time.Duration) (found, error) {
	if node.Spec.ProviderID != "" {
		id, err := parseProviderID(node.Spec.ProviderID)
		if err != nil {
			return found{}, fmt.Errorf("node %q: %w", node.Name, err)
		}
		return i.findByID(ctx, node, id, maxAge)
	}
	if isInstanceOCID(node.Name) {
		return i.findByID(ctx, node, node.Name, maxAge)
	}
	f, err := i.findByDisplayName(ctx, node, maxAge)
	if err != nil || f.instance != nil {
		return f, err
	}
	return i.findByVnic(ctx, node, maxAge)
}

// freshAge asks findByID for a read made for this lookup.
const freshAge time.Duration = -1

// findByID reads one instance by OCID (from the inventory when an answer
// at most maxAge old is there). An instance in another compartment is an
// error: the OCID is real, so the node is not gone, but it is not ours.
func (i *instances) findByID(ctx context.Context, node *v1.Node, id string, maxAge time.Duration) (found, error) {
	f := found{byID: true, id: id, query: "instance " + id}
	var r inventory.Result[core.Instance]
	var err error
	if maxAge == freshAge {
		r, err = i.inv.GetFresh(ctx, id)
	} else {
		r, err = i.inv.Get(ctx, id, maxAge)
	}
	switch {
	case ocierr.IsNotFound(err):
		f.notFound, f.fresh = true, true
		return f, nil
	case err != nil:
		return found{}, fmt.Errorf("node %q: %w", node.Name, err)
	case !r.Found:
		// FetchByID never answers "absent" without an error; be safe anyway.
		return found{}, fmt.Errorf("node %q: instance %s: no answer", node.Name, id)
	}
	ins := r.Item
	if c := deref(ins.CompartmentId); c != i.reader.Compartment() {
		return found{}, fmt.Errorf("node %q: instance %s is in compartment %q, not in the cluster's compartment %s (check compartment)",
			node.Name, id, c, i.reader.Compartment())
	}
	f.instance, f.fresh = &ins, r.Fresh
	return f, nil
}

// findByDisplayName lists the compartment's live instances whose display
// name is the node's name, and insists on at most one: guessing between two
// could attach a node's labels, or its deletion, to the wrong machine.
func (i *instances) findByDisplayName(ctx context.Context, node *v1.Node, maxAge time.Duration) (found, error) {
	f := found{query: "displayName=" + node.Name}
	live := func(ins core.Instance) bool { return !isGone(&ins) }
	set, err := i.inv.MatchIndex(ctx, maxAge, indexDisplayName, []string{node.Name}, func(ctx context.Context) ([]core.Instance, error) {
		all, err := i.reader.ListInstances(ctx, node.Name)
		return slices.DeleteFunc(all, func(ins core.Instance) bool { return !live(ins) }), err
	})
	if err != nil {
		return found{}, fmt.Errorf("node %q: %w", node.Name, err)
	}
	return i.single(node, f, set)
}

// findByVnic matches the node's private IPs (its name when it is one, and
// its InternalIP addresses) and hostnames against the VNICs of the cluster's
// VCN.
func (i *instances) findByVnic(ctx context.Context, node *v1.Node, maxAge time.Duration) (found, error) {
	ips, hostnames := nodeIPs(node), nodeHostnames(node)
	f := found{query: fmt.Sprintf("displayName=%s, VNIC privateIp in %v or hostnameLabel in %v", node.Name, ips, hostnames)}
	ids, err := i.reader.InstancesByVnic(ctx, ips, hostnames)
	if err != nil {
		return found{}, fmt.Errorf("node %q: %w", node.Name, err)
	}
	var set []core.Instance
	for _, id := range ids {
		r, err := i.inv.Get(ctx, id, maxAge)
		if err != nil {
			return found{}, fmt.Errorf("node %q: %w", node.Name, err)
		}
		if r.Found && !isGone(&r.Item) && deref(r.Item.CompartmentId) == i.reader.Compartment() {
			set = append(set, r.Item)
		}
	}
	return i.single(node, f, set)
}

// single returns the only instance of set, none, or an ambiguity error.
func (i *instances) single(node *v1.Node, f found, set []core.Instance) (found, error) {
	switch len(set) {
	case 0:
		return f, nil
	case 1:
		f.instance = &set[0]
		return f, nil
	}
	parts := make([]string, 0, len(set))
	for _, ins := range set {
		parts = append(parts, fmt.Sprintf("%s %q", deref(ins.Id), deref(ins.DisplayName)))
	}
	slices.Sort(parts)
	return found{}, fmt.Errorf("node %q: %d instances in compartment %s match %s: %s; cannot tell which is the node's "+
		"(set the node's spec.providerID, e.g. kubelet --provider-id=%s<instance OCID>)",
		node.Name, len(set), i.reader.Compartment(), f.query, strings.Join(parts, ", "), providerIDPrefix)
}

// InstanceExists reports whether the node's instance still exists. The
// node-lifecycle controller deletes the Node as soon as this returns
// (false, nil), so that answer is given only when OCI said so
// unambiguously:
//
//   - the instance, read afresh by OCID, is TERMINATED or TERMINATING; or
//   - GetInstance answered 404 AND a complete, successful listing of the
//     configured compartment, made right after, does not show the instance
//     alive. OCI answers 404 NotAuthorizedOrNotFound both for a missing
//     instance and for one the CCM may no longer see (a policy change), so
//     the 404 alone is not proof; the listing is the second signal: a CCM
//     that lost its permissions fails to list (404/401) and keeps the node.
//
// Everything else is an error, returned as (true, err): 401
// NotAuthenticated, 429, 5xx, timeouts, an instance in another compartment,
// an ambiguous match, a failed or inconsistent confirmation, and a node
// without providerID that nothing matched (the match, not the instance, may
// be what is wrong). Upstream ignores the bool when err is set; true keeps
// the node even for a caller that forgets to check err.
func (i *instances) InstanceExists(ctx context.Context, node *v1.Node) (bool, error) {
	return ccmmetrics.Run(ctx, "oci.InstanceExists", func(ctx context.Context) (bool, error) { return i.instanceExists(ctx, node) })
}

func (i *instances) instanceExists(ctx context.Context, node *v1.Node) (bool, error) {
	f, err := i.find(ctx, node, i.stateMaxAge)
	if err != nil {
		return true, err
	}
	if f.instance == nil && !f.byID {
		return true, i.errCannotTell(node, f)
	}
	if f.instance != nil && isGone(f.instance) && !f.fresh {
		// A cached answer may say "terminated"; only a fresh read decides.
		if f, err = i.findByID(ctx, node, deref(f.instance.Id), freshAge); err != nil {
			return true, err
		}
	}
	if f.notFound {
		gone, err := i.confirmGone(ctx, f.id)
		if err != nil {
			return true, fmt.Errorf("node %q: GetInstance %s answered 404, which OCI also answers when access is denied, "+
				"and the confirmation failed, so the node is kept: %w", node.Name, f.id, err)
		}
		if gone {
			// Not yet for a Node younger than the read lag window, unless
			// a read showed its instance before: both reads may not show
			// a new instance yet.
			if !i.seen.Seen(f.id) {
				if err := cloudbase.CheckAbsence(node, f.id, "GetInstance (404) and ListInstances", i.readLagWindow, i.now()); err != nil {
					return true, err
				}
			}
			klog.FromContext(ctx).V(2).Info("Instance no longer exists (404, and absent from the compartment's listing)", "node", klog.KObj(node), "instanceID", f.id)
		}
		return !gone, nil
	}
	i.seen.Mark(deref(f.instance.Id), i.now())
	if isGone(f.instance) {
		klog.FromContext(ctx).V(2).Info("Instance is terminated", "node", klog.KObj(node), "instanceID", f.id, "state", f.instance.LifecycleState)
		return false, nil
	}
	return true, nil
}

// errInconsistent: GetInstance said 404 while the listing shows the
// instance alive; something is off (eventual consistency, a policy
// granting list but not read), so nothing is concluded.
var errInconsistent = errors.New("the compartment's listing shows the instance alive")

// confirmGone lists the compartment afresh (never from the inventory) and
// reports whether the instance is absent from it or terminated in it. Any
// error, including a 404 for the compartment, is returned.
func (i *instances) confirmGone(ctx context.Context, id string) (bool, error) {
	all, err := i.reader.ListInstances(ctx, "")
	if err != nil {
		return false, err
	}
	for _, ins := range all {
		if deref(ins.Id) == id {
			if isGone(&ins) {
				return true, nil
			}
			return false, fmt.Errorf("instance %s (%s): %w", id, ins.LifecycleState, errInconsistent)
		}
	}
	return true, nil
}

// errCannotTell explains why a lookup that found nothing is not "gone".
func (i *instances) errCannotTell(node *v1.Node, f found) error {
	return fmt.Errorf("cannot tell whether node %q's instance exists: the node has no providerID and no instance "+
		"in compartment %s matched %s; an empty match is not proof of deletion", node.Name, i.reader.Compartment(), f.query)
}

// InstanceShutdown reports whether the node's instance is STOPPED or
// STOPPING; the lifecycle controller then taints the node, never deletes it.
func (i *instances) InstanceShutdown(ctx context.Context, node *v1.Node) (bool, error) {
	return ccmmetrics.Run(ctx, "oci.InstanceShutdown", func(ctx context.Context) (bool, error) { return i.instanceShutdown(ctx, node) })
}

func (i *instances) instanceShutdown(ctx context.Context, node *v1.Node) (bool, error) {
	f, err := i.find(ctx, node, i.stateMaxAge)
	if err != nil {
		return false, err
	}
	if f.notFound {
		return false, fmt.Errorf("node %q: GetInstance %s: [NotAuthorizedOrNotFound] (HTTP 404)", node.Name, f.id)
	}
	if f.instance == nil {
		return false, i.errCannotTell(node, f)
	}
	switch f.instance.LifecycleState {
	case core.InstanceLifecycleStateStopped, core.InstanceLifecycleStateStopping:
		return true, nil
	}
	return false, nil
}

// InstanceMetadata returns the node's providerID, shape, addresses (from
// the primary VNIC), zone (availability domain), region and fault domain.
// An instance whose primary VNIC is outside the cluster's VCN is not ours:
// the node stays uninitialized, with an error saying why.
func (i *instances) InstanceMetadata(ctx context.Context, node *v1.Node) (*cloudprovider.InstanceMetadata, error) {
	return ccmmetrics.Run(ctx, "oci.InstanceMetadata", func(ctx context.Context) (*cloudprovider.InstanceMetadata, error) {
		return i.instanceMetadata(ctx, node)
	})
}

func (i *instances) instanceMetadata(ctx context.Context, node *v1.Node) (*cloudprovider.InstanceMetadata, error) {
	maxAge := cloudbase.MetadataAge(node, i.metadataMaxAge, time.Now())
	// The addresses are read after the instance; when many nodes are
	// being initialized, their listing runs meanwhile, not after.
	i.vnics.Warm(maxAge)
	f, err := i.find(ctx, node, maxAge)
	if err != nil {
		return nil, err
	}
	if f.notFound {
		return nil, fmt.Errorf("node %q: GetInstance %s: [NotAuthorizedOrNotFound] (HTTP 404): %w", node.Name, f.id, cloudprovider.InstanceNotFound)
	}
	if f.instance == nil {
		return nil, fmt.Errorf("node %q: no instance in compartment %s matched %s: %w",
			node.Name, i.reader.Compartment(), f.query, cloudprovider.InstanceNotFound)
	}
	ins := f.instance
	id := deref(ins.Id)
	vnic, err := i.primaryVnic(ctx, id, maxAge)
	if err != nil {
		return nil, fmt.Errorf("node %q: %w", node.Name, err)
	}
	vcn, err := i.reader.VCNOf(ctx, deref(vnic.SubnetId))
	if err != nil {
		return nil, fmt.Errorf("node %q: %w", node.Name, err)
	}
	if vcn != i.reader.VCN() {
		return nil, fmt.Errorf("node %q: instance %s's primary VNIC is in VCN %q, not in the cluster's VCN %s (check vcn)",
			node.Name, id, vcn, i.reader.VCN())
	}
	zone := zoneOf(deref(ins.AvailabilityDomain))
	if zone == "" {
		return nil, fmt.Errorf("node %q: GetInstance %s answered without availabilityDomain", node.Name, id)
	}
	// Upstream never changes a providerID once set, and expects ours to
	// match it, so a node that joined with a bare OCID keeps it.
	providerID := node.Spec.ProviderID
	if providerID == "" {
		providerID = formatProviderID(id)
	}
	md := &cloudprovider.InstanceMetadata{
		ProviderID:    providerID,
		InstanceType:  deref(ins.Shape),
		NodeAddresses: nodeAddresses(node, vnic),
		Zone:          zone,
		Region:        i.region,
	}
	if fd := deref(ins.FaultDomain); fd != "" {
		md.AdditionalLabels = map[string]string{LabelFaultDomain: fd}
	}
	return md, nil
}

// zoneOf turns an availability domain into a zone label value. ADs are
// tenancy-prefixed ("Uocm:PHX-AD-1"), and ':' is not allowed in a label
// value, so the prefix goes, as the public OCI CCM does: PHX-AD-1.
func zoneOf(ad string) string {
	if _, after, ok := strings.Cut(ad, ":"); ok {
		return after
	}
	return ad
}

// nodeAddresses lists the primary VNIC's private IP (InternalIP) and public
// IP (ExternalIP), its IPv6 addresses after them (ipv6.go), and a hostname: the kubelet's own when it registered
// one (so that the two never fight), else the VNIC's hostname label, else
// the node name.
func nodeAddresses(node *v1.Node, vnic core.Vnic) []v1.NodeAddress {
	var out []v1.NodeAddress
	if ip := deref(vnic.PrivateIp); ip != "" {
		out = append(out, v1.NodeAddress{Type: v1.NodeInternalIP, Address: ip})
	}
	if ip := deref(vnic.PublicIp); ip != "" {
		out = append(out, v1.NodeAddress{Type: v1.NodeExternalIP, Address: ip})
	}
	out = append(out, ipv6NodeAddresses(vnic.Ipv6Addresses)...)
	hostname := nodeaddr.Hostname(node)
	if hostname == "" {
		hostname = deref(vnic.HostnameLabel)
	}
	if hostname == "" {
		hostname = node.Name
	}
	return append(out, v1.NodeAddress{Type: v1.NodeHostName, Address: hostname})
}

// nodeIPs returns the IPv4 addresses that may be the node's VNIC private
// IP: its name when it is one, and its InternalIP addresses.
func nodeIPs(node *v1.Node) []string {
	if !nodeaddr.IsIPv4(node.Name) {
		return nodeaddr.InternalIPv4s(node)
	}
	ips := []string{node.Name}
	for _, ip := range nodeaddr.InternalIPv4s(node) {
		if ip != node.Name {
			ips = append(ips, ip)
		}
	}
	return ips
}

// nodeHostnames returns the names that may be the node's VNIC hostname
// label: the node name and Hostname address, and their first DNS label
// (a label is unqualified: node-1 in node-1.subnet.vcn.oraclevcn.com).
func nodeHostnames(node *v1.Node) []string {
	var out []string
	add := func(s string) {
		if s == "" {
			return
		}
		if _, err := netip.ParseAddr(s); err == nil {
			return // an IP is not a hostname label
		}
		for _, c := range []string{s, strings.SplitN(s, ".", 2)[0]} {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	add(node.Name)
	add(nodeaddr.Hostname(node))
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
