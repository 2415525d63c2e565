package computelookup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
)

// fakeAPI answers the listings from fixed slices, one item per page, so
// that every listing pages; the per-instance reads are not used here.
// PrimaryVnics lists concurrently, so the call counts are locked.
type fakeAPI struct {
	atts    []core.VnicAttachment
	private map[string][]core.PrivateIp // subnet -> IPs
	public  map[string][]core.PublicIp  // "REGION" or the AD -> IPs
	ipv6    map[string][]core.Ipv6      // subnet -> IPv6s
	// privateErr, if set, answers every ListPrivateIps.
	privateErr error
	// beforeAttachmentPage, if set, runs before each attachment page
	// after the first (k: the page's index).
	beforeAttachmentPage func(k int)

	mu    sync.Mutex
	calls map[string]int
}

func (f *fakeAPI) count(op string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[op]++
}

var errNotFaked = errors.New("not faked")

func onePage[T any](items []T, page *string) ([]T, *string) {
	k := 0
	if page != nil {
		_, _ = fmt.Sscan(*page, &k)
	}
	if k >= len(items) {
		return nil, nil
	}
	if k+1 < len(items) {
		return items[k : k+1], common.String(fmt.Sprint(k + 1))
	}
	return items[k:], nil
}

func (f *fakeAPI) GetInstance(context.Context, core.GetInstanceRequest) (core.GetInstanceResponse, error) {
	return core.GetInstanceResponse{}, errNotFaked
}
func (f *fakeAPI) ListInstances(context.Context, core.ListInstancesRequest) (core.ListInstancesResponse, error) {
	return core.ListInstancesResponse{}, errNotFaked
}
func (f *fakeAPI) GetVnic(context.Context, core.GetVnicRequest) (core.GetVnicResponse, error) {
	return core.GetVnicResponse{}, errNotFaked
}
func (f *fakeAPI) GetSubnet(context.Context, core.GetSubnetRequest) (core.GetSubnetResponse, error) {
	return core.GetSubnetResponse{}, errNotFaked
}
func (f *fakeAPI) ListVnicAttachments(_ context.Context, req core.ListVnicAttachmentsRequest) (core.ListVnicAttachmentsResponse, error) {
	f.count("ListVnicAttachments")
	if f.beforeAttachmentPage != nil && req.Page != nil {
		var k int
		_, _ = fmt.Sscan(*req.Page, &k)
		f.beforeAttachmentPage(k)
	}
	items, next := onePage(f.atts, req.Page)
	return core.ListVnicAttachmentsResponse{Items: items, OpcNextPage: next}, nil
}
func (f *fakeAPI) ListPrivateIps(_ context.Context, req core.ListPrivateIpsRequest) (core.ListPrivateIpsResponse, error) {
	f.count("ListPrivateIps")
	if f.privateErr != nil {
		return core.ListPrivateIpsResponse{}, f.privateErr
	}
	items, next := onePage(f.private[*req.SubnetId], req.Page)
	return core.ListPrivateIpsResponse{Items: items, OpcNextPage: next}, nil
}
func (f *fakeAPI) ListPublicIps(_ context.Context, req core.ListPublicIpsRequest) (core.ListPublicIpsResponse, error) {
	f.count("ListPublicIps")
	key := string(req.Scope)
	if req.AvailabilityDomain != nil {
		key = *req.AvailabilityDomain
	}
	items, next := onePage(f.public[key], req.Page)
	return core.ListPublicIpsResponse{Items: items, OpcNextPage: next}, nil
}

func (f *fakeAPI) ListIpv6s(_ context.Context, req core.ListIpv6sRequest) (core.ListIpv6sResponse, error) {
	f.count("ListIpv6s")
	items, next := onePage(f.ipv6[*req.SubnetId], req.Page)
	return core.ListIpv6sResponse{Items: items, OpcNextPage: next}, nil
}

func ipv6(vnic, addr string, state core.Ipv6IpStateEnum) core.Ipv6 {
	return core.Ipv6{VnicId: common.String(vnic), IpAddress: common.String(addr), IpState: state, LifecycleState: core.Ipv6LifecycleStateAvailable}
}

