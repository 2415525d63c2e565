package oci

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// The node side against cloudsim's OCI dialect, through the real SDK: the
// one model of the Compute and VirtualNetwork APIs (faults, pagination,
// lifecycle states, VNIC attachments) that the e2e suite uses too.

const (
	simOtherVCN    = "ocid1.vcn.oc1..aaaaaaaaothervcn"
	simOtherSubnet = "ocid1.subnet.oc1..aaaaaaaaothersubnet"
)

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

// nodeSim is cloudsim with the cluster's VCN and another one, and the
// provider's instances reading it afresh on every lifecycle check.
type nodeSim struct {
	t   *testing.T
	sim *cloudsim.Sim
	i   *instances
}

func newNodeSim(t *testing.T) *nodeSim {
	t.Helper()
	sim, c, _ := startSimWith(t, func(o *cloudsim.Options) {
		o.OCI.Network.VCNs = append(o.OCI.Network.VCNs, simoci.VCN{ID: simOtherVCN, CompartmentID: simCompartment, CIDRBlock: "127.100.0.0/16"})
		o.OCI.Network.Subnets = append(o.OCI.Network.Subnets, simoci.Subnet{ID: simOtherSubnet, VCNID: simOtherVCN, CompartmentID: simCompartment, CIDRBlock: "127.100.0.0/24"})
	})
	c.instances.stateMaxAge = 0
	return &nodeSim{t: t, sim: sim, i: c.instances}
}

// add creates a running instance in the cluster's subnet (changed by mod),
// with the hostname label host-<last octet>.
func (s *nodeSim) add(name, ip string, mod func(*cloudsim.Instance)) cloudsim.Instance {
	s.t.Helper()
	in := cloudsim.Instance{Name: name, PrivateIP: ip, VpcID: simVCN, SubnetID: simSubnet, CompartmentID: simCompartment,
		HostnameLabel: "host-" + ip[strings.LastIndex(ip, ".")+1:]}
	if mod != nil {
		mod(&in)
	}
	added, err := s.sim.AddInstances(in)
	if err != nil {
		s.t.Fatal(err)
	}
	return added[0]
}

func (s *nodeSim) setState(in cloudsim.Instance, state string) {
	s.t.Helper()
	if err := s.sim.SetInstanceState(in.ID, state); err != nil {
		s.t.Fatal(err)
	}
}

// remove terminates the instance and purges it: OCI then answers 404.
func (s *nodeSim) remove(in cloudsim.Instance) {
	s.t.Helper()
	s.setState(in, "TERMINATING")
	if err := s.sim.OCI().PurgeTerminated(in.ID); err != nil {
		s.t.Fatal(err)
	}
}

// fail makes every call of action (e.g. "GetInstance", or "*") answer
// status with code.
func (s *nodeSim) fail(action string, status int, code string) {
	if action != "*" {
		action = simoci.ActionPrefix + action
	}
	s.sim.SetFault(cloudsim.Fault{Action: action, ErrorRate: 1, HTTPStatus: status, ErrorCode: code})
}

// cluster is three instances: node-a (with a public IP), node-b, node-c.
func (s *nodeSim) cluster() (a, b, c cloudsim.Instance) {
	a = s.add("node-a", "127.0.60.1", func(in *cloudsim.Instance) { in.PublicIP = "127.1.60.1" })
	return a, s.add("node-b", "127.0.60.2", nil), s.add("node-c", "127.0.60.3", nil)
}

