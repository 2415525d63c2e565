// Package computelookup reads the OCI Compute and VirtualNetwork APIs for
// the node side of the provider: instances of the cluster's compartment,
// their VNICs, and the VCN of a subnet. It is the only code that calls
// those APIs, so every call is named and wrapped in one place.
package computelookup

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"

	"github.com/ccmkit/ccm/internal/oci/ocierr"
)

// ComputeAPI is the slice of the Compute API the node lookups use;
// core.ComputeClient implements it, and tests fake it.
type ComputeAPI interface {
	GetInstance(context.Context, core.GetInstanceRequest) (core.GetInstanceResponse, error)
	ListInstances(context.Context, core.ListInstancesRequest) (core.ListInstancesResponse, error)
	ListVnicAttachments(context.Context, core.ListVnicAttachmentsRequest) (core.ListVnicAttachmentsResponse, error)
}

// NetworkAPI is the slice of the VirtualNetwork API the node lookups use;
// core.VirtualNetworkClient implements it.
type NetworkAPI interface {
	GetVnic(context.Context, core.GetVnicRequest) (core.GetVnicResponse, error)
	GetSubnet(context.Context, core.GetSubnetRequest) (core.GetSubnetResponse, error)
	// The batched address listings (primaryvnics.go).
	ListPrivateIps(context.Context, core.ListPrivateIpsRequest) (core.ListPrivateIpsResponse, error)
	ListPublicIps(context.Context, core.ListPublicIpsRequest) (core.ListPublicIpsResponse, error)
	ListIpv6s(context.Context, core.ListIpv6sRequest) (core.ListIpv6sResponse, error)
}

// PageSize is the page size of the compartment-wide listings: the largest
// the API documents. The SDK's request models (core.ListInstancesRequest,
// ListVnicAttachmentsRequest, ListPrivateIpsRequest, ListPublicIpsRequest,
// ListIpv6sRequest: Limit) give only "Example: `50`"; Oracle's reference of
// the same 20160918 Core API documents every one of these list operations'
// limit as "1 is the minimum, 1000 is the maximum", default 100
// (https://docs.oracle.com/cd/F90410_01/3.0-latest/ceapi/op-20160918-instances-get.html,
// op-20160918-vnicattachments-get.html, op-20160918-publicips-get.html;
// .../private-cloud-appliance/3.0-latest/ceapi/op-20160918-privateips-get.html).
// A listing is a chain (each page needs the last one's opc-next-page), so
// its time is its page count times a round trip: 10,000 instances take 10
// pages instead of 100.
const PageSize = 1000

// DeltaPageSize is the page size of the newest-first walks
// (newinstances.go), which stop at the first older instance: a delta
// usually wants a few instances, and a page of 1000 would carry hundreds it
// does not need.
const DeltaPageSize = 100

// maxPages bounds a listing, so that an API that keeps answering
// opc-next-page cannot loop forever.
const maxPages = 10000

// Reader reads instances, VNICs and subnets of the cluster's compartment
// and VCN.
type Reader struct {
	compute     ComputeAPI
	network     NetworkAPI
	compartment string
	vcn         string

	// vnicTTL is how long a VNIC read serves the private-IP mapping scan.
	vnicTTL time.Duration
	now     func() time.Time

	mu        sync.Mutex
	subnetVCN map[string]string // subnet OCID -> VCN OCID; a subnet never changes VCN
	// subnetFlights are the GetSubnet calls in progress, by subnet.
	subnetFlights map[string]*subnetFlight
	vnics         map[string]cachedVnic
	// domains are the availability domains instances were listed in
	// (newinstances.go).
	domains map[string]bool
}

type cachedVnic struct {
	vnic    core.Vnic
	fetched time.Time
}

// vnicScanTTL is how long a VNIC read serves the private-IP mapping scan.
// A VNIC's private IP never changes while it exists (OCI cannot change a
// VNIC's primary private IP), and the scan reads the attachments afresh
// every time, so only a renamed hostname label can be stale this long.
const vnicScanTTL = 30 * time.Minute

// New returns a Reader of the compartment's instances; VCNOf and
// InstancesByVnic judge subnets against vcn.
func New(compute ComputeAPI, network NetworkAPI, compartment, vcn string) *Reader {
	return &Reader{
		compute: compute, network: network, compartment: compartment, vcn: vcn,
		vnicTTL: vnicScanTTL, now: time.Now,
		subnetVCN: map[string]string{}, subnetFlights: map[string]*subnetFlight{}, vnics: map[string]cachedVnic{},
		domains: map[string]bool{},
	}
}

