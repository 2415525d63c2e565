package oci

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

func TestListInstancesPagination(t *testing.T) {
	e := newTestEnv(t, Options{}, core.Config{})
	for i := range 5 {
		e.addInstances(core.Instance{Name: []string{"a", "b", "c", "d", "e"}[i]})
	}
	other := "ocid1.compartment.oc1..aaaaaaaaother"
	e.addInstances(core.Instance{Name: "elsewhere", CompartmentID: other})
	cc := e.compute()

	var names []string
	var page *string
	calls := 0
	for {
		resp, err := cc.ListInstances(ctx(t), ocicore.ListInstancesRequest{
			CompartmentId: common.String(DefaultCompartmentID), Limit: common.Int(2), Page: page,
			SortBy: ocicore.ListInstancesSortByDisplayname, SortOrder: ocicore.ListInstancesSortOrderAsc,
		})
		if err != nil {
			t.Fatal(err)
		}
		calls++
		if resp.OpcRequestId == nil || *resp.OpcRequestId == "" {
			t.Fatal("no opc-request-id")
		}
		for _, in := range resp.Items {
			names = append(names, *in.DisplayName)
		}
		if resp.OpcNextPage == nil {
			break
		}
		page = resp.OpcNextPage
	}
	if got := len(names); got != 5 || calls != 3 || names[0] != "a" || names[4] != "e" {
		t.Fatalf("names %v over %d calls, want a..e over 3", names, calls)
	}

	tests := []struct {
		name string
		req  ocicore.ListInstancesRequest
		want []string
	}{
		{"display name", ocicore.ListInstancesRequest{CompartmentId: common.String(DefaultCompartmentID), DisplayName: common.String("c")}, []string{"c"}},
		{"newest first by default", ocicore.ListInstancesRequest{CompartmentId: common.String(DefaultCompartmentID), Limit: common.Int(1)}, []string{"e"}},
		{"other compartment", ocicore.ListInstancesRequest{CompartmentId: common.String(other)}, []string{"elsewhere"}},
		{"lifecycle state", ocicore.ListInstancesRequest{CompartmentId: common.String(DefaultCompartmentID), LifecycleState: ocicore.InstanceLifecycleStateStopped}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := cc.ListInstances(ctx(t), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, in := range resp.Items {
				got = append(got, *in.DisplayName)
			}
			if len(got) != len(tt.want) || (len(got) > 0 && got[0] != tt.want[0]) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}

	_, err := cc.ListInstances(ctx(t), ocicore.ListInstancesRequest{CompartmentId: common.String("ocid1.compartment.oc1..aaaaaaaanone")})
	wantErr(t, err, 404, CodeNotAuthorizedOrNotFound)
	_, err = cc.ListInstances(ctx(t), ocicore.ListInstancesRequest{CompartmentId: common.String(DefaultCompartmentID), Limit: common.Int(1001)})
	wantErr(t, err, 400, CodeInvalidParameter)
	// The caller's tenancy is its root compartment.
	if _, err := cc.ListInstances(ctx(t), ocicore.ListInstancesRequest{CompartmentId: common.String(testTenancy)}); err != nil {
		t.Fatal(err)
	}
}

func TestGetInstanceAndStates(t *testing.T) {
	clk := newFakeClock()
	// A retention of a minute, not the default 12 h: the fake clock must
	// stay within the signature's 5-minute skew of the client's.
	e := newTestEnv(t, Options{TerminatedRetention: time.Minute}, core.Config{Clock: clk.Now, TerminatedLinger: 10 * time.Second})
	if d := newTerminated(0).retention; d != 12*time.Hour {
		t.Fatalf("default retention %s, want 12h", d)
	}
	in := e.addInstances(core.Instance{Name: "node-1", Shape: "VM.Standard.A1.Flex", FaultDomain: "FAULT-DOMAIN-2"})[0]
	cc := e.compute()

	get := func() ocicore.Instance {
		t.Helper()
		resp, err := cc.GetInstance(ctx(t), ocicore.GetInstanceRequest{InstanceId: common.String(in.OCID)})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Instance
	}
	got := get()
	if *got.Id != in.OCID || *got.Shape != "VM.Standard.A1.Flex" || *got.FaultDomain != "FAULT-DOMAIN-2" ||
		*got.AvailabilityDomain != "cSim:US-ASHBURN-AD-1" || *got.Region != "iad" || *got.CompartmentId != DefaultCompartmentID {
		t.Fatalf("instance: %+v", got)
	}

	steps := []struct {
		state   string        // set through the fleet (admin API); "" = none
		advance time.Duration // then move the clock
		want    ocicore.InstanceLifecycleStateEnum
	}{
		{"", 0, ocicore.InstanceLifecycleStateRunning},
		{"STOPPING", 0, ocicore.InstanceLifecycleStateStopping},
		{"STOPPED", 0, ocicore.InstanceLifecycleStateStopped},
		{"PENDING", 0, ocicore.InstanceLifecycleStateProvisioning},
		{"STARTING", 0, ocicore.InstanceLifecycleStateStarting},
		{"RUNNING", 0, ocicore.InstanceLifecycleStateRunning},
		{"TERMINATED", 0, ocicore.InstanceLifecycleStateTerminating}, // the alias starts terminating
		{"", 6 * time.Second, ocicore.InstanceLifecycleStateTerminated},
	}
	for _, s := range steps {
		if s.state != "" {
			// By OCID: admin state changes work for both dialects.
			if _, err := e.core.SetInstanceState(in.OCID, s.state); err != nil {
				t.Fatal(err)
			}
		}
		clk.Advance(s.advance)
		if got := get().LifecycleState; got != s.want {
			t.Fatalf("after %q: %s, want %s", s.state, got, s.want)
		}
	}
	// Past the fleet's linger (Tencent's view drops it), OCI keeps it
	// TERMINATED for at least 12 hours: core/core_compute_client.go,
	// TerminateInstance: "the record remains visible in the list of
	// instances with the state TERMINATED for at least 12 hours".
	clk.Advance(5 * time.Second)
	if got := get().LifecycleState; got != ocicore.InstanceLifecycleStateTerminated {
		t.Fatalf("past the linger: %s, want TERMINATED", got)
	}
	if _, err := e.core.InstanceRecord(in.OCID); err == nil {
		t.Fatal("the fleet (Tencent's view) still has the instance")
	}
	listed, err := cc.ListInstances(ctx(t), ocicore.ListInstancesRequest{CompartmentId: common.String(DefaultCompartmentID)})
	if err != nil || len(listed.Items) != 1 || listed.Items[0].LifecycleState != ocicore.InstanceLifecycleStateTerminated {
		t.Fatalf("listing within the retention: %+v %v", listed.Items, err)
	}
	clk.Advance(time.Minute) // past the retention: gone
	_, err = cc.GetInstance(ctx(t), ocicore.GetInstanceRequest{InstanceId: common.String(in.OCID)})
	wantErr(t, err, 404, CodeNotAuthorizedOrNotFound)
	_, err = cc.GetInstance(ctx(t), ocicore.GetInstanceRequest{InstanceId: common.String(in.ID)})
	wantErr(t, err, 404, CodeInvalidParameter) // a Tencent id is not an OCID
}

func TestVnicLookups(t *testing.T) {
	e := newTestEnv(t, Options{}, core.Config{})
	in := e.addInstances(core.Instance{Name: "node-1", PrivateIP: "10.0.3.4", PublicIP: "203.0.113.9", HostnameLabel: "node-1"})[0]
	e.addInstances(core.Instance{Name: "node-2"})
	cc, vn := e.compute(), e.network()

	atts, err := cc.ListVnicAttachments(ctx(t), ocicore.ListVnicAttachmentsRequest{CompartmentId: common.String(DefaultCompartmentID), InstanceId: common.String(in.OCID)})
	if err != nil {
		t.Fatal(err)
	}
	if len(atts.Items) != 1 || atts.Items[0].LifecycleState != ocicore.VnicAttachmentLifecycleStateAttached || *atts.Items[0].InstanceId != in.OCID {
		t.Fatalf("attachments: %+v", atts.Items)
	}
	v, err := vn.GetVnic(ctx(t), ocicore.GetVnicRequest{VnicId: atts.Items[0].VnicId})
	if err != nil {
		t.Fatal(err)
	}
	if *v.PrivateIp != "10.0.3.4" || *v.PublicIp != "203.0.113.9" || *v.HostnameLabel != "node-1" || !*v.IsPrimary || *v.SubnetId != DefaultSubnetID {
		t.Fatalf("vnic: %+v", v.Vnic)
	}
	sn, err := vn.GetSubnet(ctx(t), ocicore.GetSubnetRequest{SubnetId: v.SubnetId})
	if err != nil {
		t.Fatal(err)
	}
	vcn, err := vn.GetVcn(ctx(t), ocicore.GetVcnRequest{VcnId: sn.VcnId})
	if err != nil {
		t.Fatal(err)
	}
	if *vcn.Id != DefaultVCNID || *sn.CidrBlock != DefaultVCNCIDR || len(sn.SecurityListIds) != 1 {
		t.Fatalf("subnet %+v vcn %+v", sn.Subnet, vcn.Vcn)
	}
	all, err := cc.ListVnicAttachments(ctx(t), ocicore.ListVnicAttachmentsRequest{CompartmentId: common.String(DefaultCompartmentID)})
	if err != nil || len(all.Items) != 2 {
		t.Fatalf("all attachments: %v %v", all.Items, err)
	}
	_, err = vn.GetVnic(ctx(t), ocicore.GetVnicRequest{VnicId: common.String(vnicID(core.NewOCID("instance")))})
	wantErr(t, err, 404, CodeNotAuthorizedOrNotFound)
}

// fakeClock starts at the real time (requests carry a real Date header,
// checked against it) and moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Now()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// The 404 path: with no retention (or once the admin API purges it), a
// terminated instance disappears with the fleet's linger, and GetInstance
// answers 404 NotAuthorizedOrNotFound.
func TestTerminatedWithoutRetention(t *testing.T) {
	for _, tt := range []struct {
		name      string
		retention time.Duration
		purge     bool
	}{
		{"retention off", -1, false},
		{"purged", 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			e := newTestEnv(t, Options{TerminatedRetention: tt.retention}, core.Config{Clock: clk.Now})
			in := e.addInstances(core.Instance{Name: "node-1"})[0]
			cc := e.compute()
			if err := e.d.PurgeTerminated(in.OCID); !errors.Is(err, core.ErrInvalid) {
				t.Fatalf("purging a running instance: %v", err)
			}
			if _, err := e.core.SetInstanceState(in.OCID, "TERMINATING"); err != nil {
				t.Fatal(err)
			}
			if tt.purge {
				if err := e.d.PurgeTerminated(in.OCID); err != nil {
					t.Fatal(err)
				}
			} else {
				clk.Advance(5 * time.Second) // past the linger
			}
			_, err := cc.GetInstance(ctx(t), ocicore.GetInstanceRequest{InstanceId: common.String(in.OCID)})
			wantErr(t, err, 404, CodeNotAuthorizedOrNotFound)
			listed, err := cc.ListInstances(ctx(t), ocicore.ListInstancesRequest{CompartmentId: common.String(DefaultCompartmentID)})
			if err != nil || len(listed.Items) != 0 {
				t.Fatalf("listing: %+v %v", listed.Items, err)
			}
		})
	}
}
