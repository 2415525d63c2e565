package oci

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/core"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccm/internal/oci/config"
)

func newTestInstances(f *fakeOCI) *instances {
	return newInstances(newComputeReader(f, f, testCompartment, testVCN), testRegion, config.DefaultInstanceCacheTTL)
}

type nodeOpt func(*v1.Node)

func providerID(id string) nodeOpt { return func(n *v1.Node) { n.Spec.ProviderID = id } }
func internalIP(ip string) nodeOpt {
	return func(n *v1.Node) {
		n.Status.Addresses = append(n.Status.Addresses, v1.NodeAddress{Type: v1.NodeInternalIP, Address: ip})
	}
}
func hostname(h string) nodeOpt {
	return func(n *v1.Node) {
		n.Status.Addresses = append(n.Status.Addresses, v1.NodeAddress{Type: v1.NodeHostName, Address: h})
	}
}

func node(name string, opts ...nodeOpt) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, o := range opts {
		o(n)
	}
	return n
}

func TestInstanceMetadataMapping(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(f *fakeOCI)
		node   *v1.Node
		wantID string // instance number's OCID expected in the providerID
		wantPI string // exact providerID, when it is not oci://<OCID>
	}{
		{name: "providerID", node: node("whatever", providerID("oci://"+instanceOCID(1))), wantID: instanceOCID(1)},
		{name: "bare OCID providerID is kept", node: node("whatever", providerID(instanceOCID(1))), wantPI: instanceOCID(1)},
		{name: "node named by OCID", node: node(instanceOCID(2)), wantID: instanceOCID(2)},
		{name: "display name", node: node("node-b"), wantID: instanceOCID(2)},
		{name: "display name skips terminated", setup: func(f *fakeOCI) {
			f.add(9, "node-b", "10.0.0.9", withState(core.InstanceLifecycleStateTerminated))
		}, node: node("node-b"), wantID: instanceOCID(2)},
		{name: "name is the private IP", node: node("10.0.0.3"), wantID: instanceOCID(3)},
		{name: "InternalIP", node: node("other", internalIP("10.0.0.1")), wantID: instanceOCID(1)},
		{name: "hostname label", node: node("host-3.sub.vcn.oraclevcn.com"), wantID: instanceOCID(3)},
		{name: "Hostname address's label", node: node("x", hostname("host-2")), wantID: instanceOCID(2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			f.add(1, "node-a", "10.0.0.1", withPublicIP("203.0.113.1"))
			f.add(2, "node-b", "10.0.0.2")
			f.add(3, "node-c", "10.0.0.3")
			if tt.setup != nil {
				tt.setup(f)
			}
			md, err := newTestInstances(f).InstanceMetadata(context.Background(), tt.node)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.wantPI
			if want == "" {
				want = "oci://" + tt.wantID
			}
			if md.ProviderID != want {
				t.Errorf("ProviderID = %q, want %q", md.ProviderID, want)
			}
		})
	}
}

func TestInstanceMetadataFields(t *testing.T) {
	f := newFake()
	f.add(1, "node-a", "10.0.0.1", withPublicIP("203.0.113.1"), withFaultDomain("FAULT-DOMAIN-3"), withAD("Uocm:PHX-AD-2"))
	md, err := newTestInstances(f).InstanceMetadata(context.Background(), node("node-a", hostname("node-a.example")))
	if err != nil {
		t.Fatal(err)
	}
	if md.InstanceType != "VM.Standard.E4.Flex" || md.Zone != "PHX-AD-2" || md.Region != testRegion {
		t.Errorf("type/zone/region = %q/%q/%q", md.InstanceType, md.Zone, md.Region)
	}
	if got := md.AdditionalLabels[LabelFaultDomain]; got != "FAULT-DOMAIN-3" {
		t.Errorf("fault domain label = %q", got)
	}
	want := []v1.NodeAddress{
		{Type: v1.NodeInternalIP, Address: "10.0.0.1"},
		{Type: v1.NodeExternalIP, Address: "203.0.113.1"},
		{Type: v1.NodeHostName, Address: "node-a.example"},
	}
	if len(md.NodeAddresses) != len(want) {
		t.Fatalf("addresses = %v, want %v", md.NodeAddresses, want)
	}
	for i := range want {
		if md.NodeAddresses[i] != want[i] {
			t.Errorf("address %d = %v, want %v", i, md.NodeAddresses[i], want[i])
		}
	}
	// Without a kubelet hostname, the VNIC's hostname label.
	md, err = newTestInstances(f).InstanceMetadata(context.Background(), node("node-a"))
	if err != nil {
		t.Fatal(err)
	}
	if h := md.NodeAddresses[len(md.NodeAddresses)-1]; h.Address != "host-1" {
		t.Errorf("hostname = %v, want host-1", h)
	}
}