// GetInstance reads one instance by OCID. A 404 comes back as an error
// (ocierr.IsNotFound): OCI gives the same answer for "missing" and "not allowed".
func (r *Reader) GetInstance(ctx context.Context, id string) (core.Instance, error) {
	resp, err := r.compute.GetInstance(ctx, core.GetInstanceRequest{InstanceId: &id})
	if err != nil {
		return core.Instance{}, ocierr.Wrap("GetInstance", id, err)
	}
	if resp.Id == nil || *resp.Id != id {
		return core.Instance{}, fmt.Errorf("OCI GetInstance %s: the answer is for instance %q", id, deref(resp.Id))
	}
	return kept(resp.Instance), nil
}

// kept is the part of an instance that the provider reads: the inventory
// holds one per instance of the compartment for as long as the process
// runs, and the SDK's Instance carries much more (metadata with the SSH keys
// and the cloud-init user_data, up to 32 KB each; launch, agent and shape
// options; tags), every field a pointer (docs/scale.md). A field read
// anywhere of an instance from this package must be copied here:
// TestKeptIsWhatTheProviderReads lists them.
func kept(ins core.Instance) core.Instance {
	return core.Instance{
		Id: ins.Id, DisplayName: ins.DisplayName, LifecycleState: ins.LifecycleState,
		CompartmentId: ins.CompartmentId, Region: ins.Region, AvailabilityDomain: ins.AvailabilityDomain,
		FaultDomain: ins.FaultDomain, Shape: ins.Shape, TimeCreated: ins.TimeCreated,
	}
}

// ListInstances lists the compartment's instances, through every page,
// optionally only those with the given display name.
func (r *Reader) ListInstances(ctx context.Context, displayName string) ([]core.Instance, error) {
	what := "compartment " + r.compartment
	req := core.ListInstancesRequest{CompartmentId: &r.compartment, Limit: common.Int(PageSize)}
	if displayName != "" {
		req.DisplayName = &displayName
		what += " displayName=" + displayName
	}
	var out []core.Instance
	for range maxPages {
		resp, err := r.compute.ListInstances(ctx, req)
		if err != nil {
			return nil, ocierr.Wrap("ListInstances", what, err)
		}
		r.learnDomains(resp.Items)
		for _, ins := range resp.Items {
			out = append(out, kept(ins))
		}
		if resp.OpcNextPage == nil || *resp.OpcNextPage == "" {
			return out, nil
		}
		req.Page = resp.OpcNextPage
	}
	return nil, fmt.Errorf("OCI ListInstances %s: more than %d pages", what, maxPages)
}

// vnicAttachments lists the compartment's VNIC attachments, of one
// instance or (instanceID "") of all, through every page.
func (r *Reader) vnicAttachments(ctx context.Context, instanceID string) ([]core.VnicAttachment, error) {
	return r.vnicAttachmentPages(ctx, instanceID, nil)
}

// vnicAttachmentPages is vnicAttachments calling onPage (when set) with
// each page as it arrives, so that the caller can start dependent reads
// before the last page.
func (r *Reader) vnicAttachmentPages(ctx context.Context, instanceID string, onPage func([]core.VnicAttachment)) ([]core.VnicAttachment, error) {
	what := "compartment " + r.compartment
	req := core.ListVnicAttachmentsRequest{CompartmentId: &r.compartment, Limit: common.Int(PageSize)}
	if instanceID != "" {
		req.InstanceId = &instanceID
		what = "instance " + instanceID
	}
	var out []core.VnicAttachment
	for range maxPages {
		resp, err := r.compute.ListVnicAttachments(ctx, req)
		if err != nil {
			return nil, ocierr.Wrap("ListVnicAttachments", what, err)
		}
		if onPage != nil {
			onPage(resp.Items)
		}
		out = append(out, resp.Items...)
		if resp.OpcNextPage == nil || *resp.OpcNextPage == "" {
			return out, nil
		}
		req.Page = resp.OpcNextPage
	}
	return nil, fmt.Errorf("OCI ListVnicAttachments %s: more than %d pages", what, maxPages)
}

// getVnic reads a VNIC, from the cache when maxAge allows.
func (r *Reader) getVnic(ctx context.Context, id string, maxAge time.Duration) (core.Vnic, error) {
	r.mu.Lock()
	c, ok := r.vnics[id]
	r.mu.Unlock()
	if ok && r.now().Sub(c.fetched) <= maxAge {
		return c.vnic, nil
	}
	start := r.now()
	resp, err := r.network.GetVnic(ctx, core.GetVnicRequest{VnicId: &id})
	if err != nil {
		return core.Vnic{}, ocierr.Wrap("GetVnic", id, err)
	}
	r.mu.Lock()
	r.vnics[id] = cachedVnic{vnic: resp.Vnic, fetched: start}
	r.mu.Unlock()
	return resp.Vnic, nil
}

