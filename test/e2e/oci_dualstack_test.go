//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/internal/testcluster/kubeproxy"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
)

// The dual-stack subnets: IPv4 ranges of their own in the suite's VCN (a
// VCN's subnets never overlap: the SDK's Subnet model), with a unique local
// IPv6 prefix each (so the nodes' IPv6 addresses are InternalIPs, as the
// public OCI CCM types a ULA).
const (
	ociDualNodeSubnet = "ocid1.subnet.oc1..aaaaaaaae2edualnodes"
	ociDualLBSubnet   = "ocid1.subnet.oc1..aaaaaaaae2eduallb"
	ociDualNodeIPv6   = "fd00:e2e:0:1::/64"
	ociDualLBIPv6     = "fd00:e2e:0:2::/64"
	ociDualVIPv6      = "fd00:e2e:0:2::80" // the assigned-ipv6 annotation's
	// The dual-stack subnets' security lists: the suite's IPv4 rules, and
	// the same for IPv6 (clients from anywhere to the listener ports, the
	// load balancer subnet to the NodePorts).
	ociDualLBSecurityList   = "ocid1.securitylist.oc1..aaaaaaaae2eduallb"
	ociDualNodeSecurityList = "ocid1.securitylist.oc1..aaaaaaaae2edualnodes"
)

var (
	ociDualNodeCIDR = shardAddr("127.0.160.0/24")
	ociDualLBCIDR   = shardAddr("127.0.204.0/24")
)