func att(instance, vnic, subnet, ad string, state core.VnicAttachmentLifecycleStateEnum) core.VnicAttachment {
	return core.VnicAttachment{InstanceId: common.String(instance), VnicId: common.String(vnic), SubnetId: common.String(subnet),
		AvailabilityDomain: common.String(ad), LifecycleState: state}
}

func privIP(id, vnic, addr, label string, primary bool) core.PrivateIp {
	return core.PrivateIp{Id: common.String(id), VnicId: common.String(vnic), IpAddress: common.String(addr),
		HostnameLabel: common.String(label), IsPrimary: common.Bool(primary)}
}

func pubIP(addr, to string, typ core.PublicIpAssignedEntityTypeEnum, state core.PublicIpLifecycleStateEnum) core.PublicIp {
	return core.PublicIp{IpAddress: common.String(addr), AssignedEntityId: common.String(to), AssignedEntityType: typ, LifecycleState: state}
}

func TestPrimaryVnics(t *testing.T) {
	attached := core.VnicAttachmentLifecycleStateAttached
	f := &fakeAPI{
		atts: []core.VnicAttachment{
			att("i-eph", "v-eph", "s1", "AD-1", attached),
			att("i-res", "v-res", "s1", "AD-1", attached),
			att("i-two", "v-two-a", "s1", "AD-1", attached), // two attached VNICs: per-instance path
			att("i-two", "v-two-b", "s2", "AD-1", attached),
			att("i-sec", "v-sec", "s2", "AD-2", attached),
			att("i-att", "v-att", "s2", "AD-2", core.VnicAttachmentLifecycleStateAttaching),
			att("i-late", "v-late", "s2", "AD-2", attached), // private IP not listed yet
			att("i-pend", "v-pend", "s1", "AD-1", attached),
			att("i-nat", "v-nat", "s1", "AD-1", attached),
		},
		private: map[string][]core.PrivateIp{
			"s1": {privIP("p-eph", "v-eph", "10.0.0.1", "eph", true), privIP("p-res", "v-res", "10.0.0.2", "res", true),
				privIP("p-two", "v-two-a", "10.0.0.3", "two", true), privIP("p-pend", "v-pend", "10.0.0.5", "pend", true),
				privIP("p-nat", "v-nat", "10.0.0.6", "nat", true), privIP("p-lb", "v-lb", "10.0.0.9", "", true)},
			"s2": {privIP("p-sec2", "v-sec", "10.0.1.9", "", false), privIP("p-sec", "v-sec", "10.0.1.4", "sec", true)},
		},
		public: map[string][]core.PublicIp{
			"REGION": {pubIP("198.51.100.2", "p-res", core.PublicIpAssignedEntityTypePrivateIp, core.PublicIpLifecycleStateAssigned),
				pubIP("198.51.100.6", "p-nat", core.PublicIpAssignedEntityTypeNatGateway, core.PublicIpLifecycleStateAssigned)},
			"AD-1": {pubIP("203.0.113.1", "p-eph", core.PublicIpAssignedEntityTypePrivateIp, core.PublicIpLifecycleStateAssigned),
				pubIP("203.0.113.5", "p-pend", core.PublicIpAssignedEntityTypePrivateIp, core.PublicIpLifecycleStateAssigning)},
			"AD-2": {pubIP("203.0.113.4", "p-sec2", core.PublicIpAssignedEntityTypePrivateIp, core.PublicIpLifecycleStateAssigned)},
		},
		ipv6: map[string][]core.Ipv6{
			"s1": {ipv6("v-eph", "fd00::1", core.Ipv6IpStateAssigned), ipv6("v-eph", "2001:db8::1", ""), // no ipState: assigned
				ipv6("v-res", "fd00::2", core.Ipv6IpStateAvailable), // reserved but unassigned
				ipv6("v-two-a", "fd00::3", core.Ipv6IpStateAssigned)},
		},
		calls: map[string]int{},
	}
	r := New(f, f, "comp", "vcn")
	got, err := r.PrimaryVnics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"i-eph v-eph s1 10.0.0.1 203.0.113.1 eph [fd00::1 2001:db8::1]",
		"i-nat v-nat s1 10.0.0.6  nat []",             // a NAT gateway's public IP is not the VNIC's
		"i-pend v-pend s1 10.0.0.5  pend []",          // ASSIGNING: not yet
		"i-res v-res s1 10.0.0.2 198.51.100.2 res []", // reserved, regional; its IPv6 is not assigned
		"i-sec v-sec s2 10.0.1.4  sec []",             // the public IP is on a secondary private IP
	}
	if len(got) != len(want) {
		t.Fatalf("got %d VNICs, want %d: %+v", len(got), len(want), got)
	}
	for k, v := range got {
		s := fmt.Sprintf("%s %s %s %s %s %s %v", v.InstanceID, deref(v.Vnic.Id), deref(v.Vnic.SubnetId), deref(v.Vnic.PrivateIp),
			deref(v.Vnic.PublicIp), deref(v.Vnic.HostnameLabel), v.Vnic.Ipv6Addresses)
		if s != want[k] || !deref(v.Vnic.IsPrimary) {
			t.Errorf("VNIC %d = %q (primary %v), want %q", k, s, deref(v.Vnic.IsPrimary), want[k])
		}
	}
	// Every page of: the attachments; the private IPs of s1 and s2; the
	// region's public IPs and those of AD-1 and AD-2; the IPv6s of s1 (4
	// pages) and s2 (none: one call).
	if f.calls["ListVnicAttachments"] != 9 || f.calls["ListPrivateIps"] != 8 || f.calls["ListPublicIps"] != 5 || f.calls["ListIpv6s"] != 5 {
		t.Errorf("calls %v", f.calls)
	}
}

