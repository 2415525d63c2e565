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
// Only instances with exactly one ATTACHED VNIC are answered: every
// instance has one primary VNIC, created at launch and never detached (the
// SDK's Vnic.IsPrimary: "the VNIC that is automatically created and
// attached during instance launch"), so a lone attached VNIC is it; with
// more, only GetVnic tells which, and the caller takes the per-instance
// path (PrimaryVnicOf). The same for an instance whose private IP the
// listing did not show (it was attached between the calls).
//
// Limit: a reserved public IP kept in another compartment than the
// cluster's (OCI allows it) is not seen here; see docs/oci.md.
func (r *Reader) PrimaryVnics(ctx context.Context) ([]InstanceVnic, error) {
	atts, err := r.vnicAttachments(ctx, "")
	if err != nil {
		return nil, err
	}
	attached := map[string][]core.VnicAttachment{} // instance -> its ATTACHED VNIC attachments
	for _, a := range atts {
		if a.LifecycleState == core.VnicAttachmentLifecycleStateAttached && a.VnicId != nil && deref(a.InstanceId) != "" {
			attached[*a.InstanceId] = append(attached[*a.InstanceId], a)
		}
	}
	lone := map[string]core.VnicAttachment{} // VNIC -> attachment, for instances with one attached VNIC
	var subnets, ads []string
	for _, as := range attached {
		if len(as) != 1 {
			continue
		}
		a := as[0]
		lone[*a.VnicId] = a
		if s := deref(a.SubnetId); s != "" && !slices.Contains(subnets, s) {
			subnets = append(subnets, s)
		}
		if ad := deref(a.AvailabilityDomain); ad != "" && !slices.Contains(ads, ad) {
			ads = append(ads, ad)
		}
	}
	slices.Sort(subnets)
	slices.Sort(ads)

	primaryIP := map[string]core.PrivateIp{} // VNIC -> its primary private IP
	ipv6s := map[string][]string{}           // VNIC -> its IPv6 addresses
	for _, subnet := range subnets {
		ips, err := r.privateIPs(ctx, subnet)
		if err != nil {
			return nil, err
		}
		v6, err := r.subnetIPv6s(ctx, subnet)
		if err != nil {
			return nil, err
		}
		for vnic, addrs := range v6 {
			ipv6s[vnic] = append(ipv6s[vnic], addrs...)
		}
		for _, ip := range ips {
			vnic := deref(ip.VnicId)
			if _, ours := lone[vnic]; ours && deref(ip.IsPrimary) && deref(ip.Id) != "" && deref(ip.IpAddress) != "" {
				primaryIP[vnic] = ip
			}
		}
	}

	public := map[string]string{} // private IP OCID -> public IP address
	lists := []core.ListPublicIpsRequest{{Scope: core.ListPublicIpsScopeRegion, Lifetime: core.ListPublicIpsLifetimeReserved}}
	for _, ad := range ads {
		lists = append(lists, core.ListPublicIpsRequest{Scope: core.ListPublicIpsScopeAvailabilityDomain,
			AvailabilityDomain: common.String(ad), Lifetime: core.ListPublicIpsLifetimeEphemeral})
	}
	for _, req := range lists {
		ips, err := r.publicIPs(ctx, req)
		if err != nil {
			return nil, err
		}
		for _, ip := range ips {
			if to := assignedPrivateIP(ip); to != "" && ip.LifecycleState == core.PublicIpLifecycleStateAssigned && deref(ip.IpAddress) != "" {
				public[to] = *ip.IpAddress
			}
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
			Ipv6Addresses:      ipv6s[vnic],
		}
		if pub, ok := public[*ip.Id]; ok {
			v.PublicIp = common.String(pub)
		}
		out = append(out, InstanceVnic{InstanceID: *a.InstanceId, Vnic: v})
	}
	slices.SortFunc(out, func(a, b InstanceVnic) int { return strings.Compare(a.InstanceID, b.InstanceID) })
	return out, nil
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
