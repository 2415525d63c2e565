package oci

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// ociNodes makes n initialized nodes over three availability domains.
func ociNodes(n int) []*corev1.Node {
	out := make([]*corev1.Node, n)
	for i := range out {
		nd := node(fmt.Sprintf("node-%04d", i), internalIP(fmt.Sprintf("10.1.%d.%d", i/250, 1+i%250)),
			providerID("oci://"+instanceOCID(i)))
		nd.Labels = map[string]string{corev1.LabelTopologyZone: fmt.Sprintf("AD-%d", 1+i%3)}
		out[i] = nd
	}
	return out
}

func ports(n int) []corev1.ServicePort {
	out := make([]corev1.ServicePort, n)
	for i := range out {
		out[i] = corev1.ServicePort{Name: fmt.Sprintf("p%d", i), Protocol: corev1.ProtocolTCP, Port: int32(8000 + i), NodePort: int32(30000 + i)}
	}
	return out
}

// Every backend set holds the same nodes, so each can hold min(512 per
// set, the load balancer's total / backend sets): LB 512 in all
// (balanceoverview.htm), NLB 1024 (NetworkLoadBalancer/introduction.htm).
func TestBackendSubsetOCI(t *testing.T) {
	tests := []struct {
		kind          string
		nodes, ports  int
		wantPerSet    int
		wantSubsetMsg string
	}{
		{"lb", 400, 1, 400, ""},
		{"lb", 600, 1, 512, "Binding 512 of 600 eligible nodes (limit: OCI Load Balancer, 512 backends per backend set and 512 in all, over 1 backend set(s))"},
		{"lb", 300, 2, 256, "Binding 256 of 300 eligible nodes"},
		{"nlb", 600, 1, 512, "Binding 512 of 600"},
		{"nlb", 600, 2, 512, "Binding 512 of 600"},
		{"nlb", 600, 3, 341, "Binding 341 of 600"},
		{"nlb", 300, 3, 300, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %d nodes %d ports", tt.kind, tt.nodes, tt.ports), func(t *testing.T) {
			l, f := testLB(lbCfg)
			rec := record.NewFakeRecorder(10)
			l.Subsets().Recorder = rec
			svc := lbService(map[string]string{"oci.oraclecloud.com/load-balancer-type": tt.kind}, ports(tt.ports)...)
			if _, err := l.EnsureLoadBalancer(context.Background(), "k", svc, ociNodes(tt.nodes)); err != nil {
				t.Fatal(err)
			}
			d := f.ensured[0]
			if len(d.Backends) != tt.wantPerSet {
				t.Fatalf("%d backends, want %d", len(d.Backends), tt.wantPerSet)
			}
			perAD := map[string]int{}
			for _, b := range d.Backends {
				var i int
				if _, err := fmt.Sscanf(b.NodeName, "node-%d", &i); err != nil {
					t.Fatalf("backend %q: %v", b.NodeName, err)
				}
				perAD[fmt.Sprint(i%3)]++
			}
			if lo, hi := min(perAD["0"], perAD["1"], perAD["2"]), max(perAD["0"], perAD["1"], perAD["2"]); hi-lo > 1 {
				t.Fatalf("backends per availability domain %v, want balanced within 1", perAD)
			}
			select {
			case e := <-rec.Events:
				if tt.wantSubsetMsg == "" || !strings.Contains(e, tt.wantSubsetMsg) {
					t.Fatalf("event %q, want %q", e, tt.wantSubsetMsg)
				}
			default:
				if tt.wantSubsetMsg != "" {
					t.Fatalf("no event, want %q", tt.wantSubsetMsg)
				}
			}
		})
	}
}

func TestTooManyPortsOCI(t *testing.T) {
	for kind, n := range map[string]int{"lb": 17, "nlb": 51} {
		l, f := testLB(lbCfg)
		svc := lbService(map[string]string{"oci.oraclecloud.com/load-balancer-type": kind}, ports(n)...)
		_, err := l.EnsureLoadBalancer(context.Background(), "k", svc, ociNodes(3))
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("the Service has %d ports", n)) || !strings.Contains(err.Error(), "listeners") {
			t.Errorf("%s with %d ports: %v", kind, n, err)
		}
		if len(f.ensured) != 0 {
			t.Errorf("%s: the operations were called", kind)
		}
	}
}

// Against cloudsim's documented NLB limits: 600 nodes on three ports would
// be 512 per set (over the 1024 in all) and refused; the subset makes
// 3 x 341.
func TestCloudsimNLBSubset(t *testing.T) {
	sim, c := startSim(t)
	var nodes []*corev1.Node
	var in []cloudsim.Instance
	for i := range 600 {
		in = append(in, cloudsim.Instance{Name: fmt.Sprintf("node-%04d", i), PrivateIP: fmt.Sprintf("10.9.%d.%d", i/250, 1+i%250),
			VpcID: simVCN, SubnetID: simSubnet, CompartmentID: simCompartment})
	}
	added, err := sim.AddInstances(in...)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range added {
		nd := node(a.Name, internalIP(a.PrivateIP), providerID("oci://"+a.OCID))
		nd.Labels = map[string]string{corev1.LabelTopologyZone: fmt.Sprintf("AD-%d", 1+i%3)}
		nodes = append(nodes, nd)
	}
	svc := lbService(map[string]string{"oci.oraclecloud.com/load-balancer-type": "nlb"}, ports(3)...)
	svc.UID = types.UID("uid-nlb-subset")
	lb, _ := c.LoadBalancer()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := lb.EnsureLoadBalancer(ctx, "k", svc, nodes); err != nil {
		t.Fatal(err)
	}
	for _, l := range sim.OCI().LoadBalancers() {
		if l.DisplayName != string(svc.UID) {
			continue
		}
		total := 0
		for _, bs := range l.BackendSets {
			if len(bs.Backends) != 341 {
				t.Errorf("backend set %s holds %d backends, want 341", bs.Name, len(bs.Backends))
			}
			total += len(bs.Backends)
		}
		if total != 1023 {
			t.Errorf("%d backends in all, want 1023", total)
		}
		return
	}
	t.Fatal("no network load balancer for the Service")
}