func TestInstanceMetadataRefuses(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(f *fakeOCI)
		node     *v1.Node
		want     string
		notFound bool
	}{
		{name: "no match", node: node("nobody"), want: "no instance", notFound: true},
		{name: "ambiguous display name", setup: func(f *fakeOCI) { f.add(5, "node-a", "10.0.0.5") },
			node: node("node-a"), want: "2 instances"},
		{name: "other VCN", setup: func(f *fakeOCI) { f.add(6, "node-x", "10.0.0.6", withSubnet(otherSubnet)) },
			node: node("node-x"), want: "not in the cluster's VCN"},
		{name: "other compartment", setup: func(f *fakeOCI) {
			f.add(7, "node-y", "10.0.0.7", withCompartment("ocid1.compartment.oc1..other"))
		}, node: node("node-y", providerID("oci://"+instanceOCID(7))), want: "not in the cluster's compartment"},
		{name: "bad providerID", node: node("n", providerID("aws:///i-123")), want: "not an OCI providerID"},
		{name: "no primary VNIC attached", setup: func(f *fakeOCI) { f.add(8, "node-z", "10.0.0.8", detached()) },
			node: node("node-z"), want: "no primary VNIC"},
		{name: "API error names the call", setup: func(f *fakeOCI) { f.setErr("ListInstances", err500) },
			node: node("node-a"), want: "ListInstances compartment " + testCompartment},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			f.add(1, "node-a", "10.0.0.1")
			if tt.setup != nil {
				tt.setup(f)
			}
			_, err := newTestInstances(f).InstanceMetadata(context.Background(), tt.node)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if got := errors.Is(err, cloudprovider.InstanceNotFound); got != tt.notFound {
				t.Errorf("errors.Is(InstanceNotFound) = %v, want %v", got, tt.notFound)
			}
		})
	}
}

