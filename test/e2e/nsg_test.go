//go:build e2e

package e2e

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// The NSG scenario's network: a load balancer subnet and a node subnet
// whose security lists are empty, and the nodes' NSG, empty too: only the
// rules the CCM writes in NSG mode can carry the traffic.
const (
	ociNSGLBSubnet   = "ocid1.subnet.oc1..aaaaaaaae2ensglb"
	ociNSGLBList     = "ocid1.securitylist.oc1..aaaaaaaae2ensglb"
	ociNSGNodeSubnet = "ocid1.subnet.oc1..aaaaaaaae2ensgnodes"
	ociNSGNodeList   = "ocid1.securitylist.oc1..aaaaaaaae2ensgnodes"
	ociNSGNodes      = "ocid1.networksecuritygroup.oc1..aaaaaaaae2ensgnodes"
)

var (
	ociNSGLBCIDR   = shardAddr("127.0.203.0/24")
	ociNSGNodeCIDR = shardAddr("127.0.151.0/24")
)

var nsgNodeSeq atomic.Int32

func seedOCINSGNetwork(t *testing.T) {
	t.Helper()
	list := func(id string) simoci.SecurityList {
		return simoci.SecurityList{ID: id, VCNID: ociVCN, CompartmentID: ociCompartment,
			IngressSecurityRules: []ocicore.IngressSecurityRule{}, EgressSecurityRules: []ocicore.EgressSecurityRule{}}
	}
	if _, err := suite.sim.OCI().SeedNetwork(simoci.NetworkSeed{
		SecurityLists: []simoci.SecurityList{list(ociNSGLBList), list(ociNSGNodeList)},
		Subnets: []simoci.Subnet{
			{ID: ociNSGLBSubnet, VCNID: ociVCN, CompartmentID: ociCompartment, CIDRBlock: ociNSGLBCIDR, SecurityListIDs: []string{ociNSGLBList}},
			{ID: ociNSGNodeSubnet, VCNID: ociVCN, CompartmentID: ociCompartment, CIDRBlock: ociNSGNodeCIDR, SecurityListIDs: []string{ociNSGNodeList}},
		},
		NetworkSecurityGroups: []simoci.NSG{{ID: ociNSGNodes, VCNID: ociVCN, CompartmentID: ociCompartment, DisplayName: "e2e-nodes"}},
	}); err != nil {
		t.Fatal(err)
	}
}

// ociNSG returns an NSG of cloudsim's network, and whether it exists.
func ociNSG(id string) (simoci.NSG, bool) {
	for _, n := range suite.sim.OCI().Network().NetworkSecurityGroups {
		if n.ID == id {
			return n, true
		}
	}
	return simoci.NSG{}, false
}

// ociCalls counts the calls of an OCI action (UpdateSecurityList,
// nlb:CreateBackendSet) cloudsim answered, whatever their result.
func ociCalls(action string) int {
	n := 0
	for _, c := range suite.sim.Calls()["oci:"+action] {
		n += c
	}
	return n
}