// The private-IP listing of a subnet starts from the first attachment page
// that names it, not after the last page: the last attachment page waits
// here until the subnet's listing has begun.
func TestPrimaryVnicsListsAddressesAlongsideAttachments(t *testing.T) {
	attached := core.VnicAttachmentLifecycleStateAttached
	privateStarted := make(chan struct{})
	var once sync.Once
	f := &fakeAPI{
		atts: []core.VnicAttachment{att("i-1", "v-1", "s1", "AD-1", attached), att("i-2", "v-2", "s1", "AD-1", attached),
			att("i-3", "v-3", "s1", "AD-1", attached)},
		private: map[string][]core.PrivateIp{"s1": {privIP("p-1", "v-1", "10.0.0.1", "a", true),
			privIP("p-2", "v-2", "10.0.0.2", "b", true), privIP("p-3", "v-3", "10.0.0.3", "c", true)}},
		calls: map[string]int{},
	}
	f.beforeAttachmentPage = func(k int) {
		if k != len(f.atts)-1 {
			return
		}
		select {
		case <-privateStarted:
		case <-time.After(5 * time.Second):
			t.Error("the last attachment page was asked for before any ListPrivateIps")
		}
	}
	api := &startSignal{fakeAPI: f, started: func() { once.Do(func() { close(privateStarted) }) }}
	got, err := New(api, api, "comp", "vcn").PrimaryVnics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Errorf("got %d VNICs, want 3: %+v", len(got), got)
	}
}

// startSignal calls started on the first ListPrivateIps.
type startSignal struct {
	*fakeAPI
	started func()
}

func (s *startSignal) ListPrivateIps(ctx context.Context, req core.ListPrivateIpsRequest) (core.ListPrivateIpsResponse, error) {
	s.started()
	return s.fakeAPI.ListPrivateIps(ctx, req)
}

// A failed listing fails the whole call, naming the operation and subnet.
func TestPrimaryVnicsListingError(t *testing.T) {
	f := &fakeAPI{
		atts:       []core.VnicAttachment{att("i-1", "v-1", "s1", "AD-1", core.VnicAttachmentLifecycleStateAttached)},
		privateErr: errors.New("boom"),
		calls:      map[string]int{},
	}
	_, err := New(f, f, "comp", "vcn").PrimaryVnics(context.Background())
	if err == nil || !strings.Contains(err.Error(), "ListPrivateIps") || !strings.Contains(err.Error(), "s1") {
		t.Errorf("err = %v, want a ListPrivateIps error for subnet s1", err)
	}
}
