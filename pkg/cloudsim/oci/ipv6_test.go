package oci

import (
	"net/http"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	nlb "github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

const otherSubnet = "ocid1.subnet.oc1..aaaaaaaaipv4only"

// ipv6Env has an IPv6-enabled default subnet and an IPv4-only other one.
func ipv6Env(t *testing.T) *testEnv {
	return newTestEnv(t, Options{WorkRequestLatency: 10 * time.Millisecond, Network: NetworkSeed{Subnets: []Subnet{
		{ID: DefaultSubnetID, IPv6CIDRBlocks: []string{"fd00:a:0:1::/64"}},
		{ID: otherSubnet, CIDRBlock: "10.0.200.0/24"},
	}}}, core.Config{})
}

func TestSubnetIPv6Seed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		blocks []string
		ok     bool
	}{
		{"one /64", []string{"2001:db8:0:1::/64"}, true},
		{"not /64", []string{"2001:db8::/56"}, false},
		{"not masked", []string{"2001:db8::1/64"}, false},
		{"IPv4", []string{"10.0.0.0/24"}, false},
		{"twice", []string{"fd00::/64", "fd00::/64"}, false},
		{"four", []string{"fd00:0:0:1::/64", "fd00:0:0:2::/64", "fd00:0:0:3::/64", "fd00:0:0:4::/64"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNetwork("us-ashburn-1")
			err := n.seed(NetworkSeed{Subnets: []Subnet{{ID: "ocid1.subnet.oc1..aaaaaaaav6", IPv6CIDRBlocks: tc.blocks}}})
			if (err == nil) != tc.ok {
				t.Errorf("seed %v: err %v, want ok %v", tc.blocks, err, tc.ok)
			}
		})
	}
}

// TestVnicIPv6AndListIpv6s: a VNIC in an IPv6 subnet has one address (the
// prefix and its IPv4 address), shown by GetVnic and by ListIpv6s by
// subnet, VNIC and address; a VNIC in an IPv4 subnet has none.
func TestVnicIPv6AndListIpv6s(t *testing.T) {
	e := ipv6Env(t)
	added := e.addInstances(core.Instance{Name: "a", PrivateIP: "10.0.1.5"}, core.Instance{Name: "b", PrivateIP: "10.0.1.6"},
		core.Instance{Name: "c", PrivateIP: "10.0.200.7", SubnetID: otherSubnet})
	nc := e.network()
	v, err := nc.GetVnic(ctx(t), ocicore.GetVnicRequest{VnicId: common.String(vnicID(added[0].OCID))})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Ipv6Addresses) != 1 || v.Ipv6Addresses[0] != "fd00:a:0:1::a00:105" {
		t.Errorf("ipv6Addresses %v, want [fd00:a:0:1::a00:105]", v.Ipv6Addresses)
	}
	if v, err := nc.GetVnic(ctx(t), ocicore.GetVnicRequest{VnicId: common.String(vnicID(added[2].OCID))}); err != nil || len(v.Ipv6Addresses) != 0 {
		t.Errorf("VNIC in an IPv4 subnet: %v %v, want no IPv6", v.Ipv6Addresses, err)
	}
	sn, err := nc.GetSubnet(ctx(t), ocicore.GetSubnetRequest{SubnetId: common.String(DefaultSubnetID)})
	if err != nil || *sn.Ipv6CidrBlock != "fd00:a:0:1::/64" || len(sn.Ipv6CidrBlocks) != 1 {
		t.Errorf("subnet: %v %v", sn.Ipv6CidrBlocks, err)
	}
	for _, tc := range []struct {
		name string
		req  ocicore.ListIpv6sRequest
		want []string
	}{
		{"by subnet", ocicore.ListIpv6sRequest{SubnetId: common.String(DefaultSubnetID)}, []string{"fd00:a:0:1::a00:105", "fd00:a:0:1::a00:106"}},
		{"by VNIC", ocicore.ListIpv6sRequest{VnicId: common.String(vnicID(added[1].OCID))}, []string{"fd00:a:0:1::a00:106"}},
		{"by address and subnet", ocicore.ListIpv6sRequest{SubnetId: common.String(DefaultSubnetID), IpAddress: common.String("fd00:a:0:1::a00:106")}, []string{"fd00:a:0:1::a00:106"}},
		{"IPv4 subnet", ocicore.ListIpv6sRequest{SubnetId: common.String(otherSubnet)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := nc.ListIpv6s(ctx(t), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ip := range resp.Items {
				got = append(got, *ip.IpAddress)
				if *ip.SubnetId == "" || *ip.VnicId == "" || ip.IpState != ocicore.Ipv6IpStateAssigned {
					t.Errorf("item %+v", ip)
				}
			}
			if len(got) != len(tc.want) || (len(got) > 0 && got[len(got)-1] != tc.want[len(tc.want)-1]) {
				t.Errorf("addresses %v, want %v", got, tc.want)
			}
		})
	}
	_, err = nc.ListIpv6s(ctx(t), ocicore.ListIpv6sRequest{IpAddress: common.String("fd00::1")})
	wantErr(t, err, http.StatusBadRequest, CodeMissingParameter)
}

