package oci

import (
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// The VirtualNetwork address listings: ListPrivateIps and ListPublicIps.
// Like the VNIC, each instance's primary private IP and its ephemeral
// public IP need no storage: their OCIDs are the instance's with another
// resource type, and their fields come from the instance record.

func (d *Dialect) routeAddresses() {
	const vn = "virtualnetwork"
	d.mux.Handle("GET "+PrefixCore+"/privateIps", d.route(vn, "ListPrivateIps", false, d.listPrivateIps))
	d.mux.Handle("GET "+PrefixCore+"/publicIps", d.route(vn, "ListPublicIps", false, d.listPublicIps))
}

func privateIPID(instanceOCID string) string {
	return strings.Replace(instanceOCID, "ocid1.instance.", "ocid1.privateip.", 1)
}

func publicIPID(instanceOCID string) string {
	return strings.Replace(instanceOCID, "ocid1.instance.", "ocid1.publicip.", 1)
}

// hasVnic: the instance's primary VNIC (and so its private IP) exists,
// from launch until the instance is TERMINATED.
func hasVnic(s ocicore.InstanceLifecycleStateEnum) bool {
	return s != ocicore.InstanceLifecycleStateTerminated
}

// listPrivateIps implements ListPrivateIps. The SDK's doc comment
// (core_virtualnetwork_client.go, ListPrivateIps) lists the private IPs
// "based on one of these filters: Subnet OCID, VNIC OCID, Both private IP
// address and subnet OCID"; a call with none of them (or an ipAddress
// alone) is refused as a missing parameter. Items come in creation order.
func (d *Dialect) listPrivateIps(c *call) (*reply, error) {
	subnet, vnic, ip := c.query("subnetId"), c.query("vnicId"), c.query("ipAddress")
	if subnet == "" && vnic == "" {
		return nil, missing("subnetId or vnicId")
	}
	if subnet != "" && !core.ValidOCID(subnet, "subnet") {
		return nil, badRequest("The subnetId %q is not a valid subnet OCID.", subnet)
	}
	if vnic != "" && !core.ValidOCID(vnic, "vnic") {
		return nil, badRequest("The vnicId %q is not a valid VNIC OCID.", vnic)
	}
	now := d.core.Now()
	defs := d.placementDefaults()
	items := []ocicore.PrivateIp{}
	for _, r := range d.instances() {
		p := placementWith(r, defs)
		state := d.ociState(r, now)
		if !hasVnic(state) || (subnet != "" && subnet != p.subnet) || (vnic != "" && vnic != vnicID(r.OCID)) || (ip != "" && ip != r.PrivateIP) {
			continue
		}
		items = append(items, ocicore.PrivateIp{
			AvailabilityDomain: common.String(p.ad),
			CompartmentId:      common.String(p.compartment),
			DisplayName:        common.String(r.PrivateIP),
			HostnameLabel:      strPtrOrNil(r.HostnameLabel),
			Id:                 common.String(privateIPID(r.OCID)),
			IpAddress:          common.String(r.PrivateIP),
			IsPrimary:          common.Bool(true),
			SubnetId:           common.String(p.subnet),
			TimeCreated:        sdkTime(r.Created),
			VnicId:             common.String(vnicID(r.OCID)),
			FreeformTags:       map[string]string{},
			DefinedTags:        map[string]map[string]interface{}{},
		})
	}
	return page(c, items, nil)
}

// listPublicIps implements ListPublicIps. Per the SDK's doc comment
// (core_virtualnetwork_client.go, ListPublicIps): scope is required;
// ephemeral public IPs assigned to private IPs have scope
// AVAILABILITY_DOMAIN and are listed with availabilityDomain set
// (required then); reserved ones have scope REGION with no
// availabilityDomain; an ephemeral public IP is "always in the same
// availability domain and compartment as the private IP". Every cloudsim
// instance's public IP is an ephemeral one on its primary private IP;
// cloudsim has no reserved public IPs on instances, so REGION lists none.
func (d *Dialect) listPublicIps(c *call) (*reply, error) {
	comp, err := d.compartmentParam(c)
	if err != nil {
		return nil, err
	}
	scope, ad, lifetime := c.query("scope"), c.query("availabilityDomain"), c.query("lifetime")
	if scope == "" {
		return nil, missing("scope")
	}
	if _, ok := ocicore.GetMappingListPublicIpsScopeEnum(scope); !ok {
		return nil, badRequest("The scope %q must be REGION or AVAILABILITY_DOMAIN.", scope)
	}
	if lifetime != "" {
		if _, ok := ocicore.GetMappingListPublicIpsLifetimeEnum(lifetime); !ok {
			return nil, badRequest("The lifetime %q must be EPHEMERAL or RESERVED.", lifetime)
		}
	}
	regional := strings.EqualFold(scope, string(ocicore.ListPublicIpsScopeRegion))
	switch {
	case regional && ad != "":
		return nil, badRequest("The availabilityDomain must be empty when scope is REGION.")
	case !regional && ad == "":
		return nil, missing("availabilityDomain (required when scope is AVAILABILITY_DOMAIN)")
	}
	items := []ocicore.PublicIp{}
	if regional || strings.EqualFold(lifetime, string(ocicore.ListPublicIpsLifetimeReserved)) {
		return page(c, items, nil)
	}
	now := d.core.Now()
	defs := d.placementDefaults()
	for _, r := range d.instances() {
		p := placementWith(r, defs)
		if r.PublicIP == "" || p.compartment != comp || p.ad != ad || !hasVnic(d.ociState(r, now)) {
			continue
		}
		items = append(items, ocicore.PublicIp{
			AssignedEntityId:   common.String(privateIPID(r.OCID)),
			AssignedEntityType: ocicore.PublicIpAssignedEntityTypePrivateIp,
			AvailabilityDomain: common.String(p.ad),
			CompartmentId:      common.String(p.compartment),
			DisplayName:        common.String(r.PublicIP),
			Id:                 common.String(publicIPID(r.OCID)),
			IpAddress:          common.String(r.PublicIP),
			LifecycleState:     ocicore.PublicIpLifecycleStateAssigned,
			Lifetime:           ocicore.PublicIpLifetimeEphemeral,
			PrivateIpId:        common.String(privateIPID(r.OCID)),
			Scope:              ocicore.PublicIpScopeAvailabilityDomain,
			TimeCreated:        sdkTime(r.Created),
			FreeformTags:       map[string]string{},
			DefinedTags:        map[string]map[string]interface{}{},
		})
	}
	return page(c, items, nil)
}
