package oci

import (
	"net/http"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	nlb "github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// TestNLBAssignedPrivateIPv4: a network load balancer created with
// assignedPrivateIpv4 lists it as its private address; an address outside
// the subnet, one the subnet reserves, or one taken is refused.
func TestNLBAssignedPrivateIPv4(t *testing.T) {
	e := newTestEnv(t, Options{WorkRequestLatency: 20 * time.Millisecond}, core.Config{})
	c := e.nlb()
	create := func(name, ip string) (nlb.CreateNetworkLoadBalancerResponse, error) {
		det := nlbDetails(name)
		det.AssignedPrivateIpv4 = common.String(ip)
		return c.CreateNetworkLoadBalancer(ctx(t), nlb.CreateNetworkLoadBalancerRequest{CreateNetworkLoadBalancerDetails: det})
	}
	const want = "10.0.200.17"
	created, err := create("assigned", want)
	if err != nil {
		t.Fatal(err)
	}
	waitNLBWorkRequest(t, c, *created.OpcWorkRequestId)
	got, err := c.GetNetworkLoadBalancer(ctx(t), nlb.GetNetworkLoadBalancerRequest{NetworkLoadBalancerId: created.Id})
	if err != nil {
		t.Fatal(err)
	}
	var private []string
	for _, ip := range got.IpAddresses {
		if !*ip.IsPublic {
			private = append(private, *ip.IpAddress)
		}
	}
	if len(private) != 1 || private[0] != want {
		t.Fatalf("private addresses %v, want [%s]", private, want)
	}
	for _, tc := range []struct{ name, ip string }{
		{"not IPv4", "10.0.200"},
		{"outside the subnet", "192.168.1.5"},
		{"the subnet's first", "10.0.0.0"},
		{"the subnet's second", "10.0.0.1"},
		{"the subnet's last", "10.0.255.255"},
		{"taken", want},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := create("refused", tc.ip)
			wantErr(t, err, http.StatusBadRequest, CodeInvalidParameter)
		})
	}
}
