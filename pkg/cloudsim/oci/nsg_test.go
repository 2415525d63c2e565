package oci

import (
	"net/http"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

func ingressRule(port int) ocicore.AddSecurityRuleDetails {
	return ocicore.AddSecurityRuleDetails{Direction: ocicore.AddSecurityRuleDetailsDirectionIngress, Protocol: common.String("6"),
		Source: common.String("10.0.0.0/8"), SourceType: ocicore.AddSecurityRuleDetailsSourceTypeCidrBlock, TcpOptions: &ocicore.TcpOptions{DestinationPortRange: &ocicore.PortRange{Min: common.Int(port), Max: common.Int(port)}}}
}

// created2 creates an empty NSG in the default VCN.
func emptyNSG(t *testing.T, vn ocicore.VirtualNetworkClient) *string {
	t.Helper()
	r, err := vn.CreateNetworkSecurityGroup(ctx(t), ocicore.CreateNetworkSecurityGroupRequest{CreateNetworkSecurityGroupDetails: ocicore.CreateNetworkSecurityGroupDetails{
		CompartmentId: common.String(DefaultCompartmentID), VcnId: common.String(DefaultVCNID)}})
	if err != nil {
		t.Fatal(err)
	}
	return r.Id
}

func TestNSGLifecycleAndLimits(t *testing.T) {
	e := newTestEnv(t, Options{}, core.Config{})
	vn := e.network()
	created, err := vn.CreateNetworkSecurityGroup(ctx(t), ocicore.CreateNetworkSecurityGroupRequest{CreateNetworkSecurityGroupDetails: ocicore.CreateNetworkSecurityGroupDetails{
		CompartmentId: common.String(DefaultCompartmentID), VcnId: common.String(DefaultVCNID), DisplayName: common.String("nodes")}})
	if err != nil {
		t.Fatal(err)
	}
	id := created.Id
	if created.LifecycleState != ocicore.NetworkSecurityGroupLifecycleStateAvailable || !core.ValidOCID(*id, "networksecuritygroup") {
		t.Fatalf("created %+v", created.NetworkSecurityGroup)
	}
	_, err = vn.CreateNetworkSecurityGroup(ctx(t), ocicore.CreateNetworkSecurityGroupRequest{CreateNetworkSecurityGroupDetails: ocicore.CreateNetworkSecurityGroupDetails{
		CompartmentId: common.String(DefaultCompartmentID), VcnId: common.String("ocid1.vcn.oc1..aaaaaaaanothere")}})
	wantErr(t, err, http.StatusBadRequest, CodeRelatedResourceNotFound)

	add := func(rules ...ocicore.AddSecurityRuleDetails) ([]ocicore.SecurityRule, error) {
		r, err := vn.AddNetworkSecurityGroupSecurityRules(ctx(t), ocicore.AddNetworkSecurityGroupSecurityRulesRequest{NetworkSecurityGroupId: id,
			AddNetworkSecurityGroupSecurityRulesDetails: ocicore.AddNetworkSecurityGroupSecurityRulesDetails{SecurityRules: rules}})
		return r.SecurityRules, err
	}
	// "You can add up to 25 rules in a single ... operation".
	var batch []ocicore.AddSecurityRuleDetails
	for i := range MaxNSGRulesPerCall + 1 {
		batch = append(batch, ingressRule(1000+i))
	}
	_, err = add(batch...)
	wantErr(t, err, http.StatusBadRequest, CodeLimitExceeded)
	for i := 0; i < MaxNSGRules; i += MaxNSGRulesPerCall {
		if _, err := add(batch[:min(MaxNSGRulesPerCall, MaxNSGRules-i)]...); err != nil {
			t.Fatal(err)
		}
	}
	_, err = add(ingressRule(1))
	wantErr(t, err, http.StatusBadRequest, CodeLimitExceeded) // 120 rules per NSG

	// The peer's type is required with its direction: SourceType "Required
	// if `direction` = `INGRESS`", DestinationType "Required if `direction` =
	// `EGRESS`" (oci-go-sdk v65.130.0 core/add_security_rule_details.go,
	// update_security_rule_details.go; issue 32 item 2).
	noSourceType := ingressRule(22)
	noSourceType.SourceType = ""
	noDestType := ocicore.AddSecurityRuleDetails{Direction: ocicore.AddSecurityRuleDetailsDirectionEgress, Protocol: common.String("all"), Destination: common.String("0.0.0.0/0")}
	for name, r := range map[string]ocicore.AddSecurityRuleDetails{"INGRESS without sourceType": noSourceType, "EGRESS without destinationType": noDestType} {
		r, err := vn.AddNetworkSecurityGroupSecurityRules(ctx(t), ocicore.AddNetworkSecurityGroupSecurityRulesRequest{NetworkSecurityGroupId: emptyNSG(t, vn),
			AddNetworkSecurityGroupSecurityRulesDetails: ocicore.AddNetworkSecurityGroupSecurityRulesDetails{SecurityRules: []ocicore.AddSecurityRuleDetails{r}}})
		if err == nil {
			t.Errorf("%s: added %+v", name, r.SecurityRules)
			continue
		}
		wantErr(t, err, http.StatusBadRequest, CodeMissingParameter)
	}

	list, err := vn.ListNetworkSecurityGroupSecurityRules(ctx(t), ocicore.ListNetworkSecurityGroupSecurityRulesRequest{NetworkSecurityGroupId: id, Limit: common.Int(1000)})
	if err != nil || len(list.Items) != MaxNSGRules || list.Items[0].Id == nil || !*list.Items[0].IsValid || *list.Items[0].IsStateless {
		t.Fatalf("rules: %d %v", len(list.Items), err)
	}
	first := *list.Items[0].Id
	upd := ocicore.UpdateSecurityRuleDetails{Id: common.String(first), Direction: ocicore.UpdateSecurityRuleDetailsDirectionEgress, Protocol: common.String("all"),
		Destination: common.String("0.0.0.0/0"), DestinationType: ocicore.UpdateSecurityRuleDetailsDestinationTypeCidrBlock}
	ur, err := vn.UpdateNetworkSecurityGroupSecurityRules(ctx(t), ocicore.UpdateNetworkSecurityGroupSecurityRulesRequest{NetworkSecurityGroupId: id,
		UpdateNetworkSecurityGroupSecurityRulesDetails: ocicore.UpdateNetworkSecurityGroupSecurityRulesDetails{SecurityRules: []ocicore.UpdateSecurityRuleDetails{upd}}})
	if err != nil || len(ur.SecurityRules) != 1 || ur.SecurityRules[0].Direction != ocicore.SecurityRuleDirectionEgress {
		t.Fatalf("update: %+v %v", ur, err)
	}
	upd.DestinationType = ""
	_, err = vn.UpdateNetworkSecurityGroupSecurityRules(ctx(t), ocicore.UpdateNetworkSecurityGroupSecurityRulesRequest{NetworkSecurityGroupId: id,
		UpdateNetworkSecurityGroupSecurityRulesDetails: ocicore.UpdateNetworkSecurityGroupSecurityRulesDetails{SecurityRules: []ocicore.UpdateSecurityRuleDetails{upd}}})
	wantErr(t, err, http.StatusBadRequest, CodeMissingParameter)
	egress, err := vn.ListNetworkSecurityGroupSecurityRules(ctx(t), ocicore.ListNetworkSecurityGroupSecurityRulesRequest{NetworkSecurityGroupId: id,
		Direction: ocicore.ListNetworkSecurityGroupSecurityRulesDirectionEgress})
	if err != nil || len(egress.Items) != 1 {
		t.Fatalf("egress rules: %v %v", egress.Items, err)
	}
	_, err = vn.RemoveNetworkSecurityGroupSecurityRules(ctx(t), ocicore.RemoveNetworkSecurityGroupSecurityRulesRequest{NetworkSecurityGroupId: id,
		RemoveNetworkSecurityGroupSecurityRulesDetails: ocicore.RemoveNetworkSecurityGroupSecurityRulesDetails{SecurityRuleIds: []string{"NOPE00"}}})
	wantErr(t, err, http.StatusBadRequest, CodeInvalidParameter)
	if _, err := vn.RemoveNetworkSecurityGroupSecurityRules(ctx(t), ocicore.RemoveNetworkSecurityGroupSecurityRulesRequest{NetworkSecurityGroupId: id,
		RemoveNetworkSecurityGroupSecurityRulesDetails: ocicore.RemoveNetworkSecurityGroupSecurityRulesDetails{SecurityRuleIds: []string{first}}}); err != nil {
		t.Fatal(err)
	}

	// Membership: an instance's VNIC (at most five NSGs) and a load
	// balancer; the NSG cannot be deleted while either is in it.
	in := e.addInstances(core.Instance{NSGIDs: []string{*id}})[0]
	if _, err := e.core.AddInstances(core.Instance{NSGIDs: []string{"ocid1.networksecuritygroup.oc1..aaaaaaaanothere"}}); err == nil {
		t.Fatal("an instance in an unknown NSG was added")
	}
	vnics, err := vn.ListNetworkSecurityGroupVnics(ctx(t), ocicore.ListNetworkSecurityGroupVnicsRequest{NetworkSecurityGroupId: id})
	if err != nil || len(vnics.Items) != 1 || *vnics.Items[0].ResourceId != in.OCID {
		t.Fatalf("VNICs: %+v %v", vnics.Items, err)
	}
	six := []string{*id, *id, *id, *id, *id, *id}
	_, err = vn.UpdateVnic(ctx(t), ocicore.UpdateVnicRequest{VnicId: common.String(vnicID(in.OCID)), UpdateVnicDetails: ocicore.UpdateVnicDetails{NsgIds: six}})
	wantErr(t, err, http.StatusBadRequest, CodeLimitExceeded)
	_, err = vn.DeleteNetworkSecurityGroup(ctx(t), ocicore.DeleteNetworkSecurityGroupRequest{NetworkSecurityGroupId: id})
	wantErr(t, err, http.StatusConflict, CodeIncorrectState)
	if _, err := vn.UpdateVnic(ctx(t), ocicore.UpdateVnicRequest{VnicId: common.String(vnicID(in.OCID)), UpdateVnicDetails: ocicore.UpdateVnicDetails{NsgIds: []string{}}}); err != nil {
		t.Fatal(err)
	}
	d := lbDetails("nsg-lb")
	d.NetworkSecurityGroupIds = []string{"ocid1.networksecuritygroup.oc1..aaaaaaaanothere"}
	_, err = e.lb().CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: d})
	wantErr(t, err, http.StatusBadRequest, CodeRelatedResourceNotFound)
	if _, err := vn.DeleteNetworkSecurityGroup(ctx(t), ocicore.DeleteNetworkSecurityGroupRequest{NetworkSecurityGroupId: id}); err != nil {
		t.Fatalf("delete an empty NSG: %v", err)
	}
	_, err = vn.GetNetworkSecurityGroup(ctx(t), ocicore.GetNetworkSecurityGroupRequest{NetworkSecurityGroupId: id})
	wantErr(t, err, http.StatusNotFound, CodeNotAuthorizedOrNotFound)
}

