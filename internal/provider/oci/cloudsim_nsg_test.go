package oci

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// writeCalls are the OCI write actions cloudsim answered, with counts.
func writeCalls(sim *cloudsim.Sim) map[string]int {
	out := map[string]int{}
	for action, byCode := range sim.Calls() {
		op := strings.TrimPrefix(strings.TrimPrefix(action, simoci.ActionPrefix), "nlb:")
		for _, verb := range []string{"Create", "Update", "Delete", "Add", "Remove", "Change"} {
			if strings.HasPrefix(op, verb) {
				for _, n := range byCode {
					out[action] += n
				}
			}
		}
	}
	return out
}

// An LB and an NLB with every NSG annotation in use (the user's NSG, mode
// NSG with source ranges, a backend NSG) against cloudsim: an unchanged
// resync makes no write call, and the delete leaves only the user's NSGs.
func TestCloudsimNSGModeResyncWritesNothing(t *testing.T) {
	const (
		userNSG    = "ocid1.networksecuritygroup.oc1..aaaaaaaaprovideruser"
		backendNSG = "ocid1.networksecuritygroup.oc1..aaaaaaaaproviderbackend"
	)
	sim, c := startSim(t)
	if _, err := sim.OCI().SeedNetwork(simoci.NetworkSeed{NetworkSecurityGroups: []simoci.NSG{
		{ID: userNSG, VCNID: simVCN, CompartmentID: simCompartment}, {ID: backendNSG, VCNID: simVCN, CompartmentID: simCompartment},
	}}); err != nil {
		t.Fatal(err)
	}
	added, err := sim.AddInstances(cloudsim.Instance{Name: "nsg-node", PrivateIP: "127.0.53.1", VpcID: simVCN, SubnetID: simSubnet, CompartmentID: simCompartment})
	if err != nil {
		t.Fatal(err)
	}
	n := node("nsg-node", internalIP("127.0.53.1"), providerID("oci://"+added[0].OCID))
	lb, _ := c.LoadBalancer()
	for _, kind := range []string{"lb", "nlb"} {
		t.Run(kind, func(t *testing.T) {
			list := annotations.OCINetworkSecurityGroups
			if kind == "nlb" {
				list = annotations.OCINLBNetworkSecurityGroups
			}
			svc := lbService(map[string]string{
				annotations.OCILoadBalancerType.String():           kind,
				string(list):                                       userNSG,
				annotations.OCISecurityRuleManagementMode.String(): "NSG",
				string(annotations.OCIBackendNetworkSecurityGroup): backendNSG,
			})
			svc.UID = types.UID("uid-cloudsim-nsg-" + kind)
			svc.Spec.LoadBalancerSourceRanges = []string{"192.0.2.0/24", "198.51.100.0/24"}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n}); err != nil {
				t.Fatal(err)
			}
			if nsgs := len(sim.OCI().Network().NetworkSecurityGroups); nsgs != 3 {
				t.Errorf("%d NSGs, want the two seeded and the managed one", nsgs)
			}
			sim.ResetCalls()
			if _, err := lb.EnsureLoadBalancer(ctx, "k", svc, []*corev1.Node{n}); err != nil {
				t.Fatal(err)
			}
			if w := writeCalls(sim); len(w) != 0 {
				t.Errorf("an unchanged resync wrote: %v", w)
			}
			if err := lb.EnsureLoadBalancerDeleted(ctx, "k", svc); err != nil {
				t.Fatal(err)
			}
			for _, nsg := range sim.OCI().Network().NetworkSecurityGroups {
				if nsg.ID != userNSG && nsg.ID != backendNSG {
					t.Errorf("NSG %s (%s) outlived the Service", nsg.ID, nsg.DisplayName)
				}
				if len(nsg.SecurityRules) != 0 {
					t.Errorf("NSG %s keeps %d rules", nsg.ID, len(nsg.SecurityRules))
				}
			}
		})
	}
}
