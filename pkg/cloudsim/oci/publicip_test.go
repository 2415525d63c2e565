package oci

import (
	"net/http"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	nlb "github.com/oracle/oci-go-sdk/v65/networkloadbalancer"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// TestReservedPublicIP: a reserved public IP is AVAILABLE, becomes the
// address of the load balancer that names it (ASSIGNED meanwhile, refused
// to a second one and to deletion), and is AVAILABLE with the same address
// again when that load balancer goes; a network load balancer takes it too.
func TestReservedPublicIP(t *testing.T) {
	e := newTestEnv(t, Options{WorkRequestLatency: 50 * time.Millisecond}, core.Config{})
	vn, lbc, nlbc := e.network(), e.lb(), e.nlb()

	_, err := vn.CreatePublicIp(ctx(t), ocicore.CreatePublicIpRequest{CreatePublicIpDetails: ocicore.CreatePublicIpDetails{
		CompartmentId: common.String(DefaultCompartmentID), Lifetime: ocicore.CreatePublicIpDetailsLifetimeEphemeral}})
	wantErr(t, err, http.StatusBadRequest, CodeInvalidParameter)

	created, err := vn.CreatePublicIp(ctx(t), ocicore.CreatePublicIpRequest{CreatePublicIpDetails: ocicore.CreatePublicIpDetails{
		CompartmentId: common.String(DefaultCompartmentID), Lifetime: ocicore.CreatePublicIpDetailsLifetimeReserved, DisplayName: common.String("web")}})
	if err != nil {
		t.Fatal(err)
	}
	pip := created.PublicIp
	if pip.Lifetime != ocicore.PublicIpLifetimeReserved || pip.LifecycleState != ocicore.PublicIpLifecycleStateAvailable ||
		pip.Scope != ocicore.PublicIpScopeRegion || *pip.DisplayName != "web" || pip.AssignedEntityId != nil {
		t.Fatalf("created %+v", pip)
	}
	byAddr := func() ocicore.PublicIp {
		t.Helper()
		resp, err := vn.GetPublicIpByIpAddress(ctx(t), ocicore.GetPublicIpByIpAddressRequest{
			GetPublicIpByIpAddressDetails: ocicore.GetPublicIpByIpAddressDetails{IpAddress: pip.IpAddress}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.PublicIp
	}
	if got := byAddr(); *got.Id != *pip.Id {
		t.Fatalf("by address: %s, want %s", *got.Id, *pip.Id)
	}
	_, err = vn.GetPublicIpByIpAddress(ctx(t), ocicore.GetPublicIpByIpAddressRequest{
		GetPublicIpByIpAddressDetails: ocicore.GetPublicIpByIpAddressDetails{IpAddress: common.String("203.0.113.9")}})
	wantErr(t, err, http.StatusNotFound, CodeNotAuthorizedOrNotFound)
	list, err := vn.ListPublicIps(ctx(t), ocicore.ListPublicIpsRequest{Scope: ocicore.ListPublicIpsScopeRegion,
		CompartmentId: common.String(DefaultCompartmentID), Lifetime: ocicore.ListPublicIpsLifetimeReserved})
	if err != nil || len(list.Items) != 1 || *list.Items[0].Id != *pip.Id {
		t.Fatalf("list: %+v, %v", list.Items, err)
	}

	// A Load Balancing load balancer takes it.
	det := lbDetails("with-reserved")
	det.ReservedIps = []loadbalancer.ReservedIp{{Id: pip.Id}}
	lb1, err := lbc.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: det})
	if err != nil {
		t.Fatal(err)
	}
	lbID := *waitLBWorkRequest(t, lbc, *lb1.OpcWorkRequestId).LoadBalancerId
	got, err := lbc.GetLoadBalancer(ctx(t), loadbalancer.GetLoadBalancerRequest{LoadBalancerId: &lbID})
	if err != nil {
		t.Fatal(err)
	}
	if ips := got.IpAddresses; len(ips) != 1 || *ips[0].IpAddress != *pip.IpAddress || !*ips[0].IsPublic ||
		ips[0].ReservedIp == nil || *ips[0].ReservedIp.Id != *pip.Id {
		t.Fatalf("load balancer addresses %+v, want the reserved %s", ips, *pip.IpAddress)
	}
	if p := byAddr(); p.LifecycleState != ocicore.PublicIpLifecycleStateAssigned || p.AssignedEntityType != ocicore.PublicIpAssignedEntityTypePrivateIp {
		t.Fatalf("assigned public IP: %+v", p)
	}

	// Taken: not for a second load balancer, not deletable; never for a
	// private one.
	det2 := lbDetails("second")
	det2.ReservedIps = []loadbalancer.ReservedIp{{Id: pip.Id}}
	_, err = lbc.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: det2})
	wantErr(t, err, http.StatusBadRequest, CodeInvalidParameter)
	det2.IsPrivate = common.Bool(true)
	_, err = lbc.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: det2})
	wantErr(t, err, http.StatusBadRequest, CodeInvalidParameter)
	det2 = lbDetails("unknown")
	det2.ReservedIps = []loadbalancer.ReservedIp{{Id: common.String(core.NewOCID("publicip"))}}
	_, err = lbc.CreateLoadBalancer(ctx(t), loadbalancer.CreateLoadBalancerRequest{CreateLoadBalancerDetails: det2})
	wantErr(t, err, http.StatusBadRequest, CodeRelatedResourceNotFound)
	_, err = vn.DeletePublicIp(ctx(t), ocicore.DeletePublicIpRequest{PublicIpId: pip.Id})
	wantErr(t, err, http.StatusConflict, CodeIncorrectState)

	// Deleting the load balancer returns it, same address.
	del, err := lbc.DeleteLoadBalancer(ctx(t), loadbalancer.DeleteLoadBalancerRequest{LoadBalancerId: &lbID})
	if err != nil {
		t.Fatal(err)
	}
	waitLBWorkRequest(t, lbc, *del.OpcWorkRequestId)
	if p := byAddr(); p.LifecycleState != ocicore.PublicIpLifecycleStateAvailable || p.AssignedEntityId != nil {
		t.Fatalf("after the load balancer's deletion: %+v", p)
	}

	// A network load balancer takes it next.
	nd := nlbDetails("nlb-with-reserved")
	nd.ReservedIps = []nlb.ReservedIp{{Id: pip.Id}}
	n, err := nlbc.CreateNetworkLoadBalancer(ctx(t), nlb.CreateNetworkLoadBalancerRequest{CreateNetworkLoadBalancerDetails: nd})
	if err != nil {
		t.Fatal(err)
	}
	waitNLBWorkRequest(t, nlbc, *n.OpcWorkRequestId)
	gn, err := nlbc.GetNetworkLoadBalancer(ctx(t), nlb.GetNetworkLoadBalancerRequest{NetworkLoadBalancerId: n.Id})
	if err != nil {
		t.Fatal(err)
	}
	if ip := nlbPublicIP(t, gn.IpAddresses); ip != *pip.IpAddress {
		t.Fatalf("network load balancer's public address %s, want the reserved %s", ip, *pip.IpAddress)
	}
	dn, err := nlbc.DeleteNetworkLoadBalancer(ctx(t), nlb.DeleteNetworkLoadBalancerRequest{NetworkLoadBalancerId: n.Id})
	if err != nil {
		t.Fatal(err)
	}
	waitNLBWorkRequest(t, nlbc, *dn.OpcWorkRequestId)
	if _, err := vn.DeletePublicIp(ctx(t), ocicore.DeletePublicIpRequest{PublicIpId: pip.Id}); err != nil {
		t.Fatal(err)
	}
	_, err = vn.GetPublicIp(ctx(t), ocicore.GetPublicIpRequest{PublicIpId: pip.Id})
	wantErr(t, err, http.StatusNotFound, CodeNotAuthorizedOrNotFound)
}
