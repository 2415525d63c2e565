package oci

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"

	"github.com/ccmkit/ccm/internal/cloudpolicy/ociiam"
	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// TestEveryRouteHasPermissions: the permission table covers every
// operation cloudsim serves, so that no route is open to a governed
// principal by omission.
func TestEveryRouteHasPermissions(t *testing.T) {
	e := newTestEnv(t, Options{}, core.Config{})
	for _, op := range e.d.routed {
		if op == "(unknown)" {
			continue
		}
		if _, ok := ociiam.LookupOperation(op); !ok {
			t.Errorf("cloudsim routes %s, which internal/cloudpolicy/ociiam's table does not list", op)
		}
	}
	if len(e.d.routed) < 50 {
		t.Errorf("only %d routes recorded", len(e.d.routed))
	}
}

// TestIAMAuthorization: a user in a group gets what the group's statements
// grant, in the compartments they name; the rest answers 404
// NotAuthorizedOrNotFound; a user in no group keeps full access.
func TestIAMAuthorization(t *testing.T) {
	const other = "ocid1.compartment.oc1..aaaaaaaaother"
	var mu sync.Mutex
	messages := map[string]string{}
	e := newTestEnv(t, Options{
		Network: NetworkSeed{Compartments: []string{other}},
		IAM: IAMSeed{
			CompartmentNames: map[string]string{"sim": DefaultCompartmentID},
			Policies:         map[string][]string{"ccm": {"Allow group ccm to read instances in compartment sim"}},
		},
	}, core.Config{OnCall: func(ci core.CallInfo) {
		mu.Lock()
		defer mu.Unlock()
		messages[ci.Action] = ci.Message
	}})
	in := e.addInstances(core.Instance{Name: "n1"})[0]
	cc := e.compute()
	list := func(comp string) error {
		_, err := cc.ListInstances(ctx(t), ocicore.ListInstancesRequest{CompartmentId: common.String(comp)})
		return err
	}
	getVnics := func() error {
		_, err := cc.ListVnicAttachments(ctx(t), ocicore.ListVnicAttachmentsRequest{CompartmentId: common.String(DefaultCompartmentID)})
		return err
	}
	if err := list(DefaultCompartmentID); err != nil {
		t.Fatalf("no group: %v, want full access", err)
	}
	if err := e.d.SeedIAM(IAMSeed{Groups: map[string][]string{"ccm": {testUser}}}); err != nil {
		t.Fatal(err)
	}
	if err := list(DefaultCompartmentID); err != nil {
		t.Errorf("ListInstances granted by read instances in compartment sim: %v", err)
	}
	if _, err := cc.GetInstance(ctx(t), ocicore.GetInstanceRequest{InstanceId: common.String(in.OCID)}); err != nil {
		t.Errorf("GetInstance in the granted compartment: %v", err)
	}
	wantErr(t, list(other), http.StatusNotFound, CodeNotAuthorizedOrNotFound)
	wantErr(t, getVnics(), http.StatusNotFound, CodeNotAuthorizedOrNotFound)
	_, err := e.lb().ListLoadBalancers(ctx(t), loadbalancer.ListLoadBalancersRequest{CompartmentId: common.String(DefaultCompartmentID)})
	wantErr(t, err, http.StatusNotFound, CodeNotAuthorizedOrNotFound)
	mu.Lock()
	msg := messages["oci:ListVnicAttachments"]
	mu.Unlock()
	if !strings.Contains(msg, "VNIC_ATTACHMENT_READ") {
		t.Errorf("the call log does not name the missing permission: %q", msg)
	}

	// A second policy adds; removing the group restores full access.
	if err := e.d.SeedIAM(IAMSeed{Policies: map[string][]string{"vnics": {"Allow group ccm to inspect vnic-attachments in tenancy"}}}); err != nil {
		t.Fatal(err)
	}
	if err := getVnics(); err != nil {
		t.Errorf("ListVnicAttachments with inspect vnic-attachments and read instances: %v", err)
	}
	if err := e.d.RemoveIAM("groups", "ccm"); err != nil {
		t.Fatal(err)
	}
	if err := list(other); err != nil {
		t.Errorf("out of every group again: %v, want full access", err)
	}
}

func TestIAMDynamicGroups(t *testing.T) {
	s := newIAMStore()
	if err := s.apply(IAMSeed{
		DynamicGroups: map[string]string{"nodes": "ANY {instance.compartment.id = 'ocid1.compartment.oc1..c'}"},
		Policies:      map[string][]string{"p": {"Allow dynamic-group nodes to read instances in tenancy"}},
	}); err != nil {
		t.Fatal(err)
	}
	subj, sts, governed := s.subjects(Principal{InstanceID: "ocid1.instance.oc1..i", CompartmentID: "ocid1.compartment.oc1..c"})
	if !governed || len(subj.DynamicGroups) != 1 || len(ociiam.Missing(sts, subj, ociiam.Target{}, []string{"INSTANCE_READ"})) != 0 {
		t.Errorf("instance of the dynamic group: %+v governed=%v", subj, governed)
	}
	if _, _, governed := s.subjects(Principal{InstanceID: "ocid1.instance.oc1..j", CompartmentID: "ocid1.compartment.oc1..other"}); governed {
		t.Error("an instance outside the matching rule is governed")
	}
}

func TestIAMSeedRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		seed IAMSeed
		want string
	}{
		{"statement", IAMSeed{Policies: map[string][]string{"p": {"Allow group g to fly vcns in tenancy"}}}, `policy "p"`},
		{"rule", IAMSeed{DynamicGroups: map[string]string{"d": "tag.x = 'y'"}}, `dynamic group "d"`},
		{"member", IAMSeed{Groups: map[string][]string{"g": {"alice"}}}, "not a user OCID"},
		{"compartment", IAMSeed{CompartmentNames: map[string]string{"c": "x"}}, "not a compartment"},
	} {
		if err := newIAMStore().apply(tc.seed); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
