package oci

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	nlb "github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// TestUpdateNetworkSecurityGroups: the NSGs of a running LB and NLB are
// replaced with UpdateNetworkSecurityGroups, the data plane follows (the
// frontend NSG admits a client by its address, the LB subnet's list admits
// nobody), the limits and foreign NSGs are refused, and a deleted load
// balancer leaves its NSGs deletable.
func TestUpdateNetworkSecurityGroups(t *testing.T) {
	e := firewallEnv(t)
	vn := e.network()
	mk := func(vcn string, ingress ...ocicore.AddSecurityRuleDetails) string {
		r, err := vn.CreateNetworkSecurityGroup(ctx(t), ocicore.CreateNetworkSecurityGroupRequest{CreateNetworkSecurityGroupDetails: ocicore.CreateNetworkSecurityGroupDetails{
			CompartmentId: common.String(DefaultCompartmentID), VcnId: common.String(vcn)}})
		if err != nil {
			t.Fatal(err)
		}
		if len(ingress) > 0 {
			if _, err := vn.AddNetworkSecurityGroupSecurityRules(ctx(t), ocicore.AddNetworkSecurityGroupSecurityRulesRequest{NetworkSecurityGroupId: r.Id,
				AddNetworkSecurityGroupSecurityRulesDetails: ocicore.AddNetworkSecurityGroupSecurityRulesDetails{SecurityRules: ingress}}); err != nil {
				t.Fatal(err)
			}
		}
		return *r.Id
	}
	fromLoopback := ocicore.AddSecurityRuleDetails{Direction: ocicore.AddSecurityRuleDetailsDirectionIngress, Protocol: common.String("6"),
		Source: common.String("127.0.0.1/32"), SourceType: ocicore.AddSecurityRuleDetailsSourceTypeCidrBlock, TcpOptions: &ocicore.TcpOptions{DestinationPortRange: &ocicore.PortRange{Min: common.Int(80), Max: common.Int(80)}}}
	frontend := mk(fwVCN, fromLoopback)
	empty := mk(fwVCN)
	// The LB subnet's list keeps its egress to the nodes but admits no client.
	setList(t, e, fwLBList, []ocicore.IngressSecurityRule{}, nil)

	be := backend(t, "127.0.3.13", "node")
	node := e.addInstances(core.Instance{Name: "node", PrivateIP: be.Addr().String(), VpcID: fwVCN, SubnetID: fwNodeSubnet})[0]

	// LB.
	d := lbDetails("nsgs")
	d.SubnetIds = []string{fwLBSubnet}
	d.BackendSets["TCP-80"] = loadbalancer.BackendSetDetails{Policy: common.String("ROUND_ROBIN"),
		HealthChecker: &loadbalancer.HealthCheckerDetails{Protocol: common.String("TCP"), Retries: common.Int(1)},
		Backends:      []loadbalancer.BackendDetails{{IpAddress: common.String(be.Addr().String()), Port: common.Int(int(be.Port()))}}}
	c := e.lb()
	created, err := c.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: d})
	if err != nil {
		t.Fatal(err)
	}
	lbID := waitLBWorkRequest(t, c, *created.OpcWorkRequestId).LoadBalancerId
	got, err := c.GetLoadBalancer(ctx(t), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: lbID})
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://%s:80/", *got.IpAddresses[0].IpAddress)
	flows(t, "LB in no NSG", url, false)
	setLB := func(ids ...string) error {
		r, err := c.UpdateNetworkSecurityGroups(ctx(t), loadbalancer.UpdateNetworkSecurityGroupsRequest{LoadBalancerId: lbID,
			UpdateNetworkSecurityGroupsDetails: loadbalancer.UpdateNetworkSecurityGroupsDetails{NetworkSecurityGroupIds: ids}})
		if err == nil {
			waitLBWorkRequest(t, c, *r.OpcWorkRequestId)
		}
		return err
	}
	if err := setLB(frontend, empty); err != nil {
		t.Fatal(err)
	}
	flows(t, "LB in the frontend NSG", url, true)
	if got, _ := c.GetLoadBalancer(ctx(t), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: lbID}); len(got.NetworkSecurityGroupIds) != 2 {
		t.Errorf("networkSecurityGroupIds = %v", got.NetworkSecurityGroupIds)
	}
	_, err = vn.DeleteNetworkSecurityGroup(ctx(t), ocicore.DeleteNetworkSecurityGroupRequest{NetworkSecurityGroupId: common.String(empty)})
	wantErr(t, err, http.StatusConflict, CodeIncorrectState)
	if err := setLB(); err != nil {
		t.Fatal(err)
	}
	flows(t, "LB's NSGs removed", url, false)

	// Refusals: six NSGs, one that does not exist, one of another VCN.
	other := mk(DefaultVCNID)
	wantErr(t, setLB(frontend, empty, frontend, empty, frontend, empty), http.StatusBadRequest, CodeLimitExceeded)
	wantErr(t, setLB("ocid1.networksecuritygroup.oc1..aaaaaaaanone"), http.StatusBadRequest, CodeRelatedResourceNotFound)
	wantErr(t, setLB(other), http.StatusBadRequest, CodeInvalidParameter)

	// NLB.
	nd := nlbDetails("nsgs-nlb", nlb.Backend{TargetId: common.String(node.OCID), Port: common.Int(int(be.Port()))})
	nd.SubnetId = common.String(fwLBSubnet)
	bs := nd.BackendSets["TCP-80"]
	bs.IsPreserveSource = common.Bool(false) // the node list admits the NLB, not the clients
	bs.HealthChecker = &nlb.HealthChecker{Protocol: nlb.HealthCheckProtocolsTcp, Retries: common.Int(1)}
	nd.BackendSets["TCP-80"] = bs
	nc := e.nlb()
	ncreated, err := nc.CreateNetworkLoadBalancer(ctx(t), nlb.CreateNetworkLoadBalancerRequest{CreateNetworkLoadBalancerDetails: nd})
	if err != nil {
		t.Fatal(err)
	}
	waitNLBWorkRequest(t, nc, *ncreated.OpcWorkRequestId)
	ngot, err := nc.GetNetworkLoadBalancer(ctx(t), nlb.GetNetworkLoadBalancerRequest{NetworkLoadBalancerId: ncreated.Id})
	if err != nil {
		t.Fatal(err)
	}
	nurl := fmt.Sprintf("http://%s:80/", nlbPublicIP(t, ngot.IpAddresses))
	flows(t, "NLB in no NSG", nurl, false)
	r, err := nc.UpdateNetworkSecurityGroups(ctx(t), nlb.UpdateNetworkSecurityGroupsRequest{NetworkLoadBalancerId: ncreated.Id,
		UpdateNetworkSecurityGroupsDetails: nlb.UpdateNetworkSecurityGroupsDetails{NetworkSecurityGroupIds: []string{frontend}}})
	if err != nil {
		t.Fatal(err)
	}
	if wr := waitNLBWorkRequest(t, nc, *r.OpcWorkRequestId); wr.OperationType != nlb.OperationTypeUpdateNsgs {
		t.Errorf("work request operation %s", wr.OperationType)
	}
	flows(t, "NLB in the frontend NSG", nurl, true)

	// Deleted, the NLB leaves the NSG, which can go.
	del, err := nc.DeleteNetworkLoadBalancer(ctx(t), nlb.DeleteNetworkLoadBalancerRequest{NetworkLoadBalancerId: ncreated.Id})
	if err != nil {
		t.Fatal(err)
	}
	waitNLBWorkRequest(t, nc, *del.OpcWorkRequestId)
	if _, err := vn.DeleteNetworkSecurityGroup(ctx(t), ocicore.DeleteNetworkSecurityGroupRequest{NetworkSecurityGroupId: common.String(frontend)}); err != nil {
		t.Errorf("delete the NSG of a deleted NLB: %v", err)
	}
}