// VCNOf returns the VCN of a subnet. Answers are kept for good: a subnet
// never moves to another VCN. Concurrent lookups of one subnet share one
// GetSubnet: when a listing answers every node at once, each node's
// lookup would otherwise miss and call.
func (r *Reader) VCNOf(ctx context.Context, subnetID string) (string, error) {
	r.mu.Lock()
	if vcn, ok := r.subnetVCN[subnetID]; ok {
		r.mu.Unlock()
		return vcn, nil
	}
	f, joined := r.subnetFlights[subnetID]
	if !joined {
		f = &subnetFlight{done: make(chan struct{})}
		r.subnetFlights[subnetID] = f
	}
	r.mu.Unlock()
	if !joined {
		// The call serves every waiter, so no waiter's context ends it;
		// the SDK's request timeout bounds it.
		f.vcn, f.err = r.getSubnetVCN(context.WithoutCancel(ctx), subnetID)
		r.mu.Lock()
		if f.err == nil {
			r.subnetVCN[subnetID] = f.vcn
		}
		delete(r.subnetFlights, subnetID)
		r.mu.Unlock()
		close(f.done)
	}
	select {
	case <-f.done:
		return f.vcn, f.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// subnetFlight is one GetSubnet in progress; done closes when it ends.
type subnetFlight struct {
	done chan struct{}
	vcn  string
	err  error
}

func (r *Reader) getSubnetVCN(ctx context.Context, subnetID string) (string, error) {
	resp, err := r.network.GetSubnet(ctx, core.GetSubnetRequest{SubnetId: &subnetID})
	if err != nil {
		return "", ocierr.Wrap("GetSubnet", subnetID, err)
	}
	vcn := deref(resp.VcnId)
	if vcn == "" {
		return "", fmt.Errorf("OCI GetSubnet %s: the answer has no vcnId", subnetID)
	}
	return vcn, nil
}

// PrimaryVnic returns the instance's primary VNIC among its ATTACHED VNIC
// attachments: the public OCI CCM's source of node addresses.
func (r *Reader) PrimaryVnic(ctx context.Context, instanceID string) (core.Vnic, error) {
	atts, err := r.vnicAttachments(ctx, instanceID)
	if err != nil {
		return core.Vnic{}, err
	}
	attached := 0
	for _, a := range atts {
		if a.LifecycleState != core.VnicAttachmentLifecycleStateAttached || a.VnicId == nil || deref(a.InstanceId) != instanceID {
			continue
		}
		attached++
		// Addresses are read afresh each time (the node status sync relies
		// on it): a public IP can be assigned or released at any time.
		v, err := r.getVnic(ctx, *a.VnicId, 0)
		if err != nil {
			return core.Vnic{}, err
		}
		if v.IsPrimary != nil && *v.IsPrimary {
			return v, nil
		}
	}
	return core.Vnic{}, fmt.Errorf("instance %s has no primary VNIC among its %d attached VNICs", instanceID, attached)
}

// InstancesByVnic scans the compartment's attached VNICs in the cluster's
// VCN for a private IP in ips or a hostname label in hostnames, and
// returns the matching instances' OCIDs, sorted and distinct. VNIC reads
// are cached for vnicTTL: the scan reads every VNIC of the compartment, and
// only nodes that joined without providerID or matching display name need it.
func (r *Reader) InstancesByVnic(ctx context.Context, ips, hostnames []string) ([]string, error) {
	atts, err := r.vnicAttachments(ctx, "")
	if err != nil {
		return nil, err
	}
	r.pruneVnics(atts)
	var ids []string
	for _, a := range atts {
		if a.LifecycleState != core.VnicAttachmentLifecycleStateAttached || a.VnicId == nil || a.InstanceId == nil {
			continue
		}
		v, err := r.getVnic(ctx, *a.VnicId, r.vnicTTL)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(ips, deref(v.PrivateIp)) && !slices.Contains(hostnames, deref(v.HostnameLabel)) {
			continue
		}
		vcn, err := r.VCNOf(ctx, deref(v.SubnetId))
		if err != nil {
			return nil, err
		}
		if vcn == r.vcn && !slices.Contains(ids, *a.InstanceId) {
			ids = append(ids, *a.InstanceId)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// pruneVnics forgets the cached VNICs no attachment refers to any more, so
// that the cache holds at most the compartment's VNICs.
func (r *Reader) pruneVnics(atts []core.VnicAttachment) {
	live := make(map[string]bool, len(atts))
	for _, a := range atts {
		if a.VnicId != nil {
			live[*a.VnicId] = true
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for id := range r.vnics {
		if !live[id] {
			delete(r.vnics, id)
		}
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// Compartment is the compartment the Reader lists.
func (r *Reader) Compartment() string { return r.compartment }

// VCN is the cluster's VCN.
func (r *Reader) VCN() string { return r.vcn }
