package lbops

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"

	"github.com/ccmkit/ccm/internal/lb/lbspec"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// NSGs of the tests, in the test VCN: two a user attaches, and the nodes'
// NSG, which starts with someone else's rule.
const (
	nsgUser1 = "ocid1.networksecuritygroup.oc1.iad.aaaauser1"
	nsgUser2 = "ocid1.networksecuritygroup.oc1.iad.aaaauser2"
	nsgNodes = "ocid1.networksecuritygroup.oc1.iad.aaaanodes"
)

func nsgWriteName(method string, seg []string) string {
	switch {
	case len(seg) == 1 && method == http.MethodPost:
		return "CreateNetworkSecurityGroup"
	case len(seg) == 2 && method == http.MethodDelete:
		return "DeleteNetworkSecurityGroup"
	case len(seg) == 4 && seg[3] == "addSecurityRules":
		return "AddNSGRules " + seg[1]
	case len(seg) == 4 && seg[3] == "removeSecurityRules":
		return "RemoveNSGRules " + seg[1]
	}
	return method + " " + strings.Join(seg, "/")
}

func newNSGEnv(t *testing.T) *lbEnv {
	return newLBEnvWith(t, func(o *cloudsim.Options) {
		o.OCI.Network.NetworkSecurityGroups = []simoci.NSG{
			{ID: nsgUser1, VCNID: testVCN, CompartmentID: testCompartment},
			{ID: nsgUser2, VCNID: testVCN, CompartmentID: testCompartment},
			{ID: nsgNodes, VCNID: testVCN, CompartmentID: testCompartment, SecurityRules: []core.SecurityRule{{
				Direction: core.SecurityRuleDirectionIngress, Protocol: common.String("all"), Source: common.String("10.0.0.0/16"),
				Description: common.String("someone else's"),
			}}},
		}
	})
}