// TestOCINSGMode: security-rule-management-mode NSG on an OCI LB and NLB
// whose subnets' security lists are empty and whose node is in an empty
// NSG (oci-backend-network-security-group). The CCM's frontend NSG admits
// the client of loadBalancerSourceRanges and no other, its rules in the
// nodes' NSG let the load balancer reach the node; changing the ranges
// swaps the clients with NSG rule writes only; deleting the Service
// deletes the frontend NSG and empties the nodes' NSG again.
func TestOCINSGMode(t *testing.T) {
	startOCIServiceController(t)
	seedOCINSGNetwork(t)
	for _, tc := range []struct {
		kind        string
		typ, subnet annotations.Name
	}{
		{"lb", "", annotations.OCILBSubnet1},
		{"nlb", annotations.OCILoadBalancerType.Name, annotations.OCINLBSubnet},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			sel := "oci-nsg-" + tc.kind
			ip := shardAddr(fmt.Sprintf("127.0.151.%d", 10+nsgNodeSeq.Add(1)))
			n := ociLBNodeWith(t, sel, func(in *cloudsim.Instance) {
				in.PrivateIP, in.SubnetID, in.NSGIDs = ip, ociNSGNodeSubnet, []string{ociNSGNodes}
			})
			spec := lbServiceSpec("oci-nsg-"+tc.kind, sel, 8087)
			if tc.typ != "" {
				spec.Annotations[string(tc.typ)] = tc.kind
			}
			spec.Annotations[string(tc.subnet)] = ociNSGLBSubnet
			spec.Annotations[annotations.OCISecurityRuleManagementMode.String()] = "NSG"
			spec.Annotations[string(annotations.OCIBackendNetworkSecurityGroup)] = ociNSGNodes
			spec.Spec.LoadBalancerSourceRanges = []string{srcRangeA}
			np := nodePort(spec, 8087)
			serve(t, n.PrivateIP, np, 200, "node")
			svc := createService(t, spec)
			url := fmt.Sprintf("http://%s:8087/", waitIngress(t, svc, 90*time.Second))
			svc = getService(t, svc)

			waitReach(t, srcClientA, url, true, "node", 30*time.Second)
			assertReach(t, srcClientB, url, false)
			lbs := ociLBsOf(svc.UID)
			if len(lbs) != 1 {
				t.Fatalf("load balancers of the Service: %d", len(lbs))
			}
			var frontend string
			for _, id := range lbs[0].NSGIDs {
				if nsg, ok := ociNSG(id); ok && nsg.DisplayName == fmt.Sprintf("%s/%s/%s/nsg", svc.Namespace, svc.Name, svc.UID) {
					frontend = id
				}
			}
			if frontend == "" {
				t.Fatalf("the load balancer's NSGs %v hold no managed frontend NSG", lbs[0].NSGIDs)
			}
			nodes, _ := ociNSG(ociNSGNodes)
			if len(nodes.SecurityRules) == 0 {
				t.Errorf("the nodes' NSG got no rule")
			}
			for _, r := range nodes.SecurityRules {
				if deref(r.Source) != frontend || r.SourceType != ocicore.SecurityRuleSourceTypeNetworkSecurityGroup {
					t.Errorf("a rule in the nodes' NSG not from the frontend NSG: %s from %s", deref(r.Description), deref(r.Source))
				}
			}

			before := map[string]int{}
			ops := []string{"AddNetworkSecurityGroupSecurityRules", "RemoveNetworkSecurityGroupSecurityRules", "CreateNetworkSecurityGroup",
				"UpdateSecurityList", "UpdateNetworkSecurityGroups", "nlb:UpdateNetworkSecurityGroups"}
			for _, op := range ops {
				before[op] = ociCalls(op)
			}
			start := time.Now()
			svc = updateService(t, svc, func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{srcRangeB} })
			waitReach(t, srcClientB, url, true, "node", 30*time.Second)
			waitReach(t, srcClientA, url, false, "", 30*time.Second)
			t.Logf("ranges changed: clients swapped within %s", time.Since(start).Round(time.Millisecond))
			assertReach(t, srcClientA, url, false)
			delta := map[string]int{}
			for _, op := range ops {
				if d := ociCalls(op) - before[op]; d != 0 {
					delta[op] = d
				}
			}
			want := map[string]int{"AddNetworkSecurityGroupSecurityRules": 1, "RemoveNetworkSecurityGroupSecurityRules": 1}
			if fmt.Sprint(delta) != fmt.Sprint(want) {
				t.Errorf("writes for the new ranges: %v, want %v", delta, want)
			}

			deleteService(t, svc)
			if _, ok := ociNSG(frontend); ok {
				t.Errorf("the frontend NSG %s outlived the Service", frontend)
			}
			if nodes, _ := ociNSG(ociNSGNodes); len(nodes.SecurityRules) != 0 {
				t.Errorf("the nodes' NSG keeps %d rules after the Service was deleted", len(nodes.SecurityRules))
			}
		})
	}
}
