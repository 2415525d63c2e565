package tencent

import (
	"strings"
	"testing"

	clb "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/clb/v20180317"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
)

func TestCheckInternet(t *testing.T) {
	ia := func(charge string, bw int64) *clb.InternetAccessible {
		out := &clb.InternetAccessible{}
		if charge != "" {
			out.InternetChargeType = common.StringPtr(charge)
		}
		if bw != 0 {
			out.InternetMaxBandwidthOut = common.Int64Ptr(bw)
		}
		return out
	}
	for _, tt := range []struct {
		name    string
		typ     string
		req     clb.CreateLoadBalancerRequestParams
		want    clbInternet
		wantErr string
	}{
		{name: "public defaults", typ: lbTypeOpen,
			want: clbInternet{chargeType: clbDefaultChargeType, bandwidthOut: 10, vipIsp: "BGP"}},
		{name: "public by bandwidth", typ: lbTypeOpen, req: clb.CreateLoadBalancerRequestParams{InternetAccessible: ia("BANDWIDTH_POSTPAID_BY_HOUR", 2048)},
			want: clbInternet{chargeType: "BANDWIDTH_POSTPAID_BY_HOUR", bandwidthOut: 2048, vipIsp: "BGP"}},
		{name: "zones kept", typ: lbTypeOpen, req: clb.CreateLoadBalancerRequestParams{MasterZoneId: common.StringPtr("ap-guangzhou-3"), SlaveZoneId: common.StringPtr("ap-guangzhou-4")},
			want: clbInternet{chargeType: clbDefaultChargeType, bandwidthOut: 10, vipIsp: "BGP", masterZoneID: "ap-guangzhou-3", slaveZoneID: "ap-guangzhou-4"}},
		{name: "single-line ISP on a bandwidth package", typ: lbTypeOpen, req: clb.CreateLoadBalancerRequestParams{VipIsp: common.StringPtr("CTCC"), InternetAccessible: ia("BANDWIDTH_PACKAGE", 0)},
			want: clbInternet{chargeType: "BANDWIDTH_PACKAGE", bandwidthOut: 10, vipIsp: "CTCC"}},
		{name: "private ignores InternetAccessible", typ: lbTypeInternal, req: clb.CreateLoadBalancerRequestParams{InternetAccessible: ia("TRAFFIC_POSTPAID_BY_HOUR", 20)}},
		{name: "unknown charge type", typ: lbTypeOpen, req: clb.CreateLoadBalancerRequestParams{InternetAccessible: ia("FREE", 0)}, wantErr: "InvalidParameterValue:"},
		{name: "bandwidth 0", typ: lbTypeOpen, req: clb.CreateLoadBalancerRequestParams{InternetAccessible: &clb.InternetAccessible{InternetMaxBandwidthOut: common.Int64Ptr(0)}}, wantErr: "InvalidParameterValue.Range"},
		{name: "bandwidth 2049", typ: lbTypeOpen, req: clb.CreateLoadBalancerRequestParams{InternetAccessible: ia("", 2049)}, wantErr: "InvalidParameterValue.Range"},
		{name: "unknown ISP", typ: lbTypeOpen, req: clb.CreateLoadBalancerRequestParams{VipIsp: common.StringPtr("ACME")}, wantErr: "`VipIsp` must be one of"},
		{name: "single-line ISP by traffic", typ: lbTypeOpen, req: clb.CreateLoadBalancerRequestParams{VipIsp: common.StringPtr("CMCC")}, wantErr: "needs `InternetAccessible.InternetChargeType` BANDWIDTH_PACKAGE"},
		{name: "bandwidth package by traffic", typ: lbTypeOpen, req: clb.CreateLoadBalancerRequestParams{BandwidthPackageId: common.StringPtr("bwp-12345678")}, wantErr: "`BandwidthPackageId` needs"},
		{name: "zone on a private CLB", typ: lbTypeInternal, req: clb.CreateLoadBalancerRequestParams{ZoneId: common.StringPtr("ap-guangzhou-3")}, wantErr: "OPEN (public) load balancers only"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := checkInternet(&tt.req, tt.typ)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Code+": "+err.Message, tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