// TestOCIDualStackNLB (issue 14 item 7): nodes in an IPv6-enabled subnet
// get their VNIC's IPv6 address as an InternalIP from the node controller;
// a RequireDualStack Service (IPv4, IPv6) of kind nlb with assigned-ipv6
// gets an IPV4_AND_IPV6 network load balancer whose status lists its IPv4
// VIP then the assigned IPv6 one, with an IPv6 listener and backend set
// holding the nodes' IPv6 addresses next to the IPv4 pair; HTTP flows
// through the IPv4 VIP to the nodes' IPv4 addresses and, when the test
// runs as root, through the IPv6 VIP to their IPv6 addresses (localIPv6
// makes those addresses local; without root the test logs that IPv6
// traffic is not checked); a resync of the unchanged Service makes no
// write.
func TestOCIDualStackNLB(t *testing.T) {
	startOCIServiceController(t) // lays out the suite's OCI network first
	if _, err := suite.sim.OCI().SeedNetwork(simoci.NetworkSeed{
		SecurityLists: []simoci.SecurityList{
			{ID: ociDualLBSecurityList, VCNID: ociVCN, CompartmentID: ociCompartment, DisplayName: "e2e-dual-lb",
				IngressSecurityRules: append(ociLBIngress(), tcpFrom("::/0", 8000, 8999)),
				EgressSecurityRules:  []ocicore.EgressSecurityRule{allTo(ociDualNodeCIDR), allTo(ociDualNodeIPv6)}},
			{ID: ociDualNodeSecurityList, VCNID: ociVCN, CompartmentID: ociCompartment, DisplayName: "e2e-dual-nodes",
				IngressSecurityRules: []ocicore.IngressSecurityRule{tcpFrom(ociDualLBCIDR, 30000, 32767), tcpFrom(ociDualLBCIDR, 10256, 10256),
					tcpFrom(ociDualLBIPv6, 30000, 32767), tcpFrom(ociDualLBIPv6, 10256, 10256)},
				EgressSecurityRules: []ocicore.EgressSecurityRule{allTo("0.0.0.0/0"), allTo("::/0")}},
		},
		Subnets: []simoci.Subnet{
			{ID: ociDualNodeSubnet, VCNID: ociVCN, CompartmentID: ociCompartment, CIDRBlock: ociDualNodeCIDR, SecurityListIDs: []string{ociDualNodeSecurityList},
				IPv6CIDRBlocks: []string{ociDualNodeIPv6}},
			{ID: ociDualLBSubnet, VCNID: ociVCN, CompartmentID: ociCompartment, CIDRBlock: ociDualLBCIDR, SecurityListIDs: []string{ociDualLBSecurityList},
				IPv6CIDRBlocks: []string{ociDualLBIPv6}},
		}}); err != nil {
		t.Fatal(err)
	}
	// The IPv6 VIP must be local before the load balancer listens on it.
	v6Traffic := localIPv6(t, ociDualVIPv6)
	const sel = "oci-dual"
	var want4, want6 []string
	spec := lbServiceSpec("oci-dual", sel, 8080)
	np := nodePort(spec, 8080)
	for i := range 2 {
		in := theOCIEnv.newInstanceWith(t, fmt.Sprintf("oci-dual-%d", i), func(in *cloudsim.Instance) {
			in.PrivateIP, in.SubnetID = shardAddr(fmt.Sprintf("127.0.160.%d", 10+dualNodeSeq.Add(1))), ociDualNodeSubnet
		})
		t.Cleanup(func() { _ = suite.sim.SetInstanceState(in.ID, "TERMINATED") })
		registerNode(t, testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP, ProviderID: "oci://" + in.OCID,
			Labels: map[string]string{lbNodeLabel: sel}})
		v6 := ipv6Of(t, ociDualNodeIPv6, in.PrivateIP)
		n := waitNode(t, in.PrivateIP, 60*time.Second, "initialized with its IPv6 address", func(n *corev1.Node) bool {
			return initialized(n) && slices.Contains(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: v6})
		})
		if a := n.Status.Addresses; len(a) == 0 || a[0] != (corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: in.PrivateIP}) {
			t.Errorf("node %s addresses %v: want the IPv4 InternalIP first", n.Name, a)
		}
		serve(t, in.PrivateIP, np, 200, fmt.Sprintf("node-%d", i))
		if v6Traffic && localIPv6(t, v6) {
			serve(t, "["+v6+"]", np, 200, fmt.Sprintf("node-%d over IPv6", i))
			// The IPv6 backend set's health check, kube-proxy's /healthz,
			// on the node's IPv6 address (the suite's kube-proxy stand-in
			// serves the IPv4 InternalIPs).
			serve(t, "["+v6+"]", kubeproxy.HealthPort, 200, "ok")
		} else {
			v6Traffic = false
		}
		want4 = append(want4, fmt.Sprintf("%s:%d", in.PrivateIP, np))
		want6 = append(want6, fmt.Sprintf("%s:%d", v6, np))
	}
	slices.Sort(want4)
	slices.Sort(want6)

	spec.Annotations[annotations.OCILoadBalancerType.String()] = "nlb"
	spec.Annotations[string(annotations.OCINLBSubnet)] = ociDualLBSubnet
	spec.Annotations[string(annotations.OCINLBAssignedIPv6)] = ociDualVIPv6
	policy := corev1.IPFamilyPolicyRequireDualStack
	spec.Spec.IPFamilyPolicy = &policy
	spec.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	svc := createService(t, spec)
	vip := waitIngress(t, svc, 90*time.Second)
	svc = getService(t, svc)
	if ing := svc.Status.LoadBalancer.Ingress; len(ing) != 2 || ing[0].IP != vip || !netip.MustParseAddr(vip).Is4() || ing[1].IP != ociDualVIPv6 {
		t.Errorf("status ingress %+v, want the IPv4 VIP then %s", ing, ociDualVIPv6)
	}
	lb := waitOCILB(t, svc.UID, "IPv4 and IPv6 backends", 60*time.Second, func(lb simoci.LoadBalancer) bool {
		return slices.Equal(ociBackends(lb, "TCP-8080"), want4) && slices.Equal(ociBackends(lb, "TCP-8080-IPv6"), want6)
	})
	var listeners []string
	for _, l := range lb.Listeners {
		listeners = append(listeners, fmt.Sprintf("%s:%d>%s", l.Name, l.Port, l.DefaultBackendSetName))
	}
	slices.Sort(listeners)
	if want := []string{"TCP-8080-IPv6:8080>TCP-8080-IPv6", "TCP-8080:8080>TCP-8080"}; !slices.Equal(listeners, want) {
		t.Errorf("listeners %v, want %v", listeners, want)
	}
	if lb.Kind != "networkloadbalancer" || lb.IPAddress != vip || !slices.Equal(lb.SubnetIDs, []string{ociDualLBSubnet}) {
		t.Errorf("load balancer %+v, want an NLB in %s at %s", lb, ociDualLBSubnet, vip)
	}
	waitAnswers(t, fmt.Sprintf("http://%s:8080/", vip), 30*time.Second, "node-0", "node-1")
	if v6Traffic {
		// From ::1, a client outside the VCN (the kernel would send from
		// the VIP itself otherwise: an address of the load balancer's
		// subnet); both nodes answer in turn.
		url6 := fmt.Sprintf("http://[%s]:8080/", ociDualVIPv6)
		for i := range 2 {
			want := fmt.Sprintf("node-%d over IPv6", i)
			deadline := time.Now().Add(30 * time.Second)
			for {
				body, err := httpGetFrom("::1", url6)
				if err == nil && body == want {
					break
				}
				if time.Now().After(deadline) {
					st, _ := suite.sim.OCI().DataPlane(lb.ID)
					t.Fatalf("GET %s from ::1: %q, %v; not %q within 30s; cloudsim's data plane: %+v", url6, body, err, want, st)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}

	// An annotation-only change makes the service controller reconcile the
	// Service again: it must read the NLB and write nothing.
	suite.sim.ResetCalls()
	svc = updateService(t, svc, func(s *corev1.Service) { s.Annotations["e2e.ccmkit.io/touched"] = "1" })
	deadline := time.Now().Add(30 * time.Second)
	for theOCIEnv.lbReads() == 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(3 * time.Second) // what a reconcile would write comes right after its reads
	if theOCIEnv.lbReads() == 0 {
		t.Errorf("no reconcile after the Service changed (no load balancer read)")
	}
	if w := theOCIEnv.lbWrites(); len(w) != 0 {
		t.Errorf("the unchanged dual-stack Service's resync wrote: %v", w)
	}
	if v6Traffic {
		t.Logf("checked: node IPv6 InternalIPs, both VIPs in the status, IPv6 backends %v, IPv4 traffic via %s, IPv6 traffic via %s",
			want6, vip, ociDualVIPv6)
	} else {
		t.Logf("checked: node IPv6 InternalIPs, both VIPs in the status, IPv6 backends %v, IPv4 traffic via %s; "+
			"NOT checked: traffic via the IPv6 VIP %s (needs root, see localIPv6)", want6, vip, ociDualVIPv6)
	}
	if err := suite.cluster.Client.CoreV1().Services(svc.Namespace).Delete(context.Background(), svc.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitServiceGone(t, svc, 90*time.Second)
}

// ipv6Of is cloudsim's IPv6 address of a VNIC in a subnet with prefix
// (pkg/cloudsim/oci/ipv6.go): the prefix with the IPv4 address in its low
// 32 bits.
func ipv6Of(t *testing.T, prefix, ipv4 string) string {
	t.Helper()
	b := netip.MustParsePrefix(prefix).Addr().As16()
	copy(b[12:], netip.MustParseAddr(ipv4).AsSlice())
	return netip.AddrFrom16(b).String()
}

// dualNodeSeq numbers the nodes of ociDualNodeSubnet.
var dualNodeSeq atomic.Int32
