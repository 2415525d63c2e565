package lbops

import (
	"context"
	"fmt"

	"github.com/oracle/oci-go-sdk/v65/core"

	"github.com/ccmkit/ccm/internal/oci/ocierr"
)

// Reserved public IPs (issue 14 item 4). spec.loadBalancerIP names the
// address of a reserved public IP; the load balancer (LB or NLB) is created
// with it (reservedIps) and keeps it for life, as with the public OCI CCM,
// which looks the address up with GetPublicIpByIpAddress and accepts only
// an AVAILABLE one. OCI cannot change a load balancer's reserved IP, so a
// later change of loadBalancerIP is reported (reservedIPDiff), not applied.

// resolveReservedIP looks d.LoadBalancerIP up just before the creation and
// records its public IP's OCID. The errors name the address and say what
// to do: they end up in the Service's Events.
func (o *Ops) resolveReservedIP(ctx context.Context, d *Desired) error {
	ip := d.LoadBalancerIP
	d.reservedIPID = ""
	if ip == "" {
		return nil
	}
	resp, err := o.net.GetPublicIpByIpAddress(ctx, core.GetPublicIpByIpAddressRequest{
		GetPublicIpByIpAddressDetails: core.GetPublicIpByIpAddressDetails{IpAddress: &ip}})
	if ocierr.IsNotFound(err) {
		return fmt.Errorf("spec.loadBalancerIP %s is not a public IP of this tenancy in the region "+
			"(GetPublicIpByIpAddress: not found): reserve one (CreatePublicIp, lifetime RESERVED) and name its address, or clear spec.loadBalancerIP", ip)
	}
	if err != nil {
		return ocierr.Wrap("GetPublicIpByIpAddress", ip, err)
	}
	p := resp.PublicIp
	switch {
	case p.Lifetime != core.PublicIpLifetimeReserved:
		return fmt.Errorf("spec.loadBalancerIP %s is an %s public IP (%s); only a RESERVED public IP can be given to a load balancer",
			ip, p.Lifetime, deref(p.Id))
	case p.LifecycleState != core.PublicIpLifecycleStateAvailable:
		return fmt.Errorf("spec.loadBalancerIP %s: reserved public IP %s is %s (assigned to %s %s), not AVAILABLE; "+
			"free it or name another one", ip, deref(p.Id), p.LifecycleState, p.AssignedEntityType, deref(p.AssignedEntityId))
	}
	d.reservedIPID = deref(p.Id)
	return nil
}

// reservedIPDiff says how the load balancer's reserved public IP differs
// from spec.loadBalancerIP; "" when they agree.
func reservedIPDiff(d *Desired, a *actual) string {
	var have string
	for _, ip := range a.IPs {
		if ip.Reserved && ip.Public {
			have = ip.IP
		}
	}
	switch {
	case have == d.LoadBalancerIP:
		return ""
	case have == "":
		return fmt.Sprintf("spec.loadBalancerIP is %s but the load balancer was created without a reserved IP", d.LoadBalancerIP)
	case d.LoadBalancerIP == "":
		return fmt.Sprintf("the load balancer holds reserved public IP %s but spec.loadBalancerIP is empty", have)
	}
	return fmt.Sprintf("the load balancer's reserved public IP is %s but spec.loadBalancerIP is %s", have, d.LoadBalancerIP)
}
