package oci

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	nlb "github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/dataplane"
)

// The firewall tests' network: a VCN with a load balancer subnet and a
// node subnet, each with its own security list, as a user lays them out.
const (
	fwVCN        = "ocid1.vcn.oc1..aaaaaaaafwvcn"
	fwLBSubnet   = "ocid1.subnet.oc1..aaaaaaaafwlb"
	fwNodeSubnet = "ocid1.subnet.oc1..aaaaaaaafwnodes"
	fwLBList     = "ocid1.securitylist.oc1..aaaaaaaafwlb"
	fwNodeList   = "ocid1.securitylist.oc1..aaaaaaaafwnodes"
	fwLBCIDR     = "127.0.250.0/24"
	fwNodeCIDR   = "127.0.3.0/24"
)

func tcpIn(src string, lo, hi int, stateless bool) ocicore.IngressSecurityRule {
	return ocicore.IngressSecurityRule{Protocol: common.String("6"), Source: common.String(src), IsStateless: common.Bool(stateless),
		TcpOptions: &ocicore.TcpOptions{DestinationPortRange: &ocicore.PortRange{Min: common.Int(lo), Max: common.Int(hi)}}}
}

func tcpOut(dst string, lo, hi int, stateless bool) ocicore.EgressSecurityRule {
	return ocicore.EgressSecurityRule{Protocol: common.String("6"), Destination: common.String(dst), IsStateless: common.Bool(stateless),
		TcpOptions: &ocicore.TcpOptions{DestinationPortRange: &ocicore.PortRange{Min: common.Int(lo), Max: common.Int(hi)}}}
}

func firewallEnv(t *testing.T) *testEnv {
	t.Helper()
	plane, err := dataplane.New(dataplane.Config{HealthCheckInterval: 40 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(plane.Close)
	return newPlaneEnv(t, plane, Options{WorkRequestLatency: 10 * time.Millisecond, Network: NetworkSeed{
		VCNs: []VCN{{ID: fwVCN, CIDRBlock: "127.0.0.0/16"}},
		SecurityLists: []SecurityList{
			{ID: fwLBList, VCNID: fwVCN,
				IngressSecurityRules: []ocicore.IngressSecurityRule{tcpIn("0.0.0.0/0", 80, 80, false)},
				EgressSecurityRules:  []ocicore.EgressSecurityRule{tcpOut(fwNodeCIDR, 1, 65535, false)}},
			{ID: fwNodeList, VCNID: fwVCN,
				IngressSecurityRules: []ocicore.IngressSecurityRule{tcpIn(fwLBCIDR, 1, 65535, false)},
				EgressSecurityRules:  []ocicore.EgressSecurityRule{{Protocol: common.String("all"), Destination: common.String("0.0.0.0/0")}}},
		},
		Subnets: []Subnet{
			{ID: fwLBSubnet, VCNID: fwVCN, CIDRBlock: fwLBCIDR, SecurityListIDs: []string{fwLBList}},
			{ID: fwNodeSubnet, VCNID: fwVCN, CIDRBlock: fwNodeCIDR, SecurityListIDs: []string{fwNodeList}},
		},
	}}, core.Config{})
}

// setList replaces a security list's rules through the API (nil keeps).
func setList(t *testing.T, e *testEnv, id string, in []ocicore.IngressSecurityRule, eg []ocicore.EgressSecurityRule) {
	t.Helper()
	if _, err := e.network().UpdateSecurityList(ctx(t), ocicore.UpdateSecurityListRequest{SecurityListId: common.String(id),
		UpdateSecurityListDetails: ocicore.UpdateSecurityListDetails{IngressSecurityRules: in, EgressSecurityRules: eg}}); err != nil {
		t.Fatal(err)
	}
}

func getFrom(src, url string) (string, error) {
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}).DialContext}}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// flows waits until GETs through url answer name (want) or fail (!want).
func flows(t *testing.T, what, url string, want bool) {
	t.Helper()
	eventually(t, 5*time.Second, func() error {
		body, err := getFrom("127.0.0.1", url)
		switch {
		case want && (err != nil || body != "node"):
			return errorf("%s: want an answer, got %q %v", what, body, err)
		case !want && err == nil:
			return errorf("%s: want no answer, got %q", what, body)
		}
		return nil
	})
}

