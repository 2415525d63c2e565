package computelookup

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"

	"github.com/ccmkit/ccm/internal/oci/ocierr"
)

// InstanceVnic is an instance's primary VNIC, as far as node addresses
// need it: private IP, public IP, hostname label and subnet.
type InstanceVnic struct {
	InstanceID string
	Vnic       core.Vnic
}

// PrimaryVnicOf is the per-instance path: ListVnicAttachments for the
// instance, then GetVnic per attached VNIC until the primary one (two calls
// for an instance with one VNIC).
func (r *Reader) PrimaryVnicOf(ctx context.Context, instanceID string) (InstanceVnic, error) {
	v, err := r.PrimaryVnic(ctx, instanceID)
	if err != nil {
		return InstanceVnic{}, err
	}
	return InstanceVnic{InstanceID: instanceID, Vnic: v}, nil
}

// PrimaryVnics finds the primary VNIC of the compartment's instances in
// O(N/PageSize) calls instead of two per instance:
//
//   - ListVnicAttachments for the whole compartment, every page;
//   - ListPrivateIps per subnet of an attached VNIC, every page: a VNIC's
//     primary private IP (isPrimary) carries its address and hostname label;
//   - ListPublicIps per availability domain of those VNICs (ephemeral public
//     IPs, scope AVAILABILITY_DOMAIN) and for the region (reserved ones),
//     every page: a public IP names the private IP it is assigned to;
//   - ListIpv6s per subnet, every page (ipv6s.go): the VNICs' IPv6
//     addresses (Vnic.ipv6Addresses on the per-instance path).
//
// The listings run side by side: a subnet's private IPs and an
// availability domain's public IPs are listed from the first attachment
// page that names them, while later attachment pages arrive, and the
// regional listing from the start. Their pages are chains (each needs the
// last one's opc-next-page), so one after the other they would take the
// sum of the chains instead of the longest.
//
// Only instances with exactly one ATTACHED VNIC are answered: every
// instance has one primary VNIC, created at launch and never detached (the
// SDK's Vnic.IsPrimary: "the VNIC that is automatically created and
// attached during instance launch"), so a lone attached VNIC is it; with
// more, only GetVnic tells which, and the caller takes the per-instance
// path (PrimaryVnicOf). The same for an instance whose private IP the
// listing did not show (attached after its subnet's listing read that
// page).
//
// Limit: a reserved public IP kept in another compartment than the
// cluster's (OCI allows it) is not seen here; see docs/oci.md.
func (r *Reader) PrimaryVnics(ctx context.Context) ([]InstanceVnic, error) {
	l := newAddressListings(ctx, r)
	atts, err := r.vnicAttachmentPages(l.ctx, "", func(page []core.VnicAttachment) {
		for _, a := range page {
			if isAttached(a) {
				l.subnet(deref(a.SubnetId))
				l.availabilityDomain(deref(a.AvailabilityDomain))
			}
		}
	})
	if err != nil {
		l.fail(err)
	}
	if err := l.wait(); err != nil {
		return nil, err
	}
	attached := map[string][]core.VnicAttachment{} // instance -> its ATTACHED VNIC attachments
	for _, a := range atts {
		if isAttached(a) {
			attached[*a.InstanceId] = append(attached[*a.InstanceId], a)
		}
	}
	lone := map[string]core.VnicAttachment{} // VNIC -> attachment, for instances with one attached VNIC
	for _, as := range attached {
		if len(as) == 1 {
			lone[*as[0].VnicId] = as[0]
		}
	}
	primaryIP := map[string]core.PrivateIp{} // VNIC -> its primary private IP
	for _, ip := range l.privateIPs {
		vnic := deref(ip.VnicId)
		if _, ours := lone[vnic]; ours && deref(ip.IsPrimary) && deref(ip.Id) != "" && deref(ip.IpAddress) != "" {
			primaryIP[vnic] = ip
		}
	}
	public := map[string]string{} // private IP OCID -> public IP address
	for _, ip := range l.publicIPs {
		if to := assignedPrivateIP(ip); to != "" && ip.LifecycleState == core.PublicIpLifecycleStateAssigned && deref(ip.IpAddress) != "" {
			public[to] = *ip.IpAddress
		}
	}

	out := make([]InstanceVnic, 0, len(primaryIP))
	for vnic, ip := range primaryIP {
		a := lone[vnic]
		v := core.Vnic{
			Id:                 common.String(vnic),
			AvailabilityDomain: a.AvailabilityDomain,
			CompartmentId:      a.CompartmentId,
			SubnetId:           a.SubnetId,
			IsPrimary:          common.Bool(true),
			PrivateIp:          ip.IpAddress,
			HostnameLabel:      ip.HostnameLabel,
			LifecycleState:     core.VnicLifecycleStateAvailable,
			Ipv6Addresses:      l.ipv6s[vnic],
		}
		if pub, ok := public[*ip.Id]; ok {
			v.PublicIp = common.String(pub)
		}
		out = append(out, InstanceVnic{InstanceID: *a.InstanceId, Vnic: v})
	}
	slices.SortFunc(out, func(a, b InstanceVnic) int { return strings.Compare(a.InstanceID, b.InstanceID) })
	return out, nil
}

