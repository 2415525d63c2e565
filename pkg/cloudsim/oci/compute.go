package oci

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

func (d *Dialect) routeCompute() {
	const svc = "compute"
	d.mux.Handle("GET "+PrefixCore+"/instances", d.route(svc, "ListInstances", false, d.listInstances))
	d.mux.Handle("GET "+PrefixCore+"/instances/{instanceId}", d.route(svc, "GetInstance", false, d.getInstance))
	d.mux.Handle("GET "+PrefixCore+"/vnicAttachments", d.route(svc, "ListVnicAttachments", false, d.listVnicAttachments))
	d.mux.Handle("GET "+PrefixCore+"/vnics/{vnicId}", d.route("virtualnetwork", "GetVnic", false, d.getVnic))
}

// ociState maps a fleet state (Tencent's names) to OCI's instance
// lifecycle. A TERMINATING instance is TERMINATING for the first half of
// the fleet's linger and TERMINATED after it; once the fleet drops it, the
// dialect keeps it TERMINATED for the retention (terminated.go).
func (d *Dialect) ociState(r core.Record, now time.Time) ocicore.InstanceLifecycleStateEnum {
	switch r.State {
	case core.StatePending:
		return ocicore.InstanceLifecycleStateProvisioning
	case core.StateLaunchFailed:
		return ocicore.InstanceLifecycleStateTerminated
	case core.StateRunning:
		return ocicore.InstanceLifecycleStateRunning
	case core.StateStarting, core.StateRebooting:
		return ocicore.InstanceLifecycleStateStarting
	case core.StateStopping:
		return ocicore.InstanceLifecycleStateStopping
	case core.StateStopped, core.StateShutdown:
		return ocicore.InstanceLifecycleStateStopped
	case core.StateTerminating:
		phase := time.Second
		if l := d.core.TerminatedLinger(); l > 0 {
			phase = l / 2
		}
		if now.Sub(r.Terminated) >= phase {
			return ocicore.InstanceLifecycleStateTerminated
		}
		return ocicore.InstanceLifecycleStateTerminating
	}
	return ocicore.InstanceLifecycleStateRunning
}

// placement is an instance's OCI attributes with the dialect's defaults
// filled in.
type placement struct {
	compartment, ad, fd, shape, subnet string
}

// placementDefaults are the network's defaults, read once per call.
type placementDefaults struct{ compartment, ad string }

func (d *Dialect) placementDefaults() placementDefaults {
	d.net.mu.Lock()
	defer d.net.mu.Unlock()
	return placementDefaults{compartment: d.net.defaultComp, ad: d.net.ads[0]}
}

func (d *Dialect) placementOf(r core.Record) placement {
	return placementWith(r, d.placementDefaults())
}

func placementWith(r core.Record, def placementDefaults) placement {
	p := placement{compartment: r.CompartmentID, ad: r.AvailabilityDomain, fd: r.FaultDomain, shape: r.Shape, subnet: r.SubnetID}
	if p.compartment == "" {
		p.compartment = def.compartment
	}
	if p.ad == "" {
		p.ad = def.ad
	}
	if p.fd == "" {
		p.fd = DefaultFaultDomain
	}
	if p.shape == "" {
		p.shape = DefaultShape
	}
	if !core.ValidOCID(p.subnet, "subnet") {
		p.subnet = DefaultSubnetID
	}
	return p
}

// regionField is Instance.region: OCI answers "phx" and "iad" for its two
// oldest regions and the region name for every other.
func (d *Dialect) regionField() string {
	switch d.region {
	case "us-phoenix-1":
		return "phx"
	case "us-ashburn-1":
		return "iad"
	}
	return d.region
}

func (d *Dialect) instanceModel(r core.Record, p placement, now time.Time) ocicore.Instance {
	tags := r.Tags
	if tags == nil {
		tags = map[string]string{}
	}
	return ocicore.Instance{
		AvailabilityDomain: common.String(p.ad),
		CompartmentId:      common.String(p.compartment),
		Id:                 common.String(r.OCID),
		LifecycleState:     d.ociState(r, now),
		Region:             common.String(d.regionField()),
		Shape:              common.String(p.shape),
		TimeCreated:        sdkTime(r.Created),
		DisplayName:        common.String(r.Name),
		FaultDomain:        common.String(p.fd),
		FreeformTags:       tags,
		DefinedTags:        map[string]map[string]interface{}{},
		Metadata:           map[string]string{},
		ExtendedMetadata:   map[string]interface{}{},
	}
}

