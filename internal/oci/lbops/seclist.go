package lbops

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
	"k8s.io/cloud-provider/api"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/lbspec"
	"github.com/ccmkit/ccm/internal/oci/ocierr"
)

// Security list management modes (loadBalancer.securityListManagementMode
// and the per-Service annotation).
const (
	SecurityListNone     = "None"
	SecurityListFrontend = "Frontend"
	SecurityListAll      = "All"
)

// ruleMarker is the description of every security list rule we write,
// naming the Service's UID: it is how our rules are told apart from
// everyone else's, which are never touched.
func ruleMarker(d *Desired) string { return "ccmkit.io/service-uid=" + string(d.Ref.UID) }

// ingressKey identifies an ingress rule by what matters to us.
type ingressKey struct {
	source, protocol string
	port             int
}

// ensureSecurityRules makes the security list of each load balancer subnet
// hold exactly our ingress rules for the Service: from every source range
// (0.0.0.0/0 without any) to every listener port. remove drops them all.
// Mode None (the default) touches nothing. Mode All manages the same
// frontend rules; the backend half (LB subnet to node subnets on the
// NodePorts) is left to the operator, as documented.
//
// Updates are read-modify-write with the list's etag in if-match, so that
// a concurrent change by anyone is never overwritten: OCI answers 412 and
// the Service is retried.
func (o *Ops) ensureSecurityRules(ctx context.Context, d *Desired, subnets []string, remove bool) error {
	if d.SecurityListMode != SecurityListFrontend && d.SecurityListMode != SecurityListAll {
		return nil
	}
	if o.net == nil {
		return fmt.Errorf("security list mode %s needs the VirtualNetwork API", d.SecurityListMode)
	}
	want := map[ingressKey]bool{}
	if !remove {
		sources := d.SourceRanges
		if len(sources) == 0 {
			sources = []string{"0.0.0.0/0"}
		}
		for _, src := range sources {
			for _, l := range d.Listeners {
				want[ingressKey{source: src, protocol: protocolNumber(l.Protocol), port: int(l.Port)}] = true
			}
		}
	}
	for _, subnet := range subnets {
		slID, err := o.securityListFor(ctx, subnet)
		if err != nil {
			return err
		}
		if err := o.syncRules(ctx, slID, ruleMarker(d), want); err != nil {
			return err
		}
	}
	return nil
}

// securityListFor returns the security list managed for subnet: the one
// configured for it, else its first.
func (o *Ops) securityListFor(ctx context.Context, subnet string) (string, error) {
	if id := o.secLists[subnet]; id != "" {
		return id, nil
	}
	resp, err := o.net.GetSubnet(ctx, core.GetSubnetRequest{SubnetId: &subnet})
	if err != nil {
		return "", ocierr.Wrap("GetSubnet", subnet, err)
	}
	if len(resp.SecurityListIds) == 0 {
		return "", fmt.Errorf("subnet %s has no security list to manage (set loadBalancer.securityLists)", subnet)
	}
	return resp.SecurityListIds[0], nil
}

// syncRules makes the rules of security list id carrying marker equal want.
func (o *Ops) syncRules(ctx context.Context, id, marker string, want map[ingressKey]bool) error {
	resp, err := o.net.GetSecurityList(ctx, core.GetSecurityListRequest{SecurityListId: &id})
	if err != nil {
		return ocierr.Wrap("GetSecurityList", id, err)
	}
	var keep []core.IngressSecurityRule
	have := map[ingressKey]bool{}
	for _, r := range resp.IngressSecurityRules {
		if deref(r.Description) != marker {
			keep = append(keep, r)
			continue
		}
		have[keyOf(r)] = true
	}
	if mapsEqual(have, want) {
		return nil
	}
	keys := make([]ingressKey, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b ingressKey) int {
		return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
	})
	for _, k := range keys {
		keep = append(keep, ingressRule(k, marker))
	}
	klog.V(2).InfoS("Updating security list", "securityList", id, "rules", len(keys), "marker", marker)
	_, err = o.net.UpdateSecurityList(ctx, core.UpdateSecurityListRequest{
		SecurityListId: &id, IfMatch: resp.Etag,
		UpdateSecurityListDetails: core.UpdateSecurityListDetails{IngressSecurityRules: keep},
	})
	if ocierr.Status(err) == 412 {
		return api.NewRetryError(fmt.Sprintf("security list %s changed while we updated it (etag mismatch)", id), o.timing.Retry)
	}
	return ocierr.Wrap("UpdateSecurityList", id, err)
}

func keyOf(r core.IngressSecurityRule) ingressKey {
	k := ingressKey{source: deref(r.Source), protocol: deref(r.Protocol)}
	switch {
	case r.TcpOptions != nil && r.TcpOptions.DestinationPortRange != nil:
		k.port = deref(r.TcpOptions.DestinationPortRange.Min)
	case r.UdpOptions != nil && r.UdpOptions.DestinationPortRange != nil:
		k.port = deref(r.UdpOptions.DestinationPortRange.Min)
	}
	return k
}

func ingressRule(k ingressKey, marker string) core.IngressSecurityRule {
	r := core.IngressSecurityRule{
		Source: common.String(k.source), Protocol: common.String(k.protocol), SourceType: core.IngressSecurityRuleSourceTypeCidrBlock,
		IsStateless: common.Bool(false), Description: common.String(marker),
	}
	ports := &core.PortRange{Min: common.Int(k.port), Max: common.Int(k.port)}
	if k.protocol == "17" {
		r.UdpOptions = &core.UdpOptions{DestinationPortRange: ports}
	} else {
		r.TcpOptions = &core.TcpOptions{DestinationPortRange: ports}
	}
	return r
}

// protocolNumber is the IANA number OCI security rules use.
func protocolNumber(p lbspec.Protocol) string {
	if p == lbspec.UDP {
		return "17"
	}
	return "6"
}

func mapsEqual(a, b map[ingressKey]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
