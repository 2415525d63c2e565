//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/internal/annotations"
	"github.com/ccmkit/ccm/pkg/cloudsim"
	simoci "github.com/ccmkit/ccm/pkg/cloudsim/oci"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// Firewall scenarios: cloudsim's data plane carries only what the security
// groups (Tencent) or security lists (OCI) admit, so traffic through the
// VIP proves the rules a real cloud needs are there, and a rule removed
// stops it.

// waitRefused waits until GETs through url fail.
func waitRefused(t *testing.T, url string, d time.Duration, why string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		body, err := httpGet(url)
		if err != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: GET %s still answers %q after %s", why, url, body, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func tcpPolicy(port, cidr, action string) *vpc.SecurityGroupPolicy {
	return &vpc.SecurityGroupPolicy{Protocol: common.String("TCP"), Port: common.String(port), CidrBlock: common.String(cidr), Action: common.String(action)}
}

func setPolicies(t *testing.T, sg string, ingress ...*vpc.SecurityGroupPolicy) {
	t.Helper()
	if ingress == nil {
		ingress = []*vpc.SecurityGroupPolicy{}
	}
	if _, err := suite.sim.Tencent().SecurityGroups().SetPolicies(sg, ingress, nil); err != nil {
		t.Fatal(err)
	}
}