// listInstances implements ListInstances: the instances of a compartment,
// filtered by availabilityDomain, displayName (exact) and lifecycleState,
// sorted by TIMECREATED (default, newest first) or DISPLAYNAME (A-Z),
// within each availability domain when none is given.
func (d *Dialect) listInstances(c *call) (*reply, error) {
	comp, err := d.compartmentParam(c)
	if err != nil {
		return nil, err
	}
	state := c.query("lifecycleState")
	if state != "" {
		if _, ok := ocicore.GetMappingInstanceLifecycleStateEnum(state); !ok {
			return nil, badRequest("The lifecycleState %q is not an instance lifecycle state.", state)
		}
	}
	sortBy := strings.ToUpper(c.query("sortBy"))
	if sortBy == "" {
		sortBy = "TIMECREATED"
	}
	if sortBy != "TIMECREATED" && sortBy != "DISPLAYNAME" {
		return nil, badRequest("The sortBy %q must be TIMECREATED or DISPLAYNAME.", c.query("sortBy"))
	}
	def := "ASC"
	if sortBy == "TIMECREATED" {
		def = "DESC"
	}
	desc, err := sortOrder(c, def)
	if err != nil {
		return nil, err
	}
	now := d.core.Now()
	recs := d.instances()
	defs := d.placementDefaults()
	type row struct {
		m   ocicore.Instance
		seq int64
	}
	// The filters are read once, not per instance: each read parses the
	// query string, and a compartment listing pages through thousands.
	ad, dn := c.query("availabilityDomain"), c.query("displayName")
	var rows []row
	for _, r := range recs {
		p := placementWith(r, defs)
		if p.compartment != comp || (ad != "" && ad != p.ad) || (dn != "" && dn != r.Name) {
			continue
		}
		m := d.instanceModel(r, p, now)
		if state != "" && !strings.EqualFold(state, string(m.LifecycleState)) {
			continue
		}
		rows = append(rows, row{m, r.Seq})
	}
	// "If you call one of these List operations without specifying an
	// availability domain, the resources are grouped by availability
	// domain, then sorted" (core.ListInstancesRequest.SortBy). The order of
	// the groups is cloudsim's choice: by name.
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if ad == "" && *a.m.AvailabilityDomain != *b.m.AvailabilityDomain {
			return *a.m.AvailabilityDomain < *b.m.AvailabilityDomain
		}
		if sortBy == "DISPLAYNAME" && *a.m.DisplayName != *b.m.DisplayName {
			return (*a.m.DisplayName < *b.m.DisplayName) != desc
		}
		return (a.seq < b.seq) != desc
	})
	items := make([]ocicore.Instance, len(rows))
	for i, r := range rows {
		items[i] = r.m
	}
	return page(c, items, nil)
}

func (d *Dialect) instanceRecord(id string) (core.Record, error) {
	return d.instanceRecordWith(d.core.InstanceRecord, id)
}

// readInstanceRecord is instanceRecord as a read of the API sees it: a
// new instance the read lag hides is not found (core/lag.go).
func (d *Dialect) readInstanceRecord(id string) (core.Record, error) {
	return d.instanceRecordWith(d.core.ReadInstanceRecord, id)
}

func (d *Dialect) instanceRecordWith(lookup func(string) (core.Record, error), id string) (core.Record, error) {
	if d.gone.isPurged(id) {
		return core.Record{}, notFound("instance", id)
	}
	r, err := lookup(id)
	if err != nil || r.OCID != id {
		if kept, ok := d.gone.get(id, d.core.Now()); ok {
			return kept, nil // TERMINATED, within the retention
		}
		return core.Record{}, notFound("instance", id)
	}
	return r, nil
}

func (d *Dialect) getInstance(c *call) (*reply, error) {
	id, err := pathID(c, "instanceId", "instance")
	if err != nil {
		return nil, err
	}
	r, err := d.readInstanceRecord(id)
	if err != nil {
		return nil, err
	}
	m := d.instanceModel(r, d.placementOf(r), d.core.Now())
	return ok(m).with("etag", etag(r.OCID+"/"+string(m.LifecycleState), 1)), nil
}

// Every instance has one VNIC, its primary, attached at index 0. Their ids
// are the instance's with another resource type, so they need no storage
// and lead back to the instance.
func vnicID(instanceOCID string) string {
	return strings.Replace(instanceOCID, "ocid1.instance.", "ocid1.vnic.", 1)
}

func vnicAttachmentID(instanceOCID string) string {
	return strings.Replace(instanceOCID, "ocid1.instance.", "ocid1.vnicattachment.", 1)
}

func instanceOfVnic(vnic string) string {
	return strings.Replace(vnic, "ocid1.vnic.", "ocid1.instance.", 1)
}