// isAttached: an ATTACHED attachment of a VNIC to an instance.
func isAttached(a core.VnicAttachment) bool {
	return a.LifecycleState == core.VnicAttachmentLifecycleStateAttached && a.VnicId != nil && deref(a.InstanceId) != ""
}

// assignedPrivateIP is the private IP a public IP is assigned to, "" if
// it is assigned to none (or to a NAT gateway).
func assignedPrivateIP(ip core.PublicIp) string {
	if ip.AssignedEntityType == core.PublicIpAssignedEntityTypePrivateIp && deref(ip.AssignedEntityId) != "" {
		return *ip.AssignedEntityId
	}
	if ip.AssignedEntityType == "" {
		return deref(ip.PrivateIpId) // the deprecated field, for answers without assignedEntityType
	}
	return ""
}

// privateIPs lists a subnet's private IPs, through every page.
func (r *Reader) privateIPs(ctx context.Context, subnet string) ([]core.PrivateIp, error) {
	req := core.ListPrivateIpsRequest{SubnetId: &subnet, Limit: common.Int(PageSize)}
	var out []core.PrivateIp
	for range maxPages {
		resp, err := r.network.ListPrivateIps(ctx, req)
		if err != nil {
			return nil, ocierr.Wrap("ListPrivateIps", "subnet "+subnet, err)
		}
		out = append(out, resp.Items...)
		if resp.OpcNextPage == nil || *resp.OpcNextPage == "" {
			return out, nil
		}
		req.Page = resp.OpcNextPage
	}
	return nil, fmt.Errorf("OCI ListPrivateIps subnet %s: more than %d pages", subnet, maxPages)
}

// publicIPs lists the compartment's public IPs of req's scope, through
// every page.
func (r *Reader) publicIPs(ctx context.Context, req core.ListPublicIpsRequest) ([]core.PublicIp, error) {
	req.CompartmentId, req.Limit = &r.compartment, common.Int(PageSize)
	what := fmt.Sprintf("compartment %s scope %s", r.compartment, req.Scope)
	if req.AvailabilityDomain != nil {
		what += " availabilityDomain " + *req.AvailabilityDomain
	}
	var out []core.PublicIp
	for range maxPages {
		resp, err := r.network.ListPublicIps(ctx, req)
		if err != nil {
			return nil, ocierr.Wrap("ListPublicIps", what, err)
		}
		out = append(out, resp.Items...)
		if resp.OpcNextPage == nil || *resp.OpcNextPage == "" {
			return out, nil
		}
		req.Page = resp.OpcNextPage
	}
	return nil, fmt.Errorf("OCI ListPublicIps %s: more than %d pages", what, maxPages)
}