// TestTencentSecurityGroups: nodes whose security group admits only SSH, as
// a user's node group might. With the CCM's default pass-to-target the
// CLB's traffic reaches them anyway, filtered by the CLB's own security
// group; with pass-to-target turned off by the annotation, the nodes'
// group must admit the clients and the VIP, and the traffic follows it.
func TestTencentSecurityGroups(t *testing.T) {
	const sel = "firewall"
	sgs := suite.sim.Tencent().SecurityGroups()
	nodeSG, err := sgs.Create(tencent.SecurityGroup{Name: "e2e-nodes", Ingress: []*vpc.SecurityGroupPolicy{
		tcpPolicy("22", "0.0.0.0/0", "ACCEPT"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	n := lbNode(t, sel)
	if _, err := sgs.SetInstanceSecurityGroups(n.ID, nodeSG.ID); err != nil {
		t.Fatal(err)
	}
	spec := lbServiceSpec("firewall", sel, 8090)
	spec.Annotations[annotations.HealthCheckInterval.String()] = "3s"
	spec.Annotations[annotations.HealthCheckHealthyThreshold.String()] = "2"
	spec.Annotations[annotations.HealthCheckUnhealthyThreshold.String()] = "2"
	np := nodePort(spec, 8090)
	serve(t, n.PrivateIP, np, 200, "node")
	svc := createService(t, spec)
	vip := waitIngress(t, svc, 60*time.Second)
	svc = getService(t, svc)
	lb := clbsOf(svc.UID)[0]
	if !lb.PassToTarget {
		t.Fatalf("CLB %s created without LoadBalancerPassToTarget", lb.ID)
	}
	url := fmt.Sprintf("http://%s:8090/", vip)
	waitAnswers(t, url, 30*time.Second, "node")

	t.Run("the CLB's security group", func(t *testing.T) {
		clbSG, err := sgs.Create(tencent.SecurityGroup{Name: "e2e-clb", Ingress: []*vpc.SecurityGroupPolicy{
			tcpPolicy("8090", "127.0.0.1/32", "ACCEPT"),
		}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := suite.sim.Tencent().CLB().SetSecurityGroups(lb.ID, clbSG.ID); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = suite.sim.Tencent().CLB().SetSecurityGroups(lb.ID) })
		waitAnswers(t, url, 10*time.Second, "node")
		setPolicies(t, clbSG.ID, tcpPolicy("8090", "10.0.0.0/8", "ACCEPT"))
		waitRefused(t, url, 10*time.Second, "the CLB's group no longer admits the client")
		setPolicies(t, clbSG.ID, tcpPolicy("8090", "127.0.0.1/32", "ACCEPT"))
		waitAnswers(t, url, 10*time.Second, "node")
	})

	t.Run("pass-to-target off", func(t *testing.T) {
		svc = updateService(t, svc, func(s *corev1.Service) { s.Annotations[annotations.TKEPassToTarget.String()] = "false" })
		waitCLB(t, lb.ID, "LoadBalancerPassToTarget off", 60*time.Second, func(l tencent.CLBLoadBalancer) bool { return !l.PassToTarget })
		waitRefused(t, url, 30*time.Second, "the nodes' group admits neither the client nor the VIP's health checks")
		// What a user opens for it: the clients on the NodePort, and the VIP
		// on kube-proxy's health port, which the CLB probes.
		port := fmt.Sprint(np)
		setPolicies(t, nodeSG.ID, tcpPolicy("22", "0.0.0.0/0", "ACCEPT"), tcpPolicy(port, "127.0.0.1/32", "ACCEPT"), tcpPolicy("10256", vip+"/32", "ACCEPT"))
		waitAnswers(t, url, 30*time.Second, "node")
		// Without the VIP the health checks fail, and the CLB stops sending.
		setPolicies(t, nodeSG.ID, tcpPolicy("22", "0.0.0.0/0", "ACCEPT"), tcpPolicy(port, "127.0.0.1/32", "ACCEPT"))
		waitRefused(t, url, 30*time.Second, "the nodes' group drops the VIP's health checks")

		// Back to the default: the CCM turns pass-to-target on again.
		svc = updateService(t, svc, func(s *corev1.Service) { delete(s.Annotations, annotations.TKEPassToTarget.String()) })
		waitCLB(t, lb.ID, "LoadBalancerPassToTarget on", 60*time.Second, func(l tencent.CLBLoadBalancer) bool { return l.PassToTarget })
		waitAnswers(t, url, 30*time.Second, "node")
	})
}

// The OCI scenarios' subnets, besides the suite's (cloud_oci_test.go): a
// load balancer subnet whose list has no listener rule (for Frontend), and
// a load balancer subnet and a node subnet whose lists are empty (for All).
const (
	ociFrontendLBSubnet = "ocid1.subnet.oc1..aaaaaaaae2efrontendlb"
	ociFrontendLBList   = "ocid1.securitylist.oc1..aaaaaaaae2efrontendlb"
	ociAllLBSubnet      = "ocid1.subnet.oc1..aaaaaaaae2ealllb"
	ociAllLBList        = "ocid1.securitylist.oc1..aaaaaaaae2ealllb"
	ociAllNodeSubnet    = "ocid1.subnet.oc1..aaaaaaaae2eallnodes"
	ociAllNodeList      = "ocid1.securitylist.oc1..aaaaaaaae2eallnodes"
)

var (
	ociFrontendLBCIDR = shardAddr("127.0.201.0/24")
	ociAllLBCIDR      = shardAddr("127.0.202.0/24")
	ociAllNodeCIDR    = shardAddr("127.0.150.0/24")
)

func seedOCIFirewallSubnets(t *testing.T) {
	t.Helper()
	list := func(id, name string, eg ...ocicore.EgressSecurityRule) simoci.SecurityList {
		return simoci.SecurityList{ID: id, VCNID: ociVCN, CompartmentID: ociCompartment, DisplayName: name,
			IngressSecurityRules: []ocicore.IngressSecurityRule{}, EgressSecurityRules: append([]ocicore.EgressSecurityRule{}, eg...)}
	}
	subnet := func(id, cidr, sl string) simoci.Subnet {
		return simoci.Subnet{ID: id, VCNID: ociVCN, CompartmentID: ociCompartment, CIDRBlock: cidr, SecurityListIDs: []string{sl}}
	}
	if _, err := suite.sim.OCI().SeedNetwork(simoci.NetworkSeed{
		SecurityLists: []simoci.SecurityList{
			list(ociFrontendLBList, "e2e-frontend-lb", allTo(ociNodeCIDR)),
			list(ociAllLBList, "e2e-all-lb"),
			list(ociAllNodeList, "e2e-all-nodes"),
		},
		Subnets: []simoci.Subnet{
			subnet(ociFrontendLBSubnet, ociFrontendLBCIDR, ociFrontendLBList),
			subnet(ociAllLBSubnet, ociAllLBCIDR, ociAllLBList),
			subnet(ociAllNodeSubnet, ociAllNodeCIDR, ociAllNodeList),
		},
	}); err != nil {
		t.Fatal(err)
	}
}

// securityList returns a list's rules as "in|out peer proto min-max",
// ours (carrying the Service's marker) and all.
func securityList(t *testing.T, id string, uid string) (ours, all []string) {
	t.Helper()
	for _, sl := range suite.sim.OCI().Network().SecurityLists {
		if sl.ID != id {
			continue
		}
		add := func(dir, peer, proto, desc string, tcp *ocicore.TcpOptions, udp *ocicore.UdpOptions) {
			ports := "all"
			var r *ocicore.PortRange
			if tcp != nil {
				r = tcp.DestinationPortRange
			}
			if udp != nil {
				r = udp.DestinationPortRange
			}
			if r != nil {
				ports = fmt.Sprintf("%d-%d", *r.Min, *r.Max)
			}
			s := fmt.Sprintf("%s %s %s %s", dir, peer, proto, ports)
			all = append(all, s)
			if desc == "ccmkit.io/service-uid="+uid {
				ours = append(ours, s)
			}
		}
		for _, r := range sl.IngressSecurityRules {
			add("in", *r.Source, *r.Protocol, deref(r.Description), r.TcpOptions, r.UdpOptions)
		}
		for _, r := range sl.EgressSecurityRules {
			add("out", *r.Destination, *r.Protocol, deref(r.Description), r.TcpOptions, r.UdpOptions)
		}
	}
	slices.Sort(ours)
	slices.Sort(all)
	return ours, all
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// TestOCISecurityLists: in mode None the rules the suite's network seed
// made, as a user would, carry the traffic, and removing the node subnet's
// rule stops it; modes Frontend and All open exactly what the traffic
// needs, on subnets that start with no rule for it.
func TestOCISecurityLists(t *testing.T) {
	startOCIServiceController(t)
	seedOCIFirewallSubnets(t)
	fast := func(s *corev1.Service) {
		s.Annotations[annotations.OCILBHealthCheckInterval.String()] = "1000"
		s.Annotations[annotations.OCILBHealthCheckTimeout.String()] = "500"
		s.Annotations[annotations.OCILBHealthCheckRetries.String()] = "1"
	}

	t.Run("None", func(t *testing.T) {
		const sel = "oci-fw-none"
		n := ociLBNode(t, sel)
		spec := lbServiceSpec("oci-fw-none", sel, 8083)
		fast(spec)
		np := nodePort(spec, 8083)
		serve(t, n.PrivateIP, np, 200, "node")
		svc := createService(t, spec)
		url := fmt.Sprintf("http://%s:8083/", waitIngress(t, svc, 90*time.Second))
		waitAnswers(t, url, 30*time.Second, "node")
		svc = getService(t, svc)
		for _, id := range []string{ociLBSecurityList, ociSecurityList} {
			if ours, _ := securityList(t, id, string(svc.UID)); len(ours) != 0 {
				t.Errorf("mode None wrote rules in %s: %v", id, ours)
			}
		}

		// The node subnet's rule from the load balancer subnet removed (as a
		// user editing the list): the health checks and the traffic stop.
		reseed := func(ingress []ocicore.IngressSecurityRule) {
			if _, err := suite.sim.OCI().SeedNetwork(simoci.NetworkSeed{SecurityLists: []simoci.SecurityList{{
				ID: ociSecurityList, VCNID: ociVCN, CompartmentID: ociCompartment, DisplayName: "e2e-node-subnet",
				IngressSecurityRules: ingress, EgressSecurityRules: []ocicore.EgressSecurityRule{allTo("0.0.0.0/0")},
			}}}); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { reseed(ociNodeIngress()) })
		reseed(slices.DeleteFunc(ociNodeIngress(), func(r ocicore.IngressSecurityRule) bool { return *r.Source == ociLBCIDR }))
		waitRefused(t, url, 30*time.Second, "the node subnet no longer admits the load balancer subnet")
		reseed(ociNodeIngress())
		waitAnswers(t, url, 30*time.Second, "node")
	})

	t.Run("Frontend", func(t *testing.T) {
		const sel = "oci-fw-frontend"
		n := ociLBNode(t, sel)
		spec := lbServiceSpec("oci-fw-frontend", sel, 8084)
		fast(spec)
		spec.Annotations[annotations.OCILBSecurityListManagementMode.String()] = "Frontend"
		spec.Annotations[string(annotations.OCILBSubnet1)] = ociFrontendLBSubnet
		np := nodePort(spec, 8084)
		serve(t, n.PrivateIP, np, 200, "node")
		svc := createService(t, spec)
		url := fmt.Sprintf("http://%s:8084/", waitIngress(t, svc, 90*time.Second))
		waitAnswers(t, url, 30*time.Second, "node")
		svc = getService(t, svc)
		if ours, _ := securityList(t, ociFrontendLBList, string(svc.UID)); !slices.Equal(ours, []string{"in 0.0.0.0/0 6 8084-8084"}) {
			t.Errorf("Frontend rules in the LB subnet = %v, want only the listener's", ours)
		}
		if ours, _ := securityList(t, ociSecurityList, string(svc.UID)); len(ours) != 0 {
			t.Errorf("Frontend wrote the node subnet's list: %v", ours)
		}
		deleteService(t, svc)
		if ours, _ := securityList(t, ociFrontendLBList, string(svc.UID)); len(ours) != 0 {
			t.Errorf("rules left after the Service was deleted: %v", ours)
		}
	})

	t.Run("All", func(t *testing.T) {
		const sel = "oci-fw-all"
		var nodes []cloudsim.Instance
		for range 2 {
			ip := shardAddr(fmt.Sprintf("127.0.150.%d", 10+allNodeSeq.Add(1)))
			nodes = append(nodes, ociLBNodeWith(t, sel, func(in *cloudsim.Instance) { in.PrivateIP, in.SubnetID = ip, ociAllNodeSubnet }))
		}
		spec := lbServiceSpec("oci-fw-all", sel, 8085)
		fast(spec)
		spec.Annotations[annotations.OCILBSecurityListManagementMode.String()] = "All"
		spec.Annotations[string(annotations.OCILBSubnet1)] = ociAllLBSubnet
		np := nodePort(spec, 8085)
		for i, n := range nodes {
			serve(t, n.PrivateIP, np, 200, fmt.Sprintf("node-%d", i+1))
		}
		svc := createService(t, spec)
		url := fmt.Sprintf("http://%s:8085/", waitIngress(t, svc, 90*time.Second))
		waitAnswers(t, url, 30*time.Second, "node-1", "node-2")
		svc = getService(t, svc)
		// The NodePort for the traffic, kube-proxy's 10256 for the health checks.
		port := fmt.Sprintf("%d-%d", np, np)
		wantLB := []string{"in 0.0.0.0/0 6 8085-8085", "out " + ociAllNodeCIDR + " 6 10256-10256", "out " + ociAllNodeCIDR + " 6 " + port}
		wantNodes := []string{"in " + ociAllLBCIDR + " 6 10256-10256", "in " + ociAllLBCIDR + " 6 " + port}
		slices.Sort(wantLB)
		slices.Sort(wantNodes)
		if _, all := securityList(t, ociAllLBList, string(svc.UID)); !slices.Equal(sorted(all), wantLB) {
			t.Errorf("LB subnet's list = %v, want exactly %v", all, wantLB)
		}
		if _, all := securityList(t, ociAllNodeList, string(svc.UID)); !slices.Equal(sorted(all), wantNodes) {
			t.Errorf("node subnet's list = %v, want exactly %v", all, wantNodes)
		}
		deleteService(t, svc)
		for _, id := range []string{ociAllLBList, ociAllNodeList} {
			if _, all := securityList(t, id, string(svc.UID)); len(all) != 0 {
				t.Errorf("%s keeps %v after the Service was deleted", id, all)
			}
		}
	})
}

// deleteService deletes svc and waits until the CCM has released it.
func deleteService(t *testing.T, svc *corev1.Service) {
	t.Helper()
	if err := suite.cluster.Client.CoreV1().Services(svc.Namespace).Delete(context.Background(), svc.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitServiceGone(t, svc, 90*time.Second)
}

// allNodeSeq numbers the nodes of ociAllNodeSubnet.
var allNodeSeq atomic.Int32

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