// attachmentState follows the instance: attaching while it provisions,
// detaching and detached as it terminates.
func attachmentState(s ocicore.InstanceLifecycleStateEnum) ocicore.VnicAttachmentLifecycleStateEnum {
	switch s {
	case ocicore.InstanceLifecycleStateProvisioning:
		return ocicore.VnicAttachmentLifecycleStateAttaching
	case ocicore.InstanceLifecycleStateTerminating:
		return ocicore.VnicAttachmentLifecycleStateDetaching
	case ocicore.InstanceLifecycleStateTerminated:
		return ocicore.VnicAttachmentLifecycleStateDetached
	}
	return ocicore.VnicAttachmentLifecycleStateAttached
}

func vnicState(s ocicore.InstanceLifecycleStateEnum) ocicore.VnicLifecycleStateEnum {
	switch s {
	case ocicore.InstanceLifecycleStateProvisioning:
		return ocicore.VnicLifecycleStateProvisioning
	case ocicore.InstanceLifecycleStateTerminating:
		return ocicore.VnicLifecycleStateTerminating
	case ocicore.InstanceLifecycleStateTerminated:
		return ocicore.VnicLifecycleStateTerminated
	}
	return ocicore.VnicLifecycleStateAvailable
}

// listVnicAttachments implements ListVnicAttachments, filtered by
// instanceId, vnicId and availabilityDomain, in creation order.
func (d *Dialect) listVnicAttachments(c *call) (*reply, error) {
	comp, err := d.compartmentParam(c)
	if err != nil {
		return nil, err
	}
	inst, vnic, ad := c.query("instanceId"), c.query("vnicId"), c.query("availabilityDomain")
	now := d.core.Now()
	defs := d.placementDefaults()
	items := []ocicore.VnicAttachment{}
	for _, r := range d.instances() {
		p := placementWith(r, defs)
		if p.compartment != comp || (inst != "" && inst != r.OCID) || (vnic != "" && vnic != vnicID(r.OCID)) || (ad != "" && ad != p.ad) {
			continue
		}
		items = append(items, ocicore.VnicAttachment{
			AvailabilityDomain: common.String(p.ad),
			CompartmentId:      common.String(p.compartment),
			Id:                 common.String(vnicAttachmentID(r.OCID)),
			InstanceId:         common.String(r.OCID),
			LifecycleState:     attachmentState(d.ociState(r, now)),
			TimeCreated:        sdkTime(r.Created),
			DisplayName:        common.String("primary vnic"),
			NicIndex:           common.Int(0),
			SubnetId:           common.String(p.subnet),
			VlanTag:            common.Int(0),
			VnicId:             common.String(vnicID(r.OCID)),
		})
	}
	return page(c, items, nil)
}

// getVnic implements GetVnic: the instance's primary VNIC, with its
// private and public IP and hostname label.
func (d *Dialect) getVnic(c *call) (*reply, error) {
	id, err := pathID(c, "vnicId", "vnic")
	if err != nil {
		return nil, err
	}
	r, err := d.readInstanceRecord(instanceOfVnic(id))
	if err != nil {
		return nil, notFound("VNIC", id)
	}
	p := d.placementOf(r)
	v := ocicore.Vnic{
		AvailabilityDomain:  common.String(p.ad),
		CompartmentId:       common.String(p.compartment),
		Id:                  common.String(id),
		LifecycleState:      vnicState(d.ociState(r, d.core.Now())),
		TimeCreated:         sdkTime(r.Created),
		DisplayName:         common.String(r.Name),
		HostnameLabel:       strPtrOrNil(r.HostnameLabel),
		IsPrimary:           common.Bool(true),
		MacAddress:          common.String(macOf(r.PrivateIP)),
		PrivateIp:           common.String(r.PrivateIP),
		PublicIp:            strPtrOrNil(r.PublicIP),
		SkipSourceDestCheck: common.Bool(false),
		SubnetId:            common.String(p.subnet),
		NsgIds:              append([]string{}, r.NSGIDs...),
		Ipv6Addresses:       d.vnicIPv6Addresses(p.subnet, r.PrivateIP),
		FreeformTags:        map[string]string{},
		DefinedTags:         map[string]map[string]interface{}{},
	}
	return ok(v).with("etag", etag(id, 1)), nil
}

// macOf derives a stable MAC address from the private IP, in Oracle's
// 02:00:17 range.
func macOf(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil || !a.Is4() {
		return "02:00:17:00:00:00"
	}
	b := a.As4()
	return fmt.Sprintf("02:00:17:%02X:%02X:%02X", b[1], b[2], b[3])
}
