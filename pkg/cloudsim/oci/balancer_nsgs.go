package oci

import (
	"net/http"
	"slices"

	"github.com/oracle/oci-go-sdk/v65/loadbalancer"
	nlb "github.com/oracle/oci-go-sdk/v65/networkloadbalancer"
)

// UpdateNetworkSecurityGroups of both load balancing services: "this list
// replaces the existing list", and an empty one "removes all of the load
// balancer's NSG associations" (UpdateNetworkSecurityGroupsDetails, in
// loadbalancer and networkloadbalancer). The NSGs must exist in the load
// balancer's VCN and number at most MaxNSGs, as at creation. The change is
// a work request; the data plane's firewall follows when it succeeds
// (syncPlaneLocked publishes the new membership).
func (d *Dialect) routeBalancerNSGs() {
	d.mux.Handle("PUT "+PrefixLoadBalancer+"/loadBalancers/{loadBalancerId}/networkSecurityGroups",
		d.route("loadbalancer", "UpdateNetworkSecurityGroups", true, d.updateLBNSGs))
	d.mux.Handle("PUT "+PrefixNLB+"/networkLoadBalancers/{nlbId}/networkSecurityGroups",
		d.route("networkloadbalancer", nlbPrefix+"UpdateNetworkSecurityGroups", true, d.updateNLBNSGs))
}

func (d *Dialect) updateLBNSGs(c *call) (*reply, error) {
	id, err := pathID(c, "loadBalancerId", "loadbalancer")
	if err != nil {
		return nil, err
	}
	var req loadbalancer.UpdateNetworkSecurityGroupsDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	// The LB work request's type is the operation's name, as for the
	// other LB changes cloudsim runs (cloudsim's choice).
	return d.setBalancerNSGs(c, kindLB, id, "UpdateNetworkSecurityGroups", "", req.NetworkSecurityGroupIds)
}

func (d *Dialect) updateNLBNSGs(c *call) (*reply, error) {
	id, err := nlbID(c)
	if err != nil {
		return nil, err
	}
	var req nlb.UpdateNetworkSecurityGroupsDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	return d.setBalancerNSGs(c, kindNLB, id, "", string(nlb.OperationTypeUpdateNsgs), req.NetworkSecurityGroupIds)
}

func (d *Dialect) setBalancerNSGs(c *call, kind, id, op, nlbOp string, ids []string) (*reply, error) {
	if len(ids) > MaxNSGs {
		return nil, Errorf(http.StatusBadRequest, CodeLimitExceeded, "A %s takes at most %d network security groups, got %d.", kindName(kind), MaxNSGs, len(ids))
	}
	return d.mutate(c, kind, id, op, nlbOp, "UPDATED", func(b *balancer) (change, error) {
		if len(b.subnetIDs) > 0 {
			if err := d.checkBalancerNSGs(b.subnetIDs[0], ids); err != nil {
				return nil, err
			}
		}
		return func(b *balancer) error {
			b.nsgIDs = slices.Clone(ids)
			return nil
		}, nil
	})
}