// TestSecurityRulesCarryLBTraffic drives the rules through the API and
// watches traffic through an LB's VIP follow them.
func TestSecurityRulesCarryLBTraffic(t *testing.T) {
	e := firewallEnv(t)
	be := backend(t, "127.0.3.11", "node")
	node := e.addInstances(core.Instance{Name: "node", PrivateIP: be.Addr().String(), VpcID: fwVCN, SubnetID: fwNodeSubnet})[0]
	d := lbDetails("fw")
	d.SubnetIds = []string{fwLBSubnet}
	d.BackendSets["TCP-80"] = loadbalancer.BackendSetDetails{Policy: common.String("ROUND_ROBIN"),
		HealthChecker: &loadbalancer.HealthCheckerDetails{Protocol: common.String("TCP"), Retries: common.Int(1)},
		Backends:      []loadbalancer.BackendDetails{{IpAddress: common.String(be.Addr().String()), Port: common.Int(int(be.Port()))}}}
	c := e.lb()
	created, err := c.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: d})
	if err != nil {
		t.Fatal(err)
	}
	wr := waitLBWorkRequest(t, c, *created.OpcWorkRequestId)
	got, err := c.GetLoadBalancer(ctx(t), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: wr.LoadBalancerId})
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://%s:80/", *got.IpAddresses[0].IpAddress)
	flows(t, "rules for the listener, to the nodes and from the LB subnet", url, true)

	lbIn := []ocicore.IngressSecurityRule{tcpIn("0.0.0.0/0", 80, 80, false)}
	nodeIn := []ocicore.IngressSecurityRule{tcpIn(fwLBCIDR, 1, 65535, false)}
	steps := []struct {
		name   string
		apply  func()
		flows  bool
		reason string
	}{
		{"no listener rule", func() { setList(t, e, fwLBList, []ocicore.IngressSecurityRule{tcpIn("0.0.0.0/0", 81, 90, false)}, nil) }, false, ""},
		{"listener rule back", func() { setList(t, e, fwLBList, lbIn, nil) }, true, ""},
		{"no rule from the LB subnet", func() {
			setList(t, e, fwNodeList, []ocicore.IngressSecurityRule{tcpIn("10.0.0.0/8", 1, 65535, false)}, nil)
		}, false, "no ingress rule of instance"},
		{"node rule back", func() { setList(t, e, fwNodeList, nodeIn, nil) }, true, ""},
		{"no egress from the LB subnet", func() {
			setList(t, e, fwLBList, nil, []ocicore.EgressSecurityRule{tcpOut("10.0.0.0/8", 1, 65535, false)})
		}, false, "no egress rule"},
		{"egress back", func() {
			setList(t, e, fwLBList, nil, []ocicore.EgressSecurityRule{tcpOut(fwNodeCIDR, 1, 65535, false)})
		}, true, ""},
		// Stateless: the replies need their own rule, over the ephemeral ports.
		{"stateless node ingress", func() {
			setList(t, e, fwNodeList, []ocicore.IngressSecurityRule{tcpIn(fwLBCIDR, 1, 65535, true)}, []ocicore.EgressSecurityRule{})
		}, false, "no egress rule allows the replies"},
		{"stateless reply rule", func() {
			setList(t, e, fwNodeList, nil, []ocicore.EgressSecurityRule{tcpOut(fwLBCIDR, 1024, 65535, true)})
		}, true, ""},
	}
	for _, s := range steps {
		s.apply()
		flows(t, s.name, url, s.flows)
		if s.reason != "" {
			st, _ := e.d.DataPlane(*wr.LoadBalancerId)
			found := strings.Contains(fmt.Sprint(st), s.reason)
			if !found {
				t.Errorf("%s: the data plane status does not say %q: %+v", s.name, s.reason, st.Listeners)
			}
		}
	}

	// NSGs: the node list admits nothing; an NSG on the node's VNIC
	// naming the LB's NSG does.
	vn := e.network()
	mk := func(name string) string {
		r, err := vn.CreateNetworkSecurityGroup(ctx(t), ocicore.CreateNetworkSecurityGroupRequest{CreateNetworkSecurityGroupDetails: ocicore.CreateNetworkSecurityGroupDetails{
			CompartmentId: common.String(DefaultCompartmentID), VcnId: common.String(fwVCN), DisplayName: common.String(name)}})
		if err != nil {
			t.Fatal(err)
		}
		return *r.Id
	}
	lbNSG, nodeNSG := mk("lb"), mk("nodes")
	if _, err := vn.AddNetworkSecurityGroupSecurityRules(ctx(t), ocicore.AddNetworkSecurityGroupSecurityRulesRequest{NetworkSecurityGroupId: common.String(nodeNSG),
		AddNetworkSecurityGroupSecurityRulesDetails: ocicore.AddNetworkSecurityGroupSecurityRulesDetails{SecurityRules: []ocicore.AddSecurityRuleDetails{{
			Direction: ocicore.AddSecurityRuleDetailsDirectionIngress, Protocol: common.String("6"),
			Source: common.String(lbNSG), SourceType: ocicore.AddSecurityRuleDetailsSourceTypeNetworkSecurityGroup,
		}}}}); err != nil {
		t.Fatal(err)
	}
	setList(t, e, fwNodeList, []ocicore.IngressSecurityRule{}, []ocicore.EgressSecurityRule{})
	flows(t, "no node rule at all", url, false)
	if _, err := vn.UpdateVnic(ctx(t), ocicore.UpdateVnicRequest{VnicId: common.String(vnicID(node.OCID)),
		UpdateVnicDetails: ocicore.UpdateVnicDetails{NsgIds: []string{nodeNSG}}}); err != nil {
		t.Fatal(err)
	}
	flows(t, "the node NSG names the LB NSG, which the LB is not in", url, false)

	// A second LB, in lbNSG: its address is a member.
	d2 := d
	d2.DisplayName = common.String("fw-nsg")
	d2.NetworkSecurityGroupIds = []string{lbNSG}
	created2, err := c.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: d2})
	if err != nil {
		t.Fatal(err)
	}
	wr2 := waitLBWorkRequest(t, c, *created2.OpcWorkRequestId)
	got2, err := c.GetLoadBalancer(ctx(t), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: wr2.LoadBalancerId})
	if err != nil {
		t.Fatal(err)
	}
	url2 := fmt.Sprintf("http://%s:80/", *got2.IpAddresses[0].IpAddress)
	flows(t, "the LB in the NSG the node admits", url2, true)
	flows(t, "the other LB still denied", url, false)

	// A rule that names a deleted NSG stays, with isValid false
	// (SecurityRule.IsValid: "changes to `False` if that network security
	// group is deleted"), and matches nothing: the data plane skips it even
	// while the NSG it names still had members (issue 32 item 3).
	e.d.nsgs.mu.Lock()
	e.d.nsgs.invalidateLocked(lbNSG)
	e.d.nsgs.mu.Unlock()
	flows(t, "the node's rule naming the LB's NSG is invalid", url2, false)
	detach, err := c.UpdateNetworkSecurityGroups(ctx(t), loadbalancer.UpdateNetworkSecurityGroupsRequest{LoadBalancerId: wr2.LoadBalancerId,
		UpdateNetworkSecurityGroupsDetails: loadbalancer.UpdateNetworkSecurityGroupsDetails{NetworkSecurityGroupIds: []string{}}})
	if err != nil {
		t.Fatal(err)
	}
	waitLBWorkRequest(t, c, *detach.OpcWorkRequestId)
	if _, err := vn.DeleteNetworkSecurityGroup(ctx(t), ocicore.DeleteNetworkSecurityGroupRequest{NetworkSecurityGroupId: common.String(lbNSG)}); err != nil {
		t.Fatalf("deleting an NSG that another NSG's rule names: %v", err)
	}
	rules, err := vn.ListNetworkSecurityGroupSecurityRules(ctx(t), ocicore.ListNetworkSecurityGroupSecurityRulesRequest{NetworkSecurityGroupId: common.String(nodeNSG)})
	if err != nil || len(rules.Items) != 1 || rules.Items[0].IsValid == nil || *rules.Items[0].IsValid || deref(rules.Items[0].Source) != lbNSG {
		t.Fatalf("the node NSG's rules after the LB NSG's deletion: %+v %v", rules.Items, err)
	}
	flows(t, "after the LB NSG's deletion", url2, false)

	vnic, err := vn.GetVnic(ctx(t), ocicore.GetVnicRequest{VnicId: common.String(vnicID(node.OCID))})
	if err != nil || len(vnic.NsgIds) != 1 || vnic.NsgIds[0] != nodeNSG {
		t.Fatalf("GetVnic nsgIds: %v %v", vnic.NsgIds, err)
	}
	_, err = vn.DeleteNetworkSecurityGroup(ctx(t), ocicore.DeleteNetworkSecurityGroupRequest{NetworkSecurityGroupId: common.String(nodeNSG)})
	wantErr(t, err, http.StatusConflict, CodeIncorrectState)
}