func TestNSGSeed(t *testing.T) {
	e := newTestEnv(t, Options{}, core.Config{})
	lb, nodes := "ocid1.networksecuritygroup.oc1..aaaaaaaalb", "ocid1.networksecuritygroup.oc1..aaaaaaaanodes"
	st, err := e.d.SeedNetwork(NetworkSeed{NetworkSecurityGroups: []NSG{
		{ID: nodes, SecurityRules: []ocicore.SecurityRule{{Direction: ocicore.SecurityRuleDirectionIngress, Protocol: common.String("6"),
			Source: common.String(lb), SourceType: ocicore.SecurityRuleSourceTypeNetworkSecurityGroup}}},
		{ID: lb},
	}})
	if err != nil || len(st.NetworkSecurityGroups) != 2 || len(st.NetworkSecurityGroups[1].SecurityRules) != 1 {
		t.Fatalf("seed: %+v %v", st.NetworkSecurityGroups, err)
	}
	for i, bad := range []NetworkSeed{
		{NetworkSecurityGroups: []NSG{{VCNID: "ocid1.vcn.oc1..aaaaaaaanothere"}}},
		{NetworkSecurityGroups: []NSG{{SecurityRules: []ocicore.SecurityRule{{Direction: ocicore.SecurityRuleDirectionIngress, Protocol: common.String("6"),
			Source: common.String("ocid1.networksecuritygroup.oc1..aaaaaaaamissing"), SourceType: ocicore.SecurityRuleSourceTypeNetworkSecurityGroup}}}}},
		{Subnets: []Subnet{{SecurityListIDs: []string{DefaultSecurityListID, DefaultSecurityListID, DefaultSecurityListID, DefaultSecurityListID, DefaultSecurityListID, DefaultSecurityListID}}}},
	} {
		if _, err := e.d.SeedNetwork(bad); err == nil {
			t.Errorf("bad seed %d accepted", i)
		}
	}
	if n := len(e.d.Network().NetworkSecurityGroups); n != 2 {
		t.Fatalf("a refused seed changed the NSGs: %d", n)
	}
}
