package tencent

import (
	"slices"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
)

// The creation-time network settings of a load balancer, as the SDK's
// model comments document them (clb v20180317 models.go:
// CreateLoadBalancerRequestParams and InternetAccessible).
var (
	// InternetAccessible.InternetChargeType: "TRAFFIC_POSTPAID_BY_HOUR 按流量
	// 按小时后计费 ; BANDWIDTH_POSTPAID_BY_HOUR 按带宽按小时后计费 ...;
	// BANDWIDTH_PACKAGE 按带宽包计费;BANDWIDTH_PREPAID按带宽预付费".
	clbChargeTypes = []string{"TRAFFIC_POSTPAID_BY_HOUR", "BANDWIDTH_POSTPAID_BY_HOUR", "BANDWIDTH_PACKAGE", "BANDWIDTH_PREPAID"}
	// InternetAccessible.BandwidthpkgSubType.
	clbBandwidthPkgSubTypes = []string{"SINGLEISP", "BGP", "HIGH_QUALITY_BGP", "SINGLEISP_CMCC", "SINGLEISP_CTCC", "SINGLEISP_CUCC"}
	// VipIsp: BGP by default; CMCC, CUCC or CTCC (static single-line) "网络
	// 计费模式只能使用按带宽包计费(BANDWIDTH_PACKAGE)".
	clbVipIsps = []string{"BGP", "CMCC", "CUCC", "CTCC"}
)

const (
	// clbMaxBandwidthOut: "对于公网属性的共享型和独占型 CLB 实例，最大出带宽的
	// 范围为1Mbps-2048Mbps" (InternetAccessible.InternetMaxBandwidthOut);
	// cloudsim's load balancers are shared ones.
	clbMaxBandwidthOut = 2048
	// clbDefaultBandwidthOut: "调用CreateLoadBalancer创建LB时不指定此参数则
	// 设置为默认值10Mbps" (same comment).
	clbDefaultBandwidthOut = 10
	// clbDefaultChargeType is cloudsim's choice: the API does not document
	// the default, and TRAFFIC_POSTPAID_BY_HOUR is the mode every account
	// has (BANDWIDTH_POSTPAID_BY_HOUR is "国际站用户不支持").
	clbDefaultChargeType = "TRAFFIC_POSTPAID_BY_HOUR"
)

// clbInternet is what a public load balancer was created with; the zero
// value for a private one, where InternetAccessible "仅对内网属性的性能容量型
// 实例和公网属性的所有实例生效" does not apply to cloudsim's shared ones.
type clbInternet struct {
	chargeType, vipIsp, bandwidthPkgSubType, bandwidthPackageID string
	bandwidthOut                                                int64
	zoneID, masterZoneID, slaveZoneID                           string
}