// An NLB whose backend set preserves the source shows the client to the
// node: the node's rules must admit the clients, while health checks come
// from the NLB's subnet.
func TestNLBPreservedSourceNeedsClientRule(t *testing.T) {
	e := firewallEnv(t)
	be := backend(t, "127.0.3.12", "node")
	node := e.addInstances(core.Instance{Name: "node", PrivateIP: be.Addr().String(), VpcID: fwVCN, SubnetID: fwNodeSubnet})[0]
	d := nlbDetails("fw-nlb", nlb.Backend{TargetId: common.String(node.OCID), Port: common.Int(int(be.Port()))})
	d.SubnetId = common.String(fwLBSubnet)
	d.BackendSets["TCP-80"] = nlb.BackendSetDetails{Policy: nlb.NetworkLoadBalancingPolicyFiveTuple, IsPreserveSource: common.Bool(true),
		HealthChecker: &nlb.HealthChecker{Protocol: nlb.HealthCheckProtocolsTcp, Retries: common.Int(1)}, Backends: d.BackendSets["TCP-80"].Backends}
	c := e.nlb()
	created, err := c.CreateNetworkLoadBalancer(ctx(t), nlb.CreateNetworkLoadBalancerRequest{CreateNetworkLoadBalancerDetails: d})
	if err != nil {
		t.Fatal(err)
	}
	waitNLBWorkRequest(t, c, *created.OpcWorkRequestId)
	got, err := c.GetNetworkLoadBalancer(ctx(t), nlb.GetNetworkLoadBalancerRequest{NetworkLoadBalancerId: created.Id})
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://%s:80/", nlbPublicIP(t, got.IpAddresses))
	eventually(t, 5*time.Second, func() error {
		st, _ := e.d.DataPlane(*created.Id)
		if len(st.Listeners) != 1 || st.Listeners[0].HealthyTargets != 1 {
			return errorf("the health check from the NLB subnet must pass: %+v", st.Listeners)
		}
		return nil
	})
	flows(t, "clients, whom only the LB subnet rule does not admit", url, false)
	// Even a stateless rule: NLB backends' rules count as stateful.
	setList(t, e, fwNodeList, []ocicore.IngressSecurityRule{tcpIn(fwLBCIDR, 1, 65535, false), tcpIn("127.0.0.1/32", 1, 65535, true)}, nil)
	flows(t, "a rule for the clients", url, true)
}

func TestLBPrivateAddr(t *testing.T) {
	for _, cidr := range []string{"10.0.0.0/16", "127.0.250.0/24", "10.1.2.0/29", "10.1.2.4/30"} {
		p := netip.MustParsePrefix(cidr)
		for i := range 50 {
			a := lbPrivateAddr(p, fmt.Sprint("lb", i))
			if !p.Contains(a) {
				t.Fatalf("%s: %s outside", cidr, a)
			}
			if p.Bits() < 30 && (a == p.Addr() || a == p.Addr().Next()) {
				t.Fatalf("%s: %s is reserved", cidr, a)
			}
		}
	}
}