// nsgRules lists an NSG's rules as "in|out peer proto port [desc]"; desc
// only for rules not ours.
func nsgRules(t *testing.T, env *lbEnv, id string) []string {
	t.Helper()
	resp, err := env.api.Network.ListNetworkSecurityGroupSecurityRules(context.Background(), core.ListNetworkSecurityGroupSecurityRulesRequest{NetworkSecurityGroupId: &id})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range resp.Items {
		k := ruleOfNSG(r)
		dir := map[bool]string{true: "in", false: "out"}[k.ingress]
		s := fmt.Sprintf("%s %s %s %d", dir, k.peer, k.protocol, k.port)
		if d := deref(r.Description); d != "ccmkit.io/service-uid=uid-1" {
			s += " [" + d + "]"
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// managedNSGs lists the NSGs of the compartment not seeded by the test.
func managedNSGs(t *testing.T, env *lbEnv) []core.NetworkSecurityGroup {
	t.Helper()
	resp, err := env.api.Network.ListNetworkSecurityGroups(context.Background(), core.ListNetworkSecurityGroupsRequest{CompartmentId: common.String(testCompartment)})
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(resp.Items, func(n core.NetworkSecurityGroup) bool {
		return slices.Contains([]string{nsgUser1, nsgUser2, nsgNodes}, deref(n.Id))
	})
}

// TestNSGMode: mode NSG creates the Service's frontend NSG, attaches it
// with the user's NSGs at creation, fills it and the backend NSG with
// exactly the rules the traffic needs, writes nothing on an unchanged
// resync, follows a change of the source ranges with rule writes only, and
// deletes it all with the Service, leaving everyone else's alone.
func TestNSGMode(t *testing.T) {
	tests := []struct {
		name     string
		kind     Kind
		preserve bool
		backend  bool
	}{
		{name: "LB", kind: KindLB},
		{name: "LB with a backend NSG", kind: KindLB, backend: true},
		{name: "NLB preserving the source, with a backend NSG", kind: KindNLB, preserve: true, backend: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newNSGEnv(t)
			o := newTestOps(env)
			ctx := context.Background()
			d := desired(tc.kind, "10.0.0.1")
			d.SecurityListMode, d.NSGs, d.PreserveSource = SecurityRuleNSG, []string{nsgUser1}, tc.preserve
			d.SourceRanges = []string{"192.0.2.0/24"}
			d.HealthCheck.Port = 10256
			if tc.backend {
				d.BackendNSGs = []string{nsgNodes}
			}
			if _, err := o.Ensure(ctx, d); err != nil {
				t.Fatal(err)
			}
			managed := managedNSGs(t, env)
			if len(managed) != 1 {
				t.Fatalf("managed NSGs: %d, want 1", len(managed))
			}
			fe := managed[0]
			feID := deref(fe.Id)
			if deref(fe.DisplayName) != "default/web/uid-1/nsg" || fe.FreeformTags[TagServiceUID] != "uid-1" || deref(fe.VcnId) != testVCN {
				t.Errorf("frontend NSG = %s %v in %s", deref(fe.DisplayName), fe.FreeformTags, deref(fe.VcnId))
			}
			lb := env.only(tc.kind)
			if got, want := slices.Sorted(slices.Values(lb.NSGIDs)), slices.Sorted(slices.Values([]string{nsgUser1, feID})); !slices.Equal(got, want) {
				t.Errorf("load balancer NSGs = %v, want %v", got, want)
			}
			wantFE := []string{"in 192.0.2.0/24 6 80"}
			wantNodes := []string{"in 10.0.0.0/16 all 0 [someone else's]"}
			if tc.backend {
				wantFE = append(wantFE, "out "+nsgNodes+" 6 10256", "out "+nsgNodes+" 6 30080")
				wantNodes = append(wantNodes, "in "+feID+" 6 10256", "in "+feID+" 6 30080")
				if tc.preserve {
					wantNodes = append(wantNodes, "in 192.0.2.0/24 6 30080")
				}
			}
			slices.Sort(wantFE)
			slices.Sort(wantNodes)
			if got := nsgRules(t, env, feID); !slices.Equal(got, wantFE) {
				t.Errorf("frontend rules = %v\nwant %v", got, wantFE)
			}
			if got := nsgRules(t, env, nsgNodes); !slices.Equal(got, wantNodes) {
				t.Errorf("backend NSG rules = %v\nwant %v", got, wantNodes)
			}
			if w := env.writesOf(); slices.Contains(w, "UpdateNetworkSecurityGroups") {
				t.Errorf("the NSGs were not set at creation: %v", w)
			}

			env.resetWrites()
			if _, err := o.Ensure(ctx, d); err != nil {
				t.Fatal(err)
			}
			if w := env.writesOf(); len(w) != 0 {
				t.Errorf("unchanged resync wrote %v", w)
			}

			// New source ranges: the frontend's rules change, nothing else.
			env.resetWrites()
			d.SourceRanges = []string{"198.51.100.0/24"}
			if _, err := o.Ensure(ctx, d); err != nil {
				t.Fatal(err)
			}
			wantW := []string{"RemoveNSGRules " + feID, "AddNSGRules " + feID}
			if tc.preserve {
				wantW = append(wantW, "RemoveNSGRules "+nsgNodes, "AddNSGRules "+nsgNodes)
			}
			if w := env.writesOf(); !slices.Equal(w, wantW) {
				t.Errorf("writes for new source ranges = %v, want %v", w, wantW)
			}
			if got := nsgRules(t, env, feID); !slices.Contains(got, "in 198.51.100.0/24 6 80") || slices.Contains(got, "in 192.0.2.0/24 6 80") {
				t.Errorf("frontend rules after the change = %v", got)
			}

			if err := o.Delete(ctx, d); err != nil {
				t.Fatal(err)
			}
			if m := managedNSGs(t, env); len(m) != 0 {
				t.Errorf("managed NSG left after delete: %v", deref(m[0].Id))
			}
			if got := nsgRules(t, env, nsgNodes); !slices.Equal(got, []string{"in 10.0.0.0/16 all 0 [someone else's]"}) {
				t.Errorf("backend NSG after delete = %v", got)
			}
			if got := nsgRules(t, env, nsgUser1); len(got) != 0 {
				t.Errorf("the user's NSG was written: %v", got)
			}
		})
	}
}

// TestNSGAttachList: without mode NSG the annotation's list is the load
// balancer's, replaced with one UpdateNetworkSecurityGroups when it
// changes; an empty list detaches them all.
func TestNSGAttachList(t *testing.T) {
	for _, kind := range []Kind{KindLB, KindNLB} {
		t.Run(string(kind), func(t *testing.T) {
			env := newNSGEnv(t)
			o := newTestOps(env)
			ctx := context.Background()
			d := desired(kind, "10.0.0.1")
			d.NSGs = []string{nsgUser1}
			if _, err := o.Ensure(ctx, d); err != nil {
				t.Fatal(err)
			}
			if got := env.only(kind).NSGIDs; !slices.Equal(got, []string{nsgUser1}) {
				t.Errorf("created with NSGs %v", got)
			}
			for _, step := range [][]string{{nsgUser2, nsgUser1}, {nsgUser1, nsgUser2}, nil} {
				env.resetWrites()
				d.NSGs = step
				if _, err := o.Ensure(ctx, d); err != nil {
					t.Fatal(err)
				}
				if got := slices.Sorted(slices.Values(env.only(kind).NSGIDs)); !slices.Equal(got, slices.Sorted(slices.Values(step))) {
					t.Errorf("NSGs %v, want %v", got, step)
				}
				want := []string{"UpdateNetworkSecurityGroups"}
				if len(step) == 2 && step[0] == nsgUser1 {
					want = nil // the same set in another order
				}
				if w := env.writesOf(); !slices.Equal(w, want) {
					t.Errorf("NSGs %v: writes %v, want %v", step, w, want)
				}
			}
			if got := managedNSGs(t, env); len(got) != 0 {
				t.Errorf("an NSG was created without mode NSG: %v", deref(got[0].Id))
			}
		})
	}
}

// TestNSGModeIsIdempotent: a sync that created the frontend NSG but not
// the load balancer (its creation refused) is followed by one that finds
// the NSG instead of making a second; the public OCI CCM's NSG for the
// Service is taken over; and five NSGs leave no place for the managed one.
func TestNSGModeIsIdempotent(t *testing.T) {
	env := newNSGEnv(t)
	o := newTestOps(env)
	ctx := context.Background()
	d := desired(KindLB, "10.0.0.1")
	d.SecurityListMode = SecurityRuleNSG
	env.fail("CreateLoadBalancer", 400, "LimitExceeded", 1)
	if _, err := o.Ensure(ctx, d); err == nil {
		t.Fatal("the refused creation succeeded")
	}
	if _, err := o.Ensure(ctx, d); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(strings.Join(env.writesOf(), ","), "CreateNetworkSecurityGroup"); n != 1 {
		t.Errorf("%d CreateNetworkSecurityGroup calls, want 1", n)
	}
	if m := managedNSGs(t, env); len(m) != 1 || !slices.Contains(env.only(KindLB).NSGIDs, deref(m[0].Id)) {
		t.Errorf("managed NSGs %d, attached %v", len(m), env.only(KindLB).NSGIDs)
	}

	// Another Service whose NSG the public OCI CCM made.
	up, err := env.api.Network.CreateNetworkSecurityGroup(ctx, core.CreateNetworkSecurityGroupRequest{CreateNetworkSecurityGroupDetails: core.CreateNetworkSecurityGroupDetails{
		CompartmentId: common.String(testCompartment), VcnId: common.String(testVCN), DisplayName: common.String("default/api/uid-2/nsg"),
		FreeformTags: map[string]string{"CreatedBy": "CCM", "ServiceUid": "uid-2"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	d2 := desired(KindNLB, "10.0.0.1")
	d2.Ref.Service.Name, d2.Ref.UID, d2.Name = "api", "uid-2", "uid-2"
	d2.SecurityListMode = SecurityRuleNSG
	env.resetWrites()
	if _, err := o.Ensure(ctx, d2); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(env.writesOf(), "CreateNetworkSecurityGroup") {
		t.Error("the public OCI CCM's NSG for the Service was not taken over")
	}
	if got := env.only(KindNLB).NSGIDs; !slices.Equal(got, []string{deref(up.Id)}) {
		t.Errorf("NLB NSGs %v, want upstream's %s", got, deref(up.Id))
	}

	d3 := desired(KindLB, "10.0.0.1")
	d3.Ref.UID, d3.Name = "uid-3", "uid-3"
	d3.SecurityListMode, d3.NSGs = SecurityRuleNSG, []string{"a", "b", "c", "d", "e"}
	if _, err := o.Ensure(ctx, d3); err == nil || !strings.Contains(err.Error(), "at most 5") {
		t.Errorf("five NSGs and the managed one: err = %v", err)
	}
	_ = lbspec.TCP
}

// TestNSGInvalidRules: OCI lets an NSG be deleted while another NSG's rule
// names it; the rule stays with isValid false (core SecurityRule.IsValid:
// "changes to `False` if that network security group is deleted") and
// matches nothing (cloudsim's data plane skips it: pkg/cloudsim/oci
// TestSecurityRulesCarryLBTraffic). Here the Service's frontend NSG is
// deleted out of band (detached from the load balancer first, as OCI
// requires an NSG to have no VNICs), leaving our rules in the nodes' NSG
// invalid, beside a user's rule made invalid the same way. The next sync
// makes a new frontend NSG, removes our invalid rules (they name an NSG
// that is no longer the Service's) and adds rules naming the new one; the
// user's invalid rule is not ours and stays. The drift check, which reads
// no NSG rules, reports nothing, and a further sync writes nothing: no
// loop. Issue 32 item 3.
func TestNSGInvalidRules(t *testing.T) {
	env := newNSGEnv(t)
	o := newTestOps(env)
	ctx := context.Background()
	d := desired(KindLB, "10.0.0.1")
	d.SecurityListMode, d.BackendNSGs = SecurityRuleNSG, []string{nsgNodes}
	d.HealthCheck.Port = 10256
	if _, err := o.Ensure(ctx, d); err != nil {
		t.Fatal(err)
	}
	old := deref(managedNSGs(t, env)[0].Id)
	vn, lbc := env.api.Network, env.api.LB

	// A user's rule in the nodes' NSG naming the user's NSG 2, then NSG 2 deleted.
	if _, err := vn.AddNetworkSecurityGroupSecurityRules(ctx, core.AddNetworkSecurityGroupSecurityRulesRequest{NetworkSecurityGroupId: common.String(nsgNodes),
		AddNetworkSecurityGroupSecurityRulesDetails: core.AddNetworkSecurityGroupSecurityRulesDetails{SecurityRules: []core.AddSecurityRuleDetails{{
			Direction: core.AddSecurityRuleDetailsDirectionIngress, Protocol: common.String("6"), Description: common.String("user's"),
			Source: common.String(nsgUser2), SourceType: core.AddSecurityRuleDetailsSourceTypeNetworkSecurityGroup}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := vn.DeleteNetworkSecurityGroup(ctx, core.DeleteNetworkSecurityGroupRequest{NetworkSecurityGroupId: common.String(nsgUser2)}); err != nil {
		t.Fatal(err)
	}
	// The frontend NSG detached and deleted out of band.
	lbID := env.only(KindLB).ID
	wr, err := lbc.UpdateNetworkSecurityGroups(ctx, loadbalancer.UpdateNetworkSecurityGroupsRequest{LoadBalancerId: common.String(lbID),
		UpdateNetworkSecurityGroupsDetails: loadbalancer.UpdateNetworkSecurityGroupsDetails{NetworkSecurityGroupIds: []string{}}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		w, err := lbc.GetWorkRequest(ctx, loadbalancer.GetWorkRequestRequest{WorkRequestId: wr.OpcWorkRequestId})
		if err == nil && w.LifecycleState == loadbalancer.WorkRequestLifecycleStateSucceeded {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("detaching the frontend NSG: %v %v", w.LifecycleState, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := vn.DeleteNetworkSecurityGroup(ctx, core.DeleteNetworkSecurityGroupRequest{NetworkSecurityGroupId: common.String(old)}); err != nil {
		t.Fatal(err)
	}
	invalid := func() (ours, users int) {
		resp, err := vn.ListNetworkSecurityGroupSecurityRules(ctx, core.ListNetworkSecurityGroupSecurityRulesRequest{NetworkSecurityGroupId: common.String(nsgNodes)})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resp.Items {
			if r.IsValid != nil && !*r.IsValid {
				if isOurRule(d, deref(r.Description)) {
					ours++
				} else {
					users++
				}
			}
		}
		return ours, users
	}
	if ours, users := invalid(); ours != 2 || users != 1 {
		t.Fatalf("invalid rules before the sync: ours %d, users' %d; want 2 and 1", ours, users)
	}
	if diffs, err := o.Drift(ctx, d); err != nil || len(diffs) != 0 {
		t.Errorf("drift with invalid NSG rules = %v, %v; want none (it reads no NSG rules)", diffs, err)
	}

	if _, err := o.Ensure(ctx, d); err != nil {
		t.Fatal(err)
	}
	fe := deref(managedNSGs(t, env)[0].Id)
	if fe == old {
		t.Fatal("the deleted frontend NSG was found again")
	}
	if ours, users := invalid(); ours != 0 || users != 1 {
		t.Errorf("invalid rules after the sync: ours %d, users' %d; want 0 and 1", ours, users)
	}
	want := []string{"in " + fe + " 6 10256", "in " + fe + " 6 30080", "in 10.0.0.0/16 all 0 [someone else's]", "in " + nsgUser2 + " 6 0 [user's]"}
	slices.Sort(want)
	if got := nsgRules(t, env, nsgNodes); !slices.Equal(got, want) {
		t.Errorf("nodes' NSG rules after the sync = %v\nwant %v", got, want)
	}
	if got := env.only(KindLB).NSGIDs; !slices.Equal(got, []string{fe}) {
		t.Errorf("load balancer NSGs = %v, want the new frontend %s", got, fe)
	}
	env.resetWrites()
	if _, err := o.Ensure(ctx, d); err != nil {
		t.Fatal(err)
	}
	if w := env.writesOf(); len(w) != 0 {
		t.Errorf("a sync after the repair wrote %v", w)
	}
	if diffs, err := o.Drift(ctx, d); err != nil || len(diffs) != 0 {
		t.Errorf("drift after the repair = %v, %v", diffs, err)
	}

	// The nodes' NSG itself deleted while the annotation still names it:
	// the sync fails, naming it, and writes nothing.
	if _, err := vn.DeleteNetworkSecurityGroup(ctx, core.DeleteNetworkSecurityGroupRequest{NetworkSecurityGroupId: common.String(nsgNodes)}); err != nil {
		t.Fatal(err)
	}
	env.resetWrites()
	if _, err := o.Ensure(ctx, d); err == nil || !strings.Contains(err.Error(), nsgNodes) {
		t.Errorf("sync with a deleted backend NSG: err = %v, want one naming %s", err, nsgNodes)
	}
	if w := env.writesOf(); len(w) != 0 {
		t.Errorf("a sync with a deleted backend NSG wrote %v", w)
	}
}