// TestDualStackNLBModel: an IPV4_AND_IPV6 NLB lists an IPv4 and an IPv6
// address (the assigned one), takes IPV6 listeners and backend sets of
// IPv6 backends on the same port as the IPv4 ones; the mismatches and an
// IPv6 NLB in an IPv4 subnet are refused.
func TestDualStackNLBModel(t *testing.T) {
	e := ipv6Env(t)
	c := e.nlb()
	det := nlbDetails("dual", nlb.Backend{IpAddress: common.String("10.0.1.5"), Port: common.Int(30080)})
	det.NlbIpVersion, det.AssignedIpv6 = nlb.NlbIpVersionIpv4AndIpv6, common.String("fd00:a:0:1::99")
	det.BackendSets["TCP-80-IPv6"] = nlb.BackendSetDetails{IpVersion: nlb.IpVersionIpv6,
		HealthChecker: &nlb.HealthChecker{Protocol: nlb.HealthCheckProtocolsTcp, Port: common.Int(30080)},
		Backends:      []nlb.Backend{{IpAddress: common.String("fd00:a:0:1::a00:105"), Port: common.Int(30080)}}}
	det.Listeners["TCP-80-IPv6"] = nlb.ListenerDetails{Name: common.String("TCP-80-IPv6"), DefaultBackendSetName: common.String("TCP-80-IPv6"),
		Port: common.Int(80), Protocol: nlb.ListenerProtocolsTcp, IpVersion: nlb.IpVersionIpv6}
	created, err := c.CreateNetworkLoadBalancer(ctx(t), nlb.CreateNetworkLoadBalancerRequest{CreateNetworkLoadBalancerDetails: det})
	if err != nil {
		t.Fatal(err)
	}
	waitNLBWorkRequest(t, c, *created.OpcWorkRequestId)
	got, err := c.GetNetworkLoadBalancer(ctx(t), nlb.GetNetworkLoadBalancerRequest{NetworkLoadBalancerId: created.Id})
	if err != nil {
		t.Fatal(err)
	}
	versions := map[nlb.IpVersionEnum][]string{}
	for _, ip := range got.IpAddresses {
		if *ip.IsPublic {
			versions[ip.IpVersion] = append(versions[ip.IpVersion], *ip.IpAddress)
		}
	}
	if got.NlbIpVersion != nlb.NlbIpVersionIpv4AndIpv6 || len(versions[nlb.IpVersionIpv4]) != 1 || len(versions[nlb.IpVersionIpv6]) != 1 || versions[nlb.IpVersionIpv6][0] != "fd00:a:0:1::99" {
		t.Errorf("nlbIpVersion %s, public addresses %v", got.NlbIpVersion, versions)
	}
	if got.Listeners["TCP-80-IPv6"].IpVersion != nlb.IpVersionIpv6 || got.BackendSets["TCP-80"].IpVersion != nlb.IpVersionIpv4 {
		t.Errorf("listeners %+v backend sets %+v", got.Listeners, got.BackendSets)
	}

	refused := []struct {
		name string
		mod  func(*nlb.CreateNetworkLoadBalancerDetails)
	}{
		{"IPv6 in an IPv4 subnet", func(d *nlb.CreateNetworkLoadBalancerDetails) {
			d.SubnetId, d.NlbIpVersion = common.String(otherSubnet), nlb.NlbIpVersionIpv6
		}},
		{"assigned outside the prefix", func(d *nlb.CreateNetworkLoadBalancerDetails) {
			d.NlbIpVersion, d.AssignedIpv6 = nlb.NlbIpVersionIpv4AndIpv6, common.String("fd00:b::1")
		}},
		{"assigned taken", func(d *nlb.CreateNetworkLoadBalancerDetails) {
			d.NlbIpVersion, d.AssignedIpv6 = nlb.NlbIpVersionIpv4AndIpv6, common.String("fd00:a:0:1::99")
		}},
		{"assigned on IPV4", func(d *nlb.CreateNetworkLoadBalancerDetails) { d.AssignedIpv6 = common.String("fd00:a:0:1::98") }},
		{"IPV6 listener on an IPV4 NLB", func(d *nlb.CreateNetworkLoadBalancerDetails) {
			l := d.Listeners["TCP-80"]
			l.IpVersion = nlb.IpVersionIpv6
			d.Listeners["TCP-80"] = l
		}},
		{"IPv4 backend in an IPV6 set", func(d *nlb.CreateNetworkLoadBalancerDetails) {
			d.NlbIpVersion = nlb.NlbIpVersionIpv4AndIpv6
			bs := d.BackendSets["TCP-80"]
			bs.IpVersion = nlb.IpVersionIpv6
			d.BackendSets["TCP-80"] = bs
		}},
		{"listener and backend set versions differ", func(d *nlb.CreateNetworkLoadBalancerDetails) {
			d.NlbIpVersion = nlb.NlbIpVersionIpv4AndIpv6
			bs := d.BackendSets["TCP-80"]
			bs.IpVersion, bs.Backends = nlb.IpVersionIpv6, nil
			d.BackendSets["TCP-80"] = bs
		}},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			d := nlbDetails("refused", nlb.Backend{IpAddress: common.String("10.0.1.5"), Port: common.Int(30080)})
			tc.mod(&d)
			_, err := c.CreateNetworkLoadBalancer(ctx(t), nlb.CreateNetworkLoadBalancerRequest{CreateNetworkLoadBalancerDetails: d})
			wantErr(t, err, http.StatusBadRequest, CodeInvalidParameter)
		})
	}
}
