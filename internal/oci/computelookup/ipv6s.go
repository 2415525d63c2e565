package computelookup

import (
	"context"
	"fmt"

	"github.com/oracle/oci-go-sdk/v65/common"
	"github.com/oracle/oci-go-sdk/v65/core"

	"github.com/ccmkit/ccm/internal/oci/ocierr"
)

// subnetIPv6s lists a subnet's IPv6 addresses, through every page, and
// returns them by VNIC, in the listing's order. ListIpv6s filters by
// subnet (core.ListIpv6sRequest.SubnetId), so the batched path reads the
// IPv6 addresses of every VNIC of a subnet in PageSize-sized pages: one
// more call per subnet, none per node. A subnet without IPv6 answers an
// empty list. Only ASSIGNED addresses (ipState, core/ipv6.go: "If an IP
// address is assigned to a VNIC it is ASSIGNED") in lifecycle AVAILABLE
// count; answers without ipState (older API versions) are taken as
// assigned when they name a VNIC.
func (r *Reader) subnetIPv6s(ctx context.Context, subnet string) (map[string][]string, error) {
	req := core.ListIpv6sRequest{SubnetId: &subnet, Limit: common.Int(PageSize)}
	out := map[string][]string{}
	for range maxPages {
		resp, err := r.network.ListIpv6s(ctx, req)
		if err != nil {
			return nil, ocierr.Wrap("ListIpv6s", "subnet "+subnet, err)
		}
		for _, ip := range resp.Items {
			vnic, addr := deref(ip.VnicId), deref(ip.IpAddress)
			if vnic == "" || addr == "" || ip.LifecycleState != core.Ipv6LifecycleStateAvailable ||
				(ip.IpState != "" && ip.IpState != core.Ipv6IpStateAssigned) {
				continue
			}
			out[vnic] = append(out[vnic], addr)
		}
		if resp.OpcNextPage == nil || *resp.OpcNextPage == "" {
			return out, nil
		}
		req.Page = resp.OpcNextPage
	}
	return nil, fmt.Errorf("OCI ListIpv6s subnet %s: more than %d pages", subnet, maxPages)
}
