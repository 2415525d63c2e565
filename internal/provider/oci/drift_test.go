package oci

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// The drift check, against cloudsim: in sync after Ensure, a listener
// deleted out of band is reported (reading only), and the re-ensure the
// report triggers leaves it in sync again. Both kinds.
func TestCloudsimDrift(t *testing.T) {
	sim, c := startSim(t)
	added, err := sim.AddInstances(cloudsim.Instance{Name: "drift-node", PrivateIP: "127.0.52.1", VpcID: simVCN, SubnetID: simSubnet, CompartmentID: simCompartment})
	if err != nil {
		t.Fatal(err)
	}
	nodes := []*corev1.Node{node("drift-node", internalIP("127.0.52.1"), providerID("oci://"+added[0].OCID))}
	for _, kind := range []string{"lb", "nlb"} {
		t.Run(kind, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			svc := lbService(map[string]string{"oci.oraclecloud.com/load-balancer-type": kind},
				corev1.ServicePort{Protocol: corev1.ProtocolTCP, Port: 8080, NodePort: 30080})
			svc.UID = types.UID("uid-drift-" + kind)
			other := lbService(map[string]string{"oci.oraclecloud.com/load-balancer-type": kind})
			other.UID = types.UID("uid-drift-never-ensured-" + kind)
			lb := c.lb
			if _, err := lb.EnsureLoadBalancer(ctx, "k", svc, nodes); err != nil {
				t.Fatal(err)
			}
			check := func() map[types.UID][]string {
				t.Helper()
				out := map[types.UID][]string{}
				for uid, r := range lb.Drift(ctx, []*corev1.Service{svc, other}, nodes) {
					if r.Err != nil {
						t.Fatalf("drift of %s: %v", uid, r.Err)
					}
					out[uid] = r.Diffs
				}
				return out
			}
			if got := check(); len(got[svc.UID]) != 0 || !slices.Equal(got[other.UID], []string{"load balancer missing"}) {
				t.Fatalf("after Ensure: drift = %v, want none for %s and a missing one for %s", got, svc.UID, other.UID)
			}

			var id string
			for _, l := range sim.OCI().LoadBalancers() {
				if l.DisplayName == string(svc.UID) {
					id = l.ID
				}
			}
			if err := sim.OCI().DeleteListener(id, "TCP-8080"); err != nil {
				t.Fatal(err)
			}
			sim.ResetCalls()
			if got := check()[svc.UID]; !slices.Equal(got, []string{"listener TCP-8080 missing"}) {
				t.Errorf("listener deleted out of band: drift = %v", got)
			}
			for action := range sim.Calls() { // e.g. oci:nlb:GetNetworkLoadBalancer
				if op := action[strings.LastIndex(action, ":")+1:]; !strings.HasPrefix(op, "List") && !strings.HasPrefix(op, "Get") {
					t.Errorf("the drift check called %s; it must only read", action)
				}
			}

			if _, err := lb.EnsureLoadBalancer(ctx, "k", svc, nodes); err != nil {
				t.Fatal(err)
			}
			if got := check()[svc.UID]; len(got) != 0 {
				t.Errorf("after the re-ensure: drift = %v, want none", got)
			}
			if err := lb.EnsureLoadBalancerDeleted(ctx, "k", svc); err != nil {
				t.Fatal(err)
			}
		})
	}
}