// checkInternet validates the network fields of a create request of type
// typ. The error codes are the SDK's (errors.go: InvalidParameterValue,
// InvalidParameterValue.Range, InvalidParameter); which one the cloud
// returns for each case is not documented, so the choice is cloudsim's.
func checkInternet(req *clb.CreateLoadBalancerRequestParams, typ string) (clbInternet, *Error) {
	var in clbInternet
	zones := ptrStr(req.ZoneId) + ptrStr(req.MasterZoneId) + ptrStr(req.SlaveZoneId)
	if typ != lbTypeOpen {
		// "仅适用于公网且IP版本为IPv4的负载均衡" (ZoneId, MasterZoneId,
		// SlaveZoneId); "仅适用于公网负载均衡" (VipIsp).
		if zones != "" || ptrStr(req.VipIsp) != "" {
			return in, Errorf("InvalidParameter", "`ZoneId`, `MasterZoneId`, `SlaveZoneId` and `VipIsp` apply to OPEN (public) load balancers only.")
		}
		return in, nil
	}
	in = clbInternet{chargeType: clbDefaultChargeType, bandwidthOut: clbDefaultBandwidthOut, vipIsp: "BGP",
		zoneID: ptrStr(req.ZoneId), masterZoneID: ptrStr(req.MasterZoneId), slaveZoneID: ptrStr(req.SlaveZoneId),
		bandwidthPackageID: ptrStr(req.BandwidthPackageId)}
	if ia := req.InternetAccessible; ia != nil {
		if v := ptrStr(ia.InternetChargeType); v != "" {
			if !slices.Contains(clbChargeTypes, v) {
				return in, Errorf("InvalidParameterValue", "`InternetAccessible.InternetChargeType` must be one of %v, got `%s`.", clbChargeTypes, v)
			}
			in.chargeType = v
		}
		if ia.InternetMaxBandwidthOut != nil {
			if bw := *ia.InternetMaxBandwidthOut; bw < 1 || bw > clbMaxBandwidthOut {
				return in, Errorf("InvalidParameterValue.Range", "`InternetAccessible.InternetMaxBandwidthOut` must be 1-%d Mbps, got %d.", clbMaxBandwidthOut, bw)
			}
			in.bandwidthOut = *ia.InternetMaxBandwidthOut
		}
		if v := ptrStr(ia.BandwidthpkgSubType); v != "" {
			if !slices.Contains(clbBandwidthPkgSubTypes, v) {
				return in, Errorf("InvalidParameterValue", "`InternetAccessible.BandwidthpkgSubType` must be one of %v, got `%s`.", clbBandwidthPkgSubTypes, v)
			}
			in.bandwidthPkgSubType = v
		}
	}
	if v := ptrStr(req.VipIsp); v != "" {
		if !slices.Contains(clbVipIsps, v) {
			return in, Errorf("InvalidParameterValue", "`VipIsp` must be one of %v, got `%s`.", clbVipIsps, v)
		}
		in.vipIsp = v
	}
	// "网络计费模式只能使用按带宽包计费(BANDWIDTH_PACKAGE)" for a single-line
	// ISP, and BandwidthPackageId "指定此参数时，网络计费方式...只支持按带宽包
	// 计费（BANDWIDTH_PACKAGE）".
	if in.vipIsp != "BGP" && in.chargeType != "BANDWIDTH_PACKAGE" {
		return in, Errorf("InvalidParameter", "`VipIsp` %s needs `InternetAccessible.InternetChargeType` BANDWIDTH_PACKAGE, got %s.", in.vipIsp, in.chargeType)
	}
	if in.bandwidthPackageID != "" && in.chargeType != "BANDWIDTH_PACKAGE" {
		return in, Errorf("InvalidParameter", "`BandwidthPackageId` needs `InternetAccessible.InternetChargeType` BANDWIDTH_PACKAGE, got %s.", in.chargeType)
	}
	return in, nil
}

// describe puts the settings of a load balancer of type typ into a
// DescribeLoadBalancers answer; a public one made without a create request
// (the admin API's) has the defaults.
func (in clbInternet) describe(out *clb.LoadBalancer, typ string) {
	if typ != lbTypeOpen {
		return
	}
	if in.chargeType == "" {
		in = clbInternet{chargeType: clbDefaultChargeType, bandwidthOut: clbDefaultBandwidthOut, vipIsp: "BGP"}
	}
	out.VipIsp = common.StringPtr(in.vipIsp)
	out.NetworkAttributes = &clb.InternetAccessible{
		InternetChargeType:      common.StringPtr(in.chargeType),
		InternetMaxBandwidthOut: common.Int64Ptr(in.bandwidthOut),
	}
	if in.bandwidthPkgSubType != "" {
		out.NetworkAttributes.BandwidthpkgSubType = common.StringPtr(in.bandwidthPkgSubType)
	}
	if z := in.masterZoneID + in.zoneID; z != "" {
		zone := in.masterZoneID
		if zone == "" {
			zone = in.zoneID
		}
		out.MasterZone = &clb.ZoneInfo{Zone: common.StringPtr(zone)}
		out.Zones = []*string{common.StringPtr(zone)}
	}
}

// CLBInternet is a public load balancer's creation-time network settings,
// as the admin API shows them.
type CLBInternet struct {
	ChargeType   string `json:"chargeType"`
	BandwidthOut int64  `json:"bandwidthOut"`
	VipIsp       string `json:"vipIsp"`
	MasterZone   string `json:"masterZone,omitempty"`
}

func (in clbInternet) export(typ string) *CLBInternet {
	var d clb.LoadBalancer
	in.describe(&d, typ)
	if d.NetworkAttributes == nil {
		return nil
	}
	out := &CLBInternet{ChargeType: *d.NetworkAttributes.InternetChargeType, BandwidthOut: *d.NetworkAttributes.InternetMaxBandwidthOut, VipIsp: *d.VipIsp}
	if d.MasterZone != nil {
		out.MasterZone = *d.MasterZone.Zone
	}
	return out
}
