package oci

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/core"
	v1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// The batched listing and the per-instance path must agree on every
// instance the per-instance path can answer, and leave out the others.
func TestPrimaryVnicsAgreeWithPerInstance(t *testing.T) {
	s := newNodeSim(t)
	ads := simADs(t, s.sim)
	s.add("public", "127.0.61.1", func(in *cloudsim.Instance) { in.PublicIP = "127.1.61.1" })
	s.add("private", "127.0.61.2", nil)
	s.add("no-label", "127.0.61.3", func(in *cloudsim.Instance) { in.HostnameLabel = "" })
	s.add("public-ad2", "127.0.61.4", func(in *cloudsim.Instance) { in.PublicIP, in.AvailabilityDomain = "127.1.61.4", ads[1] })
	s.add("other-vcn", "127.100.0.5", func(in *cloudsim.Instance) { in.SubnetID, in.VpcID = simOtherSubnet, simOtherVCN })
	s.setState(s.add("stopped", "127.0.61.6", func(in *cloudsim.Instance) { in.PublicIP = "127.1.61.6" }), "STOPPED")
	s.setState(s.add("provisioning", "127.0.61.7", nil), "PENDING")     // attachment ATTACHING: no VNIC yet
	s.setState(s.add("terminated", "127.0.61.8", nil), "LAUNCH_FAILED") // TERMINATED

	ctx := context.Background()
	reader := s.i.reader
	batched, err := reader.PrimaryVnics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]core.Vnic{}
	for _, v := range batched {
		byID[v.InstanceID] = v.Vnic
	}
	all, err := reader.ListInstances(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	answered := 0
	for _, ins := range all {
		id, name := *ins.Id, *ins.DisplayName
		t.Run(name, func(t *testing.T) {
			per, perErr := reader.PrimaryVnicOf(ctx, id)
			got, ok := byID[id]
			if perErr != nil {
				if ok {
					t.Fatalf("per-instance path failed (%v) but the listing answered %s", perErr, describeVnic(got))
				}
				return
			}
			if !ok {
				t.Fatalf("the listing has no primary VNIC; per-instance: %s", describeVnic(per.Vnic))
			}
			answered++
			if describeVnic(got) != describeVnic(per.Vnic) {
				t.Errorf("listing %s, per-instance %s", describeVnic(got), describeVnic(per.Vnic))
			}
			n := node(name)
			if a, b := fmt.Sprint(nodeAddresses(n, got)), fmt.Sprint(nodeAddresses(n, per.Vnic)); a != b {
				t.Errorf("addresses: listing %s, per-instance %s", a, b)
			}
		})
	}
	if answered != 6 {
		t.Errorf("%d instances answered by both paths, want 6 (all but provisioning and terminated)", answered)
	}
}

func describeVnic(v core.Vnic) string {
	return fmt.Sprintf("{id %s subnet %s private %s public %s label %s primary %v}", deref(v.Id), deref(v.SubnetId),
		deref(v.PrivateIp), deref(v.PublicIp), deref(v.HostnameLabel), deref(v.IsPrimary))
}

func simADs(t *testing.T, sim *cloudsim.Sim) []string {
	t.Helper()
	state, err := sim.OCI().SeedNetwork(simoci.NetworkSeed{})
	if err != nil {
		t.Fatal(err)
	}
	if len(state.AvailabilityDomains) < 2 {
		t.Fatalf("availability domains %v: want at least two", state.AvailabilityDomains)
	}
	return state.AvailabilityDomains
}

// Initializing many nodes at once costs O(N/100) calls: one listing of the
// instances, one of the VNIC attachments, the private IPs of the subnet and
// the public IPs, plus the few per-node calls made before the listings are
// worth it. Before the VNIC inventory it was two calls per node on top.
func TestInitializeManyNodesBatched(t *testing.T) {
	const n = 250
	s := newNodeSim(t)
	ads := simADs(t, s.sim)
	want := map[string]string{} // node -> its addresses
	for k := range n {
		name, ip := fmt.Sprintf("node-%03d", k), fmt.Sprintf("127.0.%d.%d", 70+k/200, 1+k%200)
		in := s.add(name, ip, func(in *cloudsim.Instance) {
			in.AvailabilityDomain = ads[k%2]
			if k%10 == 0 {
				in.PublicIP = fmt.Sprintf("127.1.%d.%d", 70+k/200, 1+k%200)
			}
		})
		// What the per-instance path answers (TestPrimaryVnicsAgreeWithPerInstance).
		addrs := []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: ip}}
		if in.PublicIP != "" {
			addrs = append(addrs, v1.NodeAddress{Type: v1.NodeExternalIP, Address: in.PublicIP})
		}
		want[name] = fmt.Sprint(append(addrs, v1.NodeAddress{Type: v1.NodeHostName, Address: in.HostnameLabel}))
	}
	s.sim.ResetCalls()

	var wg sync.WaitGroup
	errs := make(chan error, n)
	for k := range n {
		wg.Go(func() {
			name := fmt.Sprintf("node-%03d", k)
			md, err := s.i.InstanceMetadata(context.Background(), node(name))
			switch {
			case err != nil:
				errs <- err
			case fmt.Sprint(md.NodeAddresses) != want[name]:
				errs <- fmt.Errorf("node %s: addresses %v, want %s", name, md.NodeAddresses, want[name])
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	total, throttled := 0, 0
	var byAction []string
	for action, codes := range s.sim.Calls() {
		if !strings.HasPrefix(action, simoci.ActionPrefix) {
			continue
		}
		calls := 0
		for code, c := range codes {
			calls += c
			if code == simoci.CodeTooManyRequests {
				throttled += c
			}
		}
		total += calls
		byAction = append(byAction, fmt.Sprintf("%s=%d", strings.TrimPrefix(action, simoci.ActionPrefix), calls))
	}
	t.Logf("%d nodes initialized with %d calls: %v", n, total, byAction)
	// 4·⌈N/100⌉ is the benchmark's budget at scale; small N adds a fixed
	// few (the calls before a listing pays, GetSubnet, one ListPublicIps
	// per availability domain and one for the region).
	if budget := 4*((n+99)/100) + 8; total > budget {
		t.Errorf("%d calls for %d nodes, want at most %d (the per-node path took %d): %v", total, n, budget, 2*n, byAction)
	}
	if throttled > 0 {
		t.Errorf("%d answers were 429 TooManyRequests", throttled)
	}
}