func TestInstanceMetadataMapping(t *testing.T) {
	tests := []struct {
		name  string
		setup func(s *nodeSim)
		node  func(a, b cloudsim.Instance) *v1.Node
		want  func(a, b, c cloudsim.Instance) string // the providerID
	}{
		{name: "providerID", node: func(a, _ cloudsim.Instance) *v1.Node { return node("whatever", providerID("oci://"+a.OCID)) },
			want: func(a, _, _ cloudsim.Instance) string { return "oci://" + a.OCID }},
		{name: "bare OCID providerID is kept", node: func(a, _ cloudsim.Instance) *v1.Node { return node("whatever", providerID(a.OCID)) },
			want: func(a, _, _ cloudsim.Instance) string { return a.OCID }},
		{name: "node named by OCID", node: func(_, b cloudsim.Instance) *v1.Node { return node(b.OCID) },
			want: func(_, b, _ cloudsim.Instance) string { return "oci://" + b.OCID }},
		{name: "display name", node: func(_, _ cloudsim.Instance) *v1.Node { return node("node-b") },
			want: func(_, b, _ cloudsim.Instance) string { return "oci://" + b.OCID }},
		{name: "display name skips terminated", setup: func(s *nodeSim) {
			s.setState(s.add("node-b", "127.0.60.9", nil), "LAUNCH_FAILED") // TERMINATED at once
		}, node: func(_, _ cloudsim.Instance) *v1.Node { return node("node-b") },
			want: func(_, b, _ cloudsim.Instance) string { return "oci://" + b.OCID }},
		{name: "name is the private IP", node: func(_, _ cloudsim.Instance) *v1.Node { return node("127.0.60.3") },
			want: func(_, _, c cloudsim.Instance) string { return "oci://" + c.OCID }},
		{name: "InternalIP", node: func(_, _ cloudsim.Instance) *v1.Node { return node("other", internalIP("127.0.60.1")) },
			want: func(a, _, _ cloudsim.Instance) string { return "oci://" + a.OCID }},
		{name: "hostname label", node: func(_, _ cloudsim.Instance) *v1.Node { return node("host-3.sub.vcn.oraclevcn.com") },
			want: func(_, _, c cloudsim.Instance) string { return "oci://" + c.OCID }},
		{name: "Hostname address's label", node: func(_, _ cloudsim.Instance) *v1.Node { return node("x", hostname("host-2")) },
			want: func(_, b, _ cloudsim.Instance) string { return "oci://" + b.OCID }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newNodeSim(t)
			a, b, c := s.cluster()
			if tt.setup != nil {
				tt.setup(s)
			}
			md, err := s.i.InstanceMetadata(context.Background(), tt.node(a, b))
			if err != nil {
				t.Fatal(err)
			}
			if want := tt.want(a, b, c); md.ProviderID != want {
				t.Errorf("ProviderID = %q, want %q", md.ProviderID, want)
			}
		})
	}
}