// The Exists rule: false only for a terminated instance or a 404 that a
// successful listing of the compartment confirms; every error keeps the node.
func TestInstanceExists(t *testing.T) {
	byPID := node("n1", providerID("oci://"+instanceOCID(1)))
	tests := []struct {
		name    string
		setup   func(f *fakeOCI)
		node    *v1.Node
		want    bool
		wantErr string
	}{
		{name: "running", node: byPID, want: true},
		{name: "stopped exists", setup: func(f *fakeOCI) { f.setState(1, core.InstanceLifecycleStateStopped) }, node: byPID, want: true},
		{name: "terminated", setup: func(f *fakeOCI) { f.setState(1, core.InstanceLifecycleStateTerminated) }, node: byPID, want: false},
		{name: "terminating", setup: func(f *fakeOCI) { f.setState(1, core.InstanceLifecycleStateTerminating) }, node: byPID, want: false},
		{name: "404 confirmed by listing", setup: func(f *fakeOCI) { f.remove(1) }, node: byPID, want: false},
		{name: "404 but listed alive", setup: func(f *fakeOCI) { f.hidden[instanceOCID(1)] = true }, node: byPID,
			want: true, wantErr: "listing shows the instance alive"},
		{name: "404 and listing denied", setup: func(f *fakeOCI) {
			f.remove(1)
			f.setErr("ListInstances", err404)
		}, node: byPID, want: true, wantErr: "confirmation failed"},
		{name: "404 and listing unauthenticated", setup: func(f *fakeOCI) {
			f.remove(1)
			f.setErr("ListInstances", err401)
		}, node: byPID, want: true, wantErr: "NotAuthenticated"},
		{name: "401", setup: func(f *fakeOCI) { f.setErr("*", err401) }, node: byPID, want: true, wantErr: "401 NotAuthenticated"},
		{name: "429", setup: func(f *fakeOCI) { f.setErr("*", err429) }, node: byPID, want: true, wantErr: "429 TooManyRequests"},
		{name: "500", setup: func(f *fakeOCI) { f.setErr("*", err500) }, node: byPID, want: true, wantErr: "500 InternalServerError"},
		{name: "network error", setup: func(f *fakeOCI) { f.setErr("*", errors.New("connection refused")) }, node: byPID,
			want: true, wantErr: "connection refused"},
		{name: "by display name", node: node("node-a"), want: true},
		{name: "no providerID, no match: cannot tell", node: node("nobody"), want: true, wantErr: "cannot tell"},
		{name: "other compartment", setup: func(f *fakeOCI) {
			f.add(2, "n2", "10.0.0.2", withCompartment("ocid1.compartment.oc1..other"), withState(core.InstanceLifecycleStateTerminated))
		}, node: node("n2", providerID("oci://"+instanceOCID(2))), want: true, wantErr: "not in the cluster's compartment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			f.add(1, "node-a", "10.0.0.1")
			if tt.setup != nil {
				tt.setup(f)
			}
			got, err := newTestInstances(f).InstanceExists(context.Background(), tt.node)
			if got != tt.want {
				t.Errorf("exists = %v, want %v (err %v)", got, tt.want, err)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

// A cached "terminated" is re-read before the node is deleted.
func TestInstanceExistsRereadsCachedTermination(t *testing.T) {
	f := newFake()
	f.add(1, "node-a", "10.0.0.1", withState(core.InstanceLifecycleStateTerminated))
	i := newTestInstances(f)
	n := node("n", providerID("oci://"+instanceOCID(1)))
	if _, err := i.InstanceMetadata(context.Background(), node("10.0.0.1")); err == nil {
		t.Fatal("a terminated instance matched by IP should not initialize a node")
	}
	// Warm the inventory, then bring the instance back: a fresh read says RUNNING.
	if _, err := i.inv.Get(context.Background(), instanceOCID(1), config.DefaultInstanceCacheTTL); err != nil {
		t.Fatal(err)
	}
	f.setState(1, core.InstanceLifecycleStateRunning)
	before := f.count("GetInstance")
	exists, err := i.InstanceExists(context.Background(), n)
	if err != nil || !exists {
		t.Fatalf("exists = %v, %v; want true (the cached TERMINATED must be re-read)", exists, err)
	}
	if f.count("GetInstance") == before {
		t.Error("no fresh GetInstance before concluding")
	}
}

func TestInstanceShutdown(t *testing.T) {
	tests := []struct {
		state   core.InstanceLifecycleStateEnum
		want    bool
		wantErr bool
	}{
		{state: core.InstanceLifecycleStateRunning},
		{state: core.InstanceLifecycleStateStopped, want: true},
		{state: core.InstanceLifecycleStateStopping, want: true},
		{state: core.InstanceLifecycleStateStarting},
		{state: core.InstanceLifecycleStateTerminated},
	}
	for _, tt := range tests {
		t.Run(string(tt.state), func(t *testing.T) {
			f := newFake()
			f.add(1, "node-a", "10.0.0.1", withState(tt.state))
			got, err := newTestInstances(f).InstanceShutdown(context.Background(), node("n", providerID("oci://"+instanceOCID(1))))
			if err != nil || got != tt.want {
				t.Errorf("shutdown = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	f := newFake()
	f.setErr("*", err500)
	if _, err := newTestInstances(f).InstanceShutdown(context.Background(), node("n", providerID("oci://"+instanceOCID(1)))); err == nil {
		t.Error("an API error must be an error")
	}
}

// Listing pages are followed: a display-name match on page 3 is found.
func TestListInstancesPaginates(t *testing.T) {
	f := newFake()
	for n := range 250 {
		f.add(n, "node-"+strings.Repeat("x", n%3)+string(rune('a'+n%26))+"-"+strconv.Itoa(n), "10.1.0."+strconv.Itoa(n%250))
	}
	r := newComputeReader(f, f, testCompartment, testVCN)
	all, err := r.listInstances(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 250 || f.count("ListInstances") != 3 {
		t.Errorf("listed %d instances in %d calls, want 250 in 3", len(all), f.count("ListInstances"))
	}
}
