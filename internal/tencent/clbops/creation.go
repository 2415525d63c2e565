package clbops

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ccmkit/ccm/internal/lb/lbkit"
)

// Creation is what CreateLoadBalancer takes and nothing changes later
// (managed TKE's public network annotations and its extensiveParameters
// passthrough). The zero value asks for the API's defaults. A CLB the CCM
// created that differs from it is reported (Hooks.Warn), never
// modified: TKE documents these as applied at creation only, and an address
// family, an ISP or a zone cannot change in place.
type Creation struct {
	// InternetChargeType and InternetMaxBandwidthOut (Mbps; 0: the API's
	// default, 10) are InternetAccessible; BandwidthPackageSubType is its
	// BandwidthpkgSubType.
	InternetChargeType      string
	InternetMaxBandwidthOut int64
	BandwidthPackageSubType string
	BandwidthPackageID      string
	AddressIPVersion        string
	VipIsp                  string
	ZoneID                  string
	MasterZoneID            string
	SlaveZoneID             string
	// Tags are added to the CCM's own tags (the provider keeps their keys
	// out of ccmkit.io/).
	Tags map[string]string
}

// apply puts c into a create request, after the CCM's own fields.
func (c Creation) apply(req *clb.CreateLoadBalancerRequest) {
	str := func(v string) *string {
		if v == "" {
			return nil
		}
		return common.StringPtr(v)
	}
	if c.InternetChargeType != "" || c.InternetMaxBandwidthOut > 0 || c.BandwidthPackageSubType != "" {
		req.InternetAccessible = &clb.InternetAccessible{
			InternetChargeType:  str(c.InternetChargeType),
			BandwidthpkgSubType: str(c.BandwidthPackageSubType),
		}
		if c.InternetMaxBandwidthOut > 0 {
			req.InternetAccessible.InternetMaxBandwidthOut = common.Int64Ptr(c.InternetMaxBandwidthOut)
		}
	}
	req.BandwidthPackageId = str(c.BandwidthPackageID)
	req.AddressIPVersion = str(c.AddressIPVersion)
	req.VipIsp = str(c.VipIsp)
	req.ZoneId = str(c.ZoneID)
	req.MasterZoneId = str(c.MasterZoneID)
	req.SlaveZoneId = str(c.SlaveZoneID)
	for _, k := range slices.Sorted(maps.Keys(c.Tags)) {
		req.Tags = append(req.Tags, &clb.TagInfo{TagKey: common.StringPtr(k), TagValue: common.StringPtr(c.Tags[k])})
	}
}

// createdWith is what DescribeLoadBalancers tells of the creation-time
// fields; "" where the answer does not say.
type createdWith struct {
	chargeType, addressIPVersion, vipIsp string
	bandwidthOut                         int64 // 0: not said
}

func createdWithFromSDK(in *clb.LoadBalancer) createdWith {
	c := createdWith{
		addressIPVersion: deref(in.AddressIPVersion),
		vipIsp:           deref(in.VipIsp),
	}
	if na := in.NetworkAttributes; na != nil {
		c.chargeType = deref(na.InternetChargeType)
		c.bandwidthOut = deref(na.InternetMaxBandwidthOut)
	}
	return c
}

// drift lists how lb differs from what c asks for, one phrase per field,
// comparing only what c sets and the answer says. Zones, the bandwidth
// package and the extra tags are not compared: DescribeLoadBalancers
// reports zones by another shape, and tags may be edited on purpose.
func (c Creation) drift(lb *loadBalancer) []string {
	var out []string
	differ := func(field, want, have string) {
		if want != "" && have != "" && !strings.EqualFold(want, have) {
			out = append(out, fmt.Sprintf("%s is %s, not %s", field, have, want))
		}
	}
	differ("InternetChargeType", c.InternetChargeType, lb.createdWith.chargeType)
	if c.InternetMaxBandwidthOut > 0 && lb.createdWith.bandwidthOut > 0 && c.InternetMaxBandwidthOut != lb.createdWith.bandwidthOut {
		out = append(out, fmt.Sprintf("InternetMaxBandwidthOut is %d Mbps, not %d", lb.createdWith.bandwidthOut, c.InternetMaxBandwidthOut))
	}
	differ("AddressIPVersion", c.AddressIPVersion, lb.createdWith.addressIPVersion)
	differ("VipIsp", c.VipIsp, lb.createdWith.vipIsp)
	return out
}

// CreationDriftReason is the reason of the Warning Event on a Service
// whose creation-time annotations ask for something its CLB was not created
// with: the CLB is left as it is.
const CreationDriftReason = "CreationOnlySettingChanged"

// reportCreationDrift tells the pipeline (Hooks.Warn) how the Service's
// CLB differs from its creation-time settings, or that it does not (the
// zero Warning: it does not, or the CLB is adopted and they do not apply).
// The pipeline records a change once, so that a resync does not repeat it.
func (o *Ops) reportCreationDrift(uid types.UID, lb *loadBalancer, c Creation) {
	if o.hooks.Warn == nil {
		return
	}
	var w lbkit.Warning
	if !lb.adopted {
		if drift := c.drift(lb); len(drift) > 0 {
			w = lbkit.Warning{Reason: CreationDriftReason, Message: fmt.Sprintf("CLB %s was created with other settings than the Service's annotations now ask for, "+
				"and CLB applies them only at creation: %s. It was left as it is; delete and re-create the Service to apply them", lb.id, strings.Join(drift, "; "))}
		}
	}
	o.hooks.Warn(uid, w)
}
