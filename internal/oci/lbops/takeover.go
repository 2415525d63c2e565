package lbops

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/core"

	"github.com/ccmkit/ccm/internal/lb/lbkit"
	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/internal/oci/ocierr"
)

// Taking over the public OCI cloud-controller-manager's load balancers
// (oracle/oci-cloud-controller-manager v1.35; docs/migration.md).
//
// Names. It names a Load Balancer by the Service UID, prefixed with
// "<LOAD_BALANCER_PREFIX>-" when its Deployment sets that variable, and a
// Network Load Balancer "<namespace>/<name>/<UID>" (GetLoadBalancerName in
// its pkg/cloudprovider/providers/oci/load_balancer_util.go). A Service's
// load balancer is looked up under each name it may have (Naming.names),
// ours first; a new one is named by Naming.Name: the Service UID, with
// loadBalancer.namePrefix for a Load Balancer, and "<namespace>/<name>/<UID>"
// for a Network Load Balancer with defaults: upstream, so that the public
// CCM finds it again if it ever takes the Service back.
//
// Ownership. Every name carries the Service UID, so a load balancer found
// under one is the Service's, whoever made it: it is ours to change and it
// is deleted with the Service, as one we created. Our freeform tags
// (ccmkit-service-uid, ccmkit-service) are added to its own, which are
// kept, with the first sync that changes it (UpdateLoadBalancer); a load
// balancer the takeover leaves unchanged (defaults: upstream) keeps its
// tags as they are until then, and is found by its name meanwhile. Its
// listeners and backend sets are named as ours (<PROTO>-<port>, the IPv6
// pair <PROTO>-<port>-IPv6); an HTTP listener it named HTTP-<port> keeps
// that name (listenerNames). The rule sets the Service names are taken
// over by name (rulesets.go), the security list rules its modes All and
// Frontend wrote by what they allow (seclist.go), its managed NSG by its
// tags (nsg.go).
//
// Refusals: nothing is created, and the sync fails with a Warning Event
// (lbkit.RefusalError), when a Load Balancer named for the Service with
// another prefix exists (the incumbent's LOAD_BALANCER_PREFIX is not
// loadBalancer.namePrefix), or when the incumbent's load balancer lives on
// a subnet of another VCN than the config's (its backends could not be this
// cluster's nodes). The user then sets the prefix, or deletes that load
// balancer, and the next sync takes over or creates.

// EventReasonNotTakenOver is the reason of the Warning Event of a refusal.
const EventReasonNotTakenOver = "LoadBalancerNotTakenOver"

// OwnerUpstream names the public OCI CCM in a Plan.
const OwnerUpstream = "public OCI CCM (or made out of band with its name)"

// Naming is how display names are made.
type Naming struct {
	// Prefix is loadBalancer.namePrefix, the public OCI CCM's
	// LOAD_BALANCER_PREFIX, with or without its trailing hyphen.
	Prefix string
	// UpstreamNLB names new Network Load Balancers as the public OCI CCM
	// does (defaults: upstream).
	UpstreamNLB bool
}

// prefix is Prefix with its hyphen, as the public CCM adds it.
func (n Naming) prefix() string {
	if n.Prefix == "" || strings.HasSuffix(n.Prefix, "-") {
		return n.Prefix
	}
	return n.Prefix + "-"
}

// Name is the display name a new load balancer of kind k gets.
func (n Naming) Name(k Kind, ref lbspec.Ref) string {
	if k == KindNLB {
		if n.UpstreamNLB {
			return upstreamNLBName(ref)
		}
		return string(ref.UID)
	}
	return n.prefix() + string(ref.UID)
}

// names are every display name the Service's load balancer of kind k may
// have, the one a new one gets first.
func (n Naming) names(k Kind, ref lbspec.Ref) []string {
	out := []string{n.Name(k, ref)}
	for _, alt := range []string{string(ref.UID), upstreamNLBName(ref)} {
		if (k == KindNLB || alt == string(ref.UID)) && !slices.Contains(out, alt) {
			out = append(out, alt)
		}
	}
	return out
}

// upstreamNLBName is the public OCI CCM's name of a Network Load Balancer
// (at most 1024 characters, which namespace/name/UID never exceeds).
func upstreamNLBName(ref lbspec.Ref) string {
	return ref.Service.Namespace + "/" + ref.Service.Name + "/" + string(ref.UID)
}

// find returns the Service's load balancer of drv's kind, under the first
// of its names that has one (d.Name, the translator's, first); nil when
// none has. An error of any lookup is returned: a lookup that failed never
// leads to a creation. A listing that began after the Service's last
// reconcile may answer (gather.go).
func (o *Ops) find(ctx context.Context, drv driver, d *Desired) (*actual, error) {
	return o.findSince(ctx, drv, d, o.fence(d))
}

// fence is the Service's notBefore: the end of its last reconcile, and
// the read lag after it (cloudbase.Reconciled).
func (o *Ops) fence(d *Desired) time.Time { return o.reconciled.NotBefore(d.Ref.UID, o.readLagWindow) }

// findFresh is find from a listing that begins now. Deletion and the
// service controller's check before it (Get) read afresh: a load balancer
// made out of band since the last listing (by the incumbent, or by hand)
// that a stale absence hid would be left behind while the deletion
// reported success.
func (o *Ops) findFresh(ctx context.Context, drv driver, d *Desired) (*actual, error) {
	return o.findSince(ctx, drv, d, o.now())
}