func TestInstanceMetadataFields(t *testing.T) {
	s := newNodeSim(t)
	s.add("node-a", "127.0.60.1", func(in *cloudsim.Instance) {
		in.PublicIP, in.FaultDomain, in.AvailabilityDomain, in.Shape = "127.1.60.1", "FAULT-DOMAIN-3", "Uocm:PHX-AD-2", "VM.Standard.E4.Flex"
	})
	md, err := s.i.InstanceMetadata(context.Background(), node("node-a", hostname("node-a.example")))
	if err != nil {
		t.Fatal(err)
	}
	if md.InstanceType != "VM.Standard.E4.Flex" || md.Zone != "PHX-AD-2" || md.Region != s.i.region {
		t.Errorf("type/zone/region = %q/%q/%q", md.InstanceType, md.Zone, md.Region)
	}
	if got := md.AdditionalLabels[LabelFaultDomain]; got != "FAULT-DOMAIN-3" {
		t.Errorf("fault domain label = %q", got)
	}
	want := []v1.NodeAddress{
		{Type: v1.NodeInternalIP, Address: "127.0.60.1"},
		{Type: v1.NodeExternalIP, Address: "127.1.60.1"},
		{Type: v1.NodeHostName, Address: "node-a.example"},
	}
	if fmt.Sprint(md.NodeAddresses) != fmt.Sprint(want) {
		t.Errorf("addresses = %v, want %v", md.NodeAddresses, want)
	}
	// Without a kubelet hostname, the VNIC's hostname label.
	md, err = s.i.InstanceMetadata(context.Background(), node("node-a"))
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
		setup    func(s *nodeSim) *v1.Node
		want     string
		notFound bool
	}{
		{name: "no match", setup: func(*nodeSim) *v1.Node { return node("nobody") }, want: "no instance", notFound: true},
		{name: "ambiguous display name", setup: func(s *nodeSim) *v1.Node {
			s.add("node-a", "127.0.60.5", nil)
			return node("node-a")
		}, want: "2 instances"},
		{name: "other VCN", setup: func(s *nodeSim) *v1.Node {
			s.add("node-x", "127.100.0.6", func(in *cloudsim.Instance) { in.VpcID, in.SubnetID = simOtherVCN, simOtherSubnet })
			return node("node-x")
		}, want: "not in the cluster's VCN"},
		{name: "other compartment", setup: func(s *nodeSim) *v1.Node {
			in := s.add("node-y", "127.0.60.7", func(in *cloudsim.Instance) { in.CompartmentID = "ocid1.compartment.oc1..other" })
			return node("node-y", providerID("oci://"+in.OCID))
		}, want: "not in the cluster's compartment"},
		{name: "bad providerID", setup: func(*nodeSim) *v1.Node { return node("n", providerID("aws:///i-123")) }, want: "not an OCI providerID"},
		{name: "no primary VNIC attached (still provisioning)", setup: func(s *nodeSim) *v1.Node {
			s.setState(s.add("node-z", "127.0.60.8", nil), "PENDING") // OCI: PROVISIONING, its VNIC ATTACHING
			return node("node-z")
		}, want: "no primary VNIC"},
		{name: "API error names the call", setup: func(s *nodeSim) *v1.Node {
			s.fail("ListInstances", 500, "InternalServerError")
			return node("node-a")
		}, want: "ListInstances compartment " + simCompartment},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newNodeSim(t)
			s.add("node-a", "127.0.60.1", nil)
			_, err := s.i.InstanceMetadata(context.Background(), tt.setup(s))
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
	byPID := func(in cloudsim.Instance) *v1.Node { return node("n1", providerID("oci://"+in.OCID)) }
	tests := []struct {
		name    string
		setup   func(s *nodeSim, a cloudsim.Instance) *v1.Node
		want    bool
		wantErr string
	}{
		{name: "running", want: true},
		{name: "stopped exists", setup: func(s *nodeSim, a cloudsim.Instance) *v1.Node { s.setState(a, "STOPPED"); return byPID(a) }, want: true},
		{name: "terminated", setup: func(s *nodeSim, a cloudsim.Instance) *v1.Node { s.setState(a, "LAUNCH_FAILED"); return byPID(a) }},
		{name: "terminating", setup: func(s *nodeSim, a cloudsim.Instance) *v1.Node { s.setState(a, "TERMINATING"); return byPID(a) }},
		{name: "404 confirmed by listing", setup: func(s *nodeSim, a cloudsim.Instance) *v1.Node { s.remove(a); return byPID(a) }},
		{name: "404 but listed alive", setup: func(s *nodeSim, a cloudsim.Instance) *v1.Node {
			s.fail("GetInstance", 404, "NotAuthorizedOrNotFound")
			return byPID(a)
		}, want: true, wantErr: "listing shows the instance alive"},
		{name: "404 and listing denied", setup: func(s *nodeSim, a cloudsim.Instance) *v1.Node {
			s.remove(a)
			s.fail("ListInstances", 404, "NotAuthorizedOrNotFound")
			return byPID(a)
		}, want: true, wantErr: "confirmation failed"},
		{name: "404 and listing unauthenticated", setup: func(s *nodeSim, a cloudsim.Instance) *v1.Node {
			s.remove(a)
			s.fail("ListInstances", 401, "NotAuthenticated")
			return byPID(a)
		}, want: true, wantErr: "NotAuthenticated"},
		{name: "401", setup: func(s *nodeSim, a cloudsim.Instance) *v1.Node { s.fail("*", 401, "NotAuthenticated"); return byPID(a) },
			want: true, wantErr: "[NotAuthenticated] cloudsim: injected fault for GetInstance. (HTTP 401, request id "},
		{name: "429", setup: func(s *nodeSim, a cloudsim.Instance) *v1.Node { s.fail("*", 429, "TooManyRequests"); return byPID(a) },
			want: true, wantErr: "[TooManyRequests] cloudsim: injected fault for GetInstance. (HTTP 429, request id "},
		{name: "500", setup: func(s *nodeSim, a cloudsim.Instance) *v1.Node {
			s.fail("*", 500, "InternalServerError")
			return byPID(a)
		},
			want: true, wantErr: "[InternalServerError] cloudsim: injected fault for GetInstance. (HTTP 500, request id "},
		{name: "unreachable", setup: func(s *nodeSim, a cloudsim.Instance) *v1.Node {
			if err := s.sim.Suspend(); err != nil {
				s.t.Fatal(err)
			}
			return byPID(a)
		}, want: true, wantErr: syscall.ECONNREFUSED.Error()},
		{name: "by display name", setup: func(*nodeSim, cloudsim.Instance) *v1.Node { return node("node-a") }, want: true},
		{name: "no providerID, no match: cannot tell", setup: func(*nodeSim, cloudsim.Instance) *v1.Node { return node("nobody") },
			want: true, wantErr: "cannot tell"},
		{name: "other compartment", setup: func(s *nodeSim, _ cloudsim.Instance) *v1.Node {
			in := s.add("n2", "127.0.60.2", func(in *cloudsim.Instance) { in.CompartmentID = "ocid1.compartment.oc1..other" })
			s.setState(in, "LAUNCH_FAILED")
			return byPID(in)
		}, want: true, wantErr: "not in the cluster's compartment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newNodeSim(t)
			a := s.add("node-a", "127.0.60.1", nil)
			n := byPID(a)
			if tt.setup != nil {
				n = tt.setup(s, a)
			}
			got, err := s.i.InstanceExists(context.Background(), n)
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
	s := newNodeSim(t)
	s.i.stateMaxAge = maxStateAge // the production setting: a cache in between
	a := s.add("node-a", "127.0.60.1", nil)
	s.setState(a, "LAUNCH_FAILED")
	if _, err := s.i.InstanceMetadata(context.Background(), node("127.0.60.1")); err == nil {
		t.Fatal("a terminated instance matched by IP should not initialize a node")
	}
	// Warm the inventory, then bring the instance back: a fresh read says RUNNING.
	if _, err := s.i.inv.Get(context.Background(), a.OCID, maxStateAge); err != nil {
		t.Fatal(err)
	}
	s.setState(a, "RUNNING")
	s.sim.ResetCalls()
	exists, err := s.i.InstanceExists(context.Background(), node("n", providerID("oci://"+a.OCID)))
	if err != nil || !exists {
		t.Fatalf("exists = %v, %v; want true (the cached TERMINATED must be re-read)", exists, err)
	}
	if total(s.sim.Calls()[simoci.ActionPrefix+"GetInstance"]) == 0 {
		t.Error("no fresh GetInstance before concluding")
	}
}

func TestInstanceShutdown(t *testing.T) {
	tests := []struct {
		state string
		oci   ocicore.InstanceLifecycleStateEnum
		want  bool
	}{
		{state: "RUNNING", oci: ocicore.InstanceLifecycleStateRunning},
		{state: "STOPPED", oci: ocicore.InstanceLifecycleStateStopped, want: true},
		{state: "STOPPING", oci: ocicore.InstanceLifecycleStateStopping, want: true},
		{state: "STARTING", oci: ocicore.InstanceLifecycleStateStarting},
		{state: "LAUNCH_FAILED", oci: ocicore.InstanceLifecycleStateTerminated},
	}
	for _, tt := range tests {
		t.Run(string(tt.oci), func(t *testing.T) {
			s := newNodeSim(t)
			a := s.add("node-a", "127.0.60.1", nil)
			s.setState(a, tt.state)
			got, err := s.i.InstanceShutdown(context.Background(), node("n", providerID("oci://"+a.OCID)))
			if err != nil || got != tt.want {
				t.Errorf("shutdown = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	s := newNodeSim(t)
	a := s.add("node-a", "127.0.60.1", nil)
	s.fail("*", 500, "InternalServerError")
	if _, err := s.i.InstanceShutdown(context.Background(), node("n", providerID("oci://"+a.OCID))); err == nil {
		t.Error("an API error must be an error")
	}
}

// Listing pages are followed: 2,100 instances take 3 pages of 1,000 (the
// documented maximum; cloudsim rejects a larger limit).
func TestListInstancesPaginates(t *testing.T) {
	s := newNodeSim(t)
	var in []cloudsim.Instance
	for n := range 2100 {
		in = append(in, cloudsim.Instance{Name: fmt.Sprintf("node-%d", n), PrivateIP: fmt.Sprintf("127.0.%d.%d", 61+n/200, 1+n%200),
			VpcID: simVCN, SubnetID: simSubnet, CompartmentID: simCompartment})
	}
	if _, err := s.sim.AddInstances(in...); err != nil {
		t.Fatal(err)
	}
	s.sim.ResetCalls()
	all, err := s.i.reader.ListInstances(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if calls := total(s.sim.Calls()[simoci.ActionPrefix+"ListInstances"]); len(all) != 2100 || calls != 3 {
		t.Errorf("listed %d instances in %d calls, want 2100 in 3", len(all), calls)
	}
}

// total is the number of calls over every result code.
func total(byCode map[string]int) int {
	n := 0
	for _, c := range byCode {
		n += c
	}
	return n
}

// prime (the leader's Initialize) starts both listings before any lookup,
// and the lookups that follow are answered from them: no per-node read.
func TestPrimeListsBeforeAnyLookup(t *testing.T) {
	s := newNodeSim(t)
	for k := range 3 {
		s.add(fmt.Sprintf("primed-%d", k), fmt.Sprintf("127.0.70.%d", k+1), nil)
	}
	s.sim.ResetCalls()
	s.i.prime()
	listed := func(op string) int { return total(s.sim.Calls()[simoci.ActionPrefix+op]) }
	deadline := time.Now().Add(10 * time.Second)
	for listed("ListInstances") == 0 || listed("ListVnicAttachments") == 0 || listed("ListPrivateIps") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("prime started no listing within 10s: %v", s.sim.Calls())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for k := range 3 {
		md, err := s.i.InstanceMetadata(context.Background(), node(fmt.Sprintf("primed-%d", k)))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("127.0.70.%d", k+1); md.NodeAddresses[0].Address != want {
			t.Errorf("node primed-%d: address %v, want %s first", k, md.NodeAddresses, want)
		}
	}
	for _, op := range []string{"ListInstances", "ListVnicAttachments", "GetVnic", "GetInstance"} {
		if n, max := listed(op), map[string]int{"ListInstances": 1, "ListVnicAttachments": 1}[op]; n > max {
			t.Errorf("%s: %d calls after prime, want at most %d (the listing)", op, n, max)
		}
	}
}