// confirmAbsent is find by filtered calls made now: a creation is decided
// on a fresh read only (reconcile).
func (o *Ops) confirmAbsent(ctx context.Context, drv driver, d *Desired) (*actual, error) {
	return drv.findNow(ctx, o.names(drv, d)...)
}

func (o *Ops) findSince(ctx context.Context, drv driver, d *Desired, notBefore time.Time) (*actual, error) {
	// All names in one lookup: one listing when they are several (gather.go).
	return drv.find(ctx, notBefore, o.names(drv, d)...)
}

// names are the display names the Service's load balancer of drv's kind
// may have, d.Name (the translator's) first.
func (o *Ops) names(drv driver, d *Desired) []string {
	names := o.naming.names(drv.kind(), d.Ref)
	if d.Name != "" && (d.Kind == "" || d.Kind == drv.kind()) && !slices.Contains(names, d.Name) {
		names = append([]string{d.Name}, names...)
	}
	return names
}

// ownedBy reports whether the load balancer carries our tag for the Service.
func ownedBy(a *actual, d *Desired) bool { return a.Tags[TagServiceUID] == string(d.Ref.UID) }

// owner names who made a, for a Plan.
func owner(a *actual, d *Desired) string {
	if ownedBy(a, d) {
		return lbkit.OwnerOurs
	}
	return OwnerUpstream
}

// tagStep is the takeover's write: our freeform tags over the load
// balancer's own (UpdateLoadBalancerDetails.freeformTags replaces the
// map, so the ones it has are sent along; defined tags are left out of
// the request, and so left as they are).
func tagStep(a *actual, d *Desired) step {
	tags := maps.Clone(a.Tags)
	if tags == nil {
		tags = map[string]string{}
	}
	maps.Copy(tags, freeformTags(d))
	return step{verb: verbUpdate, what: objLoadBalancer, name: a.DisplayName, tags: tags}
}

// refuse is a refusal of the Service's sync.
func refuse(format string, args ...any) error {
	return &lbkit.RefusalError{Reason: EventReasonNotTakenOver, Message: fmt.Sprintf(format, args...)}
}

// checkTakeover refuses a load balancer not ours that lives on a subnet of
// another VCN than the cluster's: its backends could not be this cluster's
// nodes (they are instances of the config's VCN), and its security list
// rules would be written to another network. One GetSubnet, only while it
// is not ours.
func (o *Ops) checkTakeover(ctx context.Context, d *Desired, a *actual) error {
	if ownedBy(a, d) || o.vcn == "" || o.net == nil || len(a.Subnets) == 0 {
		return nil
	}
	resp, err := o.net.GetSubnet(ctx, core.GetSubnetRequest{SubnetId: &a.Subnets[0]})
	if err != nil {
		return ocierr.Wrap("GetSubnet", a.Subnets[0], err)
	}
	if vcn := deref(resp.VcnId); vcn != "" && vcn != o.vcn {
		return refuse("%s %s (%q), made by the %s for this Service, is on subnet %s of VCN %s, not on the cluster's VCN %s "+
			"(the config's vcn): its backends could not be this cluster's nodes, so it is not taken over, and no load balancer is created in its place. "+
			"Point the config at the VCN the Service's load balancer lives in, or delete %s to have a new one created (its address will change)",
			d.Kind, a.ID, a.DisplayName, OwnerUpstream, a.Subnets[0], vcn, o.vcn, a.ID)
	}
	return nil
}

// checkNoStranger refuses to create a load balancer for the Service while a
// Load Balancer named for it with another prefix exists: the public OCI
// CCM made it with a LOAD_BALANCER_PREFIX that loadBalancer.namePrefix
// does not name. A listing of the compartment's load balancers, at a
// creation only: the listing that answered find may answer it, under the
// same fence (gather.go).
func (o *Ops) checkNoStranger(ctx context.Context, d *Desired) error {
	all, err := o.lb.listAll(ctx, o.fence(d))
	if err != nil {
		return err
	}
	uid := string(d.Ref.UID)
	for _, lb := range all {
		prefix, ok := strings.CutSuffix(lb.name, "-"+uid)
		if !ok || prefix == "" {
			continue
		}
		return refuse("Load Balancer %s is named %q, the public OCI CCM's name for this Service with LOAD_BALANCER_PREFIX %q, "+
			"but the config's loadBalancer.namePrefix is %q: it is not taken over, and no load balancer is created beside it. "+
			"Set loadBalancer.namePrefix: %s to take it over (its address is kept), or delete it to have a new one created (its address will change)",
			lb.id, lb.name, prefix, o.naming.Prefix, prefix)
	}
	return nil
}

// listenerNames renames each wanted listener that is missing under our
// name to the listener the public OCI CCM made for it, if there is one: it
// names a listener <listener protocol>-<port> (HTTP-80 with
// oci-load-balancer-backend-protocol: HTTP) and its backend set
// <Service port protocol>-<port> (TCP-80); ours are both <PROTO>-<port>.
func listenerNames(a *actual, ls []listenerModel) []listenerModel {
	out := slices.Clone(ls)
	for i, l := range out {
		if _, ok := a.Listeners[l.Name]; ok {
			continue
		}
		alt := fmt.Sprintf("%s-%d", l.Protocol, l.Port)
		if got, ok := a.Listeners[alt]; ok && got.Port == l.Port {
			out[i].Name = alt
		}
	}
	return out
}
